#!/usr/bin/env bash
# Issue 4 on a GPU machine: measure the GPU's and the CPU's profiles with
# `clprism characterize`, then run `clprism accuracy` on GPU + PoCL CPU.
# Expects the build products in .gpu/ as bench/gpu_balance.sh does, plus the clprism binary:
#   .gpu/clprism  .gpu/libOpenCL.so  .gpu/examples/*
# Usage: bench/gpu_profile.sh OUTDIR GPU_PROFILE_NAME   (e.g. h100-sxm or h200)
# Writes OUTDIR/{gpu-quick.json, NAME.json, pocl-cpu.json, *.stderr.txt, profiles/,
# accuracy/}. Each step is bounded with timeout; the whole script stays within ~9 min.
set -uo pipefail
OUT=${1:?OUTDIR}
NAME=${2:?GPU profile name, e.g. h100-sxm}
mkdir -p "$OUT"
G=$PWD/.gpu
CLP=$G/clprism
nv="" cpu=""
for p in 0 1 2 3; do
  probe=$(CLPRISM_EXAMPLE_DEVICE=$p:0 "$G/examples/blackscholes" 1024 2>&1)
  case "$probe" in
    *NVIDIA*|*nvidia*) [ -n "$nv" ] || nv=$p ;;
    *pthread*|*cpu*|*CPU*|*Xeon*|*EPYC*) [ -n "$cpu" ] || cpu=$p ;;
  esac
done
echo "NVIDIA platform: ${nv:-none}; CPU platform: ${cpu:-none}"
[ -n "$nv" ] || { echo "no NVIDIA platform found"; exit 1; }

step() { # label timeout_s command...
  local label=$1 t=$2; shift 2
  local t0=$(date +%s.%N)
  timeout "$t" "$@" 2> "$OUT/$label.stderr.txt"
  local rc=$?
  echo "$label: rc=$rc $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f s", b-a}')" | tee -a "$OUT/steps.txt"
  tail -8 "$OUT/$label.stderr.txt"
}

export CLPRISM_CACHE=$G/emu-cache   # SPIR-V of the example kernels (no clang on the GPU hosts)
step gpu-quick 200 "$CLP" characterize --device "$nv:0" --quick --name "$NAME" --out "$OUT/$NAME.json"
if [ -n "$cpu" ]; then
  # A host-specific CPU profile (pinned to its core count) that wins over the CI one.
  step cpu-full 120 "$CLP" characterize --device "$cpu:0" --name "pocl-cpu-$(nproc)" --pin \
    --out "$OUT/pocl-cpu.json"
fi

rm -rf "$OUT/profiles"; cp -r profiles "$OUT/profiles"; rm -rf "$OUT/profiles/tools"
[ -s "$OUT/$NAME.json" ] && cp "$OUT/$NAME.json" "$OUT/profiles/$NAME.json"
[ -s "$OUT/pocl-cpu.json" ] && cp "$OUT/pocl-cpu.json" "$OUT/profiles/"
devs="$nv:0${cpu:+,$cpu:0}"
EX_CHECK_STRIDE=1024 step accuracy 240 "$CLP" accuracy --examples "$G/examples" \
  --profiles "$OUT/profiles" --devices "$devs" --out "$OUT/accuracy" --verbose \
  --args "matmul_global=1024" --args "matmul_local=1024"
cat "$OUT/accuracy/accuracy.txt" 2>/dev/null | tail -20
