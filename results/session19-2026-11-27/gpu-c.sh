#!/usr/bin/env bash
# Session 19, third 4-GPU call (owner computes, halos only): the buffer directory (CLPRISM_BALANCE_GATHER=lazy, the
# default) on runs long enough for the devices to open (ten times the steps), natively
# on one GPU and balanced over all 4 GPUs of one 4 x H200 host; then the same in `always` with
# CLPRISM_BALANCE_GATHER=eager (gathering every launch, as before the directory); then gemm in
# auto (the footprint's new samples must not cost it its gain).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
GPUSETS="4" SPLITS="always auto" DEADLINE_S=330 RUN_TIMEOUT=80 \
  bash bench/multi_gpu.sh /tmp/r6 stream-long jacobi-long fdtd-long > /dev/null 2>&1
cp /tmp/r6/table.txt "$OUT/c-long-lazy.txt"
CLPRISM_BALANCE_GATHER=eager GPUSETS="4" SPLITS="always" DEADLINE_S=90 RUN_TIMEOUT=45 \
  bash bench/multi_gpu.sh /tmp/r7 stream-long jacobi-long > /dev/null 2>&1
cp /tmp/r7/table.txt "$OUT/c-long-eager.txt"
GPUSETS="4" SPLITS="auto" DEADLINE_S=60 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/r8 gemm > /dev/null 2>&1
cp /tmp/r8/table.txt "$OUT/c-gemm-auto.txt"
tar czf "$OUT/s19c.tgz" -C /tmp r6 r7 r8
