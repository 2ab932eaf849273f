#!/bin/bash
# Issue 19 on one GPU (device tool, carry .gpu; bundle: bench/gpu_bundle.sh of the build named
# in the output, PolyBench-ACC LARGE from bench/corpus_build.sh MIRROR .gpu/corpus LARGE 0,
# Debian's clpeak / clFFT-client / CLBlast tests packed by bench/gpu_apps_project.sh --pack,
# .gpu/debs from fetch-toolchain.sh, .gpu/opt-15): PolyBench natively, in log mode and in
# project mode, every launch timed; then clpeak, clFFT, CLBlast the same way (PART=apps).
echo "build $BUILD on $(nvidia-smi -L | head -1)"
if [ "${PART:-corpus}" = corpus ]; then
  DEADLINE_S=${DEADLINE_S:-420} bash bench/gpu_corpus.sh 2>&1 | tail -26
else
  DEADLINE_S=${DEADLINE_S:-330} bash bench/gpu_apps_project.sh 2>&1 | tail -12
fi
