#!/usr/bin/env bash
# Exit stress (issue 18, Checks): an app that builds a program, launches once, checks its
# result and exits at once (tests/c/quick_exit.c, releasing nothing) runs RUNS times in
# balance mode per CLPRISM_SPLIT value while a busy loop keeps every core loaded, so the
# app's exit meets clprism's background device opening and program builds at many points.
# A check, not a timed test: prints per split value the count of each outcome, the median
# and slowest run, and from clprism's log of each run how many launches took the balanced
# path, how many completed chunks on >= 2 devices, and the most frequent fallback reasons (e.g. devices still opening when the app launched). Outcomes: ok (exit 0, "kernels: 1"), wrong (exit 1: a result word differs),
# clerr (exit 2: an OpenCL call failed), crash (ended by a signal, or any other exit code),
# hang (still running after RUN_TIMEOUT s; killed).
#
# Usage: bench/stress_exit.sh [OUT_DIR]          (default: /tmp/stress_exit)
#   RUNS=N          runs per split value (default 200)
#   SPLITS="..."    CLPRISM_SPLIT values (default "always auto")
#   RUN_TIMEOUT=S   seconds before one run counts as a hang (default 60)
#   LOAD=N          busy loops started for the length of the script (default: nproc)
#   LIB=path        the interposer (default target/release/libOpenCL.so)
#   APP_ARGS="..."  arguments of quick_exit (default "4096"; "4096 --release-program"
#                   releases the program right after clCreateKernel)
#   POCL_DEVICES    as the caller sets it (default "pthread pthread basic")
#   EARLY=off       CLPRISM_BALANCE_EARLY=off: the devices are opened at the first launch,
#                   so the launch is split and the exit meets the builds that follow it
#                   (default on: the app usually exits while the devices still open)
#   COLD=1          every run starts on empty PoCL and clprism caches (the app's build is
#                   then PoCL's first LLVM compile in the process; default 0: warm caches)
# Exit status: 0 when every run is ok, 1 otherwise. The output of every run that is not ok
# is kept in OUT_DIR/<split>-<i>.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/stress_exit}
RUNS=${RUNS:-200}
SPLITS=${SPLITS:-"always auto"}
RUN_TIMEOUT=${RUN_TIMEOUT:-60}
LOAD=${LOAD:-$(nproc)}
LIB=${LIB:-$PWD/target/release/libOpenCL.so}
APP_ARGS=${APP_ARGS:-4096}
COLD=${COLD:-0}
EARLY=${EARLY:-on}
export POCL_DEVICES=${POCL_DEVICES:-"pthread pthread basic"}
[ -f "$LIB" ] || { echo "stress_exit: $LIB missing (cargo build --release)" >&2; exit 2; }
mkdir -p "$OUT/log"
APP="$OUT/quick_exit"
cc -O2 -Wall -o "$APP" tests/c/quick_exit.c -lOpenCL || exit 2
for v in $(env | grep -o '^CLPRISM_[A-Z_]*'); do unset "$v"; done

# The load: LOAD shell busy loops, each stopped by its own pid when the script ends.
loaders=()
stop_load() { for p in "${loaders[@]}"; do kill "$p" 2>/dev/null; done; }
trap stop_load EXIT
for _ in $(seq "$LOAD"); do
  (while :; do :; done) &
  loaders+=($!)
done

# one SPLIT I: one run; prints "outcome ms"
one() {
  local split=$1 i=$2 log="$OUT/$1-$2.txt" t0 rc r cold=()
  if [ "$COLD" = 1 ]; then
    rm -rf "$OUT/cold" && mkdir -p "$OUT/cold/pocl"
    cold=(XDG_CACHE_HOME="$OUT/cold" POCL_CACHE_DIR="$OUT/cold/pocl" CLPRISM_CACHE="$OUT/cold/clprism")
  fi
  t0=$(date +%s%3N)
  # shellcheck disable=SC2086
  timeout -k 5 "$RUN_TIMEOUT" env LD_PRELOAD="$LIB" CLPRISM_MODE=balance CLPRISM_DEVICES=all \
    CLPRISM_SPLIT="$split" CLPRISM_BALANCE_EARLY="$EARLY" CLPRISM_LOG="$OUT/log/$split-$i.jsonl" CLPRISM_SUMMARY=off "${cold[@]}" \
    "$APP" $APP_ARGS >"$log" 2>&1
  rc=$?
  case $rc in
    0) grep -q '^kernels: 1$' "$log" && r=ok || r=crash ;;
    1) r=wrong ;;
    2) r=clerr ;;
    124 | 137) r=hang ;;
    *) r=crash ;;
  esac
  [ "$r" = ok ] && rm -f "$log" || echo "exit $rc" >>"$log"
  echo "$r $(($(date +%s%3N) - t0))"
}

# Launch records of one split value's runs: how many ran on >= 2 devices, and why not.
launches() { # split
  cat "$OUT/log/$1"-*.jsonl 2>/dev/null | /usr/bin/python3 bench/balance_launches.py  # run from the repository root (cd above)
}

status=0
printf '%-8s %5s %5s %5s %5s %5s %5s %9s %9s\n' split runs ok wrong clerr crash hang median_ms max_ms
for split in $SPLITS; do
  res="$OUT/$split.results"
  : >"$res"
  for i in $(seq "$RUNS"); do one "$split" "$i" >>"$res"; done
  c() { grep -c "^$1 " "$res"; }
  read -r med max < <(awk '{print $2}' "$res" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[NR]}')
  printf '%-8s %5s %5s %5s %5s %5s %5s %9s %9s\n' "$split" "$RUNS" "$(c ok)" "$(c wrong)" \
    "$(c clerr)" "$(c crash)" "$(c hang)" "$med" "$max"
  [ "$(c ok)" = "$RUNS" ] || status=1
  launches "$split" >"$OUT/$split.launches"
done
for split in $SPLITS; do sed "s/^/$split: /" "$OUT/$split.launches"; done
echo "load: $LOAD busy loops on $(nproc) cores; POCL_DEVICES=\"$POCL_DEVICES\"; app: quick_exit $APP_ARGS;" \
  "CLPRISM_BALANCE_EARLY=$EARLY; cold caches: $COLD; lib: $LIB"
exit $status
