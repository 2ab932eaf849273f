#!/bin/bash
# H100 batch for issue 19 (device tool, kind nvidia-h100-x1, carry .gpu; bundle: stripped release
# build named in the output; PolyBench-ACC LARGE from bench/corpus_build.sh MIRROR OUT LARGE 0;
# Debian's clpeak / clFFT-client / clblast_test_* packed by bench/gpu_apps_project.sh --pack;
# .gpu/opt-15 (LLVM's opt, for kernels whose clang output llvm-spirv-15 rejects)):
#  1. PolyBench-ACC natively, in log mode and in project mode, every launch timed (bench/gpu_corpus.sh)
#  2. clpeak, clFFT-client, CLBlast tests the same way (bench/gpu_apps_project.sh)
echo "build $BUILD on $(nvidia-smi -L | head -1)"
DEADLINE_S=330 bash bench/gpu_corpus.sh 2>&1 | tail -24
DEADLINE_S=200 bash bench/gpu_apps_project.sh 2>&1 | tail -10
