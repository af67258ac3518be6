#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds and runs consumers of
# the shared and of the static library, through find_package(stridemem) and
# through pkg-config. The static ones must not need libstridemem.so, and run
# with no LD_LIBRARY_PATH.
set -euo pipefail
build="$1"; src="$2"
prefix="$(mktemp -d)"; trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir="$(dirname "$(find "$prefix" -name 'libstridemem.so' | head -1)")"
# The SONAME names the ABI: major.minor while the major version is 0 (each
# 0.x minor may break it), from 1.0 on the major alone; the file by that name
# is installed and is what a program linked with -lstridemem needs.
IFS=. read -r major minor _ <"$src/../../VERSION"
if [ "$major" -eq 0 ]; then abi="$major.$minor"; else abi="$major"; fi
soname="libstridemem.so.$abi"
got="$(readelf -d "$libdir/libstridemem.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[ "$got" = "$soname" ] || fail "SONAME is '$got', expected $soname (VERSION $(cat "$src/../../VERSION"))"
[ -e "$libdir/$soname" ] || fail "$soname is not installed in $libdir"
[ -f "$libdir/libstridemem.a" ] || fail "no libstridemem.a beside libstridemem.so"
[ -f "$prefix/share/doc/stridemem/LICENSE" ] || fail "LICENSE is not installed in share/doc/stridemem"
# The memory viewer, installed as one file that runs on its own: no package,
# no library, from another directory.
viewer="$prefix/share/stridemem/memviz.py"
[ -x "$viewer" ] || fail "memviz.py is not installed (executable) in share/stridemem"
python3 -c "import sys, json; sys.path.insert(0, sys.argv[1]); import memviz_fixtures as F; \
json.dump(F.hand_timeline(), open(sys.argv[2], 'w'))" "$src/../python" "$prefix/snap.json"
(cd / && env -u PYTHONPATH -u STRIDEMEM_LIB python3 "$viewer" "$prefix/snap.json" \
  -o "$prefix/snap.html" --pytorch "$prefix/snap.pickle" >/dev/null) ||
  fail "the installed memviz.py did not draw a snapshot"
grep -q 'id="memviz-data"' "$prefix/snap.html" || fail "the installed memviz.py wrote no page"
[ -s "$prefix/snap.pickle" ] || fail "the installed memviz.py wrote no PyTorch snapshot"
echo "install: share/stridemem/memviz.py draws a snapshot on its own OK"
static_only() {  # $1 runs with no libstridemem.so anywhere it could look
  if grep -q 'NEEDED.*libstridemem' <<<"$(readelf -d "$1")"; then fail "$1 needs libstridemem.so"; fi
  env -u LD_LIBRARY_PATH "$1" || fail "$1 did not run"
}

# CMake: find_package(stridemem <this ABI's version> COMPONENTS static).
cmake -S "$src/consumer" -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DSM_WANT_VERSION="$abi" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$prefix/consumer-build/consumer"
grep -q "NEEDED.*\[$soname\]" <<<"$(readelf -d "$prefix/consumer-build/consumer")" ||
  fail "the find_package consumer does not need $soname"
# ... and the package refuses a request for another ABI (0.x: another minor).
if [ "$major" -eq 0 ] && [ "$minor" -gt 0 ]; then other="0.$((minor - 1))"; else other="$((major + 1))"; fi
if cmake -S "$src/consumer" -B "$prefix/consumer-other" -DCMAKE_PREFIX_PATH="$prefix" \
     -DSM_WANT_VERSION="$other" >"$prefix/other.log" 2>&1; then
  fail "find_package(stridemem $other) accepted the installed $abi package"
fi
static_only "$prefix/consumer-build/consumer_static"

# pkg-config, shared.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c99 "$src/consumer/main.c" $(pkg-config --cflags --libs stridemem) -o "$prefix/pc-consumer"
LD_LIBRARY_PATH="$libdir" "$prefix/pc-consumer"
# ... and with the rpath: README.md's command line for a private prefix, run
# as written (app.c being the consumer), so that the README cannot drift. The
# program must start with no LD_LIBRARY_PATH.
readme="$src/../../README.md"
documented="$(grep -E '^cc app\.c .*pkg-config --variable=libdir stridemem' "$readme")" ||
  fail "README.md has no 'cc app.c ... pkg-config --variable=libdir stridemem ...' line"
