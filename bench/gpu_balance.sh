#!/usr/bin/env bash
# Issue 5 GPU benchmark: balance mode against native single-GPU runs, side by side in one run
# on a multi-GPU machine (results/gpu-*/balance-*.txt holds the output and the command).
# Expects the build products in .gpu/ (see docs/results.md, first paragraph; bench/gpu_bundle.sh builds them):
#   .gpu/libOpenCL.so  .gpu/examples/*  .gpu/gpu-env.sh  .gpu/emu-cache/ (SPIR-V of the
#   example kernels, so footprints work on a machine without clang)
# Prints one line per run: app, config, the app's own time_ms (uploads, every launch,
# read-back; the CPU reference check is outside it) and the process wall time. Per-launch
# logs go to $OUT/logs.tgz.
# Usage: bench/gpu_balance.sh OUTDIR [quick|short|steady|seed|sweep]
set -uo pipefail
OUT=${1:?OUTDIR}
QUICK=${2:-}
mkdir -p "$OUT/logs"
G=$PWD/.gpu
LIB=$G/libOpenCL.so
export CLPRISM_CACHE=$G/emu-cache
. "$(dirname "$0")/gpu-common.sh"
echo "NVIDIA platform index: ${nv:-none}"
ngpu=$(nvidia-smi -L | wc -l)
echo "GPUs: $ngpu"
export CLPRISM_EXAMPLE_DEVICE="${nv:-0}:0"
export EX_CHECK_STRIDE=1024
[ -n "$nv" ] || { echo "no NVIDIA platform found"; exit 1; }

