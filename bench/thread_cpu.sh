#!/usr/bin/env bash
# CPU time per thread of a running process, by thread name (comm): which threads of an app
# under clprism burn CPU in the steady state (a spinning thread contends with the launch
# thread for the driver's locks). Samples /proc/PID/task/*/stat every INTERVAL_S seconds
# until the process ends; prints, per thread, user and system CPU seconds at its last sample.
#   usage: bash bench/thread_cpu.sh OUTFILE CMD [ARGS...]   (env passes through to CMD)
set -u
OUTF=${1:?OUTFILE}; shift
INTERVAL_S=${INTERVAL_S:-0.2}
"$@" & pid=$!
declare -A last
tck=$(getconf CLK_TCK)
while kill -0 "$pid" 2>/dev/null; do
  for st in /proc/"$pid"/task/*/stat; do
    line=$(cat "$st" 2>/dev/null) || continue
    tid=${st#/proc/$pid/task/}; tid=${tid%/stat}
    comm=${line#*(}; comm=${comm%%)*}
    rest=${line##*) }
    read -r -a f <<< "$rest"
    last[$tid]="$comm ${f[11]} ${f[12]}"
  done
  sleep "$INTERVAL_S"
done
wait "$pid"; rc=$?
{
  echo "# rc $rc; thread (tid): user s, system s"
  for tid in "${!last[@]}"; do
    read -r comm u s <<< "${last[$tid]}"
    awk -v c="$comm" -v t="$tid" -v u="$u" -v s="$s" -v k="$tck" 'BEGIN{printf "%-20s %8s %8.2f %8.2f\n", c, t, u/k, s/k}'
  done | sort -k3 -nr
} > "$OUTF"
cat "$OUTF"
exit $rc
