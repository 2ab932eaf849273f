#!/usr/bin/env bash
# Session 21, fifth call (kind nvidia-h200-x2; no 4-GPU kind was lent this session): the whole
# corpus of bench/multi_gpu.sh natively on one GPU and under CLPRISM_SPLIT=auto and =always
# over both GPUs, with the session's last build (the rent pool, page-locked directory
# transfers, bounded waits on balance devices).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="auto always" DEADLINE_S=480 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/s21e fdtd-long jacobi-long gemm 2mm 3mm fdtd-2d jacobi-2d-imper clpeak_sp clpeak_bw stream > /dev/null 2>&1
cp /tmp/s21e/table.txt "$OUT/e-table.txt"
tar czf "$OUT/e-logs.tgz" -C /tmp s21e
