#!/bin/bash
# Where the per-launch cost of balance auto goes in Rodinia's launch-heavy apps on the H100
# (device tool, carry .gpu; bundle as gpu-balance-command.sh): each app natively, in log mode
# (default device timing and CLPRISM_DEVICE_TIMING=off) and in balance auto (default timing and
# off), interleaved, 3 rounds, wall ms per run; H100 first plus PoCL's CPU device.
echo "build $BUILD on $(nvidia-smi -L | head -1)"
G=$PWD/.gpu
bash bench/rodinia_data.sh $G/rodinia/data large > /dev/null
source $G/gpu-env.sh > /dev/null 2>&1
export PATH=/opt/clprism-tc/usr/bin:$PATH
mkdir -p /tmp/icd
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd
R=$G/rodinia/opencl D=$G/rodinia/data
declare -A cmd=(
  [gaussian]="cd $R/gaussian && ./gaussian.out -s 2048 -p 0"
  [srad]="cd $R/srad && ./srad.out -n 1000 -l 0.5 -s 502 458 -p 0"
  [nw]="cd $R/nw && ./nw.out 8192 10 ./nw.cl -p 0"
)
run() { # NAME MODE TIMING -> ms
  local t0=$(date +%s%N)
  if [ "$2" = native ]; then (eval "${cmd[$1]}") > /dev/null 2>&1
  else (export CLPRISM_MODE=$2 CLPRISM_DEVICE_TIMING=$3 CLPRISM_LOG=/tmp/ov.jsonl CLPRISM_SUMMARY=off LD_PRELOAD=$G/libOpenCL.so; eval "${cmd[$1]}") > /dev/null 2>&1; fi
  echo $(( ($(date +%s%N) - t0) / 1000000 ))
}
printf "%-10s %8s %8s %8s %8s %8s   (ms, median of 3 interleaved rounds)\n" app native log log_off balance bal_off
for a in gaussian srad nw; do
  run $a native x > /dev/null; run $a balance adaptive > /dev/null
  declare -A v=()
  for r in 1 2 3; do
    v[n]+="$(run $a native x) "; v[l]+="$(run $a log adaptive) "; v[lo]+="$(run $a log off) "
    v[b]+="$(run $a balance adaptive) "; v[bo]+="$(run $a balance off) "
  done
  med() { echo $1 | tr ' ' '\n' | grep . | sort -n | sed -n 2p; }
  printf "%-10s %8s %8s %8s %8s %8s\n" $a $(med "${v[n]}") $(med "${v[l]}") $(med "${v[lo]}") $(med "${v[b]}") $(med "${v[bo]}")
  unset v
done
