#!/bin/bash
# Session 17, the two apps left above 1.05x: PolyBench fdtd-2d on three PoCL devices (the GPU
# host's 16 cores, POCL_DEVICES="pthread pthread basic", no GPU in the ICD list), and CLBlast's
# xgemm test on the H200 + PoCL CPU; native, log and balance auto, ROUNDS interleaved rounds
# each after one warm run per mode; times.tsv for bench/paired_ratios.py.
set -u
echo "build $BUILD on $(nvidia-smi -L | head -1), $(nproc) cores"
G=$PWD/.gpu
source $G/gpu-env.sh > /dev/null 2>&1
W=/tmp/w17e; mkdir -p $W
ms() { date +%s%3N; }
cfg() { # MODE CMD -> " ms"
  local c=$1; shift
  local t0=$(ms)
  case $c in
    native) bash -c "$*" >/dev/null 2>&1 ;;
    log) CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$G/libOpenCL.so bash -c "$*" >/dev/null 2>&1 ;;
    auto) CLPRISM_MODE=balance CLPRISM_SPLIT=auto CLPRISM_DEVICES=all CLPRISM_SUMMARY=off CLPRISM_LOG=$W/a.jsonl LD_PRELOAD=$G/libOpenCL.so bash -c "$*" >/dev/null 2>&1 ;;
  esac
  echo -n " $(( $(ms) - t0 ))"
}
rounds() { # NAME CMD
  local n=$1; shift
  for c in native log auto; do cfg $c "$@" > /dev/null; done
  declare -A T=()
  for r in $(seq ${ROUNDS:-4}); do for c in native log auto; do T[$c]="${T[$c]:-}$(cfg $c "$@")"; done; done
  for c in native log auto; do printf '%s\t%s\t%s\n' "$n" $c "${T[$c]# }"; done | tee -a $OUT/times-e.tsv
}
(
mkdir -p /tmp/pocl-only && cp /etc/OpenCL/vendors/pocl.icd /tmp/pocl-only/
export OCL_ICD_VENDORS=/tmp/pocl-only OCL_ICD_FILENAMES=$(cat /etc/OpenCL/vendors/pocl.icd) POCL_DEVICES="pthread pthread basic"
rounds pb_fdtd-2d "cd $G/pbstd/fdtd-2d && ./fdtd-2d.exe"
)
A=/tmp/clprism-apps; mkdir -p $A && tar xJf $G/apps.tar.xz -C $A
export PATH=$A/bin:$PATH LD_LIBRARY_PATH=$A/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/icd
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd
rounds clblast_xgemm "clblast_test_xgemm -platform 0"
python3 $G/paired_ratios.py $OUT/times-e.tsv
