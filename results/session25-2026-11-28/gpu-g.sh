#!/usr/bin/env bash
# Session 25, call g (nvidia-h200-x2): the final build. A = .gpu/libOpenCL.so (main at
# 05541dd), B = .gpu/libOpenCL-new.so (main at 753ba27: continuation and probe in 25 ms
# chunks, the footprint's SPIR-V compiled ahead, the trial cost of a program built and
# compiled ahead; the background context on the app's GPU reverted); gemm, 2mm, 3mm and
# clpeak --compute-sp, `auto` over both GPUs, two rounds alternating, no debug output;
# then every clpeak run's per-width figures.
# usage (GPU host, repository root): bash results/session25-2026-11-28/gpu-g.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL.so LIB_B=.gpu/libOpenCL-new.so GPUSETS=2 ROUNDS=2 SPLITS=auto \
  APPS="gemm 2mm 3mm clpeak_sp" DEBUG_RUNS=0 DEADLINE_S=120 timeout 300 \
  bash bench/gpu_lib_ab.sh /tmp/g > "$OUT/progress.txt" 2>&1
cp /tmp/g/kernel-times.txt "$OUT/"
for d in /tmp/g/*/; do
  n=$(basename "$d"); mkdir -p /tmp/gx/$n; tar xzf "$d/logs.tgz" -C /tmp/gx/$n
  for f in /tmp/gx/$n/logs/clpeak*.out; do
    echo "$n $(basename "$f" .out): $(grep -E '^\s+(float|float2|float4|float8|float16)\s*:' "$f" | awk '{printf "%s %s  ", $1, $3}')"
  done
done > "$OUT/clpeak-figures.txt"
ls -la "$OUT"
