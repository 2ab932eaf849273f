#!/usr/bin/env bash
# Session 26 model ablation, offline (no GPU): session 25's wrapper (session 24's script with
# PolyBench's gemm, 2mm and 3mm statistics emulated again) with rows for the options of this
# session. Run from the repository root after
# `cargo build --release && cargo test --release --test model_polybench_stats --no-run`:
#   bash results/session26-model/model-ablation.sh > results/session26-model/model-ablation.txt
# "recommended (main)" is this build's recommended model (l2_store_cost and in_flight_dram
# on); main's before this session is the row "recommended,-l2_store_cost,-in_flight_dram".
exec bash results/session25-2026-11-28/model/model-ablation.sh \
  recommended,-l2_store_cost,-in_flight_dram \
  recommended,-l2_store_cost \
  recommended,-in_flight_dram \
  recommended,+streaming_latency,-l2_store_cost,-in_flight_dram "$@"
