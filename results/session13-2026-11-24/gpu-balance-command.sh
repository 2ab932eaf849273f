#!/bin/bash
# Issue 18 on the H100 host (device tool, carry .gpu; bundle: stripped release build named in
# the output; Rodinia's OpenCL apps from bench/rodinia_build.sh, inputs made there by
# bench/rodinia_data.sh large; examples/build/launches):
#  1. Rodinia natively, in balance auto and in balance always, the NVIDIA GPU first plus PoCL's
#     CPU device, clprism's caches warmed by one untimed always run per app
#  2. bench/launch_overhead.sh on the H100: 20,000 launches of a 6 us stencil, native, log
#     mode and balance auto (kept whole), interleaved, median of 5
echo "build $BUILD on $(nvidia-smi -L | head -1)"
BUDGET_S=${BUDGET_S:-400} bash results/session13-2026-11-24/gpu-rodinia-balance-command.sh 2>&1 | grep -v "^inputs"
G=$PWD/.gpu; source $G/gpu-env.sh > /dev/null 2>&1; . bench/gpu-common.sh
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd
CONFIGS="native adaptive balance off balanceoff" CLPRISM_EXAMPLE_DEVICE=0:0 LAUNCHES_EXE=$G/examples/launches \
  CLPRISM_LIB=$G/libOpenCL.so timeout 150 bash bench/launch_overhead.sh 5 20000 65536 2>&1 | tee $OUT/launch-overhead.txt