echo "CPU (PoCL) platform index: ${cpu:-none}"
mm=$G/examples/matmul_global
if [ "$QUICK" = steady ]; then
  # Many launches per run, CLPRISM_SPLIT=auto (the default): the first launch of a kernel runs
  # whole on the app's device (measured), later ones split when it pays. Footprint models
  # come from one cold run, then every config is "-warm". Every GPU of the machine ($ngpu)
  # takes part in the comparisons. Per-launch times: bench/steady.py.
  export CLPRISM_DEVICE_TIMING=all
  R=10
  N=$ngpu
  even=$(python3 -c "print(','.join(['%.6f' % (1 / $N)] * $N))")
  run matmul_global native -- "$mm" 8192 $R
  run matmul_global native-log CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$mm" 8192 $R
  bal matmul_global boyer-gpu$N-cold gpu:$N -- "$mm" 8192 $R
  for n in $(seq 1 $N); do bal matmul_global boyer-gpu$n-warm gpu:$n -- "$mm" 8192 $R; done
  bal matmul_global always-gpu$N-warm gpu:$N CLPRISM_SPLIT=always -- "$mm" 8192 $R
  # Boyer's warm start off (every launch starts from β chunks, the paper's algorithm)
  bal matmul_global seedoff-gpu$N-warm gpu:$N CLPRISM_BOYER=warm=off -- "$mm" 8192 $R
  bal matmul_global static-even-gpu$N-warm gpu:$N CLPRISM_SCHEDULER=static:$even -- "$mm" 8192 $R
  bal matmul_global gss-gpu$N-warm gpu:$N CLPRISM_SCHEDULER=gss -- "$mm" 8192 $R
  bal matmul_global blocked-gpu$N-warm gpu:$N CLPRISM_FAULT=block:$((N - 1)) -- "$mm" 8192 $R
  CLPRISM_EXAMPLE_DEVICE=$nv:1 "$mm" 8192 400 >/dev/null 2>&1 &
  hog=$!
  sleep 3
  bal matmul_global loaded-boyer-gpu$N-warm gpu:$N -- "$mm" 8192 $R
  bal matmul_global loaded-seedoff-gpu$N-warm gpu:$N CLPRISM_BOYER=warm=off -- "$mm" 8192 $R
  bal matmul_global loaded-static-even-warm gpu:$N CLPRISM_SCHEDULER=static:$even -- "$mm" 8192 $R
  bal matmul_global loaded-gss-gpu$N-warm gpu:$N CLPRISM_SCHEDULER=gss -- "$mm" 8192 $R
  kill $hog 2>/dev/null; wait $hog 2>/dev/null
  tar czf "$OUT/logs-matmul.tgz" -C "$OUT" logs
  # N-body: no CPU reference at these sizes (EX_SKIP_REFERENCE=1); outputs compared by
  # bytes. 131072 bodies (2048 work-groups, ~13 ms per step: under one wave per GPU once
  # split) and 524288 (8192 work-groups, 16x the work). The first balanced run of each size
  # is cold: it pays the footprint derivation, which runs out of the emulation budget (each
  # work-item loops over every body) and is saved as a verdict for the warm runs.
  nb=$G/examples/nbody
  mkdir -p "$OUT/dumps"
  for size in 131072 524288; do
    name=nbody; [ $size = 524288 ] && name=nbody512k
    run $name native EX_SKIP_REFERENCE=1 -- "$nb" $size 10 --dump "$OUT/dumps/$name.native.bin"
    run $name native-log EX_SKIP_REFERENCE=1 CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$nb" $size 10
    bal $name boyer-gpu$N-cold gpu:$N EX_SKIP_REFERENCE=1 -- "$nb" $size 10
    for n in 2 $N; do
      bal $name boyer-gpu$n-warm gpu:$n EX_SKIP_REFERENCE=1 -- "$nb" $size 10 --dump "$OUT/dumps/$name.boyer-gpu$n-warm.bin"
    done
    bal $name always-gpu$N-warm gpu:$N CLPRISM_SPLIT=always EX_SKIP_REFERENCE=1 -- "$nb" $size 10 --dump "$OUT/dumps/$name.always-gpu$N-warm.bin"
    # Boyer's warm start off, and at 1 (one chunk per device when the last launch's Ω exist)
    bal $name seedoff-always-gpu$N-warm gpu:$N CLPRISM_SPLIT=always CLPRISM_BOYER=warm=off EX_SKIP_REFERENCE=1 -- "$nb" $size 10 --dump "$OUT/dumps/$name.seedoff-always-gpu$N-warm.bin"
    bal $name seed1-always-gpu$N-warm gpu:$N CLPRISM_SPLIT=always CLPRISM_BOYER=warm=1 EX_SKIP_REFERENCE=1 -- "$nb" $size 10 --dump "$OUT/dumps/$name.seed1-always-gpu$N-warm.bin"
  done
  (cd "$OUT/dumps" && sha256sum *.bin | tee -a "$OUT/balance.txt" && rm -f *.bin)
  # transfer-bound: Black-Scholes, the app rewrites the inputs before every launch
  bs=$G/examples/blackscholes
  run blackscholes native -- "$bs" 33554432 8
  run blackscholes native-log CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$bs" 33554432 8
  bal blackscholes boyer-gpu$N-warm gpu:$N -- "$bs" 33554432 8
  bal blackscholes always-gpu$N-warm gpu:$N CLPRISM_SPLIT=always -- "$bs" 33554432 8
  # heterogeneous: PoCL's CPU device + one H200
  if [ -n "$cpu" ]; then
    run matmul_global2k native -- "$mm" 2048 8
    run matmul_global2k native-log CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$mm" 2048 8
    bal matmul_global2k boyer-gpu1-warm gpu:1 -- "$mm" 2048 8
    bal matmul_global2k boyer-h200+cpu-warm "$nv:0,$cpu:0" -- "$mm" 2048 8
    bal matmul_global2k always-h200+cpu-warm "$nv:0,$cpu:0" CLPRISM_SPLIT=always -- "$mm" 2048 8
  fi
