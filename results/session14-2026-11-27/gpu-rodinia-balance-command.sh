#!/bin/bash
# Issue 18 on the GPU host (device tool, carry .gpu; bundle: stripped release build of the
# commit named in the output file, Rodinia's OpenCL apps from bench/rodinia_build.sh, inputs made
# there by bench/rodinia_data.sh large): Rodinia natively, in balance auto and in balance always,
# same devices, same run, clprism's caches warmed by one untimed always run per app.
#   CONFIG=gpu: the NVIDIA GPU first (the apps run on platform 0's first device) plus PoCL's CPU
set -u
G=$PWD/.gpu
bash bench/rodinia_data.sh $G/rodinia/data large
source $G/gpu-env.sh > /dev/null 2>&1
export PATH=/opt/clprism-tc/usr/bin:$PATH
mkdir -p /tmp/icd
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd
clinfo -l
APPS=${APPS:-"rd_lud rd_gaussian rd_nw rd_hotspot rd_hotspot3D rd_srad rd_pathfinder rd_backprop rd_bfs rd_lavaMD rd_particlefilter rd_streamcluster"}
APPS="$APPS" RODINIA=$G/rodinia RODINIA_SIZE=large LIB=$G/libOpenCL.so RUN_TIMEOUT=${RUN_TIMEOUT:-30} PLATFORM=0 \
  WARM_MODES="${WARM_MODES:-native always}" MODES="${MODES:-native auto always}" REPS=${REPS:-1} ALWAYS_REPS=${ALWAYS_REPS:-1} timeout ${BUDGET_S:-540} bash bench/real_apps.sh $OUT/apps 2>&1 | tee $OUT/rodinia-gpu.txt
tar czf $OUT/apps-rodinia.tgz -C $OUT apps && rm -rf $OUT/apps
