#!/usr/bin/env bash
# Session 19, fifth 4-GPU call (c9ad668: gathers through 64 MiB pageable pieces):
# CLPRISM_SPLIT=auto over all 4 GPUs of one 4 x H200 host against native on one GPU, first
# runs: jacobi-2d 16384^2 over 2,000 steps (0.76x with the pinned gathers) and clpeak
# compute-sp.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="4" SPLITS="auto" DEADLINE_S=150 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/r10 jacobi-long clpeak_sp > /dev/null 2>&1
cp /tmp/r10/table.txt "$OUT/e-auto.txt"
tar czf "$OUT/e-logs.tgz" -C /tmp r10
