#!/bin/bash
# Project mode on PoCL's CPU device: emulation statistics of the pb-large apps (same kernels and NDRanges as the H100 runs)
for app in ${APPS:-$(cat /work/corpus/pb-large/apps.txt)}; do
  cd /work/corpus/pb-large/$app || continue
  exe=$(ls *.exe | head -1)
  s=$(date +%s)
  CLPRISM_EMU_SNAPSHOT_MAX=${CLPRISM_EMU_SNAPSHOT_MAX:-4G} CLPRISM_MODE=project CLPRISM_LOG=/tmp/emu-logs/$app.jsonl POCL_DEVICES=pthread CLPRISM_PROFILES=/work/wt-physics/profiles \
    timeout ${T:-180} /work/tgt-rel/release/clprism run -- ./$exe > /tmp/emu-logs/$app.out 2>&1
  echo "$app rc=$? $(( $(date +%s) - s ))s stats=$(grep -c '"stats"' /tmp/emu-logs/$app.jsonl 2>/dev/null)" >> /tmp/emu-logs/progress.txt
done
echo DONE >> /tmp/emu-logs/progress.txt
