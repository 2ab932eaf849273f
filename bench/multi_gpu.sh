#!/usr/bin/env bash
# Issue 31, item 5: applications nobody here wrote (built by bench/multi_gpu_build.sh into
# .gpu/mgpu: PolyBench-ACC gemm, 2mm, 3mm, fdtd-2d, jacobi-2d-imper at the issue's sizes,
# BabelStream's OpenCL model, clpeak) run natively on one GPU and under clprism in balance mode
# (CLPRISM_SPLIT=auto and =always) over each device set of GPUSETS. A benchmark, not a test.
# Per run: wall time, exit code, the app's own figures (PolyBench's kernel time, BabelStream's
# MB/s per kernel, clpeak's GFLOPS / GBPS per width) and its output digest; per app a table
# (bench/multi_gpu_table.py): ratios to native, launches split / launches, bytes moved per split
# launch, the top fallback reasons, digest equal to native's.
#   usage (GPU host, from the repository root, after `source .gpu/gpu-env.sh`):
#     bash bench/multi_gpu.sh OUTDIR [APP ...]       (default: every app of $MGPU/apps.txt:
#                                                     gemm 2mm 3mm fdtd-2d jacobi-2d-imper
#                                                     stream clpeak_sp clpeak_bw)
#   GPUSETS="2 4"     device sets: N is CLPRISM_DEVICES=gpu:N (the first N GPUs); any other word
#                     is passed as CLPRISM_DEVICES as it is (e.g. all, 0:0,0:1)
#   SPLITS="auto always"   the CLPRISM_SPLIT values run per device set
#   NATIVE=1          also run natively (0: only the clprism runs; the table's ratios need it)
#   WARM=1            one untimed native run per app first (fills the driver's kernel cache,
#                     so the first timed run does not pay the compile)
#   DEADLINE_S=540    no run starts after this many seconds, and none runs past it (the device
#                     tool stops a command at 600 s); the skipped runs are listed
#   RUN_TIMEOUT=150   seconds before one run is stopped (its row shows rc 124)
#   CACHE=fresh       each clprism run gets an empty CLPRISM_CACHE (binaries, footprint models),
#                     so every cell is a first run alike; CACHE=shared: clprism's usual cache,
#                     filled by the runs before (the driver's own kernel cache is warm either way)
#   NV_CACHE=fresh    each run (native too) gets an empty CUDA_CACHE_PATH: NVIDIA's own cache of
#                     compiled programs, which also answers clprism's builds on the other GPUs
#                     from an earlier run's (4 H200s: 60-170 ms cold, 8 ms warm; session 29),
#                     so every cell is a first run on the machine; default: the driver's cache
#   MGPU=.gpu/mgpu    the corpus; LIB=.gpu/libOpenCL.so the interposer
#   ICD=nvidia        restrict the ICD loader to /etc/OpenCL/vendors/nvidia.icd, so the apps'
#                     "first platform" is NVIDIA's (as bench/gpu_corpus.sh); ICD=all leaves the
#                     platforms as they are (PoCL stand-in: ICD=all GPUSETS=all)
#   extra CLPRISM_* variables (CLPRISM_DEBUG, CLPRISM_BOYER, ...) pass through to the clprism runs
# Writes OUTDIR/table.txt (also printed), OUTDIR/reasons.txt (each run's fallback reasons, the
# first of each in full), OUTDIR/env.txt and OUTDIR/logs.tgz (logs/: runs.tsv,
# apps.txt, <app>.<mode>.out and the clprism logs <app>.<split>.<set>.jsonl).
set -u
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
OUT=$1; shift
start=$(date +%s)
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
MGPU=$(cd "${MGPU:-.gpu/mgpu}" 2>/dev/null && pwd) || { echo "no corpus at ${MGPU:-.gpu/mgpu}: run bench/multi_gpu_build.sh" >&2; exit 1; }
LIB=${LIB:-$PWD/.gpu/libOpenCL.so}; LIB=$(readlink -f "$LIB")
GPUSETS=${GPUSETS:-2 4}
SPLITS=${SPLITS:-auto always}
DEADLINE_S=${DEADLINE_S:-540}
RUN_TIMEOUT=${RUN_TIMEOUT:-150}
L=$OUT/logs
rm -rf "$L"; mkdir -p "$L"
cp "$MGPU/apps.txt" "$L/apps.txt"
printf 'app\tmode\tdevices\twall_ms\trc\n' > "$L/runs.tsv"

if [ "${ICD:-nvidia}" = nvidia ]; then
  if [ -f /etc/OpenCL/vendors/nvidia.icd ]; then
    mkdir -p /tmp/mgpu-nv-only && cp /etc/OpenCL/vendors/nvidia.icd /tmp/mgpu-nv-only/
    export OCL_ICD_VENDORS=/tmp/mgpu-nv-only OCL_ICD_FILENAMES=libnvidia-opencl.so.1
  else
    echo "note: no /etc/OpenCL/vendors/nvidia.icd (source .gpu/gpu-env.sh first?): platforms left as they are" >> "$OUT/env.txt"
  fi
