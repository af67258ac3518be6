//! Finds libstridemem and tells cargo how to link it, with an rpath so that
//! `cargo test` runs without LD_LIBRARY_PATH.
//!
//! Search order:
//! 1. `$STRIDEMEM_LIB_DIR` (must contain the library; no fallback when set),
//! 2. the repository's CMake build directory `../../build`,
//! 3. other `../../build-*` directories, the one with the newest library first
//!    (sanitizer builds skipped: they need their runtime preloaded).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process;
use std::time::SystemTime;

const ENV_DIR: &str = "STRIDEMEM_LIB_DIR";

/// File names that count as "the library is here" (Linux, macOS).
const LIB_NAMES: [&str; 2] = ["libstridemem.so", "libstridemem.dylib"];

fn library_in(dir: &Path) -> Option<PathBuf> {
    LIB_NAMES
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
}

fn modified(path: &Path) -> SystemTime {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// A sanitizer build (`STRIDEMEM_SANITIZE=address|thread` in its CMake
/// cache) cannot be loaded by a program without the sanitizer runtime.
fn is_sanitizer_build(dir: &Path) -> bool {
    let Ok(cache) = fs::read_to_string(dir.join("CMakeCache.txt")) else {
        return false;
    };
    cache.lines().any(|line| {
        line.strip_prefix("STRIDEMEM_SANITIZE:")
            .and_then(|rest| rest.split_once('='))
            .is_some_and(|(_, value)| !value.trim().is_empty())
    })
}

/// `../../build-*` directories holding the library (sanitizer builds
/// skipped), newest library first.
fn fallback_build_dirs(repo: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    let Ok(entries) = fs::read_dir(repo) else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with("build-") {
            continue;
        }
        let dir = entry.path();
        if is_sanitizer_build(&dir) {
            continue;
        }
        if let Some(lib) = library_in(&dir) {
            found.push((dir, lib));
        }
    }
    found.sort_by_key(|(_, lib)| std::cmp::Reverse(modified(lib)));
    found
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    println!("cargo:warning={}", message.replace('\n', " "));
    process::exit(1);
}

fn main() {
    println!("cargo:rerun-if-env-changed={ENV_DIR}");
    println!("cargo:rerun-if-changed=build.rs");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let repo = manifest.join("..").join("..");

    let (dir, lib) = match env::var_os(ENV_DIR) {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            match library_in(&dir) {
                Some(lib) => (dir, lib),
                None => fail(&format!(
                    "{ENV_DIR}={} does not contain libstridemem.so; build it with \
                     `cmake -S . -B build && cmake --build build --target stridemem` \
                     in the repository root, or point {ENV_DIR} at the directory that holds it",
                    dir.display()
                )),
            }
        }
        _ => {
            let default = repo.join("build");
            if let Some(lib) = library_in(&default) {
                (default, lib)
            } else if let Some((dir, lib)) = fallback_build_dirs(&repo).into_iter().next() {
                println!(
                    "cargo:warning=stridemem: linking {} (no ../../build; set {ENV_DIR} to choose)",
                    lib.display()
                );
                (dir, lib)
            } else {
                fail(&format!(
                    "libstridemem.so not found: looked in {ENV_DIR} (unset), {} and {}/build-*/. \
                     Build the C library first (`cmake -S . -B build && cmake --build build \
                     --target stridemem` in the repository root) or set {ENV_DIR} to the \
                     directory that holds libstridemem.so",
                    default.display(),
                    repo.display()
                ))
            }
        }
    };

    let dir = dir.canonicalize().unwrap_or(dir);
    let lib = lib.canonicalize().unwrap_or(lib);
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=stridemem");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    // For dependents (`links = "stridemem"`): DEP_STRIDEMEM_LIB_DIR.
    println!("cargo:lib_dir={}", dir.display());
}