[ "$(wc -l <<<"$documented")" -eq 1 ] || fail "README.md has several such lines: $documented"
mkdir "$prefix/rpath-consumer"
cp "$src/consumer/main.c" "$prefix/rpath-consumer/app.c"
(cd "$prefix/rpath-consumer" && bash -euc "$documented") ||
  fail "README.md's line failed: $documented"
readelf -d "$prefix/rpath-consumer/app" | grep -q 'R\(UN\)\{0,1\}PATH' || fail "README.md's line gave no rpath"
env -u LD_LIBRARY_PATH "$prefix/rpath-consumer/app" ||
  fail "the program built by README.md's line does not start without LD_LIBRARY_PATH: $documented"
# pkg-config, static: Libs.private completes the link of libstridemem.a, which
# a plain C compiler driver makes (no C++ runtime of its own). The archive is
# picked over the .so with -Bstatic around -lstridemem only ...
pc_static="$(pkg-config --static --libs stridemem)"
grep -q -- '-lstdc++' <<<"$pc_static" || fail "pkg-config --static --libs lacks -lstdc++: $pc_static"
cc -std=c99 "$src/consumer/main.c" $(pkg-config --cflags stridemem) \
  $(sed 's/-lstridemem\b/-Wl,-Bstatic -lstridemem -Wl,-Bdynamic/' <<<"$pc_static") \
  -o "$prefix/pc-consumer-static"
static_only "$prefix/pc-consumer-static"
# ... or by a fully static link, where the library flags are used as they are.
cc -static -std=c99 "$src/consumer/main.c" $(pkg-config --static --cflags --libs stridemem) \
  -o "$prefix/pc-consumer-full-static" 2>"$prefix/full-static.log" ||
  { cat "$prefix/full-static.log"; fail "cc -static with pkg-config --static --libs"; }
static_only "$prefix/pc-consumer-full-static"
# With the CUDA backend that program has no dynamic loader, and the NVIDIA
# driver (libcuda.so.1) is a shared library only: loaded into it, the driver
# would run on a second C library beside the program's static one, and crash.
# The library must answer it with no CUDA device, saying why, and never load a
# libcuda.so.1: one is planted where the program's dlopen would find it, and
# leaves a mark if anything loads it.
if grep -q -- '-lcudart_static' <<<"$pc_static"; then
  mkdir "$prefix/planted-driver"
  printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' \
    '__attribute__((constructor)) static void loaded(void) {' \
    '  FILE* f = fopen(getenv("SM_PLANTED_DRIVER_MARK"), "w"); if (f) fclose(f); }' \
    >"$prefix/planted-driver/driver.c"
  cc -shared -fPIC "$prefix/planted-driver/driver.c" -o "$prefix/planted-driver/libcuda.so.1"
  got="$(LD_LIBRARY_PATH="$prefix/planted-driver" SM_PLANTED_DRIVER_MARK="$prefix/driver-loaded" \
        "$prefix/pc-consumer-full-static")" || fail "the fully static consumer failed beside a libcuda.so.1"
  [ ! -e "$prefix/driver-loaded" ] || fail "the fully static consumer loaded libcuda.so.1 (the planted one)"
  grep -q '0 CUDA devices' <<<"$got" && grep -q 'statically linked' <<<"$got" ||
    fail "the fully static consumer does not say it has no CUDA device for being statically linked: $got"
  echo "install: the fully static consumer leaves the CUDA driver alone and says why"
fi

# stridemem_mpi.h is installed beside stridemem.h and, where MPI is installed,
# works from there: compiled by mpicc with pkg-config's flags, run as one
# process (as root too, where Open MPI needs to be told it may).
[ -f "$prefix/include/stridemem_mpi.h" ] || fail "stridemem_mpi.h is not installed in include/"
if command -v mpicc >/dev/null 2>&1; then
  mpicc -std=c99 "$src/mpi_consumer.c" $(pkg-config --cflags --libs stridemem) -o "$prefix/mpi-consumer"
  # Its own Open MPI session directory: launchers that start at once (ctest -j)
  # race to create the shared default one in /tmp.
  LD_LIBRARY_PATH="$libdir" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_btl=self OMPI_MCA_orte_tmpdir_base="$prefix/ompi" "$prefix/mpi-consumer" ||
    fail "the stridemem_mpi.h consumer did not run"
  echo "install: stridemem_mpi.h consumer (mpicc, one process) OK"
else
  echo "install: no mpicc: the stridemem_mpi.h consumer is not built (the header is installed)"
fi
echo "install: shared and static consumers through find_package and pkg-config OK"