fi
{
  date -u; uname -n
  command -v nvidia-smi >/dev/null && nvidia-smi -L
  command -v clinfo >/dev/null && clinfo -l
  echo "OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-} POCL_DEVICES=${POCL_DEVICES:-} GPUSETS=$GPUSETS SPLITS=$SPLITS CACHE=${CACHE:-fresh} NV_CACHE=${NV_CACHE:-} RUN_TIMEOUT=$RUN_TIMEOUT DEADLINE_S=$DEADLINE_S"
  if [ -f "$LIB" ]; then echo "LIB=$LIB $(stat -c %s "$LIB") bytes sha256 $(sha256sum < "$LIB" | cut -c1-16)"; else echo "LIB=$LIB missing"; fi
  env | grep '^CLPRISM_' | sort
} >> "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
[ -f "$LIB" ] || echo "WARNING: no interposer at $LIB: only native runs"

apps=${*:-$(cut -d'|' -f1 "$MGPU/apps.txt")}
: > "$OUT/table.txt"
left() { echo $(( DEADLINE_S - ($(date +%s) - start) )); }
# run APP MODE DEVICES CMD...: one run from the app's folder; appends to runs.tsv
run() {
  local app=$1 mode=$2 devs=$3; shift 3
  local tag=$mode t rc t0 ms cache= nvc=
  [ "$mode" = native ] || tag=$mode.${devs//:/}
  t=$(left)
  if [ "$t" -lt 5 ]; then echo "skipped (deadline ${DEADLINE_S}s): $app $mode $devs" | tee -a "$OUT/table.txt"; return; fi
  [ "$t" -le "$RUN_TIMEOUT" ] || t=$RUN_TIMEOUT
  [ "${NV_CACHE:-}" = fresh ] && nvc=$(mktemp -d /tmp/mgpu-nvcache.XXXXXX)
  t0=$(date +%s%N)
  if [ "$mode" = native ] || [ "$mode" = warm ]; then
    (cd "$dir" && env ${nvc:+CUDA_CACHE_PATH=$nvc} timeout -k 5 "$t" "$@") > "$L/$app.$tag.out" 2>&1
  else
    [ "${CACHE:-fresh}" = fresh ] && cache=$(mktemp -d /tmp/mgpu-cache.XXXXXX)
    (cd "$dir" && env ${cache:+CLPRISM_CACHE=$cache} ${nvc:+CUDA_CACHE_PATH=$nvc} LD_PRELOAD="$LIB" CLPRISM_MODE=balance CLPRISM_SPLIT="$mode" CLPRISM_DEVICES="$devs" \
      CLPRISM_LOG="$L/$app.$tag.jsonl" CLPRISM_SUMMARY=off timeout -k 5 "$t" "$@") > "$L/$app.$tag.out" 2>&1
  fi
  rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ -z "$cache" ] || rm -rf "$cache"
  [ -z "$nvc" ] || rm -rf "$nvc"
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "timed out after ${t}s: $app $mode $devs" | tee -a "$OUT/table.txt"
  if [ "$mode" = warm ]; then rm -f "$L/$app.$tag.out"; return; fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$app" "$mode" "$devs" "$ms" "$rc" >> "$L/runs.tsv"
  # start and end (ns since the epoch, as the log's time_ns): what the app did before its
  # first launch and after its last one
  printf '%s\t%s\t%s\t%s\t%s\n' "$app" "$mode" "$devs" "$t0" "$(date +%s%N)" >> "$L/times.tsv"
  printf '  %-16s %-7s %-8s rc %3s %8.2f s\n' "$app" "$mode" "$devs" "$rc" "$(awk -v m="$ms" 'BEGIN{print m/1000}')"
}

for app in $apps; do
  line=$(grep "^$app|" "$MGPU/apps.txt" | head -1)
  [ -n "$line" ] || { echo "unknown app: $app (see $MGPU/apps.txt)" | tee -a "$OUT/table.txt"; continue; }
  IFS='|' read -r _ sub _ _ cmd <<< "$line"
  dir=$MGPU/$sub
  # shellcheck disable=SC2086
  [ "${WARM:-1}" = 1 ] && run "$app" warm - $cmd
  # shellcheck disable=SC2086
  [ "${NATIVE:-1}" = 1 ] && run "$app" native - $cmd
  if [ -f "$LIB" ]; then
    for set in $GPUSETS; do
      case $set in *[!0-9]*) devs=$set ;; *) devs=gpu:$set ;; esac
      for split in $SPLITS; do
        # shellcheck disable=SC2086
        run "$app" "$split" "$devs" $cmd
      done
    done
  fi
  python3 bench/multi_gpu_table.py "$L" "$app" 2>&1 | tee -a "$OUT/table.txt"
done
python3 bench/multi_gpu_table.py "$L" --summary 2>&1 | tee -a "$OUT/table.txt"
# every run's fallback reasons with the first one of each in full (the table's are cut)
for j in "$L"/*.jsonl; do
  [ -f "$j" ] || continue
  echo "== $(basename "$j" .jsonl)"
  python3 bench/balance_launches.py --examples "$j"
done > "$OUT/reasons.txt" 2>&1
cp "$OUT/table.txt" "$OUT/reasons.txt" "$L/"
# one archive: the device tool brings back a limited number of files
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
echo "wrote $OUT/table.txt, $OUT/env.txt, $OUT/logs.tgz ($(du -h "$OUT/logs.tgz" | cut -f1)) in $(( $(date +%s) - start )) s"
