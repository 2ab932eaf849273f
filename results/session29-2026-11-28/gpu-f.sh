#!/usr/bin/env bash
# Session 29, call f (nvidia-h200-x4), every run a first run on the machine (NV_CACHE=fresh):
# one build (d417a53), A = the default (the devices open at the first long launch in `auto`,
# at the first build in `always`), B = CLPRISM_BALANCE_OPEN=context (they open while the app
# creates its context); gemm, 2mm, 3mm, BabelStream, clpeak --compute-sp, `auto` and `always`
# over 4 GPUs, one round; then 10 runs of 2mm `auto` with B (the app's calls while clprism
# creates its contexts: does any crash?).
# usage (GPU host, repository root, `.gpu` carried): bash results/session29-2026-11-28/gpu-f.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
tar -C .gpu -xJf .gpu/lib-s29f.tar.xz
source .gpu/gpu-env.sh > /dev/null 2>&1
export NV_CACHE=fresh
LIB_A=.gpu/libOpenCL-ctx.so LIB_B=.gpu/libOpenCL-ctx.so ENV_B=CLPRISM_BALANCE_OPEN=context \
  GPUSETS=4 ROUNDS=1 SPLITS="auto always" APPS="gemm 2mm 3mm stream clpeak_sp" DEBUG_RUNS=0 \
  DEADLINE_S=260 RUN_TIMEOUT=50 timeout 280 bash bench/gpu_lib_ab.sh /tmp/s29f > /tmp/s29f.progress 2>&1
cp /tmp/s29f/kernel-times.txt "$OUT/kernel-times.txt" 2>/dev/null
grep -v "^    slabs" "$OUT/kernel-times.txt"
for d in /tmp/s29f/*/; do echo "== $(basename $d)"; grep -E "^(always|native|auto)|^== " $d/table.txt;
  mkdir -p $d/x && tar xzf $d/logs.tgz -C $d/x 2>/dev/null
  for f in $d/x/logs/stream*.out $d/x/logs/clpeak_sp*.out; do echo "-- $(basename $f)";
    grep -E "^(Copy|Mul|Add|Triad|Dot) |float" $f; done; done > "$OUT/tables.txt" 2>&1
cat "$OUT/tables.txt"
for i in $(seq 1 10); do
  NV_CACHE= WARM=0 NATIVE=0 GPUSETS=4 SPLITS=auto CLPRISM_BALANCE_OPEN=context DEADLINE_S=30 \
    RUN_TIMEOUT=25 LIB=.gpu/libOpenCL-ctx.so timeout 35 bash bench/multi_gpu.sh /tmp/s29f-stress-$i 2mm 2>&1 | \
    grep -E "^  2mm" ; done > "$OUT/stress.txt"
cat "$OUT/stress.txt"
