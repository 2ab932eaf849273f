#!/bin/bash
# Issue 19 beyond PolyBench (device tool, carry .gpu; bundle: stripped release build named in the
# output, Debian's clpeak / clFFT-client / clblast_test_* packed by bench/gpu_apps_project.sh --pack):
# natively, in log mode and in project mode on the NVIDIA GPU, every launch timed.
echo "build $BUILD on $(nvidia-smi -L | head -1)"
bash bench/gpu_apps_project.sh 2>&1 | tail -12
