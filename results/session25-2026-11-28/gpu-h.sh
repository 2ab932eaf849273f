#!/usr/bin/env bash
# Session 25, call h (nvidia-h200-x4): the final build. A = .gpu/libOpenCL.so (main at
# 05541dd), B = .gpu/libOpenCL-new.so (main at 753ba27: continuation and probe in 25 ms
# chunks, the footprint's SPIR-V compiled ahead, the trial cost of a program built and
# compiled ahead; the background context on the app's GPU reverted); gemm, 2mm, 3mm,
# `auto` over all four GPUs, one round, no debug output.
# usage (GPU host, repository root): bash results/session25-2026-11-28/gpu-h.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL.so LIB_B=.gpu/libOpenCL-new.so GPUSETS=4 ROUNDS=1 SPLITS=auto \
  APPS="gemm 2mm 3mm" DEBUG_RUNS=0 DEADLINE_S=80 timeout 170 \
  bash bench/gpu_lib_ab.sh /tmp/h > "$OUT/progress.txt" 2>&1
cp /tmp/h/kernel-times.txt "$OUT/"
