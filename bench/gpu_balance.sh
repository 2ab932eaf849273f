#!/usr/bin/env bash
# Issue 5 GPU benchmark (and issue 2 overhead on a GPU), one run on a multi-GPU machine.
# Expects the build products in .gpu/ (see README "Reproducing the GPU results"):
#   .gpu/libOpenCL.so  .gpu/examples/*  .gpu/gpu-env.sh
# Prints one line per run: app, config, the app's own end-to-end time_ms (uploads, every
# launch, read-back), and writes the per-launch logs to $OUT/logs/.
# Usage: bench/gpu_balance.sh OUTDIR
set -uo pipefail
OUT=${1:?OUTDIR}
mkdir -p "$OUT/logs"
G=$PWD/.gpu
LIB=$G/libOpenCL.so
nv=""
for p in 0 1 2 3; do
  probe=$(CLPRISM_EXAMPLE_DEVICE=$p:0 "$G/examples/blackscholes" 1024 2>&1)
  case "$probe" in *NVIDIA*|*nvidia*) nv=$p; break ;; esac
done
echo "NVIDIA platform index: ${nv:-none}"
clinfo -l 2>/dev/null || true
ngpu=$(nvidia-smi -L | wc -l)
echo "GPUs: $ngpu"
export CLPRISM_EXAMPLE_DEVICE="${nv:-0}:0"
export EX_CHECK_STRIDE=1024
[ -n "$nv" ] || { echo "no NVIDIA platform found"; exit 1; }

# --- issue 2: forwarding and launch overhead on the GPU (interleaved, median of 5)
OVERHEAD_EXE=$G/examples/overhead CLPRISM_LIB=$LIB bench/overhead.sh 3 1.0 | tee "$OUT/overhead.txt"

run() { # name config env... -- app args
  local name=$1 cfg=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local t0=$(date +%s.%N)
  local out
  out=$(env "${envs[@]}" timeout 120 "$@" 2>"$OUT/logs/$name.$cfg.err")
  local rc=$?
  local t1=$(date +%s.%N)
  local ms=$(echo "$out" | sed -n 's/.*time_ms=\([0-9.]*\).*/\1/p' | tail -1)
  local st=$(echo "$out" | grep -oE '^(PASS|FAIL)' | tail -1)
  printf "%-16s %-22s rc=%-3s %-4s time_ms=%-10s wall_s=%.2f\n" "$name" "$cfg" "$rc" "${st:-?}" "${ms:-?}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" | tee -a "$OUT/balance.txt"
}

apps=(
  "matmul_global 8192 3"
)
for spec in "${apps[@]}"; do
  set -- $spec; app=$1; shift
  exe=$G/examples/$app
  run $app native -- "$exe" "$@"
  run $app log CLPRISM_MODE=log LD_PRELOAD=$LIB CLPRISM_LOG=$OUT/logs/$app.log.jsonl CLPRISM_SUMMARY=off -- "$exe" "$@"
  for n in 1 2 4; do
    [ "$n" -le "$ngpu" ] || continue
    run $app balance-gpu$n CLPRISM_MODE=balance CLPRISM_DEVICES=gpu:$n LD_PRELOAD=$LIB CLPRISM_LOG=$OUT/logs/$app.b$n.jsonl CLPRISM_SUMMARY=off -- "$exe" "$@"
  done
  if [ "$ngpu" -ge 4 ] && [ "$app" = matmul_global ]; then
    run $app static-4 CLPRISM_MODE=balance CLPRISM_DEVICES=gpu:4 CLPRISM_SCHEDULER=static:0.25,0.25,0.25,0.25 LD_PRELOAD=$LIB CLPRISM_LOG=$OUT/logs/$app.static4.jsonl CLPRISM_SUMMARY=off -- "$exe" "$@"
    run $app gss-4 CLPRISM_MODE=balance CLPRISM_DEVICES=gpu:4 CLPRISM_SCHEDULER=gss LD_PRELOAD=$LIB CLPRISM_LOG=$OUT/logs/$app.gss4.jsonl CLPRISM_SUMMARY=off -- "$exe" "$@"
    run $app blocked-4 CLPRISM_MODE=balance CLPRISM_DEVICES=gpu:4 CLPRISM_FAULT=block:3 LD_PRELOAD=$LIB CLPRISM_LOG=$OUT/logs/$app.block4.jsonl CLPRISM_SUMMARY=off -- "$exe" "$@"
    run $app balance-gpu3 CLPRISM_MODE=balance CLPRISM_DEVICES=gpu:3 LD_PRELOAD=$LIB CLPRISM_LOG=$OUT/logs/$app.b3.jsonl CLPRISM_SUMMARY=off -- "$exe" "$@"
  fi
done
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
