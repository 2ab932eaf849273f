#!/usr/bin/env bash
# Session 29, call b (nvidia-h200-x4), every run a first run on the machine (NV_CACHE=fresh:
# an empty CUDA_CACHE_PATH per run, natives too; CACHE=fresh: an empty clprism cache):
#  1. bench/nv_binpath.c on the NVIDIA platform alone (OCL_ICD_VENDORS), empty CUDA cache:
#     PolyBench 2mm's program and a kernel with const / __constant / __local arguments built
#     on the 4 GPUs from the app's binary, from source with the app's options, and from
#     source with clprism's options, with the argument info of each;
#  2. A = main at 87c95ba, B = 4d676ea (like devices build from the app's binary; the host
#     rate once per model; the scout alone on ready devices): gemm, 2mm, 3mm, `auto` and
#     `always` over 4 GPUs, two rounds alternating;
#  3. B against B with CLPRISM_BALANCE_APP_BINARY=off, `auto`, two rounds: the app's binary alone;
#  4. one 2mm `auto` run of B with CLPRISM_DEBUG=1: the timeline.
# usage (GPU host, repository root, `.gpu` carried): bash results/session29-2026-11-28/gpu-b.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
tar -C .gpu -xJf .gpu/libs-s29b.tar.xz
source .gpu/gpu-env.sh > /dev/null 2>&1
export NV_CACHE=fresh
cat > /tmp/const.cl <<'CL'
__kernel void axpy(__global const float *x, __global float *y, __constant float *c, float a, __local float *t) {
  size_t i = get_global_id(0);
  t[get_local_id(0)] = x[i];
  y[i] = a * t[get_local_id(0)] + y[i] + c[0];
}
CL
for k in ".gpu/mgpu/2mm/2mm.cl mm2_kernel1" "/tmp/const.cl axpy"; do
  c=$(mktemp -d); OCL_ICD_VENDORS=/etc/OpenCL/vendors/nvidia.icd CUDA_CACHE_PATH=$c timeout 60 .gpu/nv_binpath $k; rm -rf $c
done > "$OUT/binpath.txt" 2>&1
cat "$OUT/binpath.txt"
LIB_A=.gpu/libOpenCL-main.so LIB_B=.gpu/libOpenCL.so GPUSETS=4 ROUNDS=2 SPLITS="auto always" \
  APPS="gemm 2mm 3mm" DEBUG_RUNS=0 DEADLINE_S=260 RUN_TIMEOUT=60 \
  timeout 280 bash bench/gpu_lib_ab.sh /tmp/s29b > /tmp/s29b.progress 2>&1
cp /tmp/s29b/kernel-times.txt "$OUT/ab-kernel-times.txt" 2>/dev/null || tail -20 /tmp/s29b.progress
grep -v "^    slabs" "$OUT/ab-kernel-times.txt"
LIB_A=.gpu/libOpenCL.so LIB_B=.gpu/libOpenCL.so ENV_B=CLPRISM_BALANCE_APP_BINARY=off GPUSETS=4 \
  ROUNDS=2 SPLITS=auto APPS="gemm 2mm 3mm" DEBUG_RUNS=0 DEADLINE_S=130 RUN_TIMEOUT=60 \
  timeout 150 bash bench/gpu_lib_ab.sh /tmp/s29b-off > /tmp/s29b-off.progress 2>&1
cp /tmp/s29b-off/kernel-times.txt "$OUT/appbin-kernel-times.txt" 2>/dev/null || tail -20 /tmp/s29b-off.progress
grep -v "^    slabs" "$OUT/appbin-kernel-times.txt"
LIB=.gpu/libOpenCL.so GPUSETS=4 SPLITS=auto NATIVE=0 WARM=0 CLPRISM_DEBUG=1 DEADLINE_S=40 \
  RUN_TIMEOUT=30 timeout 50 bash bench/multi_gpu.sh /tmp/s29b-dbg 2mm > /dev/null 2>&1
mkdir -p /tmp/s29b-dbg/x && tar xzf /tmp/s29b-dbg/logs.tgz -C /tmp/s29b-dbg/x
grep -h "clprism-debug" /tmp/s29b-dbg/x/logs/2mm.auto.*.out | \
  grep -E "open:|engine ready|build|probe of|handed|staging ready|chunks set up" | cut -c1-220 > "$OUT/timeline.txt"
cat "$OUT/timeline.txt"
