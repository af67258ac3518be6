#!/usr/bin/env bash
# Set-up + build + the main job: the stack-of-views demo (CPU, and CUDA when a GPU is usable).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
scripts/build.sh
exec build/stridemem-demo "$@"
