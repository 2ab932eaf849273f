#!/usr/bin/env bash
# Session 29, call e (nvidia-h200-x4), every run a first run on the machine (NV_CACHE=fresh):
#  1. A = call c's build (591b0db), B = the last (22a4b0f: a program variant for one launch
#     shape built in the background while its launches run whole): clpeak --compute-sp and
#     --global-bandwidth, BabelStream, `always` over 4 GPUs, one round;
#  2. A = main at 87c95ba, B = the last: fdtd-long and jacobi-long, `always`, one round (the
#     session's changes should not move them).
# usage (GPU host, repository root, `.gpu` carried): bash results/session29-2026-11-28/gpu-e.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
tar -C .gpu -xJf .gpu/libs-s29e.tar.xz
source .gpu/gpu-env.sh > /dev/null 2>&1
export NV_CACHE=fresh
LIB_A=.gpu/libOpenCL-s29c.so LIB_B=.gpu/libOpenCL-final.so GPUSETS=4 ROUNDS=1 SPLITS=always \
  APPS="clpeak_sp clpeak_bw stream" DEBUG_RUNS=0 DEADLINE_S=150 RUN_TIMEOUT=50 \
  timeout 170 bash bench/gpu_lib_ab.sh /tmp/s29e1 > /tmp/s29e1.progress 2>&1
for d in /tmp/s29e1/*/; do echo "== $(basename $d)"; grep -E "^(always|native|auto)|^== " $d/table.txt; done > "$OUT/clpeak-tables.txt"
cat "$OUT/clpeak-tables.txt"
LIB_A=.gpu/libOpenCL-main.so LIB_B=.gpu/libOpenCL-final.so GPUSETS=4 ROUNDS=1 SPLITS=always \
  APPS="fdtd-long jacobi-long" DEBUG_RUNS=0 DEADLINE_S=150 RUN_TIMEOUT=60 \
  timeout 170 bash bench/gpu_lib_ab.sh /tmp/s29e2 > /tmp/s29e2.progress 2>&1
cp /tmp/s29e2/kernel-times.txt "$OUT/iterative-kernel-times.txt" 2>/dev/null || tail -20 /tmp/s29e2.progress
grep -v "^    slabs" "$OUT/iterative-kernel-times.txt"
