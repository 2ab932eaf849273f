#!/usr/bin/env bash
# Session 18, issue 31: the multi-GPU corpus on one 4-GPU host (device tool kind
# nvidia-h200-x4 or nvidia-h100-x4), 2 and 4 GPUs of it, in one call of at most 600 s.
# Carry .gpu (bench/multi_gpu_build.sh's corpus, the stripped libOpenCL.so of the commit
# under test, gpu-env.sh, the clang-15 toolchain debs). Writes $OUT/t1.txt .. t3.txt (the
# tables) and $OUT/all.tgz (every run's output, logs and env).
#   usage (device tool): bash results/session18-2026-11-27/gpu-multi-command.sh
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
# compute-bound apps that launch a long kernel once to three times: native, auto and
# always over the first 2 and all 4 GPUs (CLPRISM_DEBUG: when the devices open)
CLPRISM_DEBUG=1 GPUSETS="2 4" SPLITS="auto always" DEADLINE_S=210 RUN_TIMEOUT=90 \
  bash bench/multi_gpu.sh /tmp/r1 gemm 2mm 3mm
cp /tmp/r1/table.txt "$OUT/t1.txt"
# memory-bound and iterative apps: auto over 4 GPUs (always gathers every launch through
# the host: minutes per app at these sizes, see the note)
GPUSETS="4" SPLITS="auto" DEADLINE_S=90 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/r2 stream jacobi-2d-imper fdtd-2d
cp /tmp/r2/table.txt "$OUT/t2.txt"
GPUSETS="4" SPLITS="auto always" DEADLINE_S=200 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/r3 clpeak_sp clpeak_bw
cp /tmp/r3/table.txt "$OUT/t3.txt"
tar czf "$OUT/all.tgz" -C /tmp r1 r2 r3
