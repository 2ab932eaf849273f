#!/usr/bin/env bash
# Session 29, call d (nvidia-h200-x4): where the time goes between the app's first build and
# the devices being ready in `always` over 4 GPUs: BabelStream and clpeak --compute-sp, the
# last build (591b0db), CLPRISM_DEBUG=1, every run a first run on the machine (NV_CACHE=fresh).
# usage (GPU host, repository root, `.gpu` carried): bash results/session29-2026-11-28/gpu-d.sh OUTDIR
set -u
OUT=${1:?OUTDIR}
tar -C .gpu -xJf .gpu/lib-s29c.tar.xz
source .gpu/gpu-env.sh > /dev/null 2>&1
for app in stream clpeak_sp; do
  NV_CACHE=fresh WARM=0 NATIVE=0 GPUSETS=4 SPLITS=always CLPRISM_DEBUG=1 DEADLINE_S=60 RUN_TIMEOUT=50 \
    LIB=.gpu/libOpenCL.so timeout 70 bash bench/multi_gpu.sh /tmp/s29d-$app $app > /dev/null 2>&1
  mkdir -p /tmp/s29d-$app/x && tar xzf /tmp/s29d-$app/logs.tgz -C /tmp/s29d-$app/x
  echo "== $app"
  grep -h "clprism-debug" /tmp/s29d-$app/x/logs/$app.always.*.out | grep -v "try_balance" | \
    grep -E "siblings|open:|engine ready|build|handed|staging ready|chunks set up" | head -40 | cut -c1-200
done > "$OUT/opening.txt"
cat "$OUT/opening.txt"
