#!/usr/bin/env bash
# Session 21, fourth call (kind nvidia-h200-x2): directory ranges of >= 1 MiB through the
# upload ring's page-locked slots. The apps whose first splits fetched hundreds of MB through
# heap memory (fdtd-2d, jacobi-2d at 500/200 steps; BabelStream's whole-array reads), the
# 2,000/5,000-step ones, natively and under auto and always over both GPUs.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="auto always" DEADLINE_S=420 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/s21d fdtd-2d jacobi-2d-imper stream fdtd-long jacobi-long > /dev/null 2>&1
cp /tmp/s21d/table.txt "$OUT/d-table.txt"
tar czf "$OUT/d-logs.tgz" -C /tmp s21d
