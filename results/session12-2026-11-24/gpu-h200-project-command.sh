#!/bin/bash
# H200 batch (device tool, carry .gpu; bundle: stripped release build of b366cb6, project mode's
# model = ModelOptions::recommended; PolyBench-ACC LARGE from bench/corpus_build.sh MIRROR OUT LARGE 0):
#  1. the PolyBench-ACC corpus natively, in log mode and in project mode (every launch timed)
#  2. clprism characterize --only latency,floor,l2 on the H200 (the new benchmarks; not installed)
bash bench/gpu_corpus.sh correlation covariance 2mm 3mm atax bicg doitgen gemm gemver gesummv mvt syr2k syrk convolution-2d convolution-3d jacobi-2d-imper fdtd-2d adi lu jacobi-1d-imper gramschmidt 2>&1 | tail -26
G=$PWD/.gpu; source $G/gpu-env.sh > /dev/null 2>&1; . bench/gpu-common.sh
cp $G/profiles/h200.json $OUT/h200-characterize-only.json
timeout 120 $G/clprism characterize --device $nv:0 --only latency,floor,l2 --update $OUT/h200-characterize-only.json 2>&1 | tail -15
