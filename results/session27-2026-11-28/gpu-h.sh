#!/usr/bin/env bash
# Session 27, call h (nvidia-h200-x4, its first 2 GPUs): call g on 2 GPUs: one build
# (.gpu/libOpenCL-s27c.so), A = CLPRISM_BALANCE_ISSUE=serial (default), B = parallel;
# two rounds alternating.
# usage (GPU host, repository root, `.gpu` carried): bash results/session27-2026-11-28/gpu-h.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL-s27c.so LIB_B=.gpu/libOpenCL-s27c.so ENV_B="CLPRISM_BALANCE_ISSUE=parallel" \
  GPUSETS=2 ROUNDS=2 SPLITS="always" APPS="fdtd-long" DEBUG_RUNS=0 \
  DEADLINE_S=150 RUN_TIMEOUT=40 timeout 170 bash bench/gpu_lib_ab.sh /tmp/s27h > /tmp/s27h.progress 2>&1
cp /tmp/s27h/kernel-times.txt "$OUT/"
grep -v "^    slabs" "$OUT/kernel-times.txt"
