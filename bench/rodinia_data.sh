#!/usr/bin/env bash
# Generates the inputs of bench/real_apps.sh's Rodinia apps that Rodinia does not ship in its
# repository (its data/ is a separate download), with awk from a fixed seed, so that the GPU
# host (no Python there is assumed) makes its own instead of carrying ~100 MB: random
# hotspot/hotspot3D temperature and power grids (one float per line) and a bfs graph in
# Rodinia's format (per node "first-edge count", then source, edge count, "dest cost" per edge;
# each node 1..6 random neighbours, costs 1..10, as Rodinia's graphgen).
#   usage: bench/rodinia_data.sh DIR [small|large]
set -euo pipefail
dir=$1 size=${2:-small}
mkdir -p "$dir"
floats() { # FILE COUNT LO HI SEED
  [ -s "$1" ] || awk -v n="$2" -v lo="$3" -v hi="$4" -v s="$5" \
    'BEGIN { srand(s); for (i = 0; i < n; i++) printf "%.6f\n", lo + (hi - lo) * rand() }' > "$1"
}
graph() { # FILE NODES
  [ -s "$1" ] || awk -v n="$2" 'BEGIN {
    srand(18); e = 0
    for (i = 0; i < n; i++) { c = 1 + int(6 * rand()); start[i] = e; cnt[i] = c; e += c }
    print n; for (i = 0; i < n; i++) print start[i], cnt[i]
    print ""; print 0; print ""; print e
    for (k = 0; k < e; k++) print int(n * rand()), 1 + int(10 * rand())
  }' > "$1"
}
if [ "$size" = large ]; then hs=1024 bg=1000000; else hs=512 bg=65536; fi
floats "$dir/temp_$hs" $((hs * hs)) 323 341 1
floats "$dir/power_$hs" $((hs * hs)) 0 0.001 2
floats "$dir/temp_512x8" $((512 * 512 * 8)) 323 341 3
floats "$dir/power_512x8" $((512 * 512 * 8)) 0 0.001 4
graph "$dir/graph_$bg.txt" "$bg"
echo "inputs ($size) in $dir"
