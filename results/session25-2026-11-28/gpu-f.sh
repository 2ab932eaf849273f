#!/usr/bin/env bash
# Session 25, call f (nvidia-h200-x2): A = .gpu/libOpenCL.so (main at 05541dd), B =
# .gpu/libOpenCL-new.so (this session's opening changes: continuation and probe in 25 ms
# chunks, the footprint's SPIR-V compiled ahead, the trial cost of a program built and
# compiled ahead, clprism's context on the app's GPU opened at the app's first build);
# 1. PolyBench gemm, 2mm, 3mm and clpeak (compute, bandwidth), `auto` over both GPUs, two
#    rounds alternating, no debug output (clpeak's figures parsed);
# 2. B alone on the iterative ones: fdtd-2d 5,000 steps, jacobi-2d 2,000 steps at 16384²,
#    BabelStream, natively and in `auto` and `always` over both GPUs.
# usage (GPU host, repository root): bash results/session25-2026-11-28/gpu-f.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL.so LIB_B=.gpu/libOpenCL-new.so GPUSETS=2 ROUNDS=2 SPLITS=auto \
  APPS="gemm 2mm 3mm clpeak_sp clpeak_bw" DEBUG_RUNS=0 DEADLINE_S=120 timeout 300 \
  bash bench/gpu_lib_ab.sh /tmp/f > "$OUT/ab-progress.txt" 2>&1
cp /tmp/f/kernel-times.txt "$OUT/ab-kernel-times.txt"
for d in /tmp/f/*/; do echo "== $(basename "$d")"; cat "$d/table.txt"; done > "$OUT/ab-tables.txt"
source .gpu/gpu-env.sh > /dev/null 2>&1
LIB=.gpu/libOpenCL-new.so GPUSETS=2 SPLITS="auto always" DEADLINE_S=220 RUN_TIMEOUT=60 \
  timeout 240 bash bench/multi_gpu.sh /tmp/f2 fdtd-long jacobi-long stream > "$OUT/iterative-progress.txt" 2>&1
cp /tmp/f2/table.txt "$OUT/iterative-table.txt"
ls -la "$OUT"
