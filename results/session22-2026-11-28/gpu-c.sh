#!/usr/bin/env bash
# Session 22, third call (kind nvidia-h200-x4), build 1052c54: the split floor taken from first
# splits too, the per-program split effect (decide::SplitEffect) and the probe's scout.
# The long apps natively and under CLPRISM_SPLIT=auto over four and two GPUs; the short ones
# natively and under auto over four; fdtd-2d (500 steps) under always over four with
# CLPRISM_DEBUG=1 (the driver calls of each chunk enqueue).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="4 2" SPLITS="auto" DEADLINE_S=330 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/s22c fdtd-long jacobi-long gemm 2mm 3mm > /dev/null 2>&1
cp /tmp/s22c/table.txt "$OUT/c-table.txt"
GPUSETS="4" SPLITS="auto" DEADLINE_S=150 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/s22c-short fdtd-2d jacobi-2d-imper clpeak_sp clpeak_bw stream > /dev/null 2>&1
cp /tmp/s22c-short/table.txt "$OUT/c-short-table.txt"
GPUSETS="4" SPLITS="always" NATIVE=0 DEADLINE_S=60 RUN_TIMEOUT=40 CLPRISM_DEBUG=1 \
  bash bench/multi_gpu.sh /tmp/s22c-debug fdtd-2d > /dev/null 2>&1
tar czf "$OUT/c-logs.tgz" -C /tmp s22c s22c-short s22c-debug
