#!/usr/bin/env bash
# Issue 5 GPU benchmark: balance mode against native single-GPU runs, side by side in one run
# on a multi-GPU machine (results/gpu-*/balance-*.txt holds the output and the command).
# Expects the build products in .gpu/ (see README "Reproducing the GPU results"):
#   .gpu/libOpenCL.so  .gpu/examples/*  .gpu/gpu-env.sh  .gpu/emu-cache/ (SPIR-V of the
#   example kernels, so footprints work on a machine without clang)
# Prints one line per run: app, config, the app's own time_ms (uploads, every launch,
# read-back; the CPU reference check is outside it) and the process wall time. Per-launch
# logs go to $OUT/logs.tgz.
# Usage: bench/gpu_balance.sh OUTDIR [quick]
set -uo pipefail
OUT=${1:?OUTDIR}
QUICK=${2:-}
mkdir -p "$OUT/logs"
G=$PWD/.gpu
LIB=$G/libOpenCL.so
export CLPRISM_CACHE=$G/emu-cache
nv=""
for p in 0 1 2 3; do
  probe=$(CLPRISM_EXAMPLE_DEVICE=$p:0 "$G/examples/blackscholes" 1024 2>&1)
  case "$probe" in *NVIDIA*|*nvidia*) nv=$p; break ;; esac
done
echo "NVIDIA platform index: ${nv:-none}"
ngpu=$(nvidia-smi -L | wc -l)
echo "GPUs: $ngpu"
export CLPRISM_EXAMPLE_DEVICE="${nv:-0}:0"
export EX_CHECK_STRIDE=1024
[ -n "$nv" ] || { echo "no NVIDIA platform found"; exit 1; }

run() { # name config env... -- app args
  local name=$1 cfg=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local t0=$(date +%s.%N)
  local out
  out=$(env "${envs[@]}" CLPRISM_LOG=$OUT/logs/$name.$cfg.jsonl CLPRISM_SUMMARY=off timeout 150 "$@" 2>"$OUT/logs/$name.$cfg.err")
  local rc=$?
  local t1=$(date +%s.%N)
  local ms=$(echo "$out" | sed -n 's/.*time_ms=\([0-9.]*\).*/\1/p' | tail -1)
  local st=$(echo "$out" | grep -oE '^(PASS|FAIL)' | tail -1)
  printf "%-14s %-26s rc=%-3s %-4s time_ms=%-10s wall_s=%.2f\n" "$name" "$cfg" "$rc" "${st:-?}" "${ms:-?}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" | tee -a "$OUT/balance.txt"
}
bal() { # name config devices [env...] -- app args
  local name=$1 cfg=$2 devs=$3; shift 3
  run "$name" "$cfg" CLPRISM_MODE=balance CLPRISM_DEVICES=$devs LD_PRELOAD=$LIB "$@"
}

apps=("matmul_global 8192 3" "matmul_local 8192 3" "blackscholes 33554432 4" "transpose 32768 4")
[ -n "$QUICK" ] && apps=("matmul_global 4096 2")
for spec in "${apps[@]}"; do
  set -- $spec; app=$1; shift
  exe=$G/examples/$app
  run $app native -- "$exe" "$@"
  for n in 1 2 3 4; do
    [ "$n" -le "$ngpu" ] || continue
    bal $app boyer-gpu$n gpu:$n -- "$exe" "$@"
  done
  if [ "$ngpu" -ge 4 ] && [ "$app" = matmul_global ]; then
    # static sweep (the best static partition on identical GPUs should be the even one)
    for f in 0.25,0.25,0.25,0.25 0.28,0.24,0.24,0.24 0.22,0.26,0.26,0.26; do
      bal $app static:$f gpu:4 CLPRISM_SCHEDULER=static:$f -- "$exe" "$@"
    done
    for s in gss tss css:0.07; do
      bal $app $s-gpu4 gpu:4 CLPRISM_SCHEDULER=$s -- "$exe" "$@"
    done
    # one GPU blocked behind a user event that never completes, against the three others
    bal $app blocked-gpu4 gpu:4 CLPRISM_FAULT=block:3 -- "$exe" "$@"
    # variability: GPU 1 shared with a competing native matmul for the whole block
    CLPRISM_EXAMPLE_DEVICE=$nv:1 "$G/examples/matmul_global" 8192 400 >/dev/null 2>&1 &
    hog=$!
    sleep 2
    bal $app loaded-boyer-gpu4 gpu:4 -- "$exe" "$@"
    bal $app loaded-static-even gpu:4 CLPRISM_SCHEDULER=static:0.25,0.25,0.25,0.25 -- "$exe" "$@"
    bal $app loaded-static-0.3x3 gpu:4 CLPRISM_SCHEDULER=static:0.3,0.1,0.3,0.3 -- "$exe" "$@"
    bal $app loaded-gss-gpu4 gpu:4 CLPRISM_SCHEDULER=gss -- "$exe" "$@"
    bal $app loaded-tss-gpu4 gpu:4 CLPRISM_SCHEDULER=tss -- "$exe" "$@"
    bal $app loaded-css-gpu4 gpu:4 CLPRISM_SCHEDULER=css:0.07 -- "$exe" "$@"
    kill $hog 2>/dev/null; wait $hog 2>/dev/null
  fi
done
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
