#!/bin/bash
# Issue 18's table on the GPU host's CPU (16 cores, quiet): three unequal PoCL devices
# (POCL_DEVICES="pthread pthread basic"), no GPU in the ICD list; natively and in balance auto
# (MODES), REPS interleaved runs per mode (medians), every app warmed by one native run.
# Device tool, carry .gpu (bundle: bench/gpu_bundle.sh of the build named; .gpu/apps.tar.xz from
# bench/gpu_apps_project.sh --pack; .gpu/pbstd = bench/corpus_build.sh MIRROR .gpu/pbstd STANDARD 1;
# .gpu/rodinia from bench/rodinia_build.sh, small inputs made there).
#   SET=apps: CLBlast tests, clFFT, clpeak and Rodinia small; SET=polybench: PolyBench-ACC STANDARD
echo "build $BUILD on $(nproc) cores"
G=$PWD/.gpu
source $G/gpu-env.sh > /dev/null 2>&1
export PATH=/opt/clprism-tc/usr/bin:$PATH
A=/tmp/clprism-apps; mkdir -p $A && tar xJf $G/apps.tar.xz -C $A
export PATH=$A/bin:$PATH LD_LIBRARY_PATH=$A/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/pocl-only && cp /etc/OpenCL/vendors/pocl.icd /tmp/pocl-only/
export OCL_ICD_VENDORS=/tmp/pocl-only OCL_ICD_FILENAMES=$(cat /etc/OpenCL/vendors/pocl.icd)
export POCL_DEVICES="pthread pthread basic"
clinfo -l
if [ "${SET:-apps}" = apps ]; then
  bash bench/rodinia_data.sh $G/rodinia/data small > /dev/null 2>&1
  APPS=${APPS:-"clblast_xaxpy clblast_xdot clblast_xnrm2 clblast_xgemv clblast_xger clblast_xgemm clblast_xsymm clblast_xtrsv clblast_xhad clblast_xim2col clblast_xomatcopy clfft_1024x64 clfft_256x256 clpeak_latency clpeak_bandwidth rd_backprop rd_bfs rd_gaussian rd_hotspot rd_hotspot3D rd_lavaMD rd_lud rd_nw rd_particlefilter rd_pathfinder rd_srad rd_streamcluster"}
  export RODINIA=$G/rodinia
else
  APPS=${APPS:-$(sed 's/^/pb_/' $G/pbstd/apps.txt | paste -sd' ')}
  export POLYBENCH=$G/pbstd
fi
APPS="$APPS" LIB=$G/libOpenCL.so REPS=${REPS:-3} MODES="${MODES:-native auto}" RUN_TIMEOUT=${RUN_TIMEOUT:-60} \
  timeout ${BUDGET_S:-560} bash bench/real_apps.sh $OUT/apps 2>&1 | tee $OUT/pocl3-$SET.txt
rm -rf $OUT/apps
