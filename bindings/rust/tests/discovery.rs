//! build.rs's library search (build_support/discover.rs, included here as it
//! is there) on fake machines: temporary directories for the file system,
//! made-up answers from pkg-config and `ldconfig -p`.

#[allow(dead_code)]
mod discover {
    include!("../build_support/discover.rs");
}

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use discover::{Choice, Inputs, Link, PkgConfig, Source, discover};

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("stridemem-discovery-{}-{tag}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir.canonicalize().unwrap())
    }

    /// `rel` as a directory holding the given (empty) files.
    fn dir_with(&self, rel: &str, files: &[&str]) -> PathBuf {
        let dir = self.0.join(rel);
        fs::create_dir_all(&dir).unwrap();
        for f in files {
            fs::write(dir.join(f), b"").unwrap();
        }
        dir
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A machine with nothing installed: no env dir, no pkg-config package,
/// empty system dirs, and `repo` as the repository root; the default choice
/// (the archive when there is one, else the shared library).
fn bare(root: &TempDir) -> Inputs {
    Inputs {
        choice: Choice::Auto,
        env_dir: None,
        pkg_config: PkgConfig::NoPackage("Package stridemem was not found in the pkg-config search path.".into()),
        pkg_config_path: None,
        library_path: vec![],
        ldconfig: Some(String::new()),
        standard_dirs: vec![root.dir_with("usr/local/lib", &[]), root.dir_with("usr/lib", &[])],
        loader_dirs: vec![root.0.join("usr/lib")],
        repo: root.dir_with("repo", &[]),
    }
}

const SO: &str = "libstridemem.so";
const A: &str = "libstridemem.a";

#[test]
fn env_dir_wins_and_needs_an_rpath() {
    let root = TempDir::new("env");
    let mut inputs = bare(&root);
    let dir = root.dir_with("custom", &[SO]);
    root.dir_with("repo/build", &[SO]);
    inputs.pkg_config = PkgConfig::Dirs(vec![root.dir_with("prefix/lib", &[SO])]);
    inputs.env_dir = Some(dir.clone());
    let found = discover(&inputs).unwrap();
    assert_eq!((found.source, &found.dir), (Source::EnvDir, &dir));
    assert_eq!((&found.lib, found.link), (&dir.join(SO), Link::Dylib));
    assert!(found.needs_rpath);
}

#[test]
fn env_dir_without_the_library_has_no_fallback() {
    let root = TempDir::new("envmiss");
    let mut inputs = bare(&root);
    root.dir_with("repo/build", &[SO]); // would be found otherwise
    inputs.env_dir = Some(root.dir_with("empty", &[]));
    let err = discover(&inputs).unwrap_err();
    assert_eq!(err.tried.len(), 1, "{:?}", err.tried);
    assert!(err.tried[0].starts_with("STRIDEMEM_LIB_DIR="), "{}", err.tried[0]);
    assert!(err.tried[0].contains("no other place is searched"), "{}", err.tried[0]);
}

#[test]
fn pkg_config_comes_before_the_system_and_the_repository() {
    let root = TempDir::new("pc");
    let mut inputs = bare(&root);
    root.dir_with("usr/local/lib", &[SO]);
    root.dir_with("repo/build", &[SO]);
    let missing = root.dir_with("prefix/lib64", &[]);
    let prefix = root.dir_with("prefix/lib", &[SO]);
    inputs.pkg_config = PkgConfig::Dirs(vec![missing, prefix.clone()]);
    let found = discover(&inputs).unwrap();
    assert_eq!((found.source, &found.dir), (Source::PkgConfig, &prefix));
    assert!(found.needs_rpath, "a private prefix is not on the loader's path");
}

#[test]
fn a_pkg_config_package_without_the_library_falls_through() {
    let root = TempDir::new("pcmiss");
    let mut inputs = bare(&root);
    let local = root.dir_with("usr/local/lib", &[SO]);
    inputs.pkg_config = PkgConfig::Dirs(vec![root.dir_with("stale/lib", &[])]);
    let found = discover(&inputs).unwrap();
    assert_eq!((found.source, &found.dir), (Source::System, &local));
}

#[test]
fn system_dirs_in_the_linker_order_and_when_an_rpath_is_needed() {
    let root = TempDir::new("sys");
    // LIBRARY_PATH first: the linker searches it before the standard dirs,
    // but the loader does not, so an rpath is needed.
    let mut inputs = bare(&root);
    let lp = root.dir_with("opt/lib", &[SO]);
    root.dir_with("usr/lib", &[SO]);
    inputs.library_path = vec![lp.clone()];
    let found = discover(&inputs).unwrap();
    assert_eq!((found.source, &found.dir, found.needs_rpath), (Source::System, &lp, true));

    // A trusted loader dir needs none.
    inputs.library_path.clear();
    let found = discover(&inputs).unwrap();
    assert_eq!((&found.dir, found.needs_rpath), (&root.0.join("usr/lib"), false));

    // /usr/local/lib needs none only once ldconfig has cached the library
    // there (an install without `ldconfig` still gets an rpath).
    let local = root.dir_with("usr/local/lib", &[SO]);
    let found = discover(&inputs).unwrap();
    assert_eq!((&found.dir, found.needs_rpath), (&local, true));
    inputs.ldconfig = Some(format!(
        "2 libs found in cache `/etc/ld.so.cache'\n\
         \tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n\
         \tlibstridemem.so.0.4 (libc6,x86-64) => {}/libstridemem.so.0.4\n",
        local.display()
    ));
    let found = discover(&inputs).unwrap();
    assert_eq!((&found.dir, found.needs_rpath), (&local, false));
}

#[test]
fn ldconfig_cache_directories_are_searched() {
    let root = TempDir::new("ldc");
    let mut inputs = bare(&root);
    let cached = root.dir_with("etc-conf/lib", &[SO]);
    inputs.ldconfig = Some(format!("\tlibstridemem.so (libc6,x86-64) => {}/libstridemem.so\n", cached.display()));
    let found = discover(&inputs).unwrap();
    assert_eq!((found.source, &found.dir, found.needs_rpath), (Source::System, &cached, false));
}

#[test]
fn repository_build_then_newest_build_dash_skipping_sanitizers() {
    let root = TempDir::new("repo");
    let inputs = bare(&root);
    let old = root.dir_with("repo/build-old", &[SO]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let asan = root.dir_with("repo/build-asan", &[SO, "CMakeCache.txt"]);
    fs::write(asan.join("CMakeCache.txt"), "STRIDEMEM_SANITIZE:STRING=address\n").unwrap();
    let found = discover(&inputs).unwrap();
    assert_eq!((found.source, &found.dir), (Source::RepoBuild, &old), "the ASan build is newer but skipped");

    let build = root.dir_with("repo/build", &[SO]);
    let found = discover(&inputs).unwrap();
    assert_eq!((found.source, &found.dir), (Source::RepoBuild, &build));
}

#[test]
fn nothing_found_lists_every_place_in_order_and_what_to_do() {
    let root = TempDir::new("none");
    let mut inputs = bare(&root);
    inputs.pkg_config_path = Some("/nowhere/pkgconfig".into());
    let asan = root.dir_with("repo/build-asan", &[SO, "CMakeCache.txt"]);
    fs::write(asan.join("CMakeCache.txt"), "STRIDEMEM_SANITIZE:STRING=address\n").unwrap();
    let err = discover(&inputs).unwrap_err();
    assert_eq!(err.tried.len(), 4, "{:?}", err.tried);
    assert_eq!(err.tried[0], "STRIDEMEM_LIB_DIR: not set");
    assert!(err.tried[1].starts_with("pkg-config (PKG_CONFIG_PATH=/nowhere/pkgconfig): Package stridemem was not found"));
    assert!(err.tried[2].contains(&format!("{}/usr/local/lib", root.0.display())), "{}", err.tried[2]);
    assert!(err.tried[2].contains(&format!("{}/usr/lib]", root.0.display())), "{}", err.tried[2]);
    assert!(err.tried[3].contains("repo/build and"), "{}", err.tried[3]);
    assert!(err.tried[3].contains(&format!("skipped sanitizer builds, which need their runtime preloaded: {}", asan.display())));

    let msg = err.message();
    assert!(msg.starts_with(
        "stridemem: libstridemem.a or libstridemem.so not found. Looked, in this order, at:\n  1. STRIDEMEM_LIB_DIR: not set\n  2. pkg-config"
    ));
    assert!(msg.contains("\n  4. the repository's build directories"));
    for fix in ["cmake --build build", "PKG_CONFIG_PATH=<prefix>/lib/pkgconfig", "set STRIDEMEM_LIB_DIR to the directory"] {
        assert!(msg.contains(fix), "{fix}: {msg}");
    }

    inputs.pkg_config = PkgConfig::NotInstalled;
    inputs.ldconfig = None;
    let err = discover(&inputs).unwrap_err();
    assert_eq!(err.tried[1], "pkg-config: not installed");
    assert!(err.tried[2].contains("ldconfig -p not available"));
}

#[test]
fn static_looks_for_the_archive_and_needs_no_rpath() {
    let root = TempDir::new("static");
    let mut inputs = bare(&root);
    inputs.choice = Choice::Static;
    let dir = root.dir_with("custom", &[SO]);
    inputs.env_dir = Some(dir.clone());
    let err = discover(&inputs).unwrap_err();
    assert!(err.message().starts_with("stridemem: libstridemem.a not found"));
    fs::write(dir.join("libstridemem.a"), b"").unwrap();
    let found = discover(&inputs).unwrap();
    assert_eq!((found.lib, found.link, found.needs_rpath), (dir.join(A), Link::Static, false));
}

#[test]
fn by_default_the_archive_when_a_place_has_one() {
    let root = TempDir::new("auto");
    let mut inputs = bare(&root);
    // Both kinds in one place: the archive, which needs no rpath.
    let both = root.dir_with("custom", &[SO, A]);
    inputs.env_dir = Some(both.clone());
    let found = discover(&inputs).unwrap();
    assert_eq!((&found.lib, found.link, found.needs_rpath), (&both.join(A), Link::Static, false));
    assert!(!discover::dylib_unreachable(Choice::Auto, &found));

    // The place comes first, then the kind: a pkg-config prefix with the
    // shared library only wins over a repository build that has both.
    inputs.env_dir = None;
    let prefix = root.dir_with("prefix/lib", &[SO]);
    root.dir_with("repo/build", &[SO, A]);
    inputs.pkg_config = PkgConfig::Dirs(vec![prefix.clone()]);
    let found = discover(&inputs).unwrap();
    assert_eq!((found.source, &found.lib, found.link), (Source::PkgConfig, &prefix.join(SO), Link::Dylib));
    assert!(found.needs_rpath);
    // ...which a dependent's program would not find: its build must stop.
    assert!(discover::dylib_unreachable(Choice::Auto, &found));
    // Chosen explicitly, it is the dependent's business (the README's build.rs).
    assert!(!discover::dylib_unreachable(Choice::Dylib, &found));

    // The archive alone is found by the default choice, in the repo build too.
    inputs.pkg_config = PkgConfig::NoPackage(String::new());
    let only_a = root.dir_with("repo/build-static", &[A]);
    fs::remove_dir_all(root.0.join("repo/build")).unwrap();
    let found = discover(&inputs).unwrap();
    assert_eq!((found.source, &found.lib, found.link), (Source::RepoBuild, &only_a.join(A), Link::Static));

    // A shared library in a directory the loader searches is fine as it is.
    let usr_lib = root.dir_with("usr/lib", &[SO]);
    let found = discover(&inputs).unwrap();
    assert_eq!((&found.dir, found.link, found.needs_rpath), (&usr_lib, Link::Dylib, false));
    assert!(!discover::dylib_unreachable(Choice::Auto, &found));
}

#[test]
fn dylib_choice_never_takes_the_archive() {
    let root = TempDir::new("dylib");
    let mut inputs = bare(&root);
    inputs.choice = Choice::Dylib;
    let dir = root.dir_with("custom", &[A]);
    inputs.env_dir = Some(dir.clone());
    let err = discover(&inputs).unwrap_err();
    assert!(err.message().starts_with("stridemem: libstridemem.so not found"), "{}", err.message());
    assert!(err.tried[0].contains("no libstridemem.so there"), "{}", err.tried[0]);
    fs::write(dir.join(SO), b"").unwrap();
    let found = discover(&inputs).unwrap();
    assert_eq!((found.lib, found.link, found.needs_rpath), (dir.join(SO), Link::Dylib, true));
}

#[test]
fn the_choice_from_features_and_stridemem_link() {
    use discover::choose;
    assert_eq!(choose(None, false, false), Ok(Choice::Auto));
    assert_eq!(choose(Some(""), false, false), Ok(Choice::Auto));
    assert_eq!(choose(None, true, false), Ok(Choice::Static));
    assert_eq!(choose(None, false, true), Ok(Choice::Dylib));
    // The variable overrides the features, and settles a conflict.
    assert_eq!(choose(Some("dylib"), true, false), Ok(Choice::Dylib));
    assert_eq!(choose(Some("static"), false, true), Ok(Choice::Static));
    assert_eq!(choose(Some(" auto "), true, true), Ok(Choice::Auto));
    let both = choose(None, true, true).unwrap_err();
    assert!(both.contains("`static` and `dylib` are both on") && both.contains("STRIDEMEM_LINK=dylib"), "{both}");
    let bad = choose(Some("shared"), false, false).unwrap_err();
    assert!(bad.contains("STRIDEMEM_LINK=\"shared\" is not one of auto, static, dylib"), "{bad}");
}

#[test]
fn an_unreachable_shared_library_says_what_to_do() {
    let root = TempDir::new("unreach");
    let mut inputs = bare(&root);
    let dir = root.dir_with("custom", &[SO]);
    inputs.env_dir = Some(dir.clone());
    let found = discover(&inputs).unwrap();
    let msg = discover::dylib_unreachable_message(&found);
    let what = format!("found only the shared library {}", dir.join(SO).display());
    for needle in [
        what.as_str(),
        "fail to start",
        "cmake --build build --target stridemem_static",
        "features = [\"dylib\"]",
        "STRIDEMEM_LINK=dylib",
        "/etc/ld.so.conf.d/",
    ] {
        assert!(msg.contains(needle), "{needle}: {msg}");
    }
    // The build.rs it shows, line by line, is the README's.
    for line in discover::DEPENDENT_BUILD_RS.lines() {
        assert!(msg.contains(&format!("\n        {line}\n")), "{line:?}: {msg}");
    }
    let readme = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let block = format!("```rust,ignore\n{}\n```", discover::DEPENDENT_BUILD_RS);
    let indented: String = block.lines().map(|l| format!("  {l}\n")).collect();
    assert!(readme.contains(&indented), "the README's build.rs for dependents is not\n{indented}");
}

#[test]
fn parsers() {
    assert_eq!(
        discover::parse_libs_only_l("-L/opt/sm/lib -L/x/y \n"),
        vec![PathBuf::from("/opt/sm/lib"), PathBuf::from("/x/y")]
    );
    assert!(discover::parse_libs_only_l("\n").is_empty());
    assert_eq!(
        discover::ldconfig_dirs("\tlibstridemem.so.0.4 (libc6,x86-64) => /usr/local/lib/libstridemem.so.0.4\n\tlibstridemem.so (libc6,x86-64) => /usr/local/lib/libstridemem.so\n\tlibfoo.so => /a/libfoo.so"),
        vec![PathBuf::from("/usr/local/lib")]
    );
    assert_eq!(discover::multiarch("x86_64", "linux", "gnu").as_deref(), Some("x86_64-linux-gnu"));
    assert_eq!(discover::multiarch("aarch64", "linux", "gnu").as_deref(), Some("aarch64-linux-gnu"));
    assert_eq!(discover::multiarch("x86_64", "macos", ""), None);
    let std_dirs = discover::standard_dirs("x86_64", "linux", "gnu");
    assert_eq!(std_dirs.first(), Some(&PathBuf::from("/usr/local/lib/x86_64-linux-gnu")));
    assert!(std_dirs.contains(&PathBuf::from("/usr/lib/x86_64-linux-gnu")));
    assert_eq!(std_dirs.last(), Some(&PathBuf::from("/usr/lib")));
    assert!(!discover::trusted_loader_dirs("x86_64", "linux", "gnu").contains(&PathBuf::from("/usr/local/lib")));
}

#[test]
fn static_link_dependencies() {
    let lib = |v: &str| ("lib".to_string(), v.to_string());
    let tmp = std::env::temp_dir();
    let flags = format!("-L{} -lstridemem -lstdc++ -lcudart_static -ldl -lrt -pthread -L/does/not/exist", tmp.display());
    assert_eq!(
        discover::static_flags(&flags),
        vec![
            ("search".to_string(), format!("native={}", tmp.display())),
            lib("dylib=stdc++"),
            lib("static=cudart_static"),
            lib("dylib=dl"),
            lib("dylib=rt"),
            lib("dylib=pthread"),
        ]
    );
    assert_eq!(
        discover::static_flags("-lstridemem /usr/local/cuda/lib/libcudart_static.a -lstdc++"),
        vec![
            ("search".to_string(), "native=/usr/local/cuda/lib".to_string()),
            lib("static=cudart_static"),
            lib("dylib=stdc++"),
        ]
    );
    // Without pkg-config, the C++ runtime alone.
    let root = TempDir::new("deps");
    let deps = discover::static_link_deps(&root.0, "/nonexistent/pkg-config");
    assert_eq!(deps, vec![lib("dylib=stdc++")]);
}

/// The real pkg-config binary on a made-up .pc file (skipped, saying so,
/// where there is no pkg-config).
#[test]
fn pkg_config_binary_round_trip() {
    assert_eq!(
        discover::query_pkg_config("/nonexistent/pkg-config", &[], &["--libs-only-L"]),
        Err(PkgConfig::NotInstalled)
    );
    if std::process::Command::new("pkg-config").arg("--version").output().is_err() {
        eprintln!("SKIP pkg_config_binary_round_trip: no pkg-config binary");
        return;
    }
    let root = TempDir::new("pkgconf");
    let pcdir = root.dir_with("lib/pkgconfig", &[]);
    let libdir = root.0.join("lib");
    fs::write(
        pcdir.join("stridemem.pc"),
        format!(
            "libdir={}\nName: stridemem\nDescription: test\nVersion: 0.2.0\n\
             Libs: -L${{libdir}} -lstridemem\nLibs.private: -lstdc++ -ldl\n",
            libdir.display()
        ),
    )
    .unwrap();
    let out = discover::query_pkg_config("pkg-config", std::slice::from_ref(&pcdir), &["--libs-only-L"]).unwrap();
    assert_eq!(discover::parse_libs_only_l(&out), vec![libdir.clone()]);
    let deps = discover::static_link_deps(&libdir, "pkg-config");
    assert!(deps.contains(&("lib".to_string(), "dylib=dl".to_string())), "{deps:?}");
    assert!(deps.contains(&("search".to_string(), format!("native={}", libdir.display()))), "{deps:?}");
}
