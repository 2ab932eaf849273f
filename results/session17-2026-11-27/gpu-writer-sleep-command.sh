#!/bin/bash
# Session 17: does the log writer's 1 ms wake-up cost short apps? native against log mode
# (device timing off and default) with the writer's sleep while messages flow at 1 ms (main)
# and 20 ms (experimental build reading EXP_SLEEP_US), event polling at 1 ms / 20 ms
# (CLPRISM_LOG_POLL_US); ROUNDS interleaved rounds; times.tsv for bench/paired_ratios.py.
set -u
echo "build $BUILD on $(nvidia-smi -L | head -1)"
G=$PWD/.gpu
source $G/gpu-env.sh > /dev/null 2>&1
A=/tmp/clprism-apps; mkdir -p $A && tar xJf $G/apps.tar.xz -C $A
export PATH=$A/bin:$PATH LD_LIBRARY_PATH=$A/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/icd
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd
W=/tmp/w17d; mkdir -p $W; cd $W
E=$G/libOpenCL-exp.so
ms() { date +%s%3N; }
cfg() {
  local c=$1; shift
  local t0=$(ms)
  case $c in
    native) "$@" >/dev/null 2>&1 ;;
    logoff_1ms) CLPRISM_DEVICE_TIMING=off CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$E "$@" >/dev/null 2>&1 ;;
    logoff_20ms) EXP_SLEEP_US=20000 CLPRISM_DEVICE_TIMING=off CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$E "$@" >/dev/null 2>&1 ;;
    log_1ms) CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$E "$@" >/dev/null 2>&1 ;;
    log_20ms) EXP_SLEEP_US=20000 CLPRISM_LOG_POLL_US=20000 CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$E "$@" >/dev/null 2>&1 ;;
  esac
  echo -n " $(( $(ms) - t0 ))"
}
C="native logoff_1ms logoff_20ms log_1ms log_20ms"
for a in "clblast_test_xsymm -platform 0" "clblast_test_xtrsv -platform 0" "clblast_test_xaxpy -platform 0"; do
  n=$(echo $a | awk '{print $1}')
  for c in native log_1ms; do cfg $c $a >/dev/null; done
  declare -A T=()
  for r in $(seq ${ROUNDS:-8}); do for c in $C; do T[$c]="${T[$c]:-}$(cfg $c $a)"; done; done
  for c in $C; do printf '%s\t%s\t%s\n' "$n" $c "${T[$c]# }"; done | tee -a $OUT/times-d.tsv
  unset T
done
python3 $G/paired_ratios.py $OUT/times-d.tsv
