#!/usr/bin/env bash
# Issue 18 item 2: what balance mode costs a launch-heavy real app whose launches it keeps
# whole, side by side with native and log mode, for one or more libraries (e.g. main's build
# and a branch's), configurations interleaved ROUNDS times in one run. The app runs from its
# own folder; its time is the number printed on the line after "GPU Time in seconds:"
# (PolyBench-ACC's OpenCL apps), else the process's wall time. Prints per configuration the
# median time, the ratio to native, the extra us per launch over native and over log mode
# with the same library (launches counted from the log), and the split launches.
#
# Usage: bench/app_overhead.sh APP_EXE [ROUNDS=5]
#   LIBS="name=path ..." (default lib=target/release/libOpenCL.so); CONFIGS (default
#   "native log balance"; log = CLPRISM_MODE=log, balance = CLPRISM_MODE=balance with the
#   default CLPRISM_SPLIT=auto); POCL_DEVICES as set by the caller.
# Example (results/session13-2026-11-24): POCL_DEVICES="pthread pthread" \
#   LIBS="main=/work/tgt-fastfwd-main/release/libOpenCL.so new=/work/tgt-fastfwd/release/libOpenCL.so" \
#   bench/app_overhead.sh /work/corpus/pb-std/jacobi-1d-imper/jacobi-1d-imper.exe 5
set -euo pipefail
exe=$(realpath "$1"); rounds=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
libs=(${LIBS:-lib=$here/target/release/libOpenCL.so})
configs=(${CONFIGS:-native log balance})
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
names=()
for c in "${configs[@]}"; do
  if [ "$c" = native ]; then names+=(native); continue; fi
  for l in "${libs[@]}"; do names+=("${l%%=*}:$c"); done
done
lib_of() { for l in "${libs[@]}"; do [ "${l%%=*}" = "${1%%:*}" ] && echo "${l#*=}"; done; }
run_one() { # name -> seconds (the app's GPU time, else wall)
  local n=$1 out t0 t1
  t0=$(date +%s.%N)
  if [ "$n" = native ]; then
    out=$(cd "$(dirname "$exe")" && "$exe" 2>&1)
  else
    out=$(cd "$(dirname "$exe")" && CLPRISM_MODE=${n#*:} CLPRISM_LOG="$tmp/${n//:/_}.jsonl" \
      CLPRISM_SUMMARY=off LD_PRELOAD="$(lib_of "$n")" "$exe" 2>&1)
  fi
  t1=$(date +%s.%N)
  if ! grep -q "Non-Matching CPU-GPU Outputs Beyond Error Threshold of [0-9.]* Percent: 0$" <<<"$out" &&
    grep -q "Non-Matching" <<<"$out"; then
    echo "$n: the app's self-check failed" >&2
  fi
  local gpu
  gpu=$(grep -A1 "GPU Time in seconds" <<<"$out" | tail -1 | tr -d ' ')
  if [[ "$gpu" =~ ^[0-9.e+-]+$ ]]; then echo "$gpu"; else echo "$t1 - $t0" | bc -l; fi
}
for r in $(seq "$rounds"); do
  for n in "${names[@]}"; do
    run_one "$n" >> "$tmp/${n//:/_}.t"
    if [ "$n" != native ]; then
      f="$tmp/${n//:/_}.jsonl"
      echo "$(grep -c '"kernel"' "$f") $(grep '"schedule"' "$f" | grep -c '"fallback":null' || true)" >> "$tmp/${n//:/_}.n"
    fi
  done
done
median() { sort -g "$1" | awk '{a[NR]=$1} END {print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
nat=$(median "$tmp/native.t")
printf "%-16s %9s %7s %11s %11s  %s\n" config time_s ratio +us/launch +us_vs_log "launches, split"
for n in "${names[@]}"; do
  t=$(median "$tmp/${n//:/_}.t")
  launches=0 split=0 lg=""
  if [ "$n" != native ]; then
    read -r launches split < <(awk '{l+=$1; s+=$2} END {printf "%d %d\n", l/NR, s/NR}' "$tmp/${n//:/_}.n")
    lf="$tmp/${n%%:*}_log.t"; [ -f "$lf" ] && lg=$(median "$lf")
  fi
  awk -v n="$n" -v t="$t" -v nat="$nat" -v l="$launches" -v s="$split" -v lg="$lg" 'BEGIN {
    per = (l > 0) ? sprintf("%+11.2f", (t - nat) * 1e6 / l) : "          -"
    vl = (l > 0 && lg != "") ? sprintf("%+11.2f", (t - lg) * 1e6 / l) : "          -"
    printf "%-16s %9.4f %7.3f %s %s  %s\n", n, t, t / nat, per, vl, (l > 0) ? l ", " s " split" : "-" }'
done
echo "(median of $rounds interleaved rounds; $exe from its folder; POCL_DEVICES=\"${POCL_DEVICES:-}\";"
for l in "${libs[@]}"; do echo " ${l%%=*} = ${l#*=}"; done
echo " time: the app's 'GPU Time in seconds' (else wall); +us/launch over native, +us_vs_log over"
echo " CLPRISM_MODE=log with the same library, per launch of the log; split: records without a fallback)"
