#!/usr/bin/env bash
# Does a program that depends on bindings/rust start? Builds throwaway
# dependent crates (path dependency on this crate) offline in a temp dir and
# runs them with NO LD_LIBRARY_PATH, asserting on what they print:
#   (e) the first `cargo run` of a new dependent with no build.rs and no
#       feature, from a clean target dir: the default links libstridemem.a
#       (from the build dir; and (e2) from a prefix found by pkg-config), so
#       the program starts and does not need libstridemem.so;
#   (f) a directory with libstridemem.so alone (not on the loader's path):
#       such a dependent does not build, and the message says what to do;
#   (a) the `dylib` feature, STRIDEMEM_LIB_DIR at build time only, the
#       README's two-line build.rs in the dependent (DEP_STRIDEMEM_RPATH);
#       and, to show why that build.rs is there, the same program without it
#       must fail to start;
#   (b) the `dylib` feature, the library installed into a prefix (cmake
#       --install) that is found through PKG_CONFIG_PATH at build time,
#       nothing at run time (the rpath again comes from DEP_STRIDEMEM_RPATH:
#       a private prefix is not on the loader's path);
#   (c) the `static` feature (libstridemem.a), no build.rs, nothing at run
#       time, and no libstridemem.so in the program's NEEDED;
#   (d) no library at all: `cargo doc` works, `cargo build` fails with the
#       list of places tried.
# The cases that need libstridemem.a ((e), (e2), (c)) are skipped, and
# reported as SKIP, when there is none; REQUIRE_STATIC=1 makes that a failure.
# Usage: check_dependent.sh [BUILD_DIR]   (default: <repo>/build)
#   STATIC_LIB_DIR=dir   where libstridemem.a is (default: BUILD_DIR)
#   KEEP_TMP=1           keep the temp dir for a look afterwards
set -euo pipefail

crate="$(cd "$(dirname "$0")/../.." && pwd)"
repo="$(cd "$crate/../.." && pwd)"
build="$(cd "${1:-$repo/build}" && pwd)"
static_dir="${STATIC_LIB_DIR:-$build}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/stridemem-dependent.XXXXXX")"
if [[ "${KEEP_TMP:-0}" == 1 ]]; then echo "temp dir: $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
# One target dir for every case: stridemem itself is rebuilt only when its
# inputs (STRIDEMEM_LIB_DIR, PKG_CONFIG_PATH, features) change.
export CARGO_TARGET_DIR="$tmp/target"
unset LD_LIBRARY_PATH STRIDEMEM_LIB_DIR PKG_CONFIG_PATH
passed=0 skipped=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
skip() { echo "SKIP $1"; skipped=$((skipped + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }

expected='tensor([[1., 2., 3.],
        [4., 5., 6.]], dtype=float32)
sum 21'

