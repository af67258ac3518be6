#!/usr/bin/env bash
# A plain top-level configure where GoogleTest is not installed (hidden with
# CMAKE_DISABLE_FIND_PACKAGE_GTest) succeeds, says what to do about the tests
# it leaves out, and keeps the library targets and the tests without GoogleTest.
#   check_configure_without_gtest.sh SOURCE_DIR WORK_DIR [cmake args...]
set -euo pipefail
src="$1"; work="$2"; shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"
log="$work/configure.log"
if ! cmake -S "$src" -B "$work/build" "$@" -DSTRIDEMEM_CUDA=OFF \
     -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON >"$log" 2>&1; then
  cat "$log"; fail "configure without GoogleTest failed"
fi
grep -q "libgtest-dev" "$log" || { cat "$log"; fail "no warning that names libgtest-dev"; }
grep -q -- "-DSTRIDEMEM_BUILD_TESTS=OFF" "$log" || { cat "$log"; fail "no hint at STRIDEMEM_BUILD_TESTS=OFF"; }
targets="$(cmake --build "$work/build" --target help)"
for want in stridemem stridemem_static c_test_readme_example; do
  grep -qw "$want" <<<"$targets" || fail "target $want is missing"
done
for unwanted in stridemem_unit_tests stridemem_api_tests; do
  ! grep -qw "$unwanted" <<<"$targets" || fail "target $unwanted needs GoogleTest but is there"
done
tests="$(ctest --test-dir "$work/build" -N 2>/dev/null)"
grep -q "c.test_readme_example" <<<"$tests" || fail "the tests without GoogleTest are gone too"
rm -rf "$work"
echo "configure without GoogleTest: OK (unit/API tests left out with a warning)"
