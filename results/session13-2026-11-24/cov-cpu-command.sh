#!/bin/bash
# Project-mode emulation coverage before and after the shared later copies and the bounded
# wait for snapshot room (issue 19 item 1), on PoCL's CPU device (2 cores), under a snapshot cap
# scaled to the data: STANDARD buffers are 16 MiB (2048^2 floats) where the H100 run's LARGE ones
# were 64 MiB under the default 256 MiB, so CLPRISM_EMU_SNAPSHOT_MAX=64M here.
#   usage: cov-cpu-command.sh LIB_BEFORE LIB_AFTER OUT APP_DIR...
#   LIB_BEFORE  release libOpenCL.so of main 6891596 (before); - runs the after side only
#   LIB_AFTER   release libOpenCL.so of branch cov (after; the commit is in the output's name)
#   APP_DIR     folders holding one PolyBench-ACC <app>.exe and its .cl: /work/corpus/pb-std/<app>
#               (bench/corpus_build.sh MIRROR OUT STANDARD 1: self-checking) and
#               /work/corpus-cov/gs-std-nocheck (gramschmidt, STANDARD, RUN_ON_CPU=0: the same
#               gcc line as bench/corpus_build.sh with -DRUN_ON_CPU=0; 2 min instead of 4)
# Writes OUT/{before,after}/<app>.project.jsonl (not committed), <app>.out (the app's output,
# with its CPU/GPU comparison when self-checking), and prints bench/coverage.py per side, the
# wall time and max RSS of every run.
set -u
before=$1 after=$2 out=$3; shift 3
here=$(cd "$(dirname "$0")/../.." && pwd)
sides="before after"; [ "$before" = - ] && sides=after
for side in $sides; do
  lib=$before; [ $side = after ] && lib=$after
  mkdir -p "$out/$side"
  for dir in "$@"; do
    app=$(basename "$(ls "$dir"/*.exe)" .exe)
    name=$app; [ "$(basename "$dir")" = gs-std-nocheck ] && name=gramschmidt_nocheck
    ( cd "$dir" && /usr/bin/time -f "$side $name wall %e s maxrss %M KB rc %x" env LD_PRELOAD="$lib" \
        CLPRISM_MODE=project CLPRISM_LOG="$out/$side/$name.project.jsonl" CLPRISM_SUMMARY=off \
        CLPRISM_EMU_SNAPSHOT_MAX=64M POCL_DEVICES=pthread timeout 600 "./$app.exe" \
        > "$out/$side/$name.out" 2>&1 ; tail -1 "$out/$side/$name.out" )
    grep -h "Non-Matching" "$out/$side/$name.out" | sed "s/^/$side $name: /"
  done
  echo "== $side"; python3 "$here/bench/coverage.py" "$out/$side"
done
