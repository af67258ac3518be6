#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh Debian machine that
# already has the CUDA toolkit (nvcc may be absent: the CPU build still works).
# Only Debian packages; a package already present is not touched.
set -euo pipefail

# openmpi-bin, libopenmpi-dev, python3-mpi4py: the scale-out tests (include/stridemem_mpi.h under
# mpirun on localhost, mpi4py sends; docs/SCALE_OUT.md).
# chromium: tests/python/test_memviz.py opens tools/memviz's page in it, headless
# (fonts-dejavu-core: legible text in its screenshots; recommends are not installed).
pkgs=(cmake g++ make libgtest-dev python3 python3-numpy python3-torch libdlpack-dev valgrind clang
      libclang-rt-14-dev binutils pkg-config python3-venv python3-pip chromium fonts-dejavu-core
      openmpi-bin libopenmpi-dev python3-mpi4py)
# python3-mypy: tests/python/test_mypy.py type-checks the Python package and its examples.
pkgs+=(python3-mypy)
# abigail-tools: abidw/abidiff, the ABI check against the release (scripts/abi-check.sh).
pkgs+=(abigail-tools)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ! command -v cargo >/dev/null 2>&1 && ! [ -x "$HOME/.cargo/bin/cargo" ]; then
  missing+=(cargo)
fi
# node and npm run the Julia grammar check (tools/check_julia_syntax.sh):
# tree-sitter-julia's .wasm under web-tree-sitter, no native build (see
# tools/julia-syntax/.npmrc); Debian's nodejs or any other node on the PATH.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
if ((${#missing[@]})); then
  echo "setup-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The exact packages locked in tools/julia-syntax: npm ci only when the lock
# changed since the last install, so a re-run needs no network (the same
# script installs them for tools/check_julia_syntax.sh).
"$(cd "$(dirname "$0")/.." && pwd)/tools/julia-syntax/install.sh"
