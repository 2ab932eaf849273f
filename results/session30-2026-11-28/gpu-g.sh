#!/usr/bin/env bash
# Session 30, call g (nvidia-h200-x4), every run a first run on the machine (NV_CACHE=fresh),
# CLPRISM_SPLIT=auto over 4 GPUs. Configurations, interleaved per app and round:
#   nat   natively
#   octx  session 29's build (d417a53) with CLPRISM_BALANCE_OPEN=context: the app's first
#         compile waits for the whole opening
#   nctx  this session's build (the open gate: the compile waits only for the context
#         creation in flight, creations one at a time) with CLPRISM_BALANCE_OPEN=context
#   nlau  this session's build with CLPRISM_BALANCE_OPEN=launch (the default until now)
# Short apps (.gpu/mgpu-small, SIZE=small: PolyBench at 256-512, BabelStream 1M floats) three
# rounds; the issue's sizes (.gpu/mgpu) one round; clpeak --compute-sp one round; then
# CLPRISM_DEBUG=1 runs of BabelStream (the opening's timeline) with octx and nctx; then a crash
# check: 2mm (8192) and small BabelStream, nctx, several runs each.
# usage (GPU host, repository root, `.gpu` carried): bash results/session30-2026-11-28/gpu-g.sh OUTDIR
set -u
OUT=${1:?OUTDIR}; mkdir -p "$OUT"
T0=$(date +%s)
tar -C .gpu -xJf .gpu/lib-s30g.tar.xz
source .gpu/gpu-env.sh > /dev/null 2>&1
export NV_CACHE=fresh WARM=0 GPUSETS=4 SPLITS=auto RUN_TIMEOUT=40 DEADLINE_S=60
left() { echo $(( 560 - ($(date +%s) - T0) )); }
# cfg NAME CORPUS APP ROUND [extra env...]
one() {
  local cfg=$1 corpus=$2 app=$3 r=$4; shift 4
  [ "$(left)" -gt 20 ] || { echo "skipped $cfg $corpus $app $r" >> "$OUT/skipped.txt"; return; }
  local d=/tmp/s30g/$corpus/$app/$cfg-$r
  case $cfg in
    nat)  LIB=/nonexistent NATIVE=1 MGPU=.gpu/$corpus bash bench/multi_gpu.sh $d $app ;;
    octx) env "$@" LIB=.gpu/libOpenCL-s29.so NATIVE=0 MGPU=.gpu/$corpus CLPRISM_BALANCE_OPEN=context bash bench/multi_gpu.sh $d $app ;;
    nctx) env "$@" LIB=.gpu/libOpenCL-s30.so NATIVE=0 MGPU=.gpu/$corpus CLPRISM_BALANCE_OPEN=context bash bench/multi_gpu.sh $d $app ;;
    nlau) env "$@" LIB=.gpu/libOpenCL-s30.so NATIVE=0 MGPU=.gpu/$corpus CLPRISM_BALANCE_OPEN=launch bash bench/multi_gpu.sh $d $app ;;
  esac > /dev/null 2>&1
  mkdir -p $d/x && tar xzf $d/logs.tgz -C $d/x 2>/dev/null
  tail -n +2 $d/x/logs/runs.tsv 2>/dev/null | sed "s/^/$corpus\t$cfg\t$r\t/" >> "$OUT/walls.tsv"
  grep -hE "^(Triad|Copy) |GPU Time|float  |float16" $d/x/logs/*.out 2>/dev/null | sed "s/^/$corpus $app $cfg $r: /" >> "$OUT/figures.txt"
  grep -h "digest" $d/x/logs/*.out 2>/dev/null | sed "s/^/$corpus $app $cfg $r: /" >> "$OUT/digests.txt"
}
printf 'corpus\tcfg\tround\tapp\tmode\tdevices\twall_ms\trc\n' > "$OUT/walls.tsv"
for r in 1 2 3; do
  for app in gemm 2mm 3mm stream fdtd-2d jacobi-2d-imper; do
    for cfg in nat octx nctx nlau; do one $cfg mgpu-small $app $r; done
  done
done
for app in stream gemm 2mm 3mm clpeak_sp; do
  for cfg in nat octx nctx nlau; do one $cfg mgpu $app 1; done
done
for cfg in octx nctx; do one $cfg mgpu stream dbg CLPRISM_DEBUG=1
  grep -hE "open:|engine ready|compile waited|like siblings|first launches" /tmp/s30g/mgpu/stream/$cfg-dbg/x/logs/stream.auto.gpu4.out \
    | head -40 | sed "s/^/$cfg: /" >> "$OUT/opening.txt"; done
for i in 1 2 3 4; do one nctx mgpu 2mm s$i; done
for i in $(seq 1 6); do one nctx mgpu-small stream s$i; done
python3 - "$OUT/walls.tsv" <<'PY' > "$OUT/summary.txt"
import csv, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
by = {}
for r in rows:
    if not r['round'].isdigit(): continue
    by.setdefault((r['corpus'], r['app'], r['cfg']), []).append(int(r['wall_ms']))
print('corpus app: median wall ms (runs) nat | octx | nctx | nlau ; ratios to nat')
for (c, a) in sorted({(k[0], k[1]) for k in by}):
    med = {cfg: st.median(by[(c, a, cfg)]) for cfg in ('nat', 'octx', 'nctx', 'nlau') if (c, a, cfg) in by}
    n = len(by.get((c, a, 'nat'), []))
    s = ' | '.join(f"{cfg} {med[cfg]:.0f}" for cfg in med)
    rr = ' '.join(f"{cfg} {med[cfg]/med['nat']:.3f}" for cfg in med if 'nat' in med and cfg != 'nat')
    print(f"{c} {a} (n={n}): {s} ; {rr}")
bad = [r for r in rows if r['rc'] != '0']
print('nonzero exits:', len(bad), [(r['corpus'], r['app'], r['cfg'], r['round'], r['rc']) for r in bad])
PY
cat "$OUT/summary.txt" "$OUT/opening.txt"; grep -c . "$OUT/digests.txt"; cat "$OUT/skipped.txt" 2>/dev/null
echo "took $(( $(date +%s) - T0 )) s"
