#!/usr/bin/env bash
# Session 21, second call (kind nvidia-h200-x2): the iterative and multi-kernel apps natively
# and under CLPRISM_SPLIT=auto and =always over both GPUs (build with the rent rule as one
# pool shared by the kernels, decide::RentPool).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="auto always" DEADLINE_S=400 RUN_TIMEOUT=45 \
  bash bench/multi_gpu.sh /tmp/s21b fdtd-long jacobi-long 2mm 3mm fdtd-2d jacobi-2d-imper > /dev/null 2>&1
cp /tmp/s21b/table.txt "$OUT/b-table.txt"
tar czf "$OUT/b-logs.tgz" -C /tmp s21b
