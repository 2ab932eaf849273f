#!/usr/bin/env bash
# Session 20, first 2-GPU call: bench/multi_gpu.sh over both GPUs of one host (native on one
# GPU, CLPRISM_SPLIT=auto and =always over 2), first runs; then jacobi-long under `always`
# with CLPRISM_BALANCE_ASYNC=off (the launch on the app's thread, as before session 20).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="auto always" DEADLINE_S=430 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/s20a jacobi-long gemm jacobi-2d-imper fdtd-2d stream clpeak_sp clpeak_bw 2mm 3mm > /dev/null 2>&1
cp /tmp/s20a/table.txt "$OUT/a-table.txt"
CLPRISM_BALANCE_ASYNC=off GPUSETS="2" SPLITS="always" NATIVE=0 DEADLINE_S=60 RUN_TIMEOUT=50 \
  bash bench/multi_gpu.sh /tmp/s20a-sync jacobi-long > /dev/null 2>&1
cp /tmp/s20a-sync/table.txt "$OUT/a-sync-table.txt"
tar czf "$OUT/a-logs.tgz" -C /tmp s20a s20a-sync
