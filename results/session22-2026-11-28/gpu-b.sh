#!/usr/bin/env bash
# Session 22, second call (kind nvidia-h200-x4): where the time of opening four GPUs and of a
# split launch goes: 2mm, 3mm and gemm under CLPRISM_SPLIT=auto, fdtd-2d (500 steps) under
# =always, over all four GPUs with CLPRISM_DEBUG=1 (timestamped lines on stderr, in the .out
# files), build e5514fa.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="4" SPLITS="auto" NATIVE=0 DEADLINE_S=200 RUN_TIMEOUT=40 CLPRISM_DEBUG=1 \
  bash bench/multi_gpu.sh /tmp/s22b 2mm 3mm gemm > /dev/null 2>&1
GPUSETS="4" SPLITS="always" NATIVE=0 DEADLINE_S=100 RUN_TIMEOUT=40 CLPRISM_DEBUG=1 \
  bash bench/multi_gpu.sh /tmp/s22b2 fdtd-2d > /dev/null 2>&1
mv /tmp/s22b2/logs /tmp/s22b/logs-fdtd
tar czf "$OUT/b-logs.tgz" -C /tmp s22b
