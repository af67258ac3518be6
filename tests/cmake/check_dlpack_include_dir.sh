#!/usr/bin/env bash
# The header.dlpack_official_* tests use the <dlpack/dlpack.h> the build is
# configured with: SM_DLPACK_INCLUDE_DIR given with -D; else the directory the
# build's C/C++ flags add with -isystem (ahead of the system's copy); and where
# none is found, a test that fails saying how to give one. Each configure is
# read back from the CTestTestfile.cmake it writes.
#   check_dlpack_include_dir.sh SOURCE_DIR WORK_DIR [cmake args...]
set -euo pipefail
src="$1"; work="$2"; shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work/given/dlpack" "$work/flags/dlpack"
touch "$work/given/dlpack/dlpack.h" "$work/flags/dlpack/dlpack.h"
bld="$work/build" testfile="$work/build/tests/CTestTestfile.cmake"
configure() {
  cmake -S "$src" -B "$bld" "$@" -DSTRIDEMEM_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
    >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure $* failed"; }
}
official_tests() { grep -c 'add_test(\[=\[header\.dlpack_official_' "$testfile" || true; }
uses() {  # $1: the directory every header.dlpack_official_* test must be given
  local n; n="$(grep -c -- "-DDLPACK_INCLUDE=$1\"" "$testfile" || true)"
  [ "$(official_tests)" -eq 4 ] && [ "$n" -eq 4 ] ||
    fail "$2: $n of $(official_tests) header.dlpack_official_* tests use $1: $(grep -o -- '-DDLPACK_INCLUDE=[^"]*' "$testfile" | sort -u | tr '\n' ' ')"
}

configure "$@" -DSM_DLPACK_INCLUDE_DIR="$work/given"
uses "$work/given" "-DSM_DLPACK_INCLUDE_DIR"
configure "$@" -USM_DLPACK_INCLUDE_DIR "-DCMAKE_C_FLAGS=-isystem $work/flags" \
  "-DCMAKE_CXX_FLAGS=-isystem $work/flags"
uses "$work/flags" "CMAKE_C_FLAGS/CMAKE_CXX_FLAGS -isystem"
configure "$@" -USM_DLPACK_INCLUDE_DIR -DCMAKE_C_FLAGS= -DCMAKE_CXX_FLAGS= \
  "-DCMAKE_IGNORE_PATH=/usr/include;/usr/local/include;$work/given;$work/flags"
grep -q -- "-DDLPACK_INCLUDE=" "$testfile" && fail "with no dlpack.h to be found, a test was still given one"
[ "$(official_tests)" -eq 4 ] || fail "with no dlpack.h, $(official_tests) header.dlpack_official_* tests (want 4)"
grep -q 'install libdlpack-dev,.*-DSM_DLPACK_INCLUDE_DIR=' "$testfile" ||
  fail "with no dlpack.h, the tests do not say how to give one"
grep -q 'WILL_FAIL "TRUE"' "$testfile" || fail "with no dlpack.h, the tests are not marked to fail"
rm -rf "$work"
echo "SM_DLPACK_INCLUDE_DIR: given, found through the build's -isystem, and missing: OK"
