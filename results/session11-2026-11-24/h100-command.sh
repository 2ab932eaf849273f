#!/bin/bash
# GPU batch of session 11 (built from 07d1a8f): launch overhead (issue 21 item 5), exit
# robustness (issue 18), real apps in balance mode on the H100 + PoCL CPU (issue 18/20 check).
set -u
G=$PWD/.gpu
source $G/gpu-env.sh > $OUT/clinfo.txt 2>&1
export PATH=/opt/clprism-tc/usr/bin:$PATH
export LD_LIBRARY_PATH=/opt/clprism-tc/usr/lib/x86_64-linux-gnu/blas:$LD_LIBRARY_PATH
nvidia-smi -L
. bench/gpu-common.sh
echo "platforms: nvidia=$nv pocl=$cpu"
echo "== 1. launch-heavy app (20000 launches of a 1-D stencil), log mode: native / all / adaptive"
CLPRISM_EXAMPLE_DEVICE=$nv:0 LAUNCHES_EXE=$G/examples/launches CLPRISM_LIB=$G/libOpenCL.so timeout 150 bash bench/launch_overhead.sh 5 20000 65536
echo "== 2. quick_exit, app on PoCL CPU, balance over all devices (H100 + CPU), split always"
for kind in warm cold; do
  n=30; [ $kind = cold ] && n=10
  bad=0; t0=$(date +%s%3N)
  for i in $(seq 1 $n); do
    if [ $kind = cold ]; then rm -rf /tmp/qc; mkdir -p /tmp/qc; export XDG_CACHE_HOME=/tmp/qc POCL_CACHE_DIR=/tmp/qc/pocl; fi
    CLPRISM_MODE=balance CLPRISM_DEVICES=all CLPRISM_SPLIT=always CLPRISM_LOG=off CLPRISM_SUMMARY=off LD_PRELOAD=$G/libOpenCL.so timeout 60 $G/examples/quick_exit >/dev/null 2>&1 || bad=$((bad+1))
  done
  unset XDG_CACHE_HOME POCL_CACHE_DIR
  echo "$kind: $(( ($(date +%s%3N) - t0) / n )) ms/run, $bad of $n failed"
done
t0=$(date +%s%3N); for i in $(seq 1 10); do timeout 60 $G/examples/quick_exit >/dev/null 2>&1; done; echo "native: $(( ($(date +%s%3N) - t0) / 10 )) ms/run"
echo "== 3. real apps on the H100 (platform $nv), balance over H100 + PoCL CPU"
LIB=$G/libOpenCL.so PLATFORM=$nv CLPRISM_DEVICES=all APPS="clblast_xaxpy clblast_xgemv clfft_1024x64 clpeak_latency" timeout 330 bash bench/real_apps.sh $OUT/apps 2>&1 | cut -c1-260