elif [ "$QUICK" = seed ]; then
  # Boyer's warm start against the paper's cold start, steady state on every GPU: SGEMM
  # 8192^2 (alone, against static and GSS, and with GPU 1 shared with a competing load) and
  # N-body 524288 (split forced: CLPRISM_SPLIT=always), 10 launches each.
  export CLPRISM_DEVICE_TIMING=all
  R=10
  N=$ngpu
  even=$(python3 -c "print(','.join(['%.6f' % (1 / $N)] * $N))")
  # SEED_NBODY_ONLY=1: only the N-body block
  if [ -z "${SEED_NBODY_ONLY:-}" ]; then
  run matmul_global native-log CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$mm" 8192 $R
  bal matmul_global boyer-gpu$N-cold gpu:$N -- "$mm" 8192 $R
  bal matmul_global boyer-gpu$N-warm gpu:$N -- "$mm" 8192 $R
  bal matmul_global seedoff-gpu$N-warm gpu:$N CLPRISM_BOYER=warm=off -- "$mm" 8192 $R
  bal matmul_global static-even-gpu$N-warm gpu:$N CLPRISM_SCHEDULER=static:$even -- "$mm" 8192 $R
  CLPRISM_EXAMPLE_DEVICE=$nv:1 "$mm" 8192 400 >/dev/null 2>&1 &
  hog=$!
  sleep 3
  bal matmul_global loaded-boyer-gpu$N-warm gpu:$N -- "$mm" 8192 $R
  bal matmul_global loaded-seedoff-gpu$N-warm gpu:$N CLPRISM_BOYER=warm=off -- "$mm" 8192 $R
  bal matmul_global loaded-static-even-warm gpu:$N CLPRISM_SCHEDULER=static:$even -- "$mm" 8192 $R
  kill $hog 2>/dev/null; wait $hog 2>/dev/null
  fi
  nb=$G/examples/nbody
  mkdir -p "$OUT/dumps"
  run nbody512k native-log EX_SKIP_REFERENCE=1 CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$nb" 524288 10 --dump "$OUT/dumps/nbody512k.native.bin"
  bal nbody512k boyer-gpu$N-cold gpu:$N EX_SKIP_REFERENCE=1 -- "$nb" 524288 10
  for c in boyer seedoff seed1; do
    b=""; [ $c = seedoff ] && b=warm=off; [ $c = seed1 ] && b=warm=1
    bal nbody512k $c-always-gpu$N-warm gpu:$N CLPRISM_SPLIT=always CLPRISM_BOYER=$b EX_SKIP_REFERENCE=1 -- "$nb" 524288 10 --dump "$OUT/dumps/nbody512k.$c.bin"
  done
  (cd "$OUT/dumps" && sha256sum *.bin | tee -a "$OUT/balance.txt" && rm -f *.bin)
