#!/usr/bin/env bash
# Session 20, fifth 2-GPU call (a time step passed by value no longer re-derives fdtd-2d's
# footprint): fdtd-2d and fdtd-long (5,000 steps) natively and under `always` and `auto` over
# both GPUs, jacobi-long under `always`.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="always auto" DEADLINE_S=330 RUN_TIMEOUT=90 \
  bash bench/multi_gpu.sh /tmp/s20e fdtd-2d fdtd-long > /dev/null 2>&1
GPUSETS="2" SPLITS="always" DEADLINE_S=60 RUN_TIMEOUT=40 NATIVE=0 \
  bash bench/multi_gpu.sh /tmp/s20e-j jacobi-long > /dev/null 2>&1
cp /tmp/s20e/table.txt "$OUT/e-table.txt"; cp /tmp/s20e-j/table.txt "$OUT/e-jacobi-table.txt"
tar czf "$OUT/e-logs.tgz" -C /tmp s20e s20e-j
