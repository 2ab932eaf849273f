#!/usr/bin/env bash
# Repeat one piglit OpenCL test many times through clprism under CPU load (issue 18, Checks:
# piglit's cl-api-build-program crashed once in balance mode in CI). A check, not a timed
# test: runs the test RUNS times with the environment scripts/peer_suites.sh gives it (own
# log file per run, one clprism cache for all runs) while a busy loop per core keeps the
# machine loaded, and prints the count of each piglit result (pass, fail, skip, warn),
# crash (a signal, or no PIGLIT line) and timeout.
#
# Usage: bench/stress_piglit.sh [OUT_DIR]        (default: /tmp/stress_piglit)
#   TEST=name       piglit binary under $PIGLIT_DIR/bin (default cl-api-build-program)
#   RUNS=N          runs (default 1000)
#   MODE=m          CLPRISM_MODE, or native (default balance)
#   RUN_TIMEOUT=S   seconds before one run counts as a timeout (default 60)
#   LOAD=N          busy loops for the length of the script (default: nproc)
#   LIB=path        the interposer (default target/release/libOpenCL.so)
#   POCL_DEVICES    as the caller sets it (default "pthread pthread basic", as in CI)
#   other CLPRISM_* variables the caller sets are passed on (e.g. CLPRISM_SPLIT)
# Exit status: 0 when every run passes (the native result on PoCL), 1
# otherwise. The output of every run that does not pass is kept in OUT_DIR/run-<i>.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/stress_piglit}
TEST=${TEST:-cl-api-build-program}
RUNS=${RUNS:-1000}
MODE=${MODE:-balance}
RUN_TIMEOUT=${RUN_TIMEOUT:-60}
LOAD=${LOAD:-$(nproc)}
LIB=${LIB:-$PWD/target/release/libOpenCL.so}
PIGLIT=${PIGLIT_DIR:-/usr/lib/x86_64-linux-gnu/piglit}
export POCL_DEVICES=${POCL_DEVICES:-"pthread pthread basic"}
BIN="$PIGLIT/bin/$TEST"
[ -x "$BIN" ] || { echo "stress_piglit: $BIN missing (apt install piglit)" >&2; exit 2; }
[ -f "$LIB" ] || { echo "stress_piglit: $LIB missing (cargo build --release)" >&2; exit 2; }
mkdir -p "$OUT/log" "$OUT/cache"
pre=()
[ "$MODE" = native ] || pre=(LD_PRELOAD="$LIB" CLPRISM_MODE="$MODE" CLPRISM_SUMMARY=off
  CLPRISM_CACHE="$OUT/cache")

loaders=()
stop_load() { for p in "${loaders[@]}"; do kill "$p" 2>/dev/null; done; }
trap stop_load EXIT
for _ in $(seq "$LOAD"); do
  (while :; do :; done) &
  loaders+=($!)
done

# one I: one run in OUT (piglit writes nothing there); prints its result
one() {
  local i=$1 log="$OUT/run-$1.txt" rc r
  (cd "$OUT" && timeout -k 5 "$RUN_TIMEOUT" env "${pre[@]}" CLPRISM_LOG="$OUT/log/$i.jsonl" \
    "$BIN" >"$log" 2>&1)
  rc=$?
  r=$(grep -o '"result": *"[a-z]*"' "$log" | tail -1 | sed 's/.*"\([a-z]*\)"$/\1/')
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then r=timeout
  elif [ -z "$r" ] || [ "$rc" -gt 128 ]; then r=crash; fi
  if [ "$r" = pass ]; then rm -f "$log"; else echo "exit $rc" >>"$log"; fi
  echo "$r"
}

# Launch records of every run: how many took the balanced path, how many completed chunks
# on >= 2 devices, and the most frequent fallback reasons.
launches() {
  cat "$OUT/log/"*.jsonl 2>/dev/null | /usr/bin/python3 bench/balance_launches.py  # run from the repository root (cd above)
}

rm -f "$OUT/log/"*.jsonl
t0=$(date +%s)
: >"$OUT/results"
for i in $(seq "$RUNS"); do one "$i" >>"$OUT/results"; done
printf '%-24s %-8s %5s' test mode runs
for r in pass fail skip warn crash timeout; do printf ' %7s' "$r"; done
printf '\n%-24s %-8s %5s' "$TEST" "$MODE" "$RUNS"
for r in pass fail skip warn crash timeout; do printf ' %7s' "$(grep -cx "$r" "$OUT/results")"; done
printf '\n'
[ "$MODE" = native ] || launches
echo "in $(($(date +%s) - t0)) s; load: $LOAD busy loops on $(nproc) cores;" \
  "POCL_DEVICES=\"$POCL_DEVICES\"; $(env | grep '^CLPRISM_' | grep -v CLPRISM_TEST_LIB | tr '\n' ' ')lib: $LIB"
[ "$(grep -cx pass "$OUT/results")" = "$RUNS" ]
