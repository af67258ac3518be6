//! Finds libstridemem and tells cargo how to link it.
//!
//! Search order (build_support/discover.rs, tested by tests/discovery.rs):
//! 1. `$STRIDEMEM_LIB_DIR` (must contain the library; no fallback when set),
//! 2. pkg-config (`pkg-config --libs-only-L stridemem`, `$PKG_CONFIG_PATH`),
//! 3. the system linker path (`$LIBRARY_PATH`, `ldconfig -p`, /usr/local/lib,
//!    the multiarch and standard lib directories),
//! 4. the repository's CMake build directory `../../build`, then the newest
//!    `../../build-*` (sanitizer builds skipped: they need their runtime
//!    preloaded).
//!
//! At each place it takes `libstridemem.a` when it is there, else the shared
//! library (`Choice::Auto`); the `static` feature (or `STRIDEMEM_LINK=static`)
//! takes only the archive, the `dylib` feature (or `STRIDEMEM_LINK=dylib`)
//! only the shared library. A static link gets its dependencies added.
//!
//! Why the archive by default: cargo passes `rustc-link-arg` only to this
//! package's own targets (its tests), so a dependent's binary gets no rpath
//! from here, and one linked against a shared library the loader does not
//! find would build and then fail to start. `rustc-link-lib` and
//! `rustc-link-search` do reach dependents, and a static link needs nothing
//! more. When only such a shared library is found and nobody chose it, the
//! crate compiles for its own targets (they get the rpath) but stops a
//! dependent's build with what to do (`cfg(stridemem_dylib_unreachable)`,
//! lib.rs). For dependents that chose it, it publishes, through
//! `links = "stridemem"`, `DEP_STRIDEMEM_LIB_DIR` and, when the loader would
//! not find the library by itself, `DEP_STRIDEMEM_RPATH` (see the README).
//!
//! It never fails: when nothing is found (or the choice is contradictory) it
//! warns and sets `cfg(stridemem_missing)`, so that `cargo doc` works without
//! the library while `cargo build` stops with the message (lib.rs).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[allow(dead_code)] // shared with tests/discovery.rs, which uses all of it
mod discover {
    include!("build_support/discover.rs");
}

use discover::{ENV_DIR, ENV_LINK, Inputs, Link, Source};

fn target(key: &str) -> String {
    env::var(format!("CARGO_CFG_TARGET_{key}")).unwrap_or_default()
}

fn main() {
    for var in [ENV_DIR, ENV_LINK, "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG", "LIBRARY_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build_support/discover.rs");
    println!("cargo::rustc-check-cfg=cfg(stridemem_missing)");
    println!("cargo::rustc-check-cfg=cfg(stridemem_dylib_unreachable)");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let env_link = env::var(ENV_LINK).ok();
    let choice = match discover::choose(
        env_link.as_deref(),
        env::var_os("CARGO_FEATURE_STATIC").is_some(),
        env::var_os("CARGO_FEATURE_DYLIB").is_some(),
    ) {
        Ok(choice) => choice,
        Err(message) => return stop(&out_dir, &message),
    };
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let (arch, os, abi) = (target("ARCH"), target("OS"), target("ENV"));

    let inputs = Inputs {
        choice,
        // Relative to the crate, as before (cargo runs build.rs there).
        env_dir: env::var_os(ENV_DIR).filter(|d| !d.is_empty()).map(|d| manifest.join(d)),
        pkg_config: discover::pkg_config_dirs(&pkg_config),
        pkg_config_path: env::var("PKG_CONFIG_PATH").ok(),
        library_path: env::var_os("LIBRARY_PATH").map(|p| env::split_paths(&p).collect()).unwrap_or_default(),
        ldconfig: ldconfig_p(),
        standard_dirs: discover::standard_dirs(&arch, &os, &abi),
        loader_dirs: discover::trusted_loader_dirs(&arch, &os, &abi),
        repo: manifest.join("..").join("..").canonicalize().unwrap_or_else(|_| manifest.join("..").join("..")),
    };

    let found = match discover::discover(&inputs) {
        Ok(found) => found,
        Err(not_found) => {
            // Look again on the next build: the library may have been built.
            for name in choice.file_names() {
                println!("cargo:rerun-if-changed={}", inputs.repo.join("build").join(name).display());
            }
            return stop(&out_dir, &not_found.message());
        }
    };

    let dir = found.dir.display().to_string();
    println!("cargo:rerun-if-changed={}", found.lib.display());
    if found.source == Source::RepoBuild && !found.dir.ends_with("build") {
        println!("cargo:warning=stridemem: linking {} (no ../../build; set {ENV_DIR} to choose)", found.lib.display());
    }
    println!("cargo:rustc-link-search=native={dir}");
    match found.link {
        Link::Dylib => println!("cargo:rustc-link-lib=dylib=stridemem"),
        Link::Static => {
            println!("cargo:rustc-link-lib=static=stridemem");
            for (kind, value) in discover::static_link_deps(&found.dir, &pkg_config) {
                println!("cargo:rustc-link-{kind}={value}");
            }
        }
    }
    if found.needs_rpath {
        // Our own tests, examples and benches start without LD_LIBRARY_PATH.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        // A dependent's build.rs reads DEP_STRIDEMEM_RPATH (README).
        println!("cargo:rpath={dir}");
    }
    if discover::dylib_unreachable(choice, &found) {
        // lib.rs stops a dependent's build with this; our own targets go on.
        fs::write(out_dir.join("dylib_unreachable.txt"), discover::dylib_unreachable_message(&found))
            .expect("write OUT_DIR/dylib_unreachable.txt");
        println!("cargo:rustc-cfg=stridemem_dylib_unreachable");
    }
    // For dependents (`links = "stridemem"`): DEP_STRIDEMEM_LIB_DIR, _LINK.
    println!("cargo:lib_dir={dir}");
    println!("cargo:link={}", if found.link == Link::Static { "static" } else { "dylib" });
}

/// Warns with `message` and has lib.rs stop the build with it (outside
/// rustdoc, so that `cargo doc` still works).
fn stop(out_dir: &Path, message: &str) {
    for line in message.lines() {
        println!("cargo:warning={line}");
    }
    fs::write(out_dir.join("not_found.txt"), message).expect("write OUT_DIR/not_found.txt");
    println!("cargo:rustc-cfg=stridemem_missing");
}

/// `ldconfig -p` (ld.so's cache), or `None` where there is no ldconfig.
fn ldconfig_p() -> Option<String> {
    ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"].iter().find_map(|bin| {
        let out = Command::new(bin).arg("-p").output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    })
}
