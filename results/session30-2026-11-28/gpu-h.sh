#!/usr/bin/env bash
# Session 30, call h (nvidia-h200-x4), every run a first run on the machine (NV_CACHE=fresh):
# A = call g's build 10fdba2 (the open gate) with CLPRISM_BALANCE_OPEN=context, B = this
# session's build with the NDRange queries read per kernel from its SPIR-V (a kernel that
# reads no global size shares one build of its program across launch shapes; the program
# prebuilt without the global size); clpeak --compute-sp, clpeak --global-bandwidth and
# BabelStream in `auto` and `always` over 4 GPUs, two rounds alternating; gemm `auto` once
# each as the check that one-launch apps are unchanged.
# usage (GPU host, repository root, `.gpu` carried): bash results/session30-2026-11-28/gpu-h.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
tar -C .gpu -xJf .gpu/lib-s30h.tar.xz
source .gpu/gpu-env.sh > /dev/null 2>&1
export NV_CACHE=fresh
LIB_A=.gpu/libOpenCL-s30.so LIB_B=.gpu/libOpenCL-s30h.so ENV_A=CLPRISM_BALANCE_OPEN=context \
  GPUSETS=4 ROUNDS=2 SPLITS="auto always" APPS="clpeak_sp clpeak_bw stream" DEBUG_RUNS=0 \
  DEADLINE_S=400 RUN_TIMEOUT=45 timeout 430 bash bench/gpu_lib_ab.sh /tmp/s30h > /tmp/s30h.progress 2>&1
LIB_A=.gpu/libOpenCL-s30.so LIB_B=.gpu/libOpenCL-s30h.so ENV_A=CLPRISM_BALANCE_OPEN=context \
  GPUSETS=4 ROUNDS=1 SPLITS="auto" APPS="gemm" DEBUG_RUNS=0 \
  DEADLINE_S=60 RUN_TIMEOUT=30 timeout 70 bash bench/gpu_lib_ab.sh /tmp/s30h-gemm > /tmp/s30h-gemm.progress 2>&1
cp /tmp/s30h/kernel-times.txt "$OUT/kernel-times.txt" 2>/dev/null
cp /tmp/s30h-gemm/kernel-times.txt "$OUT/gemm-kernel-times.txt" 2>/dev/null
for d in /tmp/s30h/*/ /tmp/s30h-gemm/*/; do echo "== $(basename $d)"; grep -E "^(always|native|auto)|^== " $d/table.txt;
  mkdir -p $d/x && tar xzf $d/logs.tgz -C $d/x 2>/dev/null
  for f in $d/x/logs/stream*.out $d/x/logs/clpeak*.out; do [ -f "$f" ] || continue; echo "-- $(basename $f)";
    grep -E "^(Copy|Mul|Add|Triad|Dot) |float" $f; done; done > "$OUT/tables.txt" 2>&1
for d in /tmp/s30h/b-1/ /tmp/s30h/a-1/; do echo "== $(basename $d)"; cat $d/reasons.txt | cut -c1-300 | head -60; done > "$OUT/reasons.txt" 2>&1
cat "$OUT/tables.txt" | grep -v "^   figures"
