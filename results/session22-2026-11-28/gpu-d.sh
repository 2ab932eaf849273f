#!/usr/bin/env bash
# Session 22, fourth call (kind nvidia-h200-x2; no 4-GPU kind was lent by then): where a split launch's set-up goes on NVIDIA:
# fdtd-2d (500 steps) under CLPRISM_SPLIT=always over both GPUs with CLPRISM_DEBUG=1 (a
# timestamp after each set-up step of a launch and the halo batch's reads, wait and writes),
# build 1052c54 plus those debug lines.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="always" NATIVE=0 DEADLINE_S=60 RUN_TIMEOUT=40 CLPRISM_DEBUG=1 \
  bash bench/multi_gpu.sh /tmp/s22d fdtd-2d > /dev/null 2>&1
tar czf "$OUT/d-logs.tgz" -C /tmp s22d
