#!/bin/bash
source .gpu/gpu-env.sh >/dev/null
G=$PWD/.gpu
export PATH=$G/bin:$PATH LD_LIBRARY_PATH=$G/lib:$LD_LIBRARY_PATH PLATFORM=1 CLPRISM_DEVICES=all
echo "== new (this session)"
LIB=$G/libOpenCL.so APPS="clblast_xaxpy clblast_xdot clblast_xgemv clblast_xsymm clblast_xim2col clfft_1024x64 clfft_256x256 clpeak_latency" timeout 400 bash $G/real_apps.sh $OUT/new 2>&1
echo "== main at 33bdafb (before)"
LIB=$G/libOpenCL-old.so APPS="clblast_xaxpy clblast_xgemv clfft_1024x64 clpeak_latency" timeout 150 bash $G/real_apps.sh $OUT/old 2>&1
echo "== quick_exit x20 (app on PoCL CPU, balance all, split always)"
for lib in old new; do pre=$G/libOpenCL.so; [ $lib = old ] && pre=$G/libOpenCL-old.so; bad=0; t0=$(date +%s%3N)
  for i in $(seq 1 20); do CLPRISM_MODE=balance CLPRISM_SPLIT=always CLPRISM_LOG=off CLPRISM_SUMMARY=off LD_PRELOAD=$pre timeout 60 $G/examples/quick_exit >/dev/null 2>&1 || bad=$((bad+1)); done
  echo "$lib: $(( ($(date +%s%3N) - t0) / 20 )) ms/run, $bad failed"; done
t0=$(date +%s%3N); for i in $(seq 1 20); do timeout 60 $G/examples/quick_exit >/dev/null 2>&1; done; echo "native: $(( ($(date +%s%3N) - t0) / 20 )) ms/run"
