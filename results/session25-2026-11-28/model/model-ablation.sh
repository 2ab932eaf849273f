#!/usr/bin/env bash
# Session 25 model ablation, offline (no GPU): session 24's script (results/session24-model)
# with PolyBench's gemm, 2mm and 3mm statistics emulated again after the first-warp fix
# (pocl-stats-mm.tgz, over session 12's). Run from the repository root after
# `cargo build --release && cargo test --release --test model_polybench_stats --no-run`:
#   bash results/session25-2026-11-28/model/model-ablation.sh > results/session25-2026-11-28/model/model-ablation.txt
STATS_OVERLAY=results/session25-2026-11-28/model/pocl-stats-mm.tgz \
  exec python3 results/session24-model/model-ablation.py "$@"
