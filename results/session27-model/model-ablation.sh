#!/usr/bin/env bash
# Session 27 model ablation, offline (no GPU): session 25's wrapper (session 24's script with
# PolyBench's gemm, 2mm and 3mm statistics emulated again) with rows for this session's option.
# Run from the repository root after
# `cargo build --release && cargo test --release --test model_polybench_stats --no-run`:
#   bash results/session27-model/model-ablation.sh > results/session27-model/model-ablation.txt
# "recommended (main)" is this build's recommended model (departure_delay and l1_stores on);
# main's before this session is the row "recommended,-departure_delay,-l1_stores".
exec bash results/session25-2026-11-28/model/model-ablation.sh \
  recommended,-departure_delay,-l1_stores \
  recommended,-departure_delay \
  recommended,-l1_stores \
  recommended,-departure_delay,-l1_stores,-l2_store_cost,-in_flight_dram \
  recommended,+streaming_latency,+request_in_flight \
  recommended,-departure_delay,-l1_stores,+streaming_latency \
  "$@"
