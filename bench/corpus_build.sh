#!/usr/bin/env bash
# Builds the public benchmark corpus used outside CI (issues 18 and 19): PolyBench-ACC's
# OpenCL versions (cavazos-lab/PolyBench-ACC, fetched with the search tool's `fetch`, never
# committed here). Each app gets its own folder with its .cl files, since the apps open their
# kernels by relative path.
#   usage: bench/corpus_build.sh MIRROR OUT [DATASET] [RUN_ON_CPU]
#   MIRROR   the fetched git dir, e.g. /work/.mirror/cavazos-lab+PolyBench-ACC/repo
#   OUT      output folder (OUT/<app>/<app>.exe and its kernels; OUT/apps.txt lists them)
#   DATASET  MINI|SMALL|STANDARD|LARGE|EXTRALARGE (default STANDARD)
#   RUN_ON_CPU  1: the app also computes on the host and compares (default), 0: GPU only
# Device selection is CL_DEVICE_TYPE_ALL so the first device of the first platform is used;
# pick the platform with OCL_ICD_VENDORS / POCL_DEVICES.
set -euo pipefail
mirror=$1 out=$2 dataset=${3:-STANDARD} oncpu=${4:-1}
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git -C "$mirror" archive HEAD OpenCL | tar x -C "$src"
mkdir -p "$out"
: > "$out/apps.txt"
for c in $(cd "$src/OpenCL" && find . -name '*.c' ! -path './utilities/*' | sort); do
  dir=$(dirname "$c"); app=$(basename "$dir")
  mkdir -p "$out/$app"
  cp "$src/OpenCL/$dir"/*.cl "$out/$app/"
  if gcc -O2 -w -D"${dataset}_DATASET" -DOPENCL_DEVICE_SELECTION=CL_DEVICE_TYPE_ALL \
      -DRUN_ON_CPU="$oncpu" -DCL_TARGET_OPENCL_VERSION=120 -I"$src/OpenCL/utilities" \
      "$src/OpenCL/$c" -o "$out/$app/$app.exe" -lOpenCL -lm; then
    echo "$app" >> "$out/apps.txt"
  else
    echo "build failed: $app" >&2
  fi
done
echo "built $(wc -l < "$out/apps.txt") apps in $out ($dataset, RUN_ON_CPU=$oncpu)"
