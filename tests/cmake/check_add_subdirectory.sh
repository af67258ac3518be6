#!/usr/bin/env bash
# A project that add_subdirectory()s the source tree (tests/cmake/subproject):
# it builds (its default target) and runs a program against stridemem::stridemem
# and one against stridemem::stridemem_static, and stridemem builds no tests
# or benchmarks there: GoogleTest is hidden, so any test target would show.
#   check_add_subdirectory.sh SOURCE_DIR WORK_DIR [cmake args...]
set -euo pipefail
src="$1"; work="$2"; shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"
b="$work/build"
cmake -S "$src/tests/cmake/subproject" -B "$b" "$@" -DSTRIDEMEM_SOURCE_DIR="$src" \
  -DSTRIDEMEM_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "configure of the sub-project failed"; }
grep -q "GoogleTest not found" "$work/configure.log" && fail "the sub-project looked for GoogleTest"
grep -q "^STRIDEMEM_BUILD_TESTS:BOOL=OFF$" "$b/CMakeCache.txt" || fail "STRIDEMEM_BUILD_TESTS is not OFF"
grep -q "^STRIDEMEM_BUILD_BENCH:BOOL=OFF$" "$b/CMakeCache.txt" || fail "STRIDEMEM_BUILD_BENCH is not OFF"
targets="$(cmake --build "$b" --target help)"
for unwanted in stridemem_unit_tests stridemem_api_tests c_test_readme_example reliability_stress \
                bench_copy_bench; do
  ! grep -qw "$unwanted" <<<"$targets" || fail "the sub-project has the test target $unwanted"
done
grep -q "Total Tests: 0" <<<"$(ctest --test-dir "$b" -N)" || fail "the sub-project has tests"
cmake --build "$b" --parallel 2 >"$work/build.log" 2>&1 || { tail -50 "$work/build.log"; fail "build"; }
"$b/app" || fail "the shared consumer did not run"
"$b/app_static" || fail "the static consumer did not run"
! grep -q 'NEEDED.*libstridemem' <<<"$(readelf -d "$b/app_static")" ||
  fail "app_static needs libstridemem.so"
rm -rf "$work"
echo "add_subdirectory consumer: OK (no tests built)"
