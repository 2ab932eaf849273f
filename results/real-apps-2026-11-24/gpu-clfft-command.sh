#!/bin/bash
source .gpu/gpu-env.sh >/dev/null
G=$PWD/.gpu
export PATH=$G/bin:$PATH LD_LIBRARY_PATH=$G/lib:$LD_LIBRARY_PATH
clFFT-client --platform 1 -x 1024 -y 64 -p 5 > /dev/null 2>&1
for i in 1 2; do t0=$(date +%s%3N); clFFT-client --platform 1 -x 1024 -y 64 -p 5 > /dev/null 2>&1; echo "native $(( $(date +%s%3N) - t0 )) ms"; done
for early in on off; do
t0=$(date +%s%3N); CLPRISM_MODE=log CLPRISM_LOG=off CLPRISM_SUMMARY=off LD_PRELOAD=$G/libOpenCL.so clFFT-client --platform 1 -x 1024 -y 64 -p 5 > /dev/null 2>&1; echo "log $(( $(date +%s%3N) - t0 )) ms"
t0=$(date +%s%3N); CLPRISM_MODE=balance CLPRISM_BALANCE_EARLY=$early CLPRISM_DEVICES=all CLPRISM_DEBUG=1 CLPRISM_LOG=off CLPRISM_SUMMARY=off LD_PRELOAD=$G/libOpenCL.so clFFT-client --platform 1 -x 1024 -y 64 -p 5 > $OUT/clfft-$early.out 2>&1; echo "balance early=$early $(( $(date +%s%3N) - t0 )) ms"
grep clprism-debug $OUT/clfft-$early.out | grep -v "try_balance\|barrier" | head -30
done
