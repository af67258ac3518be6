#!/usr/bin/env bash
# Holds the built library's ABI to the last release's, kept in the tree as an
# abidw dump (abi/libstridemem.abi).
#
#   scripts/abi-check.sh [--lib PATH] [--dump PATH] [--headers DIR]
#   scripts/abi-check.sh --update [--lib PATH] [--dump PATH] [--headers DIR]
#
# Defaults: --lib build/libstridemem.so, --dump abi/libstridemem.abi,
# --headers include (the public headers: only their types count).
#
# The check fails when
#   - the library's SONAME is not the dump's: a release that changes the
#     SONAME (VERSION's minor while the major is 0, else its major) must
#     update the dump with it;
#   - abidiff finds a function or variable removed or changed (a parameter
#     added, a public struct's layout, ...) or says the change is
#     incompatible. Additions (a new function) pass.
#   - an exported function has no debug information, so that its signature
#     could not be compared (the ABI layer is compiled with -g for this).
# --update rewrites the dump from the library, for a release: refused when
# the ABI breaks under an unchanged SONAME.
# Exit status: 0 compatible (or updated), 1 not, 77 abidw/abidiff missing
# (Debian: abigail-tools; scripts/setup-deps.sh installs it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lib="$root/build/libstridemem.so"
dump="$root/abi/libstridemem.abi"
headers="$root/include"
update=0
while [ $# -gt 0 ]; do
  case "$1" in
    --update) update=1; shift ;;
    --lib|--dump|--headers)
      [ $# -ge 2 ] || { echo "abi-check: $1 needs a value" >&2; exit 2; }
      case "$1" in --lib) lib="$2" ;; --dump) dump="$2" ;; --headers) headers="$2" ;; esac
      shift 2 ;;
    *) echo "abi-check: unknown argument $1 (see the head of $0)" >&2; exit 2 ;;
  esac
done
for tool in abidw abidiff readelf; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "abi-check: SKIPPED: $tool is not installed (Debian: abigail-tools, binutils;" \
         "scripts/setup-deps.sh)"
    exit 77
  fi
done
[ -f "$lib" ] || { echo "abi-check: FAIL: no library at $lib (build it first)"; exit 1; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

soname_of_lib() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p'; }
soname_of_dump() { sed -n "1s/.*soname='\([^']*\)'.*/\1/p" "$1"; }

# The dump as it is kept: no paths of this machine (file names only: the
# locations tell public types from private ones), type ids that do not
# shift when a type is added, only what the public headers declare and the
# exported functions reach.
abidw --no-corpus-path --no-comp-dir-path --short-locs --type-id-style hash \
  --headers-dir "$headers" --drop-private-types --exported-interfaces-only \
  --out-file "$work/built.abi" "$lib"

# Every exported function must be described (its signature known).
{ grep -o "<elf-symbol name='[^']*' type='func-type'" "$work/built.abi" || true; } |
  sed "s/<elf-symbol name='\([^']*\)'.*/\1/" | sort -u >"$work/exported"
{ grep -o "<function-decl [^>]*elf-symbol-id='[^']*'" "$work/built.abi" || true; } |
  sed "s/.*elf-symbol-id='\([^'@]*\).*/\1/" | sort -u >"$work/described"
undescribed="$(comm -23 "$work/exported" "$work/described")"
if [ -n "$undescribed" ]; then
  echo "abi-check: FAIL: no debug information for these exported functions, so their" \
       "signatures cannot be checked (the ABI layer is compiled with -g):"
  sed 's/^/  /' <<<"$undescribed"
  exit 1
fi

lib_soname="$(soname_of_lib "$lib")"
# compare DUMP: 0 when the library's ABI keeps the dump's, else 1 with the
# report printed. abidiff's exit status is a bit set: 1 error, 2 usage,
# 4 some change, 8 a change it knows is incompatible. Bit 4 alone also covers
# changed signatures, so its summary decides: anything removed or changed fails.
compare() {
  local rc=0
  abidiff --no-show-locs --headers-dir2 "$headers" --drop-private-types \
    "$1" "$lib" >"$work/report" 2>&1 || rc=$?
  if (( rc & 3 )); then
    cat "$work/report"; echo "abi-check: FAIL: abidiff could not compare (exit $rc)"; return 1
  fi
  if (( rc & 8 )) || grep -Eq '(^|[^0-9])[1-9][0-9]* (Removed|Changed)' "$work/report"; then
    cat "$work/report"; return 1
  fi
  if (( rc & 4 )); then cat "$work/report"; fi
  return 0
}

if (( update )); then
  if [ -f "$dump" ] && [ "$(soname_of_dump "$dump")" = "$lib_soname" ] && ! compare "$dump"; then
    echo "abi-check: REFUSED: the ABI breaks (above) but the SONAME is still $lib_soname." \
         "Bump VERSION (the minor while the major is 0, else the major), rebuild, and update again."
    exit 1
  fi
  mkdir -p "$(dirname "$dump")"
  cp "$work/built.abi" "$dump"
  echo "abi-check: wrote $dump from $lib (SONAME $lib_soname)"
  exit 0
fi

[ -f "$dump" ] || { echo "abi-check: FAIL: no release ABI dump at $dump (make one with --update)"; exit 1; }
dump_soname="$(soname_of_dump "$dump")"
if [ "$lib_soname" != "$dump_soname" ]; then
  echo "abi-check: FAIL: the library's SONAME is $lib_soname, the release dump's $dump_soname."
  echo "  A release that changes the SONAME updates the dump with it: scripts/abi-check.sh --update."
  exit 1
fi
if ! compare "$dump"; then
  echo "abi-check: FAIL: $lib breaks the ABI of $dump (SONAME $lib_soname)."
  echo "  Undo the change, or make it a new ABI: bump VERSION (the minor while the major is 0)," \
       "so that the SONAME changes, rebuild, then scripts/abi-check.sh --update."
  exit 1
fi
echo "abi-check: $lib keeps the ABI of $dump (SONAME $lib_soname)"
