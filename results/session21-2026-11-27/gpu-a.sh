#!/usr/bin/env bash
# Session 21, first call (kind nvidia-h200-x2; no 4-GPU kind was lent when it ran): the whole corpus of bench/multi_gpu.sh
# natively on one GPU and under CLPRISM_SPLIT=auto and =always over both GPUs of the
# host (build abcbedf: the rent rule, host rate measured at open).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="2" SPLITS="auto always" DEADLINE_S=540 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/s21a fdtd-long jacobi-long gemm 2mm 3mm fdtd-2d jacobi-2d-imper clpeak_sp clpeak_bw stream > /dev/null 2>&1
cp /tmp/s21a/table.txt "$OUT/a-table.txt"
tar czf "$OUT/a-logs.tgz" -C /tmp s21a
