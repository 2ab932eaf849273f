#!/usr/bin/env bash
# Wall time to emulate one work-group of each example kernel in project mode (issue 3
# benchmark; target <= 20 ms), and the reduction example at 1x and 16x input (emulation time
# must stay flat while the input grows, Panwar et al. Fig. 6a).
#
# Every example runs at its default size under CLPRISM_MODE=project on PoCL, with the release
# build of the interposer. The figure per kernel is stats.emulation_ns of the launches that
# were emulated (status "ok"; reused launches cost no emulation): the interpreter's wall time
# for one work-group, without compilation (cached) and snapshot copies.
#
# usage: bench/emu_examples.sh            (prints the table on stdout)
#        POCL_DEVICES=... to choose the PoCL device (default: pthread)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --lib --bin clprism -q >&2
make -s -C examples >&2
LIB=$PWD/target/release/libOpenCL.so
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export POCL_DEVICES=${POCL_DEVICES:-pthread}
# warm the SPIR-V cache so that compilation never overlaps a measured emulation
run() { # name log args...
  local name=$1 log=$2; shift 2
  CLPRISM_MODE=project CLPRISM_LOG=$log CLPRISM_SUMMARY=off CLPRISM_EMU_SNAPSHOT_MAX=2G \
    LD_PRELOAD=$LIB "examples/build/$name" "$@" > "$TMP/out" 2>&1 ||
    { cat "$TMP/out" >&2; echo "$name failed" >&2; exit 1; }
  # compact log (schema clprism.launch/2): one self-contained record per launch
  target/release/clprism schema --expand "$log" > "$log.x" && mv "$log.x" "$log"
}
echo "# emulation wall time of one work-group per example kernel (PoCL: $POCL_DEVICES; $(nproc) cores; release build)"
echo "# ms = stats.emulation_ns of the emulated (non-reused) launches over 3 runs: best and median; target <= 20 ms (judged on the best: the VM is shared)"
printf "%-16s %-14s %9s %8s %8s %10s %12s %9s %9s  %s\n" example kernel launches emulated reused wg_items lane_instr best_ms med_ms "<=20ms"
for cl in examples/kernels/*.cl; do
  name=$(basename "$cl" .cl)
  [ "$name" = mt_launch ] && continue
  run "$name" "$TMP/$name.warm.jsonl"
  for rep in 1 2 3; do run "$name" "$TMP/$name.$rep.jsonl"; done
  python3 - "$name" "$TMP/$name".[123].jsonl <<'PY'
import json, sys, statistics
name, paths = sys.argv[1], sys.argv[2:]
per = {}
lines = [l for p in paths for l in open(p)]
for line in lines:
    r = json.loads(line)
    if r.get("record") == "device":
        continue
    e = r.get("emulation", {})
    k = per.setdefault(r["kernel"], {"n": 0, "ok": [], "reused": 0, "other": [], "items": 0, "lanes": 0})
    k["n"] += 1 / len(paths)
    st = e.get("status")
    if st == "ok":
        s = e["stats"]
        k["ok"].append(s["emulation_ns"] / 1e6)
        k["items"] = s["work_items"]
        k["lanes"] = max(k["lanes"], sum(v["lane"] for v in s["instructions"].values()))
    elif st == "reused":
        k["reused"] += 1
    else:
        k["other"].append(f'{st}: {e.get("reason")}')
for kern, k in per.items():
    if not k["ok"]:
        print(f'{name:<16} {kern:<14} {round(k["n"]):>9} {"-":>8} {k["reused"] // len(paths):>8}  not emulated: {k["other"][:1]}')
        continue
    best, med = min(k["ok"]), statistics.median(k["ok"])
    print(f'{name:<16} {kern:<14} {round(k["n"]):>9} {len(k["ok"]) // len(paths):>8} {k["reused"] // len(paths):>8} {k["items"]:>10} {k["lanes"]:>12} {best:>9.2f} {med:>9.2f}  {"yes" if best <= 20 else "NO"}')
PY
done
echo
echo "# reduction: emulation time of the first pass (one work-group of 256 work-items) as the input grows 16x"
printf "%-10s %12s %14s %10s\n" scale input_uints snapshot_MiB emu_ms
for scale in 1 16; do
  n=$((4194304 * scale))
  run reduction "$TMP/red$scale.warm.jsonl" "$n" 1
  best=""
  for rep in 1 2 3; do
    run reduction "$TMP/red$scale.jsonl" "$n" 1
    ms=$(python3 -c '
import json,sys
r=[r for r in map(json.loads, open(sys.argv[1])) if r.get("record") != "device"][0]
print(r["emulation"]["stats"]["emulation_ns"]/1e6)' "$TMP/red$scale.jsonl")
    best=$(python3 -c "import sys; v=[float(x) for x in sys.argv[1:] if x]; print(min(v))" $best $ms)
  done
  printf "%-10s %12d %14.1f %10.2f\n" "${scale}x" "$n" "$(python3 -c "print(($n*4+$n/512*4)/2**20)")" "$best"
done
