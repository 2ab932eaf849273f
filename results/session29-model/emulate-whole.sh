#!/usr/bin/env bash
# Session 29: the five PolyBench-ACC LARGE kernels whose stored statistics were extrapolated
# (2mm and 3mm kernel 1: factor 8; gramschmidt kernel 3, syrk, syr2k: factor 16) emulated
# whole, offline, with `clprism emulate` (work-group (0,0,0), the launch's NDRange and scalar
# arguments, buffers of the app's sizes; matrix contents do not steer these kernels' control
# flow or addresses). Their project-mode emulation on PoCL's CPU ran out of its 2 s time
# budget inside the first warp because its page reads waited behind the app's own
# 2048^3 kernel on the same cores (the same run's second kernels, identical code, finished).
# `clprism emulate` reproduces the stored statistics of mm2_kernel2 field for field
# (emulation_ns aside; checked by transplant-whole.py).
#   usage: bash results/session29-model/emulate-whole.sh PB OUT
#   PB: bench/corpus_build.sh /work/.mirror/cavazos-lab+PolyBench-ACC/repo PB LARGE 0
set -euo pipefail
pb=$1 out=$2
c=$(realpath ${CLPRISM:-target/release/clprism})
mkdir -p "$out"
M16=$((2048 * 2048 * 4)) M4=$((1024 * 1024 * 4)) M64=$((4096 * 4096 * 4))
em() { local f=$1 k=$2; shift 2; "$c" emulate "$pb/$f" --kernel "$k" "$@" > "$out/$k.json"; }
em 2mm/2mm.cl mm2_kernel1 --global 2048,2048 --local 32,8 --arg buf:$M16:fill=zero \
  --arg buf:$M16:fill=randf --arg buf:$M16:fill=randf --arg int:2048 --arg int:2048 \
  --arg int:2048 --arg int:2048 --arg float:32412 --arg float:2123
em 2mm/2mm.cl mm2_kernel2 --global 2048,2048 --local 32,8 --arg buf:$M16:fill=randf \
  --arg buf:$M16:fill=randf --arg buf:$M16:fill=randf --arg int:2048 --arg int:2048 \
  --arg int:2048 --arg int:2048 --arg float:32412 --arg float:2123
em 3mm/3mm.cl mm3_kernel1 --global 1024,1024 --local 32,8 --arg buf:$M4:fill=randf \
  --arg buf:$M4:fill=randf --arg buf:$M4:fill=zero --arg int:1024 --arg int:1024 --arg int:1024
em gramschmidt/gramschmidt.cl gramschmidt_kernel3 --global 4096 --local 256 \
  --arg buf:$M64:fill=randf --arg buf:$M64:fill=randf --arg buf:$M64:fill=randf \
  --arg int:0 --arg int:4096 --arg int:4096
em syrk/syrk.cl syrk_kernel --global 2048,2048 --local 32,8 --arg buf:$M16:fill=randf \
  --arg buf:$M16:fill=randf --arg float:32412 --arg float:2123 --arg int:2048 --arg int:2048
em syr2k/syr2k.cl syr2k_kernel --global 2048,2048 --local 32,8 --arg buf:$M16:fill=randf \
  --arg buf:$M16:fill=randf --arg buf:$M16:fill=randf --arg float:32412 --arg float:2123 \
  --arg int:2048 --arg int:2048
ls -la "$out"
