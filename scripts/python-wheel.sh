#!/usr/bin/env bash
# Builds a wheel of the Python package with libstridemem bundled in it
# (stridemem/_lib/<SONAME>: libstridemem.so.0.4 for 0.4.x; tagged
# py3-none-<platform>), so
# `pip install <wheel>` needs no STRIDEMEM_LIB and no system install.
#
#   scripts/python-wheel.sh [--lib PATH] [DIST_DIR]
#
# Without --lib the library is built first with scripts/build.sh and
# build/libstridemem.so is bundled; --lib bundles an already built one.
# DIST_DIR defaults to build/python-dist. Offline: the build backend is in
# bindings/python and needs nothing from PyPI. A sanitizer build, or a
# library whose version is not the package's, is refused.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lib=""
if [ "${1:-}" = "--lib" ]; then
  [ $# -ge 2 ] || { echo "python-wheel: --lib needs a path" >&2; exit 2; }
  lib="$(realpath "$2")"; shift 2
fi
dist="$(realpath -m "${1:-$root/build/python-dist}")"
python="${STRIDEMEM_PYTHON:-/usr/bin/python3}"
if ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "python-wheel: $python has no pip; run scripts/setup-deps.sh (python3-pip)" >&2
  exit 1
fi
if [ -z "$lib" ]; then
  "$root/scripts/build.sh"
  lib="$root/build/libstridemem.so"
fi
mkdir -p "$dist"
STRIDEMEM_BUNDLE_LIB="$lib" "$python" -m pip wheel --no-index --no-deps --no-cache-dir \
  --disable-pip-version-check -q -w "$dist" "$root/bindings/python"
ls "$dist"/stridemem-*.whl
