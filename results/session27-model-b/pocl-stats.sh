#!/bin/bash
# Session 27b: PolyBench-ACC LARGE's emulation statistics on PoCL's CPU device with this
# branch (results/session12-2026-11-24/model-physics-pocl-stats.sh, same apps and NDRanges).
# An app is stopped once every kernel that the stored log (OLD/<app>.jsonl) has statistics
# for has them here: the rest of its run on the CPU adds nothing to the statistics.
#   PB=/tmp/s27b/pb-large   (bench/corpus_build.sh /work/.mirror/cavazos-lab+PolyBench-ACC/repo $PB LARGE 0)
#   OLD=/tmp/s27b/pstats    (session 12's tgz, then session 25's pocl-stats-mm.tgz over it)
#   LOGS=/tmp/s27b/emu-logs CLPRISM=target/release/clprism (libOpenCL.so beside it)
PB=${PB:-/tmp/s27b/pb-large} OLD=${OLD:-/tmp/s27b/pstats} LOGS=${LOGS:-/tmp/s27b/emu-logs}
CLPRISM=$(realpath ${CLPRISM:-target/release/clprism}) PROFILES=$(realpath ${PROFILES:-profiles})
mkdir -p "$LOGS"
count() { python3 -c "
import json,sys
ks=set()
try:
  for l in open(sys.argv[1]):
    try: r=json.loads(l)
    except Exception: continue
    if (r.get('emulation') or {}).get('stats'): ks.add(r['kernel'])
except FileNotFoundError: pass
print(len(ks))" "$1"; }
for app in ${APPS:-$(cat $PB/apps.txt)}; do
  cd $PB/$app || continue
  exe=$(ls *.exe | head -1)
  want=$(count $OLD/$app.jsonl)
  s=$(date +%s)
  CLPRISM_EMU_SNAPSHOT_MAX=${CLPRISM_EMU_SNAPSHOT_MAX:-4G} CLPRISM_MODE=project CLPRISM_LOG=$LOGS/$app.jsonl POCL_DEVICES=pthread CLPRISM_PROFILES=$PROFILES \
    timeout ${T:-240} $CLPRISM run -- ./$exe > $LOGS/$app.out 2>&1 &
  pid=$!
  while kill -0 $pid 2>/dev/null; do
    sleep 2
    if [ "$(count $LOGS/$app.jsonl)" -ge "$want" ]; then sleep 1; kill $pid 2>/dev/null; break; fi
  done
  wait $pid
  echo "$app rc=$? $(( $(date +%s) - s ))s stats=$(grep -c '"stats"' $LOGS/$app.jsonl 2>/dev/null) want=$want" >> $LOGS/progress.txt
done
echo DONE >> $LOGS/progress.txt
