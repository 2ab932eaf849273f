#!/usr/bin/env bash
# Session 20, fourth 2-GPU call (15 us completion polls on GPUs): jacobi-long and fdtd-2d
# natively on one GPU and under CLPRISM_SPLIT=always and =auto over both.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="always auto" DEADLINE_S=200 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/s20d jacobi-long fdtd-2d > /dev/null 2>&1
cp /tmp/s20d/table.txt "$OUT/d-table.txt"
tar czf "$OUT/d-logs.tgz" -C /tmp s20d
