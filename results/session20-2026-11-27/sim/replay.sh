#!/bin/bash
# Replays the session-19 4 x H200 logs with `clprism simulate --replay` and projects them
# to 1, 2, 4 and 8 GPUs (docs/multi-gpu-projection.md). Usage, from the repository root:
#   bash results/session20-2026-11-27/sim/replay.sh > results/session20-2026-11-27/sim/replay.txt
# The tarballs are unpacked into a temporary directory (never into the repository).
set -euo pipefail
BIN=${CLPRISM:-${CARGO_TARGET_DIR:-target}/release/clprism}
S19=results/session19-2026-11-27
T=$(mktemp -d /tmp/replay-s19.XXXXXX)
trap 'rm -rf "$T"' EXIT
for x in c d e; do
  mkdir -p "$T/$x"; tar xzf "$S19/$x-logs.tgz" -C "$T/$x"
  for r in "$T/$x"/r*; do mkdir -p "$r/x"; tar xzf "$r/logs.tgz" -C "$r/x"; done
done
kernel_s() { [ -f "$1" ] && grep -A1 'GPU Time' "$1" | tail -1 | grep -E '^[0-9.]+$' || true; }
# tarball/run app mode
for run in "c r6 jacobi-long always" "c r6 fdtd-long always" "c r6 stream-long always" \
           "c r6 jacobi-long auto" "d r9 jacobi-long auto" "d r9 fdtd-2d auto" "d r9 gemm auto" \
           "d r9 stream-long auto" "e r10 jacobi-long auto"; do
  set -- $run
  L="$T/$1/$2/x/logs"
  nat=$(kernel_s "$L/$3.native.out"); meas=$(kernel_s "$L/$3.$4.gpu4.out")
  args=(simulate --replay "$L/$3.$4.gpu4.jsonl" --gpus 1,2,4,8)
  [ -n "$nat" ] && args+=(--native-kernel-s "$nat")
  [ -n "$meas" ] && args+=(--measured-kernel-s "$meas")
  echo "=================================================================="
  echo "== $1-logs.tgz $2: $3 $4 (native kernel_s ${nat:--}, measured kernel_s ${meas:--})"
  echo "\$ clprism ${args[*]}" | sed "s|$T|\$S19-unpacked|g"
  "$BIN" "${args[@]}" | sed "s|$T|\$S19-unpacked|g"
done
