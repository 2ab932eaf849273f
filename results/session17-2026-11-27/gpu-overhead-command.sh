#!/bin/bash
# Session 17, issue 18's two open causes on one GPU plus PoCL's CPU device (device tool, carry
# .gpu; bundle as in session 16's s16.sh, .gpu/quick_exit = cc tests/c/quick_exit.c -lOpenCL):
#  A. where log mode's cost per launch goes on CLBlast's tests: native, log (adaptive device
#     timing, the default), log with CLPRISM_DEVICE_TIMING=off and =all, REPS interleaved runs,
#     then one traced run (CLPRISM_TRACE) each of log and log-off: per OpenCL call, calls and
#     µs per call.
#  B. quick_exit (build, one launch, exit at once): native, log, auto, always, REPS_Q
#     interleaved runs, each split by QUICK_EXIT_STAMPS into load (exec to main), context,
#     build, launch and exit (last stamp to the process gone), ms.
set -u
echo "build $BUILD on $(nvidia-smi -L | head -1)"
G=$PWD/.gpu
source $G/gpu-env.sh > /dev/null 2>&1
A=/tmp/clprism-apps; mkdir -p $A && tar xJf $G/apps.tar.xz -C $A
export PATH=$A/bin:$PATH LD_LIBRARY_PATH=$A/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/icd
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:$(cat /etc/OpenCL/vendors/pocl.icd) OCL_ICD_VENDORS=/tmp/icd
clinfo -l
W=/tmp/w17; mkdir -p $W; cd $W
L=$G/libOpenCL.so
ms() { date +%s%3N; }
# cfg CONFIG CMD...: runs CMD once under CONFIG, prints ms/rc
cfg() {
  local c=$1; shift
  local t0=$(ms) rc
  case $c in
    native) "$@" >/dev/null 2>&1 ;;
    off) CLPRISM_MODE=off LD_PRELOAD=$L "$@" >/dev/null 2>&1 ;;
    log) CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$L "$@" >/dev/null 2>&1 ;;
    logoff) CLPRISM_DEVICE_TIMING=off CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$L "$@" >/dev/null 2>&1 ;;
    logall) CLPRISM_DEVICE_TIMING=all CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$L "$@" >/dev/null 2>&1 ;;
    auto|always) CLPRISM_MODE=balance CLPRISM_SPLIT=$c CLPRISM_DEVICES=all CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$L "$@" >/dev/null 2>&1 ;;
  esac
  rc=$?; echo -n " $(( $(ms) - t0 ))/$rc"
}
if [ "${PART:-A}" = C ]; then
# C: the interposer's cost split by layer, ROUNDS interleaved rounds per app; times.tsv lines
# for bench/paired_ratios.py
for a in "clblast_test_xtrsv -platform 0" "clblast_test_xger -platform 0" "clpeak -p 0 -d 0 --kernel-latency" "clblast_test_xsymm -platform 0"; do
  n=$(echo $a | awk '{print $1"_"$NF}')
  for c in native log auto; do cfg $c $a >/dev/null; done   # warm the caches
  declare -A T=()
  for r in $(seq ${ROUNDS:-8}); do
    for c in native off logoff log auto; do T[$c]="${T[$c]:-}$(cfg $c $a)"; done
  done
  for c in native off logoff log auto; do printf '%s\t%s\t%s\n' "$n" $c "$(echo ${T[$c]} | sed 's#/[0-9]*##g')"; done | tee -a $OUT/times-c.tsv
  unset T
done
python3 $G/paired_ratios.py $OUT/times-c.tsv
elif [ "${PART:-A}" = A ]; then
apps=("clblast_test_xtrsv -platform 0" "clblast_test_xsymm -platform 0" "clFFT-client --platform 0 -x 1024 -y 64 -p 5")
for a in "${apps[@]}"; do
  echo "== $a"
  for c in native log; do cfg $c $a >/dev/null; done   # warm the caches
  declare -A T=()
  for r in $(seq ${REPS:-5}); do
    for c in native log logoff logall auto; do T[$c]="${T[$c]:-}$(cfg $c $a)"; done
  done
  for c in native log logoff logall auto; do echo "$c:${T[$c]}"; done
  unset T
done
echo "== traced runs of clblast_test_xtrsv: per call, calls / total ms / us per call"
for c in log logoff; do
  CLPRISM_TRACE=$W/t-$c.json cfg $c clblast_test_xtrsv -platform 0; echo " ($c traced)"
done
python3 - $W/t-log.json $W/t-logoff.json <<'PY'
import json, sys, collections
tabs = []
for f in sys.argv[1:]:
    t = json.load(open(f)); ev = t["traceEvents"] if isinstance(t, dict) else t
    c = collections.Counter(); d = collections.Counter()
    for e in ev:
        if e.get("ph") == "X" and e["name"].startswith("cl"):
            c[e["name"]] += 1; d[e["name"]] += e.get("dur", 0)
    tabs.append((c, d))
(c0, d0), (c1, d1) = tabs
print(f"{'call':32} {'calls':>7} {'log ms':>9} {'off ms':>9} {'log us':>8} {'off us':>8}")
for k in sorted(d0, key=lambda k: -d0[k])[:24]:
    print(f"{k:32} {c0[k]:7} {d0[k]/1e3:9.1f} {d1[k]/1e3:9.1f} {d0[k]/c0[k]:8.1f} {d1[k]/max(c1[k],1):8.1f}")
PY
else
Q=$G/quick_exit
echo "== quick_exit, ${REPS_Q:-8} interleaved runs per mode: total load/context/build/launch/exit ms"
for r in $(seq ${REPS_Q:-8}); do
  for c in native log auto always; do
    t0=$(ms)
    QUICK_EXIT_STAMPS=1 cfg $c bash -c "$Q 4096 2>$W/st" > /dev/null
    t1=$(ms)
    # cfg's own stderr goes to /dev/null; the stamps come from the inner redirection
    python3 - $t0 $t1 $W/st $c <<'PY'
import sys
t0, t1, f, c = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
s = {l.split()[1]: float(l.split()[2]) for l in open(f) if l.startswith("stamp ")}
if "exit" not in s: print(f"{c}: total {t1-t0:.0f} (no stamps: {open(f).read()[:200]!r})"); sys.exit()
print(f"{c:7} total {t1-t0:5.0f} load {s['main']-t0:5.0f} context {s['context']-s['main']:5.0f} "
      f"build {s['built']-s['context']:5.0f} launch {s['launched']-s['built']:5.0f} exit {t1-s['exit']:5.0f}")
PY
  done
done
echo "== one auto and one log run with CLPRISM_DEBUG=1 (stderr), and auto traced"
for c in log auto; do
  echo "-- $c"; QUICK_EXIT_STAMPS=1 CLPRISM_DEBUG=1 CLPRISM_MODE=$([ $c = log ] && echo log || echo balance) CLPRISM_DEVICES=all CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$L $Q 4096 2>&1 | head -60
done
CLPRISM_TRACE=$W/t-auto.json CLPRISM_MODE=balance CLPRISM_DEVICES=all CLPRISM_SUMMARY=off CLPRISM_LOG=$W/l.jsonl LD_PRELOAD=$L $Q 4096
python3 - $W/t-auto.json <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); ev = t["traceEvents"] if isinstance(t, dict) else t
for e in sorted((e for e in ev if e.get("ph") == "X"), key=lambda e: e["ts"]):
    print(f"{e['ts']/1e3:9.1f} ms {e.get('dur',0)/1e3:8.1f} ms tid {e.get('tid')} {e['name']}")
PY
fi
