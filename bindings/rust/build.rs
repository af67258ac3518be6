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
//! With the `static` feature it looks for `libstridemem.a` instead and adds
//! the static link's dependencies.
//!
//! It never fails: when nothing is found it warns and sets
//! `cfg(stridemem_missing)`, so that `cargo doc` works without the library
//! while `cargo build` stops with the list of places tried (lib.rs).
//!
//! Cargo passes `rustc-link-arg` only to this package's own targets (its
//! tests), so a dependent's binary gets no rpath from here. For dependents
//! it publishes, through `links = "stridemem"`, `DEP_STRIDEMEM_LIB_DIR` and,
//! when the loader would not find the library by itself,
//! `DEP_STRIDEMEM_RPATH` (see the README).

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

#[allow(dead_code)] // shared with tests/discovery.rs, which uses all of it
mod discover {
    include!("build_support/discover.rs");
}

use discover::{ENV_DIR, Inputs, Link, Source};

fn target(key: &str) -> String {
    env::var(format!("CARGO_CFG_TARGET_{key}")).unwrap_or_default()
}

fn main() {
    for var in [ENV_DIR, "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG", "LIBRARY_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build_support/discover.rs");
    println!("cargo::rustc-check-cfg=cfg(stridemem_missing)");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let link = if env::var_os("CARGO_FEATURE_STATIC").is_some() { Link::Static } else { Link::Dylib };
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let (arch, os, abi) = (target("ARCH"), target("OS"), target("ENV"));

    let inputs = Inputs {
        link,
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
            let message = not_found.message();
            for line in message.lines() {
                println!("cargo:warning={line}");
            }
            // lib.rs turns this into a compile_error! outside rustdoc.
            fs::write(out_dir.join("not_found.txt"), &message).expect("write OUT_DIR/not_found.txt");
            println!("cargo:rustc-cfg=stridemem_missing");
            // Look again on the next build: the library may have been built.
            println!("cargo:rerun-if-changed={}", inputs.repo.join("build").join(link.file_name()).display());
            return;
        }
    };

    let dir = found.dir.display().to_string();
    println!("cargo:rerun-if-changed={}", found.lib.display());
    if found.source == Source::RepoBuild && !found.dir.ends_with("build") {
        println!("cargo:warning=stridemem: linking {} (no ../../build; set {ENV_DIR} to choose)", found.lib.display());
    }
    println!("cargo:rustc-link-search=native={dir}");
    match link {
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
    // For dependents (`links = "stridemem"`): DEP_STRIDEMEM_LIB_DIR, _LINK.
    println!("cargo:lib_dir={dir}");
    println!("cargo:link={}", if link == Link::Static { "static" } else { "dylib" });
}

/// `ldconfig -p` (ld.so's cache), or `None` where there is no ldconfig.
fn ldconfig_p() -> Option<String> {
    ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"].iter().find_map(|bin| {
        let out = Command::new(bin).arg("-p").output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    })
}
