#!/usr/bin/env bash
# scripts/abi-check.sh fails when it should: small libraries, built with the
# C compiler, stand for a release and for changes to it.
#   abi_check_catches_breaks.sh SOURCE_DIR [CC]
set -euo pipefail
src="$1"; cc="${2:-cc}"
check="$src/scripts/abi-check.sh"
for tool in abidw abidiff readelf; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIPPED: $tool is not installed (abigail-tools)"; exit 77; }
done
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir "$work/include"
cat >"$work/include/api.h" <<'EOF'
typedef struct { int n; double* data; } sm_buf;
int sm_f(int x);
int sm_g(const sm_buf* b);
EOF
# The next version's header, where a public struct's member is widened.
mkdir "$work/include-next"
sed 's/int n;/long n;/' "$work/include/api.h" >"$work/include-next/api.h"
# lib NAME SONAME [CFLAGS...] < C source: builds $work/NAME.so (its headers
# from $work/${inc:-include}).
lib() {
  local name="$1" soname="$2"; shift 2
  cat >"$work/$name.c"
  "$cc" -shared -fPIC -O2 "$@" -I"$work/${inc:-include}" -Wl,-soname,"$soname" \
    -o "$work/$name.so" "$work/$name.c"
}
release='#include "api.h"
int sm_f(int x) { return x; }
int sm_g(const sm_buf* b) { return b->n; }'
lib release libapi.so.0.4 -g <<<"$release"
lib added libapi.so.0.4 -g <<<"$release
int sm_h(void) { return 1; }"
lib param libapi.so.0.4 -g <<'EOF'
typedef struct { int n; double* data; } sm_buf;
int sm_f(int x, int y) { return x + y; }
int sm_g(const sm_buf* b) { return b->n; }
EOF
inc=include-next lib layout libapi.so.0.4 -g <<<"$release"
lib removed libapi.so.0.4 -g <<'EOF'
#include "api.h"
int sm_f(int x) { return x; }
EOF
lib renamed libapi.so.0.5 -g <<<"$release"
lib nodebug libapi.so.0.4 <<<"$release"

dump="$work/api.abi"
run() {  # run EXPECTED_EXIT WHAT SAYING ARGS...: abi-check.sh ARGS must exit
  # EXPECTED_EXIT and print SAYING (a fixed string), so that it failed for that reason
  local want="$1" what="$2" saying="$3" rc=0; shift 3
  "$check" --dump "$dump" --headers "$work/include" "$@" >"$work/out" 2>&1 || rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF -- "$saying" "$work/out"; then
    cat "$work/out"; echo "FAIL: $what: exit $rc (expected $want) and output above (expected '$saying')"
    exit 1
  fi
  echo "ok: $what (exit $rc: $saying)"
}
run 1 "no dump yet" "no release ABI dump" --lib "$work/release.so"
run 0 "the release's dump is written" "wrote" --update --lib "$work/release.so"
grep -q "soname='libapi.so.0.4'" "$dump" || { echo "FAIL: the dump lacks the SONAME"; exit 1; }
run 0 "the release itself" "keeps the ABI" --lib "$work/release.so"
run 0 "a function added" "1 Added function" --lib "$work/added.so"
run 1 "a parameter added" "parameter 2 of type 'int' was added" --lib "$work/param.so"
run 1 "a public struct's member widened" "type size changed from 32 to 64" --lib "$work/layout.so" --headers "$work/include-next"
run 1 "a function removed" "1 Removed function" --lib "$work/removed.so"
run 1 "the SONAME changed, the dump not" "SONAME is libapi.so.0.5, the release dump's libapi.so.0.4" --lib "$work/renamed.so"
run 1 "no debug information" "no debug information for these exported functions" --lib "$work/nodebug.so"
run 1 "--update of a break under the same SONAME is refused" "REFUSED" --update --lib "$work/param.so"
run 0 "--update with a new SONAME" "(SONAME libapi.so.0.5)" --update --lib "$work/renamed.so"
run 0 "... after which that library passes" "keeps the ABI" --lib "$work/renamed.so"
echo "abi-check catches every break above"
