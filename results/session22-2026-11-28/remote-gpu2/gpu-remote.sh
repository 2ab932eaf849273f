#!/usr/bin/env bash
# Issue 33 item 4 (kind nvidia-h200-x2; second call: the clang toolchain carried, remote
# devices mapped to the GPUs, clprism without -cl-nv-verbose on remote devices): a `pocld` (PoCL-Remote 6.0-6, built by
# scripts/pocl_remote.sh) on 127.0.0.1 serving this host's NVIDIA GPUs; the app on GPU 0
# directly, GPU 1 reached directly or through PoCL-Remote.
#  1. bench/remote_rt (launch round trip, transfers) on GPU 1 directly and through pocld;
#  2. PolyBench gemm / 2mm / 3mm (issue 31's sizes) natively on GPU 0 and in balance
#     mode (CLPRISM_SPLIT=always) over GPU 0 + GPU 1 directly, and GPU 0 + GPU 1 via pocld.
set -u
R=$(cd "$(dirname "$0")" && pwd)
source "$R/gpu-env.sh" > /dev/null 2>&1
nvidia-smi -L
mkdir -p /tmp/srv-vendors /tmp/no-vendors && cp /etc/OpenCL/vendors/nvidia.icd /tmp/srv-vendors/
OCL_ICD_VENDORS=/tmp/srv-vendors "$R/pocld" -a 127.0.0.1 -p 17001 > "$OUT/pocld.log" 2>&1 &
SRV=$!
for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/17001) 2>/dev/null && break; sleep 0.2; done
export OCL_ICD_VENDORS=/tmp/no-vendors OCL_ICD_PLATFORM_SORT=none
export OCL_ICD_FILENAMES="libnvidia-opencl.so.1:$R/libpocl-remote.so.2"
# the server lists the host's PoCL CPU device first, then the GPUs: remote device 0 is the
# server's device 2 (GPU 1), remote device 1 its device 1 (GPU 0)
export POCL_DEVICES="remote remote" POCL_REMOTE0_PARAMETERS=127.0.0.1:17001/2 POCL_REMOTE1_PARAMETERS=127.0.0.1:17001/1
{
  clinfo -l
  for pd in 0:1 1:0; do "$R/remote_rt" $pd 2000 4,1024,65536,1048576; done
} > "$OUT/remote-rt.txt" 2>&1
cat "$OUT/remote-rt.txt"
ICD=all GPUSETS="0:0,0:1 0:0,1:0" SPLITS="always" MGPU="$R/mgpu" LIB="$R/libOpenCL.so" DEADLINE_S=170 RUN_TIMEOUT=40 \
  bash bench/multi_gpu.sh /tmp/remote-corpus gemm 2mm 3mm > /dev/null 2>&1
cp /tmp/remote-corpus/table.txt "$OUT/remote-table.txt"
tar czf "$OUT/remote-logs.tgz" -C /tmp remote-corpus
kill $SRV
