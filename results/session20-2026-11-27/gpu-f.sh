#!/usr/bin/env bash
# Session 20, sixth 2-GPU call (the session's last build): the whole corpus of
# bench/multi_gpu.sh natively on one GPU and under CLPRISM_SPLIT=auto and =always over both.
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="auto always" DEADLINE_S=520 RUN_TIMEOUT=45 \
  bash bench/multi_gpu.sh /tmp/s20f fdtd-long jacobi-long gemm 2mm 3mm fdtd-2d jacobi-2d-imper clpeak_sp clpeak_bw stream > /dev/null 2>&1
cp /tmp/s20f/table.txt "$OUT/f-table.txt"
tar czf "$OUT/f-logs.tgz" -C /tmp s20f
