#!/bin/bash
# Issue 18's table on one GPU plus PoCL's CPU device (device tool, carry .gpu; bundle: stripped
# release build of the commit named in the output, Debian's clpeak / clFFT-client / CLBlast tests
# packed by bench/gpu_apps_project.sh --pack, .gpu/debs from fetch-toolchain.sh, .gpu/quick_exit
# = cc tests/c/quick_exit.c -lOpenCL). The apps run on the GPU (platform 0: the NVIDIA ICD first),
# balance mode spreads over the GPU and the CPU (CLPRISM_DEVICES=all).
#   PART=warm: native, balance auto and log mode, REPS interleaved runs, caches warmed by one
#              native and one auto run (the steady ratios; log mode = the interposer's own cost)
#   PART=always: one warm always run per app (split launches, devices_ready_ms), then COLD=1
#              first runs of the worst cases natively and in auto, then quick_exit's exit time
set -u
echo "build $BUILD on $(nvidia-smi -L | head -1)"
G=$PWD/.gpu
source $G/gpu-env.sh > /dev/null 2>&1
export PATH=/opt/clprism-tc/usr/bin:$PATH
A=/tmp/clprism-apps; mkdir -p $A && tar xJf $G/apps.tar.xz -C $A
export PATH=$A/bin:$PATH LD_LIBRARY_PATH=$A/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/icd
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd
clinfo -l
ALL="clblast_xaxpy clblast_xdot clblast_xnrm2 clblast_xgemv clblast_xger clblast_xgemm clblast_xsymm clblast_xtrsv clblast_xhad clblast_xim2col clblast_xomatcopy clfft_1024x64 clfft_256x256 clpeak_latency clpeak_bandwidth"
if [ "${PART:-warm}" = warm ]; then
  APPS=${APPS:-$ALL} LIB=$G/libOpenCL.so REPS=${REPS:-3} MODES="native auto log" WARM_MODES="native auto" \
    RUN_TIMEOUT=60 PLATFORM=0 timeout ${BUDGET_S:-540} bash bench/real_apps.sh $OUT/warm 2>&1 | tee $OUT/gpu-apps-warm.txt
  tail -n +1 $OUT/warm/times.tsv >> $OUT/gpu-apps-warm.txt
  rm -rf $OUT/warm
else
  echo "== warm always, one run per app (caches warmed by one native and one always run)"
  APPS=${APPS:-$ALL} LIB=$G/libOpenCL.so REPS=1 MODES="native always" WARM_MODES="native always" \
    RUN_TIMEOUT=60 PLATFORM=0 timeout ${BUDGET_S:-300} bash bench/real_apps.sh $OUT/always 2>&1 | tee $OUT/gpu-apps-always.txt
  python3 - $OUT/always/*.always.jsonl <<'PY' | tee -a $OUT/gpu-apps-always.txt
import json, sys
print("devices_ready_ms per app (always):")
for f in sys.argv[1:]:
    ready = set()
    for line in open(f):
        r = json.loads(line)
        s = (r.get("schedule") or {})
        if s.get("devices_ready_ms") is not None: ready.add(s["devices_ready_ms"])
    print(f" {f.split('/')[-1]}: {sorted(ready)[:3]}")
PY
  rm -rf $OUT/always
  echo "== cold first runs (empty clprism, PoCL and NVIDIA caches), native and auto"
  COLD=1 APPS="${COLD_APPS:-clblast_xim2col clblast_xaxpy clblast_xgemv clblast_xsymm clfft_1024x64 clpeak_latency}" LIB=$G/libOpenCL.so \
    REPS=${COLD_REPS:-2} MODES="native auto" RUN_TIMEOUT=60 PLATFORM=0 timeout ${COLD_BUDGET_S:-150} bash bench/real_apps.sh $OUT/cold 2>&1 | tee $OUT/gpu-apps-cold.txt
  cat $OUT/cold/times.tsv >> $OUT/gpu-apps-cold.txt; rm -rf $OUT/cold
  echo "== quick_exit (build, one launch, exit at once), 10 runs each, ms"
  for mode in native always auto; do
    ts=""
    for i in $(seq 10); do
      t0=$(date +%s%3N)
      if [ $mode = native ]; then $G/quick_exit 4096 >/dev/null 2>&1; rc=$?
      else CLPRISM_MODE=balance CLPRISM_SPLIT=$mode CLPRISM_DEVICES=all CLPRISM_SUMMARY=off LD_PRELOAD=$G/libOpenCL.so $G/quick_exit 4096 >/dev/null 2>&1; rc=$?; fi
      ts="$ts $(( $(date +%s%3N) - t0 ))/$rc"
    done
    echo "$mode:$ts"
  done | tee -a $OUT/gpu-apps-cold.txt
fi
