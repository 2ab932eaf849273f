#!/usr/bin/env bash
# Session 22, first call (kind nvidia-h200-x4: four GPUs of one host): the whole corpus of
# bench/multi_gpu.sh natively on one GPU and under CLPRISM_SPLIT=auto and =always over the first
# two and all four GPUs, with session 21's last build (e5514fa).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
nvidia-smi topo -m
GPUSETS="4 2" SPLITS="auto always" DEADLINE_S=560 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/s22a fdtd-long gemm 2mm 3mm jacobi-long fdtd-2d jacobi-2d-imper clpeak_sp clpeak_bw stream > /dev/null 2>&1
cp /tmp/s22a/table.txt "$OUT/a-table.txt"
tar czf "$OUT/a-logs.tgz" -C /tmp s22a
