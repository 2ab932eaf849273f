#!/usr/bin/env bash
# Session 19, fourth 4-GPU call (847b52d: the trial cost counts the first upload and gather;
# like devices keep equal slabs): CLPRISM_SPLIT=auto over all 4 GPUs of one 4 x H200 host
# against native on one GPU, first runs, on the iterative apps (never slower than native?)
# and gemm.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="4" SPLITS="auto" DEADLINE_S=270 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/r9 jacobi-long stream-long fdtd-2d gemm clpeak_bw > /dev/null 2>&1
cp /tmp/r9/table.txt "$OUT/d-auto.txt"
tar czf "$OUT/d-logs.tgz" -C /tmp r9
