#!/usr/bin/env bash
# Session 21, sixth call (kind nvidia-h200-x2): the trial rule's saving per program source
# instead of per kernel; fdtd-long, 2mm and 3mm natively and under auto over both GPUs.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="auto" DEADLINE_S=150 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/s21f fdtd-long 2mm 3mm > /dev/null 2>&1
cp /tmp/s21f/table.txt "$OUT/f-table.txt"
tar czf "$OUT/f-logs.tgz" -C /tmp s21f
