#!/bin/bash
# Issue 18 on the GPU host (device tool, carry .gpu; bundle: stripped release build of d49f417 (first run; h100-cpu-polybench-balance-d49f417.txt), a9c1819 (second run),
# PolyBench-ACC STANDARD apps with their host check, from bench/corpus_build.sh MIRROR OUT STANDARD 1):
# PolyBench-ACC natively, in balance auto and in balance always, same devices, same run.
#   CONFIG=gpu: the NVIDIA GPU first (the apps run on platform 0's first device) plus PoCL's CPU
#   CONFIG=pocl: three unequal PoCL devices (pthread pthread basic), as in the table
set -u
G=$PWD/.gpu
source $G/gpu-env.sh > /dev/null 2>&1
export PATH=/opt/clprism-tc/usr/bin:$PATH
mkdir -p /tmp/icd
case ${CONFIG:-gpu} in
  gpu) export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd ;;
  pocl) export OCL_ICD_FILENAMES=$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd POCL_DEVICES="pthread pthread basic" ;;
esac
clinfo -l
APPS=${APPS:-"pb_2mm pb_3mm pb_atax pb_bicg pb_doitgen pb_gemm pb_gemver pb_gesummv pb_mvt pb_syr2k pb_syrk pb_lu pb_adi pb_convolution-2d pb_convolution-3d pb_fdtd-2d pb_jacobi-1d-imper pb_jacobi-2d-imper"}
APPS="$APPS" POLYBENCH=$G/corpus LIB=$G/libOpenCL.so RUN_TIMEOUT=${RUN_TIMEOUT:-60} PLATFORM=0 \
  timeout ${BUDGET_S:-540} bash bench/real_apps.sh $OUT/apps 2>&1 | tee $OUT/real-apps-${CONFIG:-gpu}.txt
tar czf $OUT/apps-${CONFIG:-gpu}.tgz -C $OUT apps && rm -rf $OUT/apps
