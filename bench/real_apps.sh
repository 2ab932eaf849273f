#!/usr/bin/env bash
# Real applications nobody here wrote, natively and in balance mode (CLPRISM_SPLIT=auto and
# =always) on the same devices in the same run (issue 18, item 5). A benchmark, not a test:
# prints per app the wall-time ratio against native, the launches split over >= 2 devices,
# the app's exit code in each run and the most frequent fallback reasons.
#
# Usage: bench/real_apps.sh [OUT_DIR]       (default: /tmp/real_apps)
#   APPS="name ..."   subset of the corpus below (default: all)
#   REPS=N            runs per app and mode, interleaved, the median is reported (default 1);
#                     every run's time goes to OUT_DIR/times.tsv (app, mode, ms in run order)
#   ALWAYS_REPS=N     runs of balance always per app (default REPS)
#   MODES="native auto"  the modes timed (default "native auto always"; a mode left out
#                     prints empty columns; "log" adds clprism's default log mode, the cost
#                     of the interposer itself)
#   RUN_TIMEOUT=S     seconds before one run is stopped (default 900)
#   LIB=path          the interposer (default target/release/libOpenCL.so)
#   PLATFORM=N        the OpenCL platform the apps run on (default 0; on the GPU host,
#                     where PoCL is platform 0, PLATFORM=1 runs them on the NVIDIA GPU)
#   POLYBENCH=DIR     also every PolyBench-ACC app built by bench/corpus_build.sh into DIR
#                     (built with RUN_ON_CPU=1: the app checks the device's results against
#                     its host computation; rc is 1 when any output mismatches), named pb_<app>;
#                     it runs on the first device of the first platform (order the platforms
#                     with OCL_ICD_FILENAMES)
#   RODINIA=DIR       also Rodinia's OpenCL apps built by bench/rodinia_build.sh into DIR, named
#                     rd_<app>; each run prints a digest of the app's result (its output file,
#                     or its stdout without the timing lines; bfs and lud check themselves), and
#                     the "same" column says whether every mode's digest equals native's.
#                     RODINIA_SIZE=small (default; seconds on PoCL) or large (Rodinia's own
#                     run-script sizes, for a GPU)
#   CLPRISM_DEVICES   balance devices (default all); POCL_DEVICES as the caller sets it
#                     (here: "pthread pthread basic", three unequal PoCL CPU devices)
# Every run of an app starts warm: one untimed run per mode in WARM_MODES (default: native)
# first fills PoCL's and the driver's kernel caches, so the ratios compare steady runs;
# WARM_MODES="native always" also fills clprism's caches (program binaries per balance
# device, footprint models), so auto and always measure a second run, not a first.
# COLD=1 instead runs every timed run (every mode, native included) on empty caches: a fresh
# XDG_CACHE_HOME (clprism's and PoCL's caches) and NVIDIA's compute cache off, and no warm run:
# the ratios compare first runs (issue 18: "a cold first run within 1.5x").
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
if [ -n "${RODINIA:-}" ]; then
  R=$RODINIA/opencl D=$RODINIA/data
  # the result digest: drop the lines with timings, platform and device names
  dig="grep -Eiv '(^(init|memalloc|htod|exec|dtoh|close|total):|time|took|execution|send array|platform|device|vendor|^[0-9]+x[0-9]+ )' | md5sum"
  if [ "${RODINIA_SIZE:-small}" = large ]; then
    hs=1024 hsi=2000 h3i=500 bp=4194304 g=2048 lv=50 lu=2048 nw=8192 pf=400000 pfc=100000 sr=1000 sc=65536 bg=1000000
  else
    hs=512 hsi=20 h3i=20 bp=65536 g=256 lv=8 lu=1024 nw=2048 pf=4096 pfc=100000 sr=100 sc=16384 bg=65536
  fi
  corpus+=(
    "rd_backprop|cd $R/backprop && ./backprop.out -n $bp -p $P 2>&1 | $dig"
    "rd_bfs|cd $R/bfs && ./bfs.out $D/graph_$bg.txt -p $P 2>&1 | grep -c passed"
    "rd_gaussian|cd $R/gaussian && ./gaussian.out -s $g -v -p $P 2>&1 | $dig"
    "rd_hotspot|cd $R/hotspot && ./hotspot.out $hs 2 $hsi $D/temp_$hs $D/power_$hs out.\$\$ -p $P >/dev/null && md5sum < out.\$\$ && rm out.\$\$"
    "rd_hotspot3D|cd $R/hotspot3D && ./hotspot3D.out -n 512 -l 8 -i $h3i -f $D/power_512x8 $D/temp_512x8 out.\$\$ -p $P >/dev/null && md5sum < out.\$\$ && rm out.\$\$"
    "rd_lavaMD|cd $R/lavaMD && ./lavaMD.out -boxes1d $lv -p $P 2>&1 | $dig"
    "rd_lud|cd $R/lud && ./lud.out -s $lu -v -p $P 2>&1 | sed -n '/Verify/,\$p'"
    "rd_nw|cd $R/nw && ./nw.out $nw 10 ./nw.cl -p $P 2>&1 | $dig"
    "rd_particlefilter|cd $R/particlefilter && ./OCL_particlefilter_single.out -x 128 -y 128 -z 10 -np $pf -p $P 2>&1 | grep -E '^(XE|YE):' | md5sum"
    "rd_pathfinder|cd $R/pathfinder && ./pathfinder.out -c $pfc -r 100 -h 20 -p $P 2>&1 | $dig"
    "rd_srad|cd $R/srad && ./srad.out -n $sr -l 0.5 -s 502 458 -p $P >/dev/null 2>&1 && md5sum < output/image_out.pgm"
    "rd_streamcluster|cd $R/streamcluster && ./streamcluster.out 10 20 16 $sc $sc 1000 none out.\$\$ 1 -p $P >/dev/null 2>&1 && md5sum < out.\$\$ && rm out.\$\$"
  )
