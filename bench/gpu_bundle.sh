#!/usr/bin/env bash
# Builds the bundle the GPU scripts (bench/gpu_*.sh) expect in .gpu/, on the development
# machine: the GPU hosts have no Rust and no clang, so everything is built here and carried
# (device tool: carry [".gpu"]).
#   .gpu/libOpenCL.so, .gpu/clprism   release builds, stripped
#   .gpu/examples/*                    the example apps and the overhead benchmarks (overhead, launches)
#   .gpu/emu-cache/                    SPIR-V of every example kernel (CLPRISM_CACHE), filled
#                                      by running the examples here in project mode
#   .gpu/gpu-env.sh                    bench/gpu-env.sh: OpenCL set-up on the GPU host
#   .gpu/nv_build_log, .gpu/kernels/   bench/nv_build_log.c and the example kernels: prints
#                                      the ptxas report (registers per kernel) of NVIDIA's build
# Usage: bench/gpu_bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --lib --bin clprism
make -s -C examples all
make -s -C bench
rm -rf .gpu && mkdir -p .gpu/examples .gpu/emu-cache
strip -o .gpu/libOpenCL.so target/release/libOpenCL.so
strip -o .gpu/clprism target/release/clprism
for f in examples/build/*; do [ -x "$f" ] && [ -f "$f" ] && cp "$f" .gpu/examples/; done
cp bench/gpu-env.sh .gpu/gpu-env.sh
cc -O2 -Wall -o .gpu/nv_build_log bench/nv_build_log.c -lOpenCL
cp -r examples/kernels .gpu/kernels
# fill the SPIR-V cache: one small project-mode run of each example
for app in matmul_global matmul_local blackscholes nbody transpose reduction fwt \
  floyd_warshall kmeans dct8x8 mt_launch; do
  CLPRISM_MODE=project CLPRISM_CACHE=$PWD/.gpu/emu-cache CLPRISM_LOG=off CLPRISM_SUMMARY=off \
    POCL_DEVICES=pthread LD_PRELOAD=$PWD/target/release/libOpenCL.so \
    ".gpu/examples/$app" >/dev/null 2>&1 || echo "warning: $app failed while filling the cache" >&2
done
echo "bundle: $(du -sh .gpu | cut -f1), $(ls .gpu/emu-cache | wc -l) cache entries"
