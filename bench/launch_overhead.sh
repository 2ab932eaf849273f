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
# Target (issue 21): the default within ~2 us per launch of native.
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
timing_of() { # config -> CLPRISM_DEVICE_TIMING value
  case "$1" in profq) echo sample:1000000000 ;; *) echo "$1" ;; esac
}
names=()
for c in "${configs[@]}"; do
  if [ "$c" = native ]; then names+=(native); continue; fi
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
    if [ "$n" = native ]; then
      "$exe" "$steps" "$elems" 2>/dev/null | grep '^launches' >> "$f"
    else
      CLPRISM_MODE=log CLPRISM_DEVICE_TIMING=$(timing_of "${n#*:}") CLPRISM_LOG="$f.jsonl" \
        CLPRISM_SUMMARY=off LD_PRELOAD="$(lib_of "$n")" "$exe" "$steps" "$elems" 2>/dev/null |
        grep '^launches' >> "$f"
      echo "$(grep -c '"device_ns":[0-9]' "$f.jsonl") $(wc -l < "$f.jsonl")" >> "$f.timed"
    fi
  done
done
median() { # file key
  sed -n "s/.*$2=\([0-9.e+-]*\).*/\1/p" "$1" | sort -g | awk '{a[NR]=$1} END {print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'
}
nat=$(median "$tmp/native" time_ms)
printf "%-18s %9s %8s %6s %9s %8s  %s\n" config time_ms us/launch ratio +us/launch +us_vs_off timed
for n in "${names[@]}"; do
  f="$tmp/${n//[:\/]/_}"
  ms=$(median "$f" time_ms)
  off=""
  offf="$tmp/${n%%:*}_off"; [ "$n" = "${n#*:}" ] && offf="$tmp/off"
  [ -f "$offf" ] && [ "$n" != native ] && off=$(median "$offf" time_ms)
  timed="-"
  [ -f "$f.timed" ] && timed=$(awk '{t+=$1; l+=$2} END {printf "%d of %d", t/NR, l/NR}' "$f.timed")
  awk -v n="$n" -v ms="$ms" -v nat="$nat" -v off="$off" -v s="$steps" -v timed="$timed" 'BEGIN {
    vs = (off == "") ? "       -" : sprintf("%+8.2f", (ms - off) * 1e3 / s)
    printf "%-18s %9.1f %8.2f %6.3f %+9.2f %s  %s\n",
      n, ms, ms * 1e3 / s, ms / nat, (ms - nat) * 1e3 / s, vs, timed }'
done
echo "(median of $rounds interleaved rounds; $exe $steps $elems; device ${CLPRISM_EXAMPLE_DEVICE:-0:0};"
for l in "${libs[@]}"; do echo " ${l%%=*} = ${l#*=}"; done
echo " +us/launch: over native; +us_vs_off: over CLPRISM_DEVICE_TIMING=off with the same library;"
echo " profq = sample:1000000000 (profiled queues, one launch per kernel object timed);"
echo " timed: launches with a device_ns, mean over the rounds, of the log's records)"
