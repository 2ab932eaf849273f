#!/usr/bin/env bash
# Builds Rodinia's OpenCL apps (yuhc/gpu-rodinia, fetched with the search tool's `fetch`, never
# committed here) and generates the inputs the repository does not ship (Rodinia's data/ is a
# separate download): random hotspot/hotspot3D grids, kmeans points and a bfs graph, from a
# fixed seed. Outside CI (issues 18 and 19).
#   usage: bench/rodinia_build.sh MIRROR OUT
#   MIRROR  the fetched git dir, e.g. /work/.mirror/yuhc+gpu-rodinia/repo
#   OUT     OUT/opencl/<app>/ (each app runs from its folder: it opens its .cl there),
#           OUT/data/, OUT/apps.txt (the apps that built)
# Rodinia's Makefiles predate C++17 and link -lOpenCL before the objects: every app is built
# with a g++ wrapper (-std=gnu++11 -fcommon -lm). hybridsort does not link (duplicate globals
# in its sources) and is left out; the apps that need recorded data (b+tree, cfd, dwt2d,
# heartwall, leukocyte, myocyte, nn) are left out.
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
for app in backprop bfs gaussian hotspot hotspot3D kmeans lavaMD lud nw particlefilter pathfinder srad streamcluster; do
  # the C apps build with their own flags; the C++ ones (and nw, C++ in a .c) through the wrapper
  case $app in hotspot|hotspot3D|lavaMD|srad) cc=gcc ;; *) cc=$out/gxx ;; esac
  if (cd "$out/opencl/$app" && make OPENCL_INC=$inc OPENCL_LIB=$lib NV_OPENCL_INC=$inc \
      NV_OPENCL_LIB=$lib CC="$cc" CXX="$out/gxx" > build.log 2>&1); then
    echo "$app" >> "$out/apps.txt"
  else
    echo "build failed: $app (see $out/opencl/$app/build.log)" >&2
  fi
done
mkdir -p "$out/data"
python3 - "$out/data" <<'PY'
import random, sys, os
d = sys.argv[1]; r = random.Random(18)
def floats(path, n, lo, hi):
    with open(path, "w") as f:
        f.write("".join(f"{r.uniform(lo, hi):.6f}\n" for _ in range(n)))
for n in (512, 1024):
    floats(f"{d}/temp_{n}", n * n, 323.0, 341.0)
    floats(f"{d}/power_{n}", n * n, 0.0, 1e-3)
floats(f"{d}/temp_512x8", 512 * 512 * 8, 323.0, 341.0)
floats(f"{d}/power_512x8", 512 * 512 * 8, 0.0, 1e-3)
for n in (100000, 819200):
    with open(f"{d}/kmeans_{n}.txt", "w") as f:
        for i in range(n):
            f.write(f"{i} " + " ".join(f"{r.random():.4f}" for _ in range(34)) + "\n")
# bfs: Rodinia's graph format (graphgen: each node 1..6 random neighbours, costs 1..10)
for n in (65536, 1000000):
    edges = [[r.randrange(n) for _ in range(r.randint(1, 6))] for _ in range(n)]
    with open(f"{d}/graph_{n}.txt", "w") as f:
        f.write(f"{n}\n")
        start = 0
        for e in edges:
            f.write(f"{start} {len(e)}\n"); start += len(e)
        f.write(f"\n0\n\n{start}\n")
        f.write("".join(f"{v} {r.randint(1, 10)}\n" for e in edges for v in e))
PY
echo "built $(wc -l < "$out/apps.txt") apps in $out/opencl; inputs in $out/data"
