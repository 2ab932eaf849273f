#!/usr/bin/env bash
# Session 18, last 4-GPU call: gemm, 2mm, 3mm in auto over 2 and 4 GPUs after the trial cost
# counts the footprint derivation (bench/multi_gpu.sh, fresh clprism caches).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
CLPRISM_DEBUG=1 GPUSETS="2 4" SPLITS="auto" DEADLINE_S=140 RUN_TIMEOUT=50 WARM=0 \
  bash bench/multi_gpu.sh /tmp/c1 gemm 2mm 3mm > /dev/null 2>&1
cp /tmp/c1/table.txt "$OUT/check-compute.txt"
tar czf "$OUT/check.tgz" -C /tmp c1
