#!/usr/bin/env bash
# Issue 2 / issue 21 overhead benchmarks on one NVIDIA GPU (build products in .gpu/, made by
# bench/gpu_bundle.sh; see docs/results.md).
#  1. bench/overhead.sh: extra ns per call of each OpenCL call, per configuration.
#  2. bench/launch_overhead.sh: a launch-heavy app (20000 launches of a 1-D stencil), one line
#     each for native and CLPRISM_DEVICE_TIMING=off / profq (profiled queues, nothing timed) /
#     adaptive (the default) / all: wall time, us per launch, ratio to native, extra us per
#     launch over native and over `off`, launches timed. `off` is the untimed path's own cost,
#     `profq - off` the driver's price of a profiled queue, `adaptive - profq` the sample's.
# Usage: bench/gpu_overhead.sh [ROUNDS=5]
#   LIBS="main=.gpu/libOpenCL-main.so new=.gpu/libOpenCL.so" compares two builds line by line
#   in step 2 (see bench/launch_overhead.sh); CONFIGS picks the configurations.
set -uo pipefail
G=$PWD/.gpu
. "$(dirname "$0")/gpu-common.sh"
[ -n "$nv" ] || { echo "no NVIDIA platform found"; exit 1; }
nvidia-smi -L
CLPRISM_EXAMPLE_DEVICE=$nv:0 OVERHEAD_EXE=$G/examples/overhead CLPRISM_LIB=$G/libOpenCL.so bench/overhead.sh "${1:-5}" 1.0
echo
echo "launch-heavy app: native / off / profq / adaptive / all"
CLPRISM_EXAMPLE_DEVICE=$nv:0 LAUNCHES_EXE=$G/examples/launches CLPRISM_LIB=$G/libOpenCL.so bench/launch_overhead.sh "${1:-5}" 20000 65536
