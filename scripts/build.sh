#!/usr/bin/env bash
# Configures and builds into build/ (CUDA backend when nvcc is found).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSTRIDEMEM_CUDA="${STRIDEMEM_CUDA:-AUTO}" >/dev/null
cmake --build build -j"$(nproc)"
