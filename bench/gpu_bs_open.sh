#!/usr/bin/env bash
# Transfer-bound Black-Scholes end to end: native against balance mode (defaults: the
# devices open in the background once the app has built its program) and against
# CLPRISM_BALANCE_EARLY=off, runs alternated so drift hits every config alike.
# Usage (GPU machine, after `source .gpu/gpu-env.sh`): bench/gpu_bs_open.sh OUTDIR [ROUNDS]
set -u
OUT=$1; ROUNDS=${2:-4}
G=$(pwd)/.gpu
LIB=$G/libOpenCL.so
mkdir -p "$OUT/logs"
. "$(dirname "$0")/gpu-common.sh"
[ -n "$nv" ] || { echo "no NVIDIA platform found"; exit 1; }
export CLPRISM_EXAMPLE_DEVICE="$nv:0" EX_CHECK_STRIDE=1024
ngpu=$(nvidia-smi -L | wc -l)
bs=$G/examples/blackscholes
one() { # config env...
  local cfg=$1; shift
  local ms
  ms=$(env "$@" CLPRISM_CACHE=$G/emu-cache CLPRISM_SUMMARY=off "$bs" 33554432 8 2>>"$OUT/logs/$cfg.err" | sed -n 's/.*time_ms=\([0-9.]*\).*/\1/p' | tail -1)
  echo "$cfg $ms" | tee -a "$OUT/bs-open.txt"
}
for r in $(seq 1 "$ROUNDS"); do
  one native
  one balance-gpu$ngpu CLPRISM_MODE=balance CLPRISM_DEVICES=gpu:$ngpu CLPRISM_LOG=$OUT/logs/balance-$r.jsonl LD_PRELOAD=$LIB
  one balance-early-off-gpu$ngpu CLPRISM_MODE=balance CLPRISM_DEVICES=gpu:$ngpu CLPRISM_BALANCE_EARLY=off CLPRISM_LOG=$OUT/logs/early-off-$r.jsonl LD_PRELOAD=$LIB
  one log CLPRISM_MODE=log CLPRISM_LOG=$OUT/logs/log-$r.jsonl LD_PRELOAD=$LIB
done
python3 - "$OUT/bs-open.txt" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 2:
        rows.setdefault(p[0], []).append(float(p[1]))
nat = st.median(rows.get("native", [float("nan")]))
for k, v in rows.items():
    m = st.median(v)
    print(f"{k:28s} runs={len(v)} median_ms={m:8.1f} min={min(v):8.1f} max={max(v):8.1f} native/this={nat / m:5.3f}")
PY
