#!/usr/bin/env bash
# Builds Rodinia's OpenCL apps (yuhc/gpu-rodinia, fetched with the search tool's `fetch`, never
# committed here) and generates the small inputs the repository does not ship
# (bench/rodinia_data.sh). Outside CI (issues 18 and 19).
#   usage: bench/rodinia_build.sh MIRROR OUT
#   MIRROR  the fetched git dir, e.g. /work/.mirror/yuhc+gpu-rodinia/repo
#   OUT     OUT/opencl/<app>/ (each app runs from its folder: it opens its .cl there),
#           OUT/data/, OUT/apps.txt (the apps that built)
# Rodinia's Makefiles predate C++17 and link -lOpenCL before the objects: every app is built
# with a g++ wrapper (-std=gnu++11 -fcommon -lm). Left out: hybridsort (does not link:
# duplicate globals in its sources), kmeans (crashes natively with a smashed stack in this
# fork), and the apps that need recorded data (b+tree, cfd, dwt2d, heartwall, leukocyte,
# myocyte, nn).
set -euo pipefail
mirror=$1 out=$2
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/opencl" "$out/common"
# blob by blob: a snapshot may lack some large data blobs (git archive stops at the first)
git -C "$mirror" ls-tree -r HEAD opencl common | while read -r _ _ sha path; do
  mkdir -p "$out/$(dirname "$path")"
  git -C "$mirror" cat-file blob "$sha" > "$out/$path" 2>/dev/null || rm -f "$out/$path"
done
cat > "$out/gxx" <<'W'
#!/bin/sh
exec g++ -O2 -std=gnu++11 -fcommon -fpermissive -w -DCL_TARGET_OPENCL_VERSION=120 "$@" -lm
W
chmod +x "$out/gxx"
inc=/usr/include lib=/usr/lib/x86_64-linux-gnu
: > "$out/apps.txt"
for app in backprop bfs gaussian hotspot hotspot3D lavaMD lud nw particlefilter pathfinder srad streamcluster; do
  # the C apps build with their own flags; the C++ ones (and nw, C++ in a .c) through the wrapper
  case $app in hotspot|hotspot3D|lavaMD|srad) cc=gcc ;; *) cc=$out/gxx ;; esac
  if (cd "$out/opencl/$app" && make OPENCL_INC=$inc OPENCL_LIB=$lib NV_OPENCL_INC=$inc \
      NV_OPENCL_LIB=$lib CC="$cc" CXX="$out/gxx" > build.log 2>&1); then
    echo "$app" >> "$out/apps.txt"
  else
    echo "build failed: $app (see $out/opencl/$app/build.log)" >&2
  fi
done
"$(dirname "$0")/rodinia_data.sh" "$out/data" small
echo "built $(wc -l < "$out/apps.txt") apps in $out/opencl; inputs in $out/data"
