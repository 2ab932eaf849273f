#!/bin/bash
# H100 batch (device tool, carry .gpu; bundle: stripped release build of 18c9fe8 = deferred (copy-on-write) snapshots merged, project mode's
# model = ModelOptions::recommended; PolyBench-ACC LARGE from bench/corpus_build.sh MIRROR OUT LARGE 0):
#  1. the PolyBench-ACC corpus natively, in log mode and in project mode (every launch timed)
bash bench/gpu_corpus.sh correlation covariance 2mm 3mm atax bicg doitgen gemm gemver gesummv mvt syr2k syrk convolution-2d convolution-3d jacobi-2d-imper fdtd-2d adi lu jacobi-1d-imper gramschmidt 2>&1 | tail -26
