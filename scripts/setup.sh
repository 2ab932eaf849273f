#!/usr/bin/env bash
# Installs the Debian packages clprism's build, examples and tests need, when missing.
# Idempotent; uses sudo when not root.
set -euo pipefail
pkgs=(make gcc pkg-config pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo python3-pyopencl
      clang-15 llvm-15 llvm-spirv-15 oclgrind
      piglit python3-pytest python-pyopencl-doc valgrind
      clblast-tests clfft-client clpeak gdb)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "setup: cargo (Rust toolchain) is required" >&2; exit 1; }
# PoCL-Remote client + pocld for tests/remote.rs (docs/remote.md): built once, then cached
"$(dirname "$0")/pocl_remote.sh" >/dev/null
