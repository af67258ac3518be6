#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh Debian machine that
# already has the CUDA toolkit (nvcc may be absent: the CPU build still works).
# Only Debian packages; a package already present is not touched.
set -euo pipefail

pkgs=(cmake g++ make libgtest-dev python3 python3-numpy python3-torch libdlpack-dev valgrind clang
      libclang-rt-14-dev binutils pkg-config python3-venv python3-pip)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ! command -v cargo >/dev/null 2>&1 && ! [ -x "$HOME/.cargo/bin/cargo" ]; then
  missing+=(cargo)
fi
if ((${#missing[@]})); then
  echo "setup-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
