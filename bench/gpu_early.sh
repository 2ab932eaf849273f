#!/usr/bin/env bash
# Crash check of balance mode's background start (CLPRISM_BALANCE_EARLY) on the GPU host:
# runs matmul_global 2048x2048 (4 launches) 10 times per configuration and counts the runs
# that did not exit 0. Expects the bundle of bench/gpu_bundle.sh in .gpu/.
# Usage: bench/gpu_early.sh
G=$PWD/.gpu
export CLPRISM_CACHE=$G/emu-cache CLPRISM_LOG=off CLPRISM_SUMMARY=off EX_CHECK_STRIDE=1024
export CLPRISM_EXAMPLE_DEVICE=${CLPRISM_EXAMPLE_DEVICE:-1:0}
count() { # label env...
  local label=$1; shift; local ok=0 bad=0 rcs=""
  for i in $(seq 1 10); do
    env "$@" CLPRISM_MODE=balance LD_PRELOAD=$G/libOpenCL.so "$G/examples/matmul_global" 2048 4 >/dev/null 2>&1
    r=$?; if [ $r = 0 ]; then ok=$((ok + 1)); else bad=$((bad + 1)); rcs="$rcs $r"; fi
  done
  echo "$label ok=$ok failed=$bad${rcs:+ (exit codes:$rcs)}"
}
count early-on-gpu4 CLPRISM_DEVICES=gpu:4
count early-on-gpu1 CLPRISM_DEVICES=gpu:1
count early-off-gpu4 CLPRISM_DEVICES=gpu:4 CLPRISM_BALANCE_EARLY=off
