#!/bin/bash
source .gpu/gpu-env.sh >/dev/null
G=$PWD/.gpu
export PATH=$G/bin:$PATH LD_LIBRARY_PATH=$G/lib:$LD_LIBRARY_PATH PLATFORM=1 CLPRISM_DEVICES=all
echo "== real apps, this session's final build"
LIB=$G/libOpenCL.so APPS="clblast_xaxpy clblast_xdot clblast_xgemv clblast_xsymm clfft_1024x64 clfft_256x256 clpeak_latency" timeout 330 bash $G/real_apps.sh $OUT/final 2>&1 | cut -c1-250
echo "== quick_exit x40 (app on PoCL CPU, balance all, split always)"
bad=0; t0=$(date +%s%3N)
for i in $(seq 1 40); do CLPRISM_MODE=balance CLPRISM_SPLIT=always CLPRISM_LOG=off CLPRISM_SUMMARY=off LD_PRELOAD=$G/libOpenCL.so timeout 60 $G/examples/quick_exit >/dev/null 2>&1 || bad=$((bad+1)); done
echo "new: $(( ($(date +%s%3N) - t0) / 40 )) ms/run, $bad failed"
echo "== nbody 4096 x 10 on the H100 in balance always, twice with a fresh clprism cache (binary cache)"
export CLPRISM_CACHE=$OUT/cache CLPRISM_EXAMPLE_DEVICE=1:0
for i in 1 2; do t0=$(date +%s%3N); CLPRISM_MODE=balance CLPRISM_SPLIT=always CLPRISM_BALANCE_EARLY=off CLPRISM_DEBUG=1 CLPRISM_LOG=$OUT/nbody$i.jsonl CLPRISM_SUMMARY=off LD_PRELOAD=$G/libOpenCL.so timeout 200 $G/examples/nbody 4096 10 > $OUT/nbody$i.out 2>&1; echo "run $i rc=$? $(( $(date +%s%3N) - t0 )) ms; $(grep -c 'from source' $OUT/nbody$i.out) builds from source, $(grep -c 'from the cached binary' $OUT/nbody$i.out) from cached binaries; $(grep PASS $OUT/nbody$i.out | cut -c1-60)"; done
ls $OUT/cache/binaries | wc -l
