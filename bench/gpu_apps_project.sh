#!/usr/bin/env bash
# GPU batch for issue 19 beyond PolyBench: clpeak, clFFT's client and three of CLBlast's test
# binaries (Debian's builds, carried with their libraries as .gpu/apps.tar.xz: bin/ and lib/,
# made by `bench/gpu_apps_project.sh --pack DIR` here), on the NVIDIA GPU alone: natively, in log
# mode and in project mode, every launch timed (as bench/gpu_corpus.sh). Writes
# $OUT/apps-project.txt (wall times, exit codes) and $OUT/applogs.tgz
# (applogs/<name>.{log,project}.jsonl), for `clprism accuracy --measured ... --projected ...`.
#   usage (device tool, carry .gpu): bash bench/gpu_apps_project.sh
set -u
if [ "${1:-}" = --pack ]; then
  d=$(mktemp -d); mkdir -p "$d/bin" "$d/lib"
  # the CLBlast tests of bench/real_apps.sh's corpus too (its 3-PoCL-device table on the GPU host)
  cp -L /usr/bin/clpeak /usr/bin/clFFT-client "$d/bin/"
  for t in xaxpy xdot xnrm2 xgemv xger xgemm xsymm xtrsv xhad xim2col xomatcopy; do
    cp -L "/usr/bin/clblast_test_$t" "$d/bin/"
  done
  for l in libclFFT.so.2 libboost_program_options.so.1.74.0 libclblast.so.1 libblas.so.3; do
    cp -L "/lib/x86_64-linux-gnu/$l" "$d/lib/"
  done
  tar cJf "$2" -C "$d" . && rm -rf "$d"
  exit
fi
G=$PWD/.gpu
source "$G/gpu-env.sh" > /dev/null 2>&1
export PATH=/opt/clprism-tc/usr/bin:$PATH
A=/tmp/clprism-apps
mkdir -p $A && tar xJf "$G/apps.tar.xz" -C $A
export LD_LIBRARY_PATH=$A/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/nv-only && cp /etc/OpenCL/vendors/nvidia.icd /tmp/nv-only/
export OCL_ICD_VENDORS=/tmp/nv-only OCL_ICD_FILENAMES=libnvidia-opencl.so.1
mkdir -p "$OUT/applogs"
apps=(
  "clpeak_bandwidth|$A/bin/clpeak -p 0 -d 0 --global-bandwidth"
  "clpeak_compute_sp|$A/bin/clpeak -p 0 -d 0 --compute-sp"
  "clpeak_latency|$A/bin/clpeak -p 0 -d 0 --kernel-latency"
  "clfft_1024x64|$A/bin/clFFT-client --platform 0 -x 1024 -y 64 -p 5"
  "clfft_4096x256|$A/bin/clFFT-client --platform 0 -x 4096 -y 256 -p 5"
  "clblast_xaxpy|$A/bin/clblast_test_xaxpy -platform 0"
  "clblast_xgemv|$A/bin/clblast_test_xgemv -platform 0"
  "clblast_xgemm|$A/bin/clblast_test_xgemm -platform 0"
)
printf "%-18s %10s %10s %10s %6s %6s %6s\n" app native_s log_s project_s rc_n rc_l rc_p | tee "$OUT/apps-project.txt"
start=$(date +%s)
for e in "${apps[@]}"; do
  name=${e%%|*} cmd=${e#*|}
  [ $(( $(date +%s) - start )) -lt "${DEADLINE_S:-420}" ] || { echo "skipped (deadline): $name" | tee -a "$OUT/apps-project.txt"; continue; }
  cd /tmp
  t0=$(date +%s%N); timeout 120 $cmd > "$OUT/applogs/$name.native.out" 2>&1; rn=$?; n=$(( ($(date +%s%N) - t0) / 1000000 ))
  t0=$(date +%s%N)
  CLPRISM_MODE=log CLPRISM_DEVICE_TIMING=all CLPRISM_LOG="$OUT/applogs/$name.log.jsonl" CLPRISM_SUMMARY=off \
    LD_PRELOAD="$G/libOpenCL.so" timeout 150 $cmd > "$OUT/applogs/$name.log.out" 2>&1; rl=$?
  l=$(( ($(date +%s%N) - t0) / 1000000 ))
  t0=$(date +%s%N)
  CLPRISM_MODE=project CLPRISM_DEVICE_TIMING=all CLPRISM_CACHE="$G/emu-cache" CLPRISM_PROFILES="$G/profiles" \
    CLPRISM_LOG="$OUT/applogs/$name.project.jsonl" CLPRISM_SUMMARY=off \
    LD_PRELOAD="$G/libOpenCL.so" timeout 200 $cmd > "$OUT/applogs/$name.project.out" 2>&1; rp=$?
  p=$(( ($(date +%s%N) - t0) / 1000000 ))
  awk -v a="$name" -v n="$n" -v l="$l" -v p="$p" -v rn="$rn" -v rl="$rl" -v rp="$rp" \
    'BEGIN{printf "%-18s %10.2f %10.2f %10.2f %6s %6s %6s\n", a, n/1000, l/1000, p/1000, rn, rl, rp}' | tee -a "$OUT/apps-project.txt"
done
tar czf "$OUT/applogs.tgz" -C "$OUT" applogs && rm -rf "$OUT/applogs"
