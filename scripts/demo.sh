#!/usr/bin/env bash
# Set-up + build + the main job: the stack-of-views demo (CPU, and CUDA when a GPU is usable).
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
scripts/build.sh
demo=$PWD/build/stridemem-demo
# Run from the caller's directory: the reports go to ./stridemem-demo-out there (or --out DIR).
cd "$here"
exec "$demo" "$@"