fi

ms() { date +%s%3N; }
# run LABEL MODE CMD: one run; prints "ms rc"
run1() {
  local label=$1 mode=$2; shift 2
  local t0 rc cold=
  if [ -n "${COLD:-}" ]; then
    cold=$(mktemp -d /tmp/real_apps_cold.XXXXXX)
    export XDG_CACHE_HOME=$cold CUDA_CACHE_DISABLE=1
  fi
  t0=$(ms)
  if [ "$mode" = native ]; then
    (cd "$OUT" && timeout "${RUN_TIMEOUT:-900}" bash -c "$*" >"$OUT/$label.$mode.out" 2>&1)
  elif [ "$mode" = log ]; then
    (cd "$OUT" && CLPRISM_MODE=log CLPRISM_LOG="$OUT/$label.$mode.jsonl" CLPRISM_SUMMARY=off \
      LD_PRELOAD="$LIB" timeout "${RUN_TIMEOUT:-900}" bash -c "$*" >"$OUT/$label.$mode.out" 2>&1)
  else
    (cd "$OUT" && CLPRISM_MODE=balance CLPRISM_SPLIT=$mode CLPRISM_LOG="$OUT/$label.$mode.jsonl" \
      CLPRISM_SUMMARY=off LD_PRELOAD="$LIB" timeout "${RUN_TIMEOUT:-900}" bash -c "$*" >"$OUT/$label.$mode.out" 2>&1)
  fi
  rc=$?
  echo "$(( $(ms) - t0 )) $rc"
  [ -z "$cold" ] || rm -rf "$cold"
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

printf '%-18s %9s %9s %6s %9s %6s %9s %6s %5s %5s %13s %13s  %s\n' app native_ms auto_ms ratio always_ms ratio \
  log_ms ratio rc same split_auto split_always "top fallbacks (auto | always)"
for entry in "${corpus[@]}"; do
  name=${entry%%|*}; cmd=${entry#*|}
  if [ -n "${APPS:-}" ] && [[ " $APPS " != *" $name "* ]]; then continue; fi
  [ -n "${COLD:-}" ] || for wm in ${WARM_MODES:-native}; do run1 "$name" "$wm" "$cmd" >/dev/null; done # warm the caches
  declare -A t=() rcs=() times=()
  # interleaved (native, auto, always, native, ...): a drift of the machine's speed during
  # the app's runs touches every mode alike
  for r in $(seq 1 "$REPS"); do
    for mode in ${MODES:-native auto always}; do
      [ "$mode" = always ] && [ "$r" -gt "${ALWAYS_REPS:-$REPS}" ] && continue
      read -r tm rc < <(run1 "$name" $mode "$cmd")
      times[$mode]="${times[$mode]:-} $tm"; rcs[$mode]="${rcs[$mode]:-}$rc"
    done
  done
  for mode in ${MODES:-native auto always}; do
    t[$mode]=$(printf '%s\n' ${times[$mode]} | median)
    # every run's time, in run order: the spread shows the machine's noise
    printf '%s\t%s\t%s\n' "$name" "$mode" "${times[$mode]# }" >>"$OUT/times.tsv"
  done
  sa=$(summary "$OUT/$name.auto.jsonl"); sw=$(summary "$OUT/$name.always.jsonl")
  same=-  # Rodinia: each mode's result digest against native's
  if [[ $name == rd_* ]]; then
    same=yes
    for mode in ${MODES:-native auto always}; do
      [ "$mode" = native ] || cmp -s "$OUT/$name.native.out" "$OUT/$name.$mode.out" || same="NO($mode)"
    done
  fi
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
  printf '%-18s %9s %9s %6s %9s %6s %9s %6s %5s %5s %13s %13s  %s | %s\n' "$name" "${t[native]:-}" "${t[auto]:-}" \
    "$(ratio "${t[auto]:-}" "${t[native]:-}")" "${t[always]:-}" "$(ratio "${t[always]:-}" "${t[native]:-}")" \
    "${t[log]:-}" "$(ratio "${t[log]:-}" "${t[native]:-}")" \
    "${rcs[native]:-}${rcs[auto]:-}${rcs[always]:-}${rcs[log]:-}" "$same" "${sa%% *}" "${sw%% *}" "${sa#* }" "${sw#* }"
  unset t rcs times
done
