#!/usr/bin/env bash
# Session 21, third call (kind nvidia-h200-x2): fdtd-long natively and under auto and always
# over both GPUs, with each run's start and end times (times.tsv), to place the time auto's
# run spends outside the app's kernel loop (call b: wall 1.10x native at kernel time 0.97x).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="auto always" DEADLINE_S=200 RUN_TIMEOUT=45 \
  bash bench/multi_gpu.sh /tmp/s21c fdtd-long > /dev/null 2>&1
cp /tmp/s21c/table.txt "$OUT/c-table.txt"
tar czf "$OUT/c-logs.tgz" -C /tmp s21c
