#!/usr/bin/env bash
# Session 25, call e (nvidia-h200-x2): A = .gpu/libOpenCL.so (main at 05541dd: the probe's
# continuation in chunks of half the probe, up to half the launch, while the devices open),
# B = .gpu/libOpenCL-new.so (call d's build plus clprism's context on the app's GPU opened in the background at the app's first build; call c's build, plus the trial cost of a program compiled ahead estimated at the emulation's ratio; call b's change, plus the SPIR-V for the footprint compiled in the background at the probe and a build done on the devices left out of the trial cost; chunks of 25 ms, up to 7/8 of the launch, while the devices open
# or the program is built on them); PolyBench gemm, 2mm, 3mm, `auto` over both GPUs, three
# rounds alternating, CLPRISM_DEBUG=1; then each run's opening timeline.
# usage (GPU host, repository root): bash results/session25-2026-11-28/gpu-e.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
export CLPRISM_DEBUG=1
LIB_A=.gpu/libOpenCL.so LIB_B=.gpu/libOpenCL-new.so GPUSETS=2 ROUNDS=${ROUNDS:-2} SPLITS=auto \
  APPS="gemm 2mm 3mm clpeak_sp clpeak_bw" DEBUG_RUNS=0 DEADLINE_S=120 timeout 520 bash bench/gpu_lib_ab.sh /tmp/e \
  > "$OUT/progress.txt" 2>&1
cp /tmp/e/kernel-times.txt "$OUT/"
for d in /tmp/e/*/; do echo "== $(basename "$d")"; cat "$d/table.txt"; done > "$OUT/tables.txt"
for d in /tmp/e/*/; do
  n=$(basename "$d"); mkdir -p /tmp/ex/$n && tar xzf "$d/logs.tgz" -C /tmp/ex/$n 2>/dev/null
  for f in /tmp/ex/$n/logs/*.auto.*.out; do
    [ -f "$f" ] || continue
    echo "== $n $(basename "$f" .out)"
    grep -E 'opened ahead|probe of|compiled ahead|footprint [0-9.]* ms|engine ready|context and queue created|build: done|handed to the launch|chunks set up|staging ready|GPU Time' -A0 "$f" | cut -c1-220
    grep -A1 'GPU Time' "$f" | tail -1
  done
done > "$OUT/timelines.txt"
ls -la "$OUT"
