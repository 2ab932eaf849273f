#!/usr/bin/env bash
# Real applications nobody here wrote, natively and in balance mode (CLPRISM_SPLIT=auto and
# =always) on the same devices in the same run (issue 18, item 5). A benchmark, not a test:
# prints per app the wall-time ratio against native, the launches split over >= 2 devices,
# the app's exit code in each run and the most frequent fallback reasons.
#
# Usage: bench/real_apps.sh [OUT_DIR]       (default: /tmp/real_apps)
#   APPS="name ..."   subset of the corpus below (default: all)
#   REPS=N            runs per app and mode, the median is reported (default 1)
#   RUN_TIMEOUT=S     seconds before one run is stopped (default 900)
#   LIB=path          the interposer (default target/release/libOpenCL.so)
#   PLATFORM=N        the OpenCL platform the apps run on (default 0; on the GPU host,
#                     where PoCL is platform 0, PLATFORM=1 runs them on the NVIDIA GPU)
#   POLYBENCH=DIR     also every PolyBench-ACC app built by bench/corpus_build.sh into DIR
#                     (built with RUN_ON_CPU=1: the app checks the device's results against
#                     its host computation; rc is 1 when any output mismatches), named pb_<app>;
#                     it runs on the first device of the first platform (order the platforms
#                     with OCL_ICD_FILENAMES)
#   CLPRISM_DEVICES   balance devices (default all); POCL_DEVICES as the caller sets it
#                     (here: "pthread pthread basic", three unequal PoCL CPU devices)
# Every run of an app starts warm: one untimed native run first fills PoCL's and the
# driver's kernel caches, so the ratios compare steady runs.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/real_apps}
LIB=${LIB:-$PWD/target/release/libOpenCL.so}
REPS=${REPS:-1}
export CLPRISM_DEVICES=${CLPRISM_DEVICES:-all}
P=${PLATFORM:-0}
mkdir -p "$OUT"

# name|command (run from $OUT; the CLBlast tests check their own results against a CPU
# reference, clFFT-client and clpeak report figures, saxpy_check.py checks its result)
corpus=(
  "clblast_xaxpy|clblast_test_xaxpy -platform $P"
  "clblast_xdot|clblast_test_xdot -platform $P"
  "clblast_xnrm2|clblast_test_xnrm2 -platform $P"
  "clblast_xgemv|clblast_test_xgemv -platform $P"
  "clblast_xger|clblast_test_xger -platform $P"
  "clblast_xgemm|clblast_test_xgemm -platform $P"
  "clblast_xsymm|clblast_test_xsymm -platform $P"
  "clblast_xtrsv|clblast_test_xtrsv -platform $P"
  "clblast_xhad|clblast_test_xhad -platform $P"
  "clblast_xim2col|clblast_test_xim2col -platform $P"
  "clblast_xomatcopy|clblast_test_xomatcopy -platform $P"
  "clfft_1024x64|clFFT-client --platform $P -x 1024 -y 64 -p 5"
  "clfft_256x256|clFFT-client --platform $P -x 256 -y 256 -p 5"
  "clpeak_latency|clpeak -p $P -d 0 --kernel-latency"
  "clpeak_bandwidth|clpeak -p $P -d 0 --global-bandwidth"
  "pyopencl_saxpy|/usr/bin/python3 $PWD/tests/py/saxpy_check.py"
)
if [ -n "${POLYBENCH:-}" ]; then
  for a in $(cat "$POLYBENCH/apps.txt"); do
    corpus+=("pb_$a|cd $POLYBENCH/$a && ./$a.exe 2>&1 | tee /dev/stderr | grep -Eq '(Percent|misses): 0\$'")
  done
fi

ms() { date +%s%3N; }
# run LABEL MODE CMD: one run; prints "ms rc"
run1() {
  local label=$1 mode=$2; shift 2
  local t0 rc
  t0=$(ms)
  if [ "$mode" = native ]; then
    (cd "$OUT" && timeout "${RUN_TIMEOUT:-900}" bash -c "$*" >"$OUT/$label.$mode.out" 2>&1)
  else
    (cd "$OUT" && CLPRISM_MODE=balance CLPRISM_SPLIT=$mode CLPRISM_LOG="$OUT/$label.$mode.jsonl" \
      CLPRISM_SUMMARY=off LD_PRELOAD="$LIB" timeout "${RUN_TIMEOUT:-900}" bash -c "$*" >"$OUT/$label.$mode.out" 2>&1)
  fi
  rc=$?
  echo "$(( $(ms) - t0 )) $rc"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

summary() { # LOG -> "split/launches top-reason"
  python3 - "$1" <<'EOF'
import json, sys, collections
try:
    recs = [r for r in map(json.loads, open(sys.argv[1])) if "record" not in r]
except OSError:
    print("0/0 -"); sys.exit()
split, reasons = 0, collections.Counter()
for r in recs:
    s = r.get("schedule") or {}
    fb = s.get("fallback")
    if fb:
        reasons[fb.split(" (")[0].split(":")[0] if fb.startswith("kept whole") else fb[:60]] += 1
    elif len({c.get("device") for c in s.get("chunks", [])}) >= 2:
        split += 1
    else:
        reasons["ran on one device through clprism"] += 1
top = "; ".join(f"{n}x {k}" for k, n in reasons.most_common(2)) or "-"
print(f"{split}/{len(recs)} {top}")
EOF
}

printf '%-18s %9s %9s %6s %9s %6s %5s %13s %13s  %s\n' app native_ms auto_ms ratio always_ms ratio rc \
  split_auto split_always "top fallbacks (auto | always)"
for entry in "${corpus[@]}"; do
  name=${entry%%|*}; cmd=${entry#*|}
  if [ -n "${APPS:-}" ] && [[ " $APPS " != *" $name "* ]]; then continue; fi
  run1 "$name" native "$cmd" >/dev/null # warm the kernel caches
  declare -A t=() rcs=()
  for mode in native auto always; do
    times=()
    for _ in $(seq 1 "$REPS"); do
      read -r tm rc < <(run1 "$name" $mode "$cmd")
      times+=("$tm"); rcs[$mode]="${rcs[$mode]:-}$rc"
    done
    t[$mode]=$(printf '%s\n' "${times[@]}" | median)
  done
  sa=$(summary "$OUT/$name.auto.jsonl"); sw=$(summary "$OUT/$name.always.jsonl")
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
  printf '%-18s %9s %9s %6s %9s %6s %5s %13s %13s  %s | %s\n' "$name" "${t[native]}" "${t[auto]}" \
    "$(ratio "${t[auto]}" "${t[native]}")" "${t[always]}" "$(ratio "${t[always]}" "${t[native]}")" \
    "${rcs[native]}${rcs[auto]}${rcs[always]}" "${sa%% *}" "${sw%% *}" "${sa#* }" "${sw#* }"
  unset t rcs
done
