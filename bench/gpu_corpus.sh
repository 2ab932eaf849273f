#!/usr/bin/env bash
# GPU batch for issue 19 (projection) on the public corpus: PolyBench-ACC's OpenCL apps, built
# here by bench/corpus_build.sh into .gpu/corpus/ (LARGE data sets, no host check), run on the
# NVIDIA GPU alone (OCL_ICD_VENDORS=nvidia.icd, so the apps' "first device of the first
# platform" is the GPU): natively, in log mode with every launch timed, and in project mode
# with every launch timed. Also bench/latency.c (kernel floor, memory latency) on the GPU.
# Writes $OUT/corpus.txt (wall times per app and mode) and $OUT/logs.tgz (logs/<app>.{log,project}.jsonl)
#   usage (device tool, carry .gpu): bash bench/gpu_corpus.sh [APP...]
set -u
G=$PWD/.gpu
source "$G/gpu-env.sh" > "$OUT/clinfo.txt" 2>&1
# the emulator looks for clang-15 / llvm-spirv-15 by name
export PATH=/opt/clprism-tc/usr/bin:$PATH
nvidia-smi -L
clang-15 --version > /dev/null && llvm-spirv-15 --version > /dev/null ||
  echo "WARNING: the clang-15 / llvm-spirv-15 toolchain does not run: project mode cannot emulate" | tee "$OUT/toolchain-missing.txt"
mkdir -p /tmp/nv-only && cp /etc/OpenCL/vendors/nvidia.icd /tmp/nv-only/
export OCL_ICD_VENDORS=/tmp/nv-only OCL_ICD_FILENAMES=libnvidia-opencl.so.1
mkdir -p "$OUT/logs"
"$G/latency" 0 0 512 200000 2>&1 | tee "$OUT/latency.txt"
apps=${*:-$(cat "$G/corpus/apps.txt")}
printf "%-18s %10s %10s %10s %8s %8s\n" app native_s log_s project_s log_rc proj_rc | tee "$OUT/corpus.txt"
start=$(date +%s)
for a in $apps; do
  # the device tool stops a command at 600 s: leave time for the archive
  [ $(( $(date +%s) - start )) -lt "${DEADLINE_S:-480}" ] || { echo "skipped (deadline): $a" | tee -a "$OUT/corpus.txt"; continue; }
  cd "$G/corpus/$a" || continue
  t0=$(date +%s%N); timeout 60 "./$a.exe" > "$OUT/logs/$a.native.out" 2>&1; n=$(( ($(date +%s%N) - t0) / 1000000 ))
  t0=$(date +%s%N)
  CLPRISM_MODE=log CLPRISM_DEVICE_TIMING=all CLPRISM_LOG="$OUT/logs/$a.log.jsonl" CLPRISM_SUMMARY=off \
    LD_PRELOAD="$G/libOpenCL.so" timeout 90 "./$a.exe" > "$OUT/logs/$a.log.out" 2>&1; lrc=$?
  l=$(( ($(date +%s%N) - t0) / 1000000 ))
  t0=$(date +%s%N)
  CLPRISM_MODE=project CLPRISM_DEVICE_TIMING=all CLPRISM_CACHE="$G/emu-cache" CLPRISM_PROFILES="$G/profiles" \
    CLPRISM_LOG="$OUT/logs/$a.project.jsonl" CLPRISM_SUMMARY=off \
    LD_PRELOAD="$G/libOpenCL.so" timeout 150 "./$a.exe" > "$OUT/logs/$a.project.out" 2>&1; prc=$?
  p=$(( ($(date +%s%N) - t0) / 1000000 ))
  awk -v a="$a" -v n="$n" -v l="$l" -v p="$p" -v lrc="$lrc" -v prc="$prc" \
    'BEGIN{printf "%-18s %10.2f %10.2f %10.2f %8s %8s\n", a, n/1000, l/1000, p/1000, lrc, prc}' | tee -a "$OUT/corpus.txt"
done
# one archive: the device tool brings back a limited number of files
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
