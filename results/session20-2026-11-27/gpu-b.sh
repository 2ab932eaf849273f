#!/usr/bin/env bash
# Session 20, second 2-GPU call (cea6bec: quiet-queue launches skip the start-barrier wait):
# jacobi-long, fdtd-2d and jacobi-2d-imper natively on one GPU and under CLPRISM_SPLIT=always
# and =auto over both; then jacobi-long under `always` with CLPRISM_BALANCE_ASYNC=off.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="always auto" DEADLINE_S=240 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/s20b jacobi-long fdtd-2d jacobi-2d-imper > /dev/null 2>&1
cp /tmp/s20b/table.txt "$OUT/b-table.txt"
CLPRISM_BALANCE_ASYNC=off GPUSETS="2" SPLITS="always" NATIVE=0 DEADLINE_S=60 RUN_TIMEOUT=50 \
  bash bench/multi_gpu.sh /tmp/s20b-sync jacobi-long > /dev/null 2>&1
cp /tmp/s20b-sync/table.txt "$OUT/b-sync-table.txt"
tar czf "$OUT/b-logs.tgz" -C /tmp s20b s20b-sync
