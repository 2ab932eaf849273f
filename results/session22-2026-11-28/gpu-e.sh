#!/usr/bin/env bash
# Session 22, fifth call (kind nvidia-h200-x2; no 4-GPU kind lent then), build b11bffa (see
# README): halo ranges through page-locked areas kept between launches, no marker or flush on a
# device given no upload. fdtd-long and jacobi-long natively and under auto and always over
# both GPUs; fdtd-2d (500 steps) under always with CLPRISM_DEBUG=1 (set-up and halo timings).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="always auto" DEADLINE_S=200 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/s22e fdtd-long jacobi-long > /dev/null 2>&1
cp /tmp/s22e/table.txt "$OUT/e-table.txt"
GPUSETS="2" SPLITS="always" NATIVE=0 DEADLINE_S=60 RUN_TIMEOUT=40 CLPRISM_DEBUG=1 \
  bash bench/multi_gpu.sh /tmp/s22e-debug fdtd-2d > /dev/null 2>&1
tar czf "$OUT/e-logs.tgz" -C /tmp s22e s22e-debug
