#!/usr/bin/env bash
# Session 27, call f (nvidia-h200-x4): one fdtd-2d (500 steps, 16384²) with
# .gpu/libOpenCL-s27c.so and CLPRISM_DEBUG=1 over the 4 GPUs (`always`): how many launches
# were taken up ahead and how (counts over the run), and the timeline of launches 1400-1404.
# usage (GPU host, repository root, `.gpu` carried): bash results/session27-2026-11-28/gpu-f.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
source .gpu/gpu-env.sh > /dev/null 2>&1
LIB=.gpu/libOpenCL-s27c.so GPUSETS=4 WARM=0 NATIVE=0 SPLITS=always CLPRISM_DEBUG=1 RUN_TIMEOUT=60 \
  timeout 80 bash bench/multi_gpu.sh /tmp/s27f fdtd-2d > /tmp/s27f.progress 2>&1
mkdir -p /tmp/s27f/x && tar xzf /tmp/s27f/logs.tgz -C /tmp/s27f/x
f=/tmp/s27f/x/logs/fdtd-2d.always.gpu4.out
{ echo "taken up ahead, by outcome:"; grep -o "taken up behind launch [0-9]* ([a-z ]*)" $f | sed 's/launch [0-9]*//' | sort | uniq -c
  echo "pushes:"; grep -c "halo bytes pushed" $f
  grep -o "slabs sized for the enqueue stagger.*" $f | head -3; } > "$OUT/debug-counts.txt"
sed -n '/launch 1400: on/,/launch 1404: on/p' $f | head -150 > "$OUT/debug-timeline.txt"
grep -A1 "GPU Time" $f | tail -1 >> "$OUT/debug-counts.txt"
cat "$OUT/debug-counts.txt"; head -80 "$OUT/debug-timeline.txt"
