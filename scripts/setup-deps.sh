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

# The Julia grammar check (tools/check_julia_syntax.sh): node, npm and the
# exact packages locked in tools/julia-syntax (tree-sitter-julia's .wasm run by
# web-tree-sitter; no native build, see its .npmrc).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup-deps: installing nodejs npm"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends nodejs npm
fi
julia_syntax="$(cd "$(dirname "$0")/.." && pwd)/tools/julia-syntax"
# npm ci only when the lock changed since the last install (a copy of the lock
# it installed is kept in node_modules), so a re-run needs no network.
if ! cmp -s "$julia_syntax/package-lock.json" "$julia_syntax/node_modules/.installed-lock.json"; then
  (cd "$julia_syntax" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  cp "$julia_syntax/package-lock.json" "$julia_syntax/node_modules/.installed-lock.json"
fi
