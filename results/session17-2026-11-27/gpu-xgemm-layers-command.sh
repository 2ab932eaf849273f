#!/bin/bash
# Session 17: CLBlast's xgemm test on the H200 + PoCL CPU, the layer that costs: native,
# CLPRISM_MODE=off (forwarding only), log with CLPRISM_DEVICE_TIMING=off, log (default);
# ROUNDS interleaved rounds after one warm run per mode; times.tsv for bench/paired_ratios.py.
set -u
echo "build $BUILD on $(nvidia-smi -L | head -1), $(nproc) cores"
G=$PWD/.gpu
source $G/gpu-env.sh > /dev/null 2>&1
A=/tmp/clprism-apps; mkdir -p $A && tar xJf $G/apps.tar.xz -C $A
export PATH=$A/bin:$PATH LD_LIBRARY_PATH=$A/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/icd
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd
W=/tmp/w17f; mkdir -p $W; L=$G/libOpenCL.so
cfg() {
  local c=$1; shift; local t0=$(date +%s%3N)
  case $c in
    native) "$@" >/dev/null 2>&1 ;;
    off) CLPRISM_MODE=off LD_PRELOAD=$L "$@" >/dev/null 2>&1 ;;
    logoff) CLPRISM_DEVICE_TIMING=off CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$L "$@" >/dev/null 2>&1 ;;
    log) CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$L "$@" >/dev/null 2>&1 ;;
  esac
  echo -n " $(( $(date +%s%3N) - t0 ))"
}
C="native off logoff log"
for c in native log; do cfg $c clblast_test_xgemm -platform 0 > /dev/null; done
declare -A T=()
for r in $(seq ${ROUNDS:-3}); do for c in $C; do T[$c]="${T[$c]:-}$(cfg $c clblast_test_xgemm -platform 0)"; done; done
for c in $C; do printf '%s\t%s\t%s\n' clblast_xgemm $c "${T[$c]# }"; done | tee $OUT/times-f.tsv
python3 $G/paired_ratios.py $OUT/times-f.tsv
