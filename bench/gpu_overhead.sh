#!/usr/bin/env bash
# Issue 2 overhead benchmark on one NVIDIA GPU (build products in .gpu/, see README).
set -uo pipefail
G=$PWD/.gpu
nv=""
for p in 0 1 2 3; do
  probe=$(CLPRISM_EXAMPLE_DEVICE=$p:0 "$G/examples/blackscholes" 1024 2>&1 | head -1)
  case "$probe" in *NVIDIA*|*nvidia*) nv=$p; break ;; esac
done
[ -n "$nv" ] || { echo "no NVIDIA platform found"; exit 1; }
nvidia-smi -L
CLPRISM_EXAMPLE_DEVICE=$nv:0 OVERHEAD_EXE=$G/examples/overhead CLPRISM_LIB=$G/libOpenCL.so bench/overhead.sh "${1:-5}" 1.0
