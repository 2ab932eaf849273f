#!/usr/bin/env bash
# Session 18, final 4-GPU call (release build of the session's last balance change): the
# issue 31 corpus natively on one GPU and in balance mode over the first 2 and all 4 GPUs of
# one 4 x H200 host (bench/multi_gpu.sh, fresh clprism caches: first runs).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
CLPRISM_DEBUG=1 GPUSETS="2 4" SPLITS="auto always" DEADLINE_S=230 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/f1 gemm 2mm 3mm > /dev/null 2>&1
cp /tmp/f1/table.txt "$OUT/final-compute.txt"
GPUSETS="2 4" SPLITS="auto" DEADLINE_S=230 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/f2 clpeak_sp clpeak_bw stream jacobi-2d-imper fdtd-2d > /dev/null 2>&1
cp /tmp/f2/table.txt "$OUT/final-memory.txt"
tar czf "$OUT/final.tgz" -C /tmp f1 f2
