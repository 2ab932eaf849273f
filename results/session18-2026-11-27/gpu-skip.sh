#!/usr/bin/env bash
# Session 18, last call: gemm, 2mm, 3mm in auto over 4 GPUs after the footprint emulation
# skips the accumulation loops (fresh clprism caches, no warm run).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
CLPRISM_DEBUG=1 GPUSETS="4" SPLITS="auto" DEADLINE_S=80 RUN_TIMEOUT=40 WARM=0 \
  bash bench/multi_gpu.sh /tmp/s1 gemm 2mm 3mm > /dev/null 2>&1
cp /tmp/s1/table.txt "$OUT/skip-compute.txt"
tar czf "$OUT/skip.tgz" -C /tmp s1
