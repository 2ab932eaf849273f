#!/bin/bash
# GPU batch 2 of session 11 (built from the commit after 1f2c...; see results README):
# log-mode cost on a launch-heavy app and on clpeak's kernel-latency test, per timing setting.
set -u
G=$PWD/.gpu
source $G/gpu-env.sh > $OUT/clinfo.txt 2>&1
export PATH=/opt/clprism-tc/usr/bin:$PATH
export LD_LIBRARY_PATH=/opt/clprism-tc/usr/lib/x86_64-linux-gnu/blas:$LD_LIBRARY_PATH
nvidia-smi -L
. bench/gpu-common.sh
echo "platforms: nvidia=$nv pocl=$cpu"
echo "== 1. launch-heavy app (20000 launches of a 1-D stencil), log mode per CLPRISM_DEVICE_TIMING"
CONFIGS="native all adaptive adaptive:2 off" CLPRISM_EXAMPLE_DEVICE=$nv:0 LAUNCHES_EXE=$G/examples/launches CLPRISM_LIB=$G/libOpenCL.so timeout 300 bash bench/launch_overhead.sh 5 20000 65536
echo "== 2. clpeak --kernel-latency on the H100 (platform $nv): wall ms, median of 5, per setting"
for cfg in native all adaptive adaptive:2 off; do
  ts=()
  for r in 1 2 3 4 5; do
    t0=$(date +%s%3N)
    if [ $cfg = native ]; then clpeak -p $nv -d 0 --kernel-latency > $OUT/clpeak.$cfg.out 2>&1
    else CLPRISM_MODE=log CLPRISM_DEVICE_TIMING=$cfg CLPRISM_LOG=/tmp/clpeak.jsonl CLPRISM_SUMMARY=off LD_PRELOAD=$G/libOpenCL.so clpeak -p $nv -d 0 --kernel-latency > $OUT/clpeak.$cfg.out 2>&1; fi
    ts+=($(( $(date +%s%3N) - t0 )))
  done
  med=$(printf '%s\n' "${ts[@]}" | sort -n | sed -n 3p)
  lat=$(grep -i 'latency' $OUT/clpeak.$cfg.out | tail -1 | tr -s ' ')
  timed="-"; [ $cfg != native ] && timed="$(grep -c '"device_ns":[0-9]' /tmp/clpeak.jsonl) of $(wc -l < /tmp/clpeak.jsonl) timed"
  echo "$cfg: median wall ${med} ms (runs: ${ts[*]}); $timed; clpeak says: $lat"
done
