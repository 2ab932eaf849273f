#!/bin/bash
# Why PolyBench lu and convolution-3d ran 1.28x / 1.24x native in balance auto on three PoCL devices
# on the GPU host (pocl3-polybench.txt): native, log, auto, and auto with the balance devices never
# opened (CLPRISM_BALANCE_OPEN_COST=1000000000), 5 interleaved runs each; then clblast_test_xgemm
# on the H200 + PoCL CPU in always, after the floating-point-before-build change (b5aedf6).
# Device tool, carry .gpu (as gpu-apps-command.sh, plus .gpu/pbstd).
set -u
echo "build $BUILD on $(nproc) cores"
G=$PWD/.gpu
source $G/gpu-env.sh > /dev/null 2>&1
mkdir -p /tmp/pocl-only && cp /etc/OpenCL/vendors/pocl.icd /tmp/pocl-only/
run() { # MODE APP -> ms
  local m=$1 a=$2 t0; t0=$(date +%s%3N)
  case $m in
    native) (cd $G/pbstd/$a && ./$a.exe >/dev/null 2>&1) ;;
    log) (cd $G/pbstd/$a && CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=/tmp/$a.log.jsonl LD_PRELOAD=$G/libOpenCL.so ./$a.exe >/dev/null 2>&1) ;;
    auto) (cd $G/pbstd/$a && CLPRISM_MODE=balance CLPRISM_SPLIT=auto CLPRISM_DEVICES=all CLPRISM_SUMMARY=off CLPRISM_LOG=/tmp/$a.auto.jsonl LD_PRELOAD=$G/libOpenCL.so ./$a.exe >/dev/null 2>&1) ;;
    closed) (cd $G/pbstd/$a && CLPRISM_BALANCE_OPEN_COST=1000000000 CLPRISM_MODE=balance CLPRISM_SPLIT=auto CLPRISM_DEVICES=all CLPRISM_SUMMARY=off CLPRISM_LOG=/tmp/$a.closed.jsonl LD_PRELOAD=$G/libOpenCL.so ./$a.exe >/dev/null 2>&1) ;;
  esac
  echo $(( $(date +%s%3N) - t0 ))
}
(
export OCL_ICD_VENDORS=/tmp/pocl-only OCL_ICD_FILENAMES=$(cat /etc/OpenCL/vendors/pocl.icd) POCL_DEVICES="pthread pthread basic"
clinfo -l
for a in lu convolution-3d; do
  for m in native auto; do run $m $a > /dev/null; done
  declare -A T=()
  for r in 1 2 3 4 5; do for m in native log auto closed; do T[$m]="${T[$m]:-} $(run $m $a)"; done; done
  for m in native log auto closed; do echo "$a $m:${T[$m]}"; done
  python3 - /tmp/$a.auto.jsonl <<'PY'
import json, sys, collections
c = collections.Counter(); ready = set()
for l in open(sys.argv[1]):
    r = json.loads(l); s = r.get("schedule")
    if not s: continue
    c[(s.get("fallback") or "split")[:100]] += 1
    if s.get("devices_ready_ms") is not None: ready.add(s["devices_ready_ms"])
print(" auto reasons:", c.most_common(4), "devices_ready_ms:", sorted(ready)[:2])
PY
  unset T
done
(cd $G/pbstd/lu && CLPRISM_DEBUG=1 CLPRISM_MODE=balance CLPRISM_SPLIT=auto CLPRISM_DEVICES=all CLPRISM_SUMMARY=off CLPRISM_LOG=/tmp/x.jsonl LD_PRELOAD=$G/libOpenCL.so ./lu.exe 2>&1 | grep clprism-debug | grep -iv "floating-point check\|launch [0-9]*: build" | head -40)
)
echo "== clblast_test_xgemm on the H200 + PoCL CPU, warm (one native and one always run first)"
A=/tmp/clprism-apps; mkdir -p $A && tar xJf $G/apps.tar.xz -C $A
export PATH=$A/bin:$PATH LD_LIBRARY_PATH=$A/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/icd
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd
APPS=clblast_xgemm LIB=$G/libOpenCL.so REPS=2 MODES="native always" WARM_MODES="native always" RUN_TIMEOUT=120 PLATFORM=0 \
  bash bench/real_apps.sh /tmp/xg 2>&1 | cut -c1-300
cat /tmp/xg/times.tsv
