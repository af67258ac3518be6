#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds and runs a consumer
# through find_package(stridemem) and through pkg-config.
set -euo pipefail
build="$1"; src="$2"
prefix="$(mktemp -d)"; trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir="$(dirname "$(find "$prefix" -name 'libstridemem.so' | head -1)")"
# The SONAME carries the major version.
readelf -d "$libdir/libstridemem.so" | grep -q 'SONAME.*libstridemem.so.0'
cmake -S "$src/consumer" -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$prefix/consumer-build/consumer"
PKG_CONFIG_PATH="$libdir/pkgconfig" cc -std=c99 "$src/consumer/main.c" \
  $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs stridemem) -o "$prefix/pc-consumer"
LD_LIBRARY_PATH="$libdir" "$prefix/pc-consumer"
