#!/usr/bin/env bash
# Issue 2 overhead benchmark on one NVIDIA GPU (build products in .gpu/, see docs/results.md).
set -uo pipefail
G=$PWD/.gpu
. "$(dirname "$0")/gpu-common.sh"
[ -n "$nv" ] || { echo "no NVIDIA platform found"; exit 1; }
nvidia-smi -L
CLPRISM_EXAMPLE_DEVICE=$nv:0 OVERHEAD_EXE=$G/examples/overhead CLPRISM_LIB=$G/libOpenCL.so bench/overhead.sh "${1:-5}" 1.0
