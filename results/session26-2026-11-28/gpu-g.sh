#!/usr/bin/env bash
# Session 26, call g (nvidia-h200-x2): A = .gpu/libOpenCL-s26.so (main at 82fbcb9: halo reads
# of a launch issued ahead waited for on the host) against B = .gpu/libOpenCL-s26c.so (the
# halo writes gated on the devices, exec::launch::gates), fdtd-2d 5,000 steps at 16384² in
# `always` and `auto` over both GPUs, natively once, two rounds alternating; then one fdtd-2d
# (500 steps) with B and CLPRISM_DEBUG=1 (the timeline of launches 1400-1404).
# usage (GPU host, repository root, `.gpu` carried): bash results/session26-2026-11-28/gpu-g.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
LIB_A=.gpu/libOpenCL-s26.so LIB_B=.gpu/libOpenCL-s26c.so GPUSETS=2 ROUNDS=2 SPLITS="always auto" \
  APPS="fdtd-long" DEBUG_RUNS=0 DEADLINE_S=300 RUN_TIMEOUT=60 \
  timeout 420 bash bench/gpu_lib_ab.sh /tmp/s26g > /tmp/s26g.progress 2>&1
cp /tmp/s26g/kernel-times.txt "$OUT/"
source .gpu/gpu-env.sh > /dev/null 2>&1
LIB=.gpu/libOpenCL-s26c.so GPUSETS=2 WARM=0 NATIVE=0 SPLITS=always CLPRISM_DEBUG=1 RUN_TIMEOUT=60 \
  timeout 60 bash bench/multi_gpu.sh /tmp/s26g/debug fdtd-2d > /tmp/s26g/debug.progress 2>&1
mkdir -p /tmp/s26g/debug/x && tar xzf /tmp/s26g/debug/logs.tgz -C /tmp/s26g/debug/x
grep -E "launch (1400|1401|1402|1403|1404)[: ]|halo batch|chunk enqueue|taken up" /tmp/s26g/debug/x/logs/fdtd-2d.always.gpu2.out \
  | sed -n '/launch 1400: on/,/launch 1404: on/p' | head -90 > "$OUT/debug-timeline.txt"
grep -v "^    slabs" "$OUT/kernel-times.txt"