elif [ "$QUICK" = sweep ]; then
  # Boyer against the best static partition, found by sweeping GPU 1's fraction (the other
  # GPUs share the rest evenly), 10 launches each, steady state: SGEMM 8192^2 alone and with
  # GPU 1 shared with a competing SGEMM, N-body 524288 (split forced). Then heterogeneous:
  # PoCL's CPU device + one H200 on SGEMM 2048^2, with each device's native time, for Boyer's
  # efficiency (measured throughput / sum of the devices' separate throughputs, §4.1 note 1).
  # CLPRISM_BALANCE_EARLY=off in the heterogeneous runs so every launch can split.
  export CLPRISM_DEVICE_TIMING=all
  R=10
  N=$ngpu
  split1() { # GPU 1's fraction -> static:f0,f1,... (the others share the rest evenly)
    python3 -c "import sys; g=float(sys.argv[1]); n=$N; r=(1-g)/(n-1); print('static:' + ','.join('%.4f' % (g if i == 1 else r) for i in range(n)))" "$1"
  }
  # SWEEP_HETERO_ONLY=1: only the heterogeneous block
  if [ -z "${SWEEP_HETERO_ONLY:-}" ]; then
  run matmul_global native-log CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$mm" 8192 $R
  bal matmul_global boyer-gpu$N-cold gpu:$N -- "$mm" 8192 $R
  bal matmul_global boyer-gpu$N-warm gpu:$N -- "$mm" 8192 $R
  for k in 0.92 0.96 1.00 1.04 1.08; do
    g=$(python3 -c "print('%.4f' % ($k / $N))")
    bal matmul_global static-g1=$g-warm gpu:$N CLPRISM_SCHEDULER=$(split1 $g) -- "$mm" 8192 $R
  done
  CLPRISM_EXAMPLE_DEVICE=$nv:1 "$mm" 8192 400 >/dev/null 2>&1 &
  hog=$!
  sleep 3
  bal matmul_global loaded-boyer-gpu$N-warm gpu:$N -- "$mm" 8192 $R
  for k in 0.44 0.52 0.60 0.68 0.76; do
    g=$(python3 -c "print('%.4f' % ($k / $N))")
    bal matmul_global loaded-static-g1=$g-warm gpu:$N CLPRISM_SCHEDULER=$(split1 $g) -- "$mm" 8192 $R
  done
  bal matmul_global loaded-boyer2-gpu$N-warm gpu:$N -- "$mm" 8192 $R
  kill $hog 2>/dev/null; wait $hog 2>/dev/null
  nb=$G/examples/nbody
  mkdir -p "$OUT/dumps"
  run nbody512k native-log EX_SKIP_REFERENCE=1 CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$nb" 524288 10 --dump "$OUT/dumps/nbody512k.native.bin"
  bal nbody512k boyer-always-gpu$N-cold gpu:$N CLPRISM_SPLIT=always EX_SKIP_REFERENCE=1 -- "$nb" 524288 10 --dump "$OUT/dumps/nbody512k.boyer.bin"
  for k in 0.96 1.00 1.04; do
    g=$(python3 -c "print('%.4f' % ($k / $N))")
    bal nbody512k static-g1=$g-warm gpu:$N CLPRISM_SPLIT=always CLPRISM_SCHEDULER=$(split1 $g) EX_SKIP_REFERENCE=1 -- "$nb" 524288 10 --dump "$OUT/dumps/nbody512k.static-$g.bin"
  done
  (cd "$OUT/dumps" && sha256sum *.bin | tee -a "$OUT/balance.txt" && rm -f *.bin)
  fi
  if [ -n "$cpu" ]; then
    run matmul_global2k native-log CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$mm" 2048 $R
    run matmul_global2k native-cpu-log CLPRISM_EXAMPLE_DEVICE=$cpu:0 CLPRISM_MODE=log LD_PRELOAD=$LIB -- "$mm" 2048 4
    bal matmul_global2k always-h200+cpu-cold "$nv:0,$cpu:0" CLPRISM_BALANCE_EARLY=off CLPRISM_SPLIT=always -- "$mm" 2048 $R
    bal matmul_global2k auto-h200+cpu-warm "$nv:0,$cpu:0" CLPRISM_BALANCE_EARLY=off -- "$mm" 2048 $R
  fi
elif [ -z "$QUICK" ]; then
  # compute-bound, 3 launches of 8192^2 (one GPU: ~262 ms per launch)
  run matmul_global native -- "$mm" 8192 3
  for n in 1 2 4; do bal matmul_global boyer-gpu$n gpu:$n -- "$mm" 8192 3; done
  bal matmul_global boyer-gpu3 gpu:3 -- "$mm" 8192 3
  bal matmul_global static-even-gpu4 gpu:4 CLPRISM_SCHEDULER=static:0.25,0.25,0.25,0.25 -- "$mm" 8192 3
  bal matmul_global gss-gpu4 gpu:4 CLPRISM_SCHEDULER=gss -- "$mm" 8192 3
  bal matmul_global blocked-gpu4 gpu:4 CLPRISM_FAULT=block:3 -- "$mm" 8192 3
  # variability: GPU 1 shared with a competing native matmul for the whole block
  CLPRISM_EXAMPLE_DEVICE=$nv:1 "$mm" 8192 400 >/dev/null 2>&1 &
  hog=$!
  sleep 3
  bal matmul_global loaded-boyer-gpu4 gpu:4 -- "$mm" 8192 3
  bal matmul_global loaded-static-even gpu:4 CLPRISM_SCHEDULER=static:0.25,0.25,0.25,0.25 -- "$mm" 8192 3
  bal matmul_global loaded-gss-gpu4 gpu:4 CLPRISM_SCHEDULER=gss -- "$mm" 8192 3
  kill $hog 2>/dev/null; wait $hog 2>/dev/null
  # compute-bound, one launch of 16384^2 (one GPU: ~2 s)
  run matmul_global16k native -- "$mm" 16384 1
  for n in 1 2 4; do bal matmul_global16k boyer-gpu$n gpu:$n -- "$mm" 16384 1; done
  bal matmul_global16k static-even-gpu4 gpu:4 CLPRISM_SCHEDULER=static:0.25,0.25,0.25,0.25 -- "$mm" 16384 1
  # transfer-bound: Black-Scholes, inputs rewritten by the app before each of 4 launches
  bs=$G/examples/blackscholes
  run blackscholes native -- "$bs" 33554432 4
  for n in 1 4; do bal blackscholes boyer-gpu$n gpu:$n -- "$bs" 33554432 4; done
  # heterogeneous: PoCL's CPU device + one H200
  if [ -n "$cpu" ]; then
    run matmul_global4k native -- "$mm" 4096 2
    bal matmul_global4k boyer-gpu1 gpu:1 -- "$mm" 4096 2
    bal matmul_global4k boyer-h200+cpu "$nv:0,$cpu:0" -- "$mm" 4096 2
  fi
