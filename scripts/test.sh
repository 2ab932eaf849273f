#!/usr/bin/env bash
# The test command (README.md): installs what it needs, builds, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export POCL_DEVICES="${POCL_DEVICES:-pthread pthread}"
cargo build --all-targets
make -s -C examples
cargo test --all-targets -- --test-threads=2
