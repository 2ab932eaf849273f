#!/usr/bin/env bash
# Issue 21 benchmark: what log mode costs a launch-heavy app, native against clprism with each
# CLPRISM_DEVICE_TIMING setting, side by side in one run. The app is bench/launches.c (STEPS
# launches of a small 1-D stencil, no events, one clFinish); configurations run interleaved
# ROUNDS times; each prints one line with the median wall time of the launch loop, per
# launch, the ratio to native, the extra us per launch over native and over `off`, and how
# many launches were timed (from the log).
#
# Configurations (CONFIGS, default "native off profq adaptive all"):
#   native    the app alone
#   off       CLPRISM_DEVICE_TIMING=off: queues not profiled, no launch timed (the untimed
#             path's own cost: building and writing the record)
#   profq     CLPRISM_DEVICE_TIMING=sample:1000000000: queues profiled but only each kernel
#             object's first launch timed (profq - off = the driver's price of a profiled
#             queue for launches without an event)
#   adaptive  the default (a sample timed with a profiled event)
#   all       every launch timed
#   any other CLPRISM_DEVICE_TIMING value (sample:N, adaptive:PCT) runs as given.
#   balance   CLPRISM_MODE=balance with the default CLPRISM_SPLIT=auto and device timing
#             (issue 18 item 2: a launch kept whole costs what forwarding costs)
#   balanceoff  the same with CLPRISM_DEVICE_TIMING=off (compare with `off`: no launch is
#             timed in either, so the adaptive sample's draw does not enter the difference)
#   NAME3     (native3, adaptive3, balance3, ...) NAME with POCL_DEVICES=$POCL_DEVICES3
#             (default "pthread pthread basic": three PoCL devices, the split-capable set);
#             its ratios are against native3, the app alone on that device set.
# Each line also gives +us_vs_log: over `adaptive` (log mode's default) of the same library
# and device set, and for balance the launches split (schedule without a fallback).
# Targets: issue 21, the default within ~2 us per launch of native; issue 18 item 2,
# balance within ~1 us per launch of log mode.
#
# Usage: bench/launch_overhead.sh [ROUNDS=5] [STEPS=20000] [ELEMS=65536]
#   CLPRISM_LIB (default target/release/libOpenCL.so), LAUNCHES_EXE (default
#   examples/build/launches), CLPRISM_EXAMPLE_DEVICE=P:D picks the device, CONFIGS as above,
#   LIBS="name=path ..." runs every clprism configuration once per library (e.g. main's and a
#   branch's build), each line then named name:config.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}; steps=${2:-20000}; elems=${3:-65536}
exe=${LAUNCHES_EXE:-examples/build/launches}
[ -x "$exe" ] || make -s -C bench
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
configs=(${CONFIGS:-native off profq adaptive all})
libs=(${LIBS:-lib=${CLPRISM_LIB:-$PWD/target/release/libOpenCL.so}})
base_of() { # config -> the config without its device-set suffix
  case "$1" in *3) echo "${1%3}" ;; *) echo "$1" ;; esac
}
timing_of() { # config -> CLPRISM_DEVICE_TIMING value
  case "$(base_of "$1")" in
    profq) echo sample:1000000000 ;; balance) echo adaptive ;; balanceoff) echo off ;; *) base_of "$1" ;;
  esac
}
mode_of() { # config -> CLPRISM_MODE
  case "$(base_of "$1")" in balance*) echo balance ;; *) echo log ;; esac
}
devices_of() { # config -> POCL_DEVICES
  case "$1" in *3) echo "${POCL_DEVICES3:-pthread pthread basic}" ;; *) echo "${POCL_DEVICES:-}" ;; esac
}
names=()
for c in "${configs[@]}"; do
  if [ "$(base_of "$c")" = native ]; then names+=("$c"); continue; fi
  for l in "${libs[@]}"; do
    if [ ${#libs[@]} -gt 1 ]; then names+=("${l%%=*}:$c"); else names+=("$c"); fi
  done
done
lib_of() { # name -> library path
  local n=$1
  if [ ${#libs[@]} -gt 1 ]; then
    for l in "${libs[@]}"; do [ "${l%%=*}" = "${n%%:*}" ] && { echo "${l#*=}"; return; }; done
  fi
  echo "${libs[0]#*=}"
}
for r in $(seq "$rounds"); do
  for n in "${names[@]}"; do
    f="$tmp/${n//[:\/]/_}"
    c=${n#*:}
    if [ "$(base_of "$n")" = native ]; then
      POCL_DEVICES=$(devices_of "$n") "$exe" "$steps" "$elems" 2>/dev/null | grep '^launches' >> "$f"
    else
      POCL_DEVICES=$(devices_of "$c") CLPRISM_MODE=$(mode_of "$c") \
        CLPRISM_DEVICE_TIMING=$(timing_of "$c") CLPRISM_LOG="$f.jsonl" \
        CLPRISM_SUMMARY=off LD_PRELOAD="$(lib_of "$n")" "$exe" "$steps" "$elems" 2>/dev/null |
        grep '^launches' >> "$f"
      echo "$(grep -c '"device_ns":[0-9]' "$f.jsonl") $(grep -c '"kernel"' "$f.jsonl") \
        $(grep '"schedule"' "$f.jsonl" | grep -c '"fallback":null')" >> "$f.timed"
    fi
  done
done
median() { # file key
  sed -n "s/.*$2=\([0-9.e+-]*\).*/\1/p" "$1" | sort -g | awk '{a[NR]=$1} END {print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'
}
printf "%-20s %9s %8s %6s %9s %9s %9s  %s\n" config time_ms us/launch ratio +us/launch +us_vs_off +us_vs_log "timed, split"
for n in "${names[@]}"; do
  f="$tmp/${n//[:\/]/_}"
  c=${n#*:}
  pre=""; [ "$n" != "$c" ] && pre="${n%%:*}_"
  suf=""; [ "$(base_of "$c")" != "$c" ] && suf=3
  nat=$(median "$tmp/native$suf" time_ms)
  ms=$(median "$f" time_ms)
  off=""; log=""
  [ -f "$tmp/${pre}off$suf" ] && [ "$(base_of "$c")" != native ] && off=$(median "$tmp/${pre}off$suf" time_ms)
  [ -f "$tmp/${pre}adaptive$suf" ] && [ "$(base_of "$c")" != native ] && log=$(median "$tmp/${pre}adaptive$suf" time_ms)
  timed="-"
  [ -f "$f.timed" ] && timed=$(awk '{t+=$1; l+=$2; s+=$3} END {printf "%d of %d, %d split", t/NR, l/NR, s/NR}' "$f.timed")
  awk -v n="$n" -v ms="$ms" -v nat="$nat" -v off="$off" -v lg="$log" -v s="$steps" -v timed="$timed" 'BEGIN {
    vs = (off == "") ? "        -" : sprintf("%+9.2f", (ms - off) * 1e3 / s)
    vl = (lg == "") ? "        -" : sprintf("%+9.2f", (ms - lg) * 1e3 / s)
    printf "%-20s %9.1f %8.2f %6.3f %+9.2f %s %s  %s\n",
      n, ms, ms * 1e3 / s, ms / nat, (ms - nat) * 1e3 / s, vs, vl, timed }'
done
echo "(median of $rounds interleaved rounds; $exe $steps $elems; device ${CLPRISM_EXAMPLE_DEVICE:-0:0};"
echo " POCL_DEVICES=\"${POCL_DEVICES:-}\", for NAME3 \"${POCL_DEVICES3:-pthread pthread basic}\";"
for l in "${libs[@]}"; do echo " ${l%%=*} = ${l#*=}"; done
echo " +us/launch: over native (native3 for NAME3); +us_vs_off, +us_vs_log: over"
echo " CLPRISM_DEVICE_TIMING=off and over adaptive (log mode's default) with the same library and devices;"
echo " profq = sample:1000000000 (profiled queues, one launch per kernel object timed); balance = CLPRISM_MODE=balance, CLPRISM_SPLIT=auto;"
echo " timed: launches with a device_ns, mean over the rounds, of the log's records; split: balance records without a fallback)"