else
  # short: the 8192^2 block (cold and warm footprint cache), variability, 16384^2,
  # Black-Scholes, heterogeneous
  run matmul_global native -- "$mm" 8192 3
  for n in 1 2 3 4; do bal matmul_global boyer-gpu$n gpu:$n -- "$mm" 8192 3; done
  bal matmul_global boyer-gpu4-warm gpu:4 -- "$mm" 8192 3
  bal matmul_global static-even-gpu4 gpu:4 CLPRISM_SCHEDULER=static:0.25,0.25,0.25,0.25 -- "$mm" 8192 3
  bal matmul_global gss-gpu4 gpu:4 CLPRISM_SCHEDULER=gss -- "$mm" 8192 3
  bal matmul_global static3-gpu3 gpu:3 CLPRISM_SCHEDULER=static:0.3334,0.3333,0.3333 -- "$mm" 8192 3
  bal matmul_global blocked-gpu4 gpu:4 CLPRISM_FAULT=block:3 -- "$mm" 8192 3
  CLPRISM_EXAMPLE_DEVICE=$nv:1 "$mm" 8192 400 >/dev/null 2>&1 &
  hog=$!
  sleep 3
  bal matmul_global loaded-boyer-gpu4-warm gpu:4 -- "$mm" 8192 3
  bal matmul_global loaded-static-even-warm gpu:4 CLPRISM_SCHEDULER=static:0.25,0.25,0.25,0.25 -- "$mm" 8192 3
  bal matmul_global loaded-gss-gpu4-warm gpu:4 CLPRISM_SCHEDULER=gss -- "$mm" 8192 3
  kill $hog 2>/dev/null; wait $hog 2>/dev/null
  if [ -n "${WITH_16K:-}" ]; then  # ~100 s wall per run (host set-up and check of 16384^2)
    run matmul_global16k native -- "$mm" 16384 2
    bal matmul_global16k boyer-gpu4 gpu:4 -- "$mm" 16384 2
  fi
  bs=$G/examples/blackscholes
  run blackscholes native -- "$bs" 33554432 4
  for n in 1 4; do bal blackscholes boyer-gpu$n gpu:$n -- "$bs" 33554432 4; done
  if [ -n "$cpu" ]; then
    run matmul_global4k native -- "$mm" 4096 2
    bal matmul_global4k boyer-gpu1 gpu:1 -- "$mm" 4096 2
    bal matmul_global4k boyer-h200+cpu "$nv:0,$cpu:0" -- "$mm" 4096 2
  fi
fi
# per-launch phases (ms) of every balanced run
python3 - "$OUT/logs" > "$OUT/phases.txt" 2>&1 <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.jsonl")):
    for l in open(f):
        r = json.loads(l); s = r.get("schedule")
        if not isinstance(s, dict) or s.get("fallback"):
            if isinstance(s, dict): print(f.split("/")[-1], "fallback:", s.get("fallback"))
            continue
        ph = " ".join("%s=%.1f" % (p["name"], (p["end_ns"] - p["start_ns"]) / 1e6) for p in s.get("phases", []))
        print("%-40s merge=%-9s direct=%-5s share=%s %s" % (f.split("/")[-1], s.get("merge"), s.get("app_device_direct"),
              ",".join("%.2f" % x for x in s.get("share", [])), ph))
PY
python3 "$(dirname "$0")/steady.py" "$OUT/logs" "$OUT/balance.txt" > "$OUT/steady.txt" 2>&1
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
