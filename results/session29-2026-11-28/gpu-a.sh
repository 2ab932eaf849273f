#!/usr/bin/env bash
# Session 29, call a (nvidia-h200-x4):
#  1. bench/nv_binpath.c: building PolyBench 2mm's program (and a kernel with const inputs) on
#     the 4 GPUs from the app's binary against from source, and the argument info of each;
#  2. A = main at 87c95ba, B = this session's build (the host-to-device rate measured once per
#     model of device; the scout alone as the probe on ready devices): gemm, 2mm, 3mm in `auto`
#     over 4 GPUs, CLPRISM_DEBUG=1 (the opening's timeline), one round;
#  3. BabelStream (stream) in `always` with CLPRISM_DEBUG=1, build B: when the devices are
#     ready against the app's first build.
# usage (GPU host, repository root, `.gpu` carried): bash results/session29-2026-11-28/gpu-a.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
tar -C .gpu -xJf .gpu/libs-s29a.tar.xz
source .gpu/gpu-env.sh > /dev/null 2>&1
cp .gpu/nv_binpath /tmp/nv_binpath  # built here: gcc -O2 -o .gpu/nv_binpath bench/nv_binpath.c -lOpenCL -lpthread
cat > /tmp/const.cl <<'CL'
__kernel void axpy(__global const float *x, __global float *y, __constant float *c, float a, __local float *t) {
  size_t i = get_global_id(0);
  t[get_local_id(0)] = x[i];
  y[i] = a * t[get_local_id(0)] + y[i] + c[0];
}
CL
{ timeout 60 /tmp/nv_binpath .gpu/mgpu/2mm/2mm.cl mm2_kernel1
  timeout 60 /tmp/nv_binpath /tmp/const.cl axpy; } > "$OUT/binpath.txt" 2>&1
cat "$OUT/binpath.txt"
LIB_A=.gpu/libOpenCL-main.so LIB_B=.gpu/libOpenCL.so GPUSETS=4 ROUNDS=1 SPLITS=auto \
  APPS="gemm 2mm 3mm" DEBUG_RUNS=0 ENV_A=CLPRISM_DEBUG=1 ENV_B=CLPRISM_DEBUG=1 DEADLINE_S=200 \
  RUN_TIMEOUT=60 timeout 230 bash bench/gpu_lib_ab.sh /tmp/s29a > /tmp/s29a.progress 2>&1
cp /tmp/s29a/kernel-times.txt "$OUT/" 2>/dev/null || tail -20 /tmp/s29a.progress
for d in /tmp/s29a/*/; do tar xzf $d/logs.tgz -C $d 2>/dev/null; done
tar czf "$OUT/mm-logs.tgz" -C /tmp s29a --exclude='*.jsonl' 2>/dev/null
grep -v "^    slabs" "$OUT/kernel-times.txt"
for d in a-1 b-1; do for app in gemm 2mm 3mm; do
  echo "== $d $app"; grep -h "clprism-debug" /tmp/s29a/$d/logs/$app.auto.*.out | \
    grep -E "open:|engine ready|build|probe of|handed|staging ready|chunks set up|first launches" | cut -c1-200
done; done > "$OUT/timeline.txt"
LIB=.gpu/libOpenCL.so GPUSETS=4 SPLITS=always NATIVE=0 WARM=0 CLPRISM_DEBUG=1 DEADLINE_S=60 \
  RUN_TIMEOUT=50 timeout 80 bash bench/multi_gpu.sh /tmp/s29a-stream stream > /dev/null 2>&1
mkdir -p /tmp/s29a-stream/x && tar xzf /tmp/s29a-stream/logs.tgz -C /tmp/s29a-stream/x
grep -h "clprism-debug" /tmp/s29a-stream/x/logs/stream.always.*.out | head -60 | cut -c1-200 > "$OUT/stream-open.txt"
cat "$OUT/stream-open.txt" | head -40