# new_crate NAME FEATURES WITH_BUILD_RS: a dependent crate in $tmp/NAME.
# The build.rs is the README's (tests/discovery.rs checks the README's copy
# against the one build.rs prints in its message).
new_crate() {
  local dir="$tmp/$1"
  mkdir -p "$dir/src"
  cat >"$dir/Cargo.toml" <<EOF
[package]
name = "$1"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
stridemem = { path = "$crate"$2 }
EOF
  cat >"$dir/src/main.rs" <<'EOF'
use stridemem::Tensor;

fn main() -> Result<(), stridemem::Error> {
    let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    println!("{t}");
    println!("sum {}", t.iter::<f32>()?.sum::<f32>());
    Ok(())
}
EOF
  if [[ "$3" == yes ]]; then
    # The two lines the README tells a dependent to add.
    cat >"$dir/build.rs" <<'EOF'
fn main() {
    if let Ok(dir) = std::env::var("DEP_STRIDEMEM_RPATH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
EOF
  fi
  echo "$dir"
}

# build_and_run CASE DIR [VAR=VALUE...]: builds DIR with the given build-time
# environment, then runs the program with none of it and no LD_LIBRARY_PATH;
# sets $exe. (Not run in $(...): the counters must survive.)
build_and_run() {
  local case="$1" dir="$2"; shift 2
  if ! (cd "$dir" && env "$@" cargo build --offline --quiet -j"${CARGO_JOBS:-2}") >"$tmp/$case.build" 2>&1; then
    cat "$tmp/$case.build"; fail "$case: cargo build"; return 1
  fi
  exe="$CARGO_TARGET_DIR/debug/$(basename "$dir")"
  local out
  if ! out="$(env -u LD_LIBRARY_PATH "$exe" 2>&1)"; then
    echo "$out"; fail "$case: the program did not start or failed"; return 1
  fi
  if [[ "$out" != "$expected" ]]; then
    printf 'expected:\n%s\ngot:\n%s\n' "$expected" "$out"; fail "$case: output"; return 1
  fi
}

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
runpath() { readelf -d "$1" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p'; }

no_static() {  # CASE: libstridemem.a is missing: SKIP, or FAIL under REQUIRE_STATIC=1
  if [[ "${REQUIRE_STATIC:-0}" == 1 ]]; then
    fail "$1: no $static_dir/libstridemem.a (REQUIRE_STATIC=1)"
  else
    skip "$1: no libstridemem.a in $static_dir (build the static library target first)"
  fi
}
# static_only CASE: $exe must not need libstridemem.so.
static_only() {
  if needed "$exe" | grep -q stridemem; then
    fail "$1: the program still needs $(needed "$exe" | grep stridemem)"
    return 1
  fi
}

# (e) A new dependent, no build.rs, no feature: `cargo run` from a clean
# target dir. Where BUILD_DIR is the repository's build, nothing is set at all
# (the crate finds ../../build itself); else STRIDEMEM_LIB_DIR names it.
if [[ ! -f "$build/libstridemem.a" ]]; then
  no_static "(e) default link"
else
  e="$(new_crate dep_default "" no)"
  e_env=(CARGO_TARGET_DIR="$tmp/target-clean")
  [[ "$build" == "$repo/build" ]] || e_env+=(STRIDEMEM_LIB_DIR="$build")
  if ! out="$(cd "$e" && env -u LD_LIBRARY_PATH "${e_env[@]}" cargo run --offline --quiet -j"${CARGO_JOBS:-2}" 2>"$tmp/e.build")"; then
    cat "$tmp/e.build"; echo "$out"; fail "(e) cargo run of a dependent without build.rs"
  elif [[ "$out" != "$expected" ]]; then
    printf 'expected:\n%s\ngot:\n%s\n' "$expected" "$out"; fail "(e) output"
  else
    exe="$tmp/target-clean/debug/dep_default"
    if static_only "(e)"; then
      pass "(e) no build.rs, no feature: the first cargo run starts (libstridemem.a by default)"
    fi
  fi
fi

# (f) libstridemem.so alone, in a directory the loader does not search: a
# dependent that chose nothing must not build a program that cannot start.
lone="$tmp/lone-so"
mkdir -p "$lone"
cp "$build/libstridemem.so" "$lone/libstridemem.so"  # follows the link: the file itself
f="$(new_crate dep_lone_so "" no)"
if (cd "$f" && STRIDEMEM_LIB_DIR="$lone" cargo build --offline --quiet -j"${CARGO_JOBS:-2}") >"$tmp/f.build" 2>&1; then
  fail "(f) a dependent of a lone, unreachable libstridemem.so built"
elif ! grep -q "stridemem: found only the shared library $lone/libstridemem.so" "$tmp/f.build" ||
     ! grep -q 'DEP_STRIDEMEM_RPATH' "$tmp/f.build" || ! grep -q 'stridemem_static' "$tmp/f.build" ||
     ! grep -q 'STRIDEMEM_LINK=dylib' "$tmp/f.build"; then
  cat "$tmp/f.build"; fail "(f) not the expected message"
else
  pass "(f) a lone libstridemem.so the loader would not find: the dependent stops at build time, saying what to do"
fi

# (a) STRIDEMEM_LIB_DIR at build time only.
a="$(new_crate dep_env ', features = ["dylib"]' yes)"
if build_and_run a "$a" STRIDEMEM_LIB_DIR="$build"; then
  if [[ ":$(runpath "$exe"):" == *":$build:"* ]]; then
    pass "(a) STRIDEMEM_LIB_DIR at build time, nothing at run time"
  else
    fail "(a) rpath $(runpath "$exe") does not name $build"
  fi
fi
# ... and without the dependent's build.rs, no rpath: it cannot start (unless
# the loader finds an installed copy by itself, then there is nothing to show).
a0="$(new_crate dep_no_build_rs ', features = ["dylib"]' no)"
if ! (cd "$a0" && STRIDEMEM_LIB_DIR="$build" cargo build --offline --quiet -j"${CARGO_JOBS:-2}") >"$tmp/a0.build" 2>&1; then
  cat "$tmp/a0.build"; fail "(a0) cargo build"
elif ldconfig -p 2>/dev/null | grep -q 'libstridemem\.so'; then
  skip "(a0) libstridemem is in ld.so's cache here, so a program without rpath starts anyway"
elif out="$(env -u LD_LIBRARY_PATH "$CARGO_TARGET_DIR/debug/dep_no_build_rs" 2>&1)"; then
  fail "(a0) started without rpath and without an installed library?"
elif [[ "$out" == *"libstridemem.so"*"cannot open shared object file"* ]]; then
  pass "(a0) without the build.rs lines the program does not start (cargo gives dependents no rpath)"
else
  echo "$out"; fail "(a0) unexpected error"
fi

# (b) installed into a prefix, found through pkg-config.
prefix="$tmp/prefix"
if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"; fail "(b) cmake --install"
elif ! command -v pkg-config >/dev/null; then
  skip "(b) no pkg-config binary"
else
  libdir="$(dirname "$(find "$prefix" -name stridemem.pc | head -n1)")/.."
  libdir="$(cd "$libdir" && pwd)"
  b="$(new_crate dep_pkgconfig ', features = ["dylib"]' yes)"
  if build_and_run b "$b" PKG_CONFIG_PATH="$libdir/pkgconfig"; then
    # It must be the installed copy, not the repository's build dir.
    if [[ ":$(runpath "$exe"):" == *":$libdir:"* ]]; then
      pass "(b) prefix found by pkg-config at build time, nothing at run time"
    else
      fail "(b) rpath $(runpath "$exe") does not name the prefix $libdir"
    fi
  fi
  # (e2) the same prefix, no build.rs, no feature: the archive installed
  # there is linked, with its dependencies from the installed .pc.
  if [[ ! -f "$libdir/libstridemem.a" ]]; then
    no_static "(e2) default link from a pkg-config prefix"
  else
    e2="$(new_crate dep_pkgconfig_default "" no)"
    if build_and_run e2 "$e2" PKG_CONFIG_PATH="$libdir/pkgconfig" && static_only "(e2)"; then
      pass "(e2) no build.rs, no feature, prefix found by pkg-config: starts, libstridemem.a linked"
    fi
  fi
fi

# (c) the static feature.
if [[ ! -f "$static_dir/libstridemem.a" ]]; then
  no_static "(c) static feature"
else
  c="$(new_crate dep_static ', features = ["static"]' no)"
  if build_and_run c "$c" STRIDEMEM_LIB_DIR="$static_dir" && static_only "(c)"; then
    pass "(c) static feature: no rpath, no libstridemem.so needed"
  fi
fi

# (d) no library anywhere: `cargo doc` still works, `cargo build` stops with
# the list of places tried. A copy of the crate in the temp dir, so that
# ../../build does not exist; pkg-config made absent.
nolib="$tmp/nolib/stridemem"
mkdir -p "$nolib"
tar -C "$crate" --exclude=./target -cf - . | tar -C "$nolib" -xf -
nolib_env=(PKG_CONFIG=/nonexistent/pkg-config LIBRARY_PATH= CARGO_TARGET_DIR="$tmp/nolib-target")
if (cd "$nolib" && env "${nolib_env[@]}" cargo build --offline --quiet -j"${CARGO_JOBS:-2}") >"$tmp/d.build" 2>&1; then
  skip "(d) a libstridemem is installed on the system linker path here: cannot show the missing-library case"
elif ! grep -q "libstridemem.a or libstridemem.so not found. Looked, in this order, at:" "$tmp/d.build" ||
     ! grep -q "1. STRIDEMEM_LIB_DIR: not set" "$tmp/d.build" ||
     ! grep -q "4. the repository's build directories: $tmp/build" "$tmp/d.build"; then
  cat "$tmp/d.build"; fail "(d) cargo build without the library: not the expected message"
elif ! (cd "$nolib" && env "${nolib_env[@]}" cargo doc --offline --quiet --no-deps -j"${CARGO_JOBS:-2}") >"$tmp/d.doc" 2>&1 ||
     [[ ! -f "$tmp/nolib-target/doc/stridemem/index.html" ]]; then
  cat "$tmp/d.doc"; fail "(d) cargo doc without the library"
else
  pass "(d) no library: cargo doc works, cargo build lists every place tried"
fi

echo "dependent crates: $passed passed, $skipped skipped, $failed failed"
[[ $failed == 0 ]]
