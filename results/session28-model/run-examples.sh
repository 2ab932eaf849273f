#!/usr/bin/env bash
# Session 28: the 11 example apps in project mode on PoCL's CPU, one log per app
# (OUT/<app>.0_0.jsonl), with the front end of this build and a SPIR-V cache of its own.
# Run from the repository root after `cargo build --release && make -C examples all`:
#   bash results/session28-model/run-examples.sh OUT CACHEDIR
set -u
OUT=$(realpath -m "$1"); CACHE=$(realpath -m "$2"); mkdir -p "$OUT" "$CACHE"
LIB=$(realpath "${CARGO_TARGET_DIR:-target}/release/libOpenCL.so"); PROFILES=$(realpath profiles)
cd examples/build
for app in matmul_global matmul_local blackscholes nbody transpose reduction fwt floyd_warshall kmeans dct8x8 mt_launch; do
  a=; case $app in matmul_*) a=1024;; esac
  CLPRISM_CACHE=$CACHE EX_CHECK_STRIDE=1024 CLPRISM_EXAMPLE_DEVICE=0:0 CLPRISM_MODE=project \
    LD_PRELOAD=$LIB CLPRISM_SUMMARY=off CLPRISM_PROFILES=$PROFILES \
    CLPRISM_LOG=$OUT/$app.0_0.jsonl timeout 600 ./$app $a > $OUT/$app.out 2>&1
  echo "$app rc=$?"
done
