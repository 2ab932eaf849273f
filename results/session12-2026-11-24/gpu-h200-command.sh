#!/bin/bash
# H200 batch of session 12 (device tool, carry .gpu; bundle: stripped release build of e11fe04,
# PolyBench-ACC LARGE apps from bench/corpus_build.sh, bench/latency.c, examples launches,
# overhead and blackscholes, clang-15 debs):
#  1. issue 19: the PolyBench-ACC corpus natively, in log mode (every launch timed) and in
#     project mode (every launch timed), plus the kernel floor and memory latency
#  2. issue 21: the launch-heavy app (20000 launches of a 1-D stencil) per timing setting
bash bench/gpu_corpus.sh correlation covariance 2mm 3mm atax bicg doitgen gemm gemver gesummv mvt syr2k syrk convolution-2d convolution-3d jacobi-2d-imper fdtd-2d adi lu jacobi-1d-imper gramschmidt 2>&1 | tail -26
G=$PWD/.gpu; source $G/gpu-env.sh > /dev/null 2>&1; . bench/gpu-common.sh; echo "platforms: nvidia=$nv pocl=$cpu"
CLPRISM_EXAMPLE_DEVICE=$nv:0 LAUNCHES_EXE=$G/examples/launches CLPRISM_LIB=$G/libOpenCL.so timeout 200 bash bench/launch_overhead.sh 5 20000 65536 2>&1 | tee $OUT/launch-overhead.txt
