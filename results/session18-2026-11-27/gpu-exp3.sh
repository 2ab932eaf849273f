#!/usr/bin/env bash
# Session 18, third 4-GPU call: (1) bench/nv_paths.c, the ways between two GPUs of the host;
# (2) the corpus again after the opening moved from the first build to a probe that finds a
# long launch: clpeak (native / auto), PolyBench gemm, 2mm, 3mm (auto over 2 and 4 GPUs),
# BabelStream, jacobi-2d-imper, fdtd-2d (auto over 4 GPUs).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
mkdir -p /tmp/nv && cp /etc/OpenCL/vendors/nvidia.icd /tmp/nv/
( export OCL_ICD_VENDORS=/tmp/nv OCL_ICD_FILENAMES=libnvidia-opencl.so.1; .gpu/nv_paths 1024 0 ) 2>&1 | tee $OUT/nv-paths.txt
CLPRISM_DEBUG=1 GPUSETS="2 4" SPLITS="auto" DEADLINE_S=170 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/r5 gemm 2mm 3mm > /dev/null 2>&1
cp /tmp/r5/table.txt "$OUT/t5.txt"
GPUSETS="4" SPLITS="auto" DEADLINE_S=200 RUN_TIMEOUT=60 \
  bash bench/multi_gpu.sh /tmp/r6 clpeak_sp clpeak_bw stream jacobi-2d-imper fdtd-2d > /dev/null 2>&1
cp /tmp/r6/table.txt "$OUT/t6.txt"
tar czf "$OUT/exp3.tgz" -C /tmp r5 r6
