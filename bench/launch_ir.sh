#!/usr/bin/env bash
# Issue 21: clprism's own instructions per launch in log mode, deterministic (callgrind), for
# machines where wall clock is too noisy (shared CPUs). Prints, per CLPRISM_DEVICE_TIMING
# setting: the instructions clprism adds on the app's thread per launch (inclusive Ir of the
# clEnqueueNDRangeKernel hook minus the driver's call) and the log writer thread's Ir per
# record, with how many launches were timed.
# Usage: bench/launch_ir.sh [STEPS=3000] [CONFIGS="off adaptive all"]   (needs valgrind)
#   CLPRISM_LIB (default target/release/libOpenCL.so, built with debug info), LAUNCHES_EXE.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3000}; configs=(${2:-off adaptive all})
lib=${CLPRISM_LIB:-$PWD/target/release/libOpenCL.so}
exe=${LAUNCHES_EXE:-examples/build/launches}
[ -x "$exe" ] || make -s -C bench
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for cfg in "${configs[@]}"; do
  out=$tmp/${cfg//:/_}
  mode=log timing=$cfg
  case "$cfg" in balance) mode=balance timing=adaptive ;; balance:*) mode=balance timing=${cfg#balance:} ;; esac
  CLPRISM_MODE=$mode CLPRISM_DEVICE_TIMING=$timing CLPRISM_LOG=$out.jsonl CLPRISM_SUMMARY=off LD_PRELOAD=$lib \
    valgrind --tool=callgrind --callgrind-out-file=$out --separate-threads=yes "$exe" "$n" 256 >/dev/null 2>&1
  inc() { callgrind_annotate --inclusive=yes --threshold=100 "$out-01" 2>/dev/null | grep -F "$1 [" | grep -v "=>" | head -1 | awk '{gsub(",","",$1); print $1}'; }
  hook=$(inc "hooks.rs:OpenCL::intercept::hooks::clEnqueueNDRangeKernel")
  fwd=$(inc "launch.rs:OpenCL::intercept::launch::Launch::forward")
  wr=0; for f in "$out"-*; do grep -q writer_thread "$f" && wr=$(grep -m1 '^totals:' "$f" | awk '{print $2}'); done
  echo "$cfg app_own_Ir_per_launch=$(( (hook-fwd)/n )) writer_Ir_per_record=$(( wr/n )) timed=$(grep -c '"device_ns":[0-9]' "$out.jsonl")/$n"
  if [ -n "${BREAKDOWN:-}" ]; then
    # the direct callees of the hook's `launched` (Launch::forward is the driver's call)
    callgrind_annotate --inclusive=yes --tree=calling --threshold=100 "$out-01" 2>/dev/null |
      awk '/\* .*hooks::launched \[/ && !d {f=1; d=1; next} f && !/^ +[0-9,]+ .*>/ {f=0} f' |
      sed 's/,//g' | awk -v n="$n" '{ir=$1; $1=$2=$3=""; sub(/^ +/, ""); sub(/^> +/, ""); sub(/ \[.*/, ""); sub(/^[^ ]*\.(rs|c|S):/, "");
        printf "  %8d Ir/launch  %s\n", ir/n, $0}'
  fi
done
echo "($exe $n 256; lib $lib)"
