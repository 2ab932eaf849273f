#!/usr/bin/env bash
# Scaling of balance mode over the GPUs of one host (issue 8; issue 5 at 2 and 4 GPUs), in
# one run: native single-GPU runs, then balance mode on 1, 2, 4, 8 ... GPUs (powers of two up
# to every GPU, and every GPU), at sizes where one GPU runs >= 1 s per launch:
#   SGEMM 16384^2 (naive matmul_global, ~2.1 s per launch on an H200), 5 launches;
#   N-body 1310720 bodies (20,480 work-groups, ~1.2 s per step), 8 steps, outputs hashed
#   (launch 3 is the first split one and starts cold, launch 4 starts warm from its Omega);
#   Black-Scholes 32 M options, 8 launches (transfer-bound: the app rewrites its inputs).
# With every GPU: Boyer against the even static partition and GSS on both compute-bound apps.
# All balanced runs use the defaults (CLPRISM_SPLIT=auto, warm start); the footprint models
# come from one cold run per app. Then bench/scaling.py prints speedup, ideal, efficiency
# and the simulator's prediction (clprism simulate, also for 2, 4 and 8 GPUs when not measured)
# per GPU count (scaling.txt).
# Usage (GPU host, after `source .gpu/gpu-env.sh`): bench/gpu_scaling.sh OUTDIR [apps]
#   apps: any of sgemm,nbody,bs (default all)
#   NBODY_BODIES=N (default 1310720) sets N-body's size; runs are named nbody<N/1024>k.
#   Per GPU a chunk of N-body costs at least one work-group's latency (45 ms at 1310720
#   bodies on an H200, whatever the chunk up to ~300 work-groups) and grows linearly above
#   (results/gpu-2026-11-22r, GSS chunks), so N/64/GPUs work-groups per GPU should stay well
#   above that.
set -uo pipefail
OUT=${1:?OUTDIR}
APPS=${2:-sgemm,nbody,bs}
mkdir -p "$OUT/logs"
G=$PWD/.gpu
LIB=$G/libOpenCL.so
export CLPRISM_CACHE=$G/emu-cache CLPRISM_DEVICE_TIMING=all RUN_TIMEOUT=240
. "$(dirname "$0")/gpu-common.sh"
[ -n "$nv" ] || { echo "no NVIDIA platform found"; exit 1; }
export CLPRISM_EXAMPLE_DEVICE="$nv:0" EX_CHECK_STRIDE=1024
N=$(nvidia-smi -L | wc -l)
counts=""
for n in 1 2 4 8 16 32 64; do [ $n -lt "$N" ] && counts="$counts $n"; done
counts="$counts $N"
echo "GPUs: $N, counts:$counts"
even=$(python3 -c "print(','.join(['%.6f' % (1 / $N)] * $N))")
want() { case ",$APPS," in *",$1,"*) return 0 ;; esac; return 1; }
mkdir -p "$OUT/dumps"
if want sgemm; then
  mm=$G/examples/matmul_global
  run sgemm16k native-log CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$mm" 16384 5
  bal sgemm16k boyer-gpu$N-cold gpu:$N -- "$mm" 16384 5
  for n in $counts; do bal sgemm16k boyer-gpu$n-warm gpu:$n -- "$mm" 16384 5; done
  bal sgemm16k static-even-gpu$N-warm gpu:$N CLPRISM_SCHEDULER=static:$even -- "$mm" 16384 5
  bal sgemm16k gss-gpu$N-warm gpu:$N CLPRISM_SCHEDULER=gss -- "$mm" 16384 5
fi
if want nbody; then
  nb=$G/examples/nbody
  NB=${NBODY_BODIES:-1310720}
  nbn=nbody$((NB / 1024))k
  run $nbn native-log EX_SKIP_REFERENCE=1 CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$nb" $NB 8 --dump "$OUT/dumps/$nbn.native.bin"
  bal $nbn boyer-gpu$N-cold gpu:$N EX_SKIP_REFERENCE=1 -- "$nb" $NB 8
  for n in $counts; do
    bal $nbn boyer-gpu$n-warm gpu:$n EX_SKIP_REFERENCE=1 -- "$nb" $NB 8 --dump "$OUT/dumps/$nbn.boyer-gpu$n.bin"
  done
  bal $nbn static-even-gpu$N-warm gpu:$N CLPRISM_SCHEDULER=static:$even EX_SKIP_REFERENCE=1 -- "$nb" $NB 8 --dump "$OUT/dumps/$nbn.static-even-gpu$N.bin"
  bal $nbn gss-gpu$N-warm gpu:$N CLPRISM_SCHEDULER=gss EX_SKIP_REFERENCE=1 -- "$nb" $NB 8 --dump "$OUT/dumps/$nbn.gss-gpu$N.bin"
  (cd "$OUT/dumps" && sha256sum *.bin | tee -a "$OUT/balance.txt" && rm -f *.bin)
fi
if want bs; then
  bs=$G/examples/blackscholes
  run blackscholes native -- "$bs" 33554432 8
  run blackscholes native-log CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$bs" 33554432 8
  for n in $counts; do bal blackscholes boyer-gpu$n-warm gpu:$n -- "$bs" 33554432 8; done
fi
python3 "$(dirname "$0")/steady.py" "$OUT/logs" "$OUT/balance.txt" > "$OUT/steady.txt" 2>&1
python3 "$(dirname "$0")/scaling.py" "$OUT/logs" --clprism "$G/clprism" --predict 2,4,8 > "$OUT/scaling.txt" 2>&1
cat "$OUT/scaling.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
