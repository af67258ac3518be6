// Finding libstridemem for build.rs.
//
// This file is `include!`d by build.rs and by tests/discovery.rs, so that the
// search order and the error message are tested without running cargo. It
// only decides; build.rs prints the cargo directives. Everything it reads
// from the outside (environment, pkg-config's answer, `ldconfig -p`) comes in
// through `Inputs`, so a test can fake any machine; only the file system is
// real (tests use temporary directories).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// The environment variable that names the library's directory.
pub const ENV_DIR: &str = "STRIDEMEM_LIB_DIR";

/// The environment variable that chooses the kind of library (`auto`,
/// `static` or `dylib`); it overrides the crate's features.
pub const ENV_LINK: &str = "STRIDEMEM_LINK";

/// How the library is linked: the shared library or `libstridemem.a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// `libstridemem.so` (`.dylib` on macOS).
    Dylib,
    /// `libstridemem.a`.
    Static,
}

impl Link {
    /// The kind of a library file, from its name.
    pub fn of(lib: &Path) -> Link {
        if lib.extension().is_some_and(|e| e == "a") { Link::Static } else { Link::Dylib }
    }
}

/// What the build asked for: the kind of library to look for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The default: at the first place that has the library, the archive
    /// when it is there (a dependent's program then starts with nothing set:
    /// cargo cannot give a dependent's binary an rpath), else the shared
    /// library.
    Auto,
    /// The shared library only (feature `dylib`, `STRIDEMEM_LINK=dylib`).
    Dylib,
    /// `libstridemem.a` only (feature `static`, `STRIDEMEM_LINK=static`).
    Static,
}

impl Choice {
    /// File names that count as "the library is here", preferred first.
    pub fn file_names(self) -> &'static [&'static str] {
        match self {
            Choice::Auto => &["libstridemem.a", "libstridemem.so", "libstridemem.dylib"],
            Choice::Dylib => &["libstridemem.so", "libstridemem.dylib"],
            Choice::Static => &["libstridemem.a"],
        }
    }

    /// What was looked for, in messages.
    pub fn wanted(self) -> &'static str {
        match self {
            Choice::Auto => "libstridemem.a or libstridemem.so",
            Choice::Dylib => "libstridemem.so",
            Choice::Static => "libstridemem.a",
        }
    }
}

/// The choice from `$STRIDEMEM_LINK` (`None` when unset) and the crate's
/// `static` and `dylib` features. The variable wins when set (to one of
/// `auto`, `static`, `dylib`); both features at once (two dependents asking
/// for different kinds) need it to decide.
pub fn choose(env_link: Option<&str>, feature_static: bool, feature_dylib: bool) -> Result<Choice, String> {
    match env_link.map(str::trim) {
        Some("auto") => return Ok(Choice::Auto),
        Some("static") => return Ok(Choice::Static),
        Some("dylib") => return Ok(Choice::Dylib),
        Some("") | None => {}
        Some(other) => {
            return Err(format!(
                "stridemem: {ENV_LINK}={other:?} is not one of auto, static, dylib \
                 (unset it for the default, auto: the static library when there is one)."
            ));
        }
    }
    match (feature_static, feature_dylib) {
        (true, true) => Err(format!(
            "stridemem: the features `static` and `dylib` are both on (cargo unifies the \
             features every dependent asks for): set {ENV_LINK}=static or {ENV_LINK}=dylib \
             to decide, or drop one of them."
        )),
        (true, false) => Ok(Choice::Static),
        (false, true) => Ok(Choice::Dylib),
        (false, false) => Ok(Choice::Auto),
    }
}

/// Which step of the search found the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `$STRIDEMEM_LIB_DIR`.
    EnvDir,
    /// `pkg-config --libs-only-L stridemem` (or its `libdir` variable).
    PkgConfig,
    /// A directory the system linker searches (LIBRARY_PATH, ld.so's cache,
    /// the standard library directories).
    System,
    /// The repository's CMake build directory (`../../build`, `../../build-*`).
    RepoBuild,
}

/// What pkg-config said about the package `stridemem`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PkgConfig {
    /// No `pkg-config` binary could be run.
    NotInstalled,
    /// pkg-config ran but does not know the package (its message).
    NoPackage(String),
    /// The package's library directories: the `-L` flags, or its `libdir`
    /// variable when pkg-config dropped a system `-L`.
    Dirs(Vec<PathBuf>),
}

/// Everything the search reads besides the file system.
#[derive(Clone, Debug)]
pub struct Inputs {
    /// What to look for.
    pub choice: Choice,
    /// `$STRIDEMEM_LIB_DIR`, made absolute (relative to the crate); `None`
    /// when unset or empty.
    pub env_dir: Option<PathBuf>,
    /// pkg-config's answer.
    pub pkg_config: PkgConfig,
    /// `$PKG_CONFIG_PATH` as given, for the message.
    pub pkg_config_path: Option<String>,
    /// `$LIBRARY_PATH`'s directories (the linker searches them too).
    pub library_path: Vec<PathBuf>,
    /// The output of `ldconfig -p` (`None` when it could not be run).
    pub ldconfig: Option<String>,
    /// The standard library directories, in the linker's order.
    pub standard_dirs: Vec<PathBuf>,
    /// The directories the dynamic loader searches without help (no rpath
    /// needed): the trusted ones; ld.so's cache is checked separately.
    pub loader_dirs: Vec<PathBuf>,
    /// The repository root (`bindings/rust/../..`).
    pub repo: PathBuf,
}

/// The library that was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Its directory (canonical when possible).
    pub dir: PathBuf,
    /// The file itself.
    pub lib: PathBuf,
    /// Its kind.
    pub link: Link,
    /// Which step found it.
    pub source: Source,
    /// Does a program linked against it need an rpath to start without
    /// LD_LIBRARY_PATH? Never for a static link; for a shared one, unless
    /// the dynamic loader finds the library by itself.
    pub needs_rpath: bool,
}

/// Nothing was found: the places looked at, one line each, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotFound {
    /// What was looked for.
    pub choice: Choice,
    /// One line per step: where, and why it did not do.
    pub tried: Vec<String>,
}

impl NotFound {
    /// The message for the user: what was looked for, every place tried,
    /// and what to do.
    pub fn message(&self) -> String {
        let name = self.choice.wanted();
        let mut m = format!("stridemem: {name} not found. Looked, in this order, at:\n");
        for (i, line) in self.tried.iter().enumerate() {
            let _ = writeln!(m, "  {}. {line}", i + 1);
        }
        let _ = write!(
            m,
            "To fix it, do one of:\n\
             \x20 - build the C library in the repository: `cmake -S . -B build && cmake --build build`;\n\
             \x20 - install it (`cmake --install build --prefix /usr/local`, then `ldconfig`), or into \
             any prefix and set PKG_CONFIG_PATH=<prefix>/lib/pkgconfig;\n\
             \x20 - set {ENV_DIR} to the directory that holds {name}."
        );
        m
    }
}

/// The build.rs lines a dependent adds to put the rpath this crate
/// publishes (`DEP_STRIDEMEM_RPATH`) into its program.
pub const DEPENDENT_BUILD_RS: &str = "fn main() {
    if let Ok(dir) = std::env::var(\"DEP_STRIDEMEM_RPATH\") {
        println!(\"cargo:rustc-link-arg=-Wl,-rpath,{dir}\");
    }
}";

/// Is `found` a shared library that a dependent's program would not find at
/// run time, with nobody having chosen the shared library? Then a dependent
/// must not build (lib.rs stops it; the crate's own targets get an rpath).
pub fn dylib_unreachable(choice: Choice, found: &Found) -> bool {
    choice == Choice::Auto && found.link == Link::Dylib && found.needs_rpath
}

/// What a dependent is told when `dylib_unreachable`: why its program would
/// not start, and the ways out.
pub fn dylib_unreachable_message(found: &Found) -> String {
    let mut m = format!(
        "stridemem: found only the shared library {lib}, and no libstridemem.a beside it. \
         The dynamic loader does not search {dir}, and cargo gives a dependent's program no \
         rpath, so the program would build and then fail to start (cannot open shared \
         object file). Do one of:\n",
        lib = found.lib.display(),
        dir = found.dir.display()
    );
    let _ = writeln!(
        m,
        "  - build the static library there too (in the repository: `cmake --build build \
         --target stridemem_static`; `cmake --install` puts it beside the shared one) and \
         build again: it is then linked by default and the program needs nothing at run time;"
    );
    let _ = writeln!(
        m,
        "  - choose the shared library (`features = [\"dylib\"]` on the stridemem \
         dependency, or {ENV_LINK}=dylib) and add this build.rs to the crate that builds \
         the program:"
    );
    for line in DEPENDENT_BUILD_RS.lines() {
        let _ = writeln!(m, "        {line}");
    }
    let _ = write!(
        m,
        "  - or install the library where the loader looks (a standard prefix, or the \
         prefix's lib directory in /etc/ld.so.conf.d/, then `ldconfig`)."
    );
    m
}

/// The first of `choice`'s file names present in `dir`.
pub fn library_in(dir: &Path, choice: Choice) -> Option<PathBuf> {
    choice.file_names().iter().map(|name| dir.join(name)).find(|path| path.is_file())
}

fn modified(path: &Path) -> SystemTime {
    fs::metadata(path).and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH)
}

/// A sanitizer build (`STRIDEMEM_SANITIZE=address|thread` in its CMake
/// cache) cannot be loaded by a program without the sanitizer runtime.
pub fn is_sanitizer_build(dir: &Path) -> bool {
    let Ok(cache) = fs::read_to_string(dir.join("CMakeCache.txt")) else {
        return false;
    };
    cache.lines().any(|line| {
        line.strip_prefix("STRIDEMEM_SANITIZE:")
            .and_then(|rest| rest.split_once('='))
            .is_some_and(|(_, value)| !value.trim().is_empty())
    })
}

/// `repo/build-*` directories holding the library, newest library first;
/// the second list is the sanitizer builds that were skipped.
pub fn fallback_build_dirs(repo: &Path, choice: Choice) -> (Vec<(PathBuf, PathBuf)>, Vec<PathBuf>) {
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut skipped = Vec::new();
    let Ok(entries) = fs::read_dir(repo) else {
        return (found, skipped);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with("build-") {
            continue;
        }
        let dir = entry.path();
        let Some(lib) = library_in(&dir, choice) else { continue };
        if is_sanitizer_build(&dir) {
            skipped.push(dir);
            continue;
        }
        found.push((dir, lib));
    }
    found.sort_by_key(|(_, lib)| std::cmp::Reverse(modified(lib)));
    skipped.sort();
    (found, skipped)
}

/// The directories of `libstridemem.so*` entries in `ldconfig -p` output
/// (lines like `libstridemem.so.0.4 (libc6,x86-64) => /usr/local/lib/libstridemem.so.0.4`).
pub fn ldconfig_dirs(ldconfig: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for line in ldconfig.lines() {
        let line = line.trim();
        if !line.starts_with("libstridemem.so") {
            continue;
        }
        let Some((_, path)) = line.rsplit_once("=> ") else { continue };
        if let Some(dir) = Path::new(path.trim()).parent() {
            if !dirs.iter().any(|d| d == dir) {
                dirs.push(dir.to_path_buf());
            }
        }
    }
    dirs
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// Does a program need an rpath to load the `link` library from `dir`? Not
/// a static one; not when `dir` is one the loader always searches, nor when
/// ld.so's cache lists the library there (an install followed by `ldconfig`).
pub fn needs_rpath(dir: &Path, link: Link, inputs: &Inputs) -> bool {
    if link == Link::Static {
        return false;
    }
    if inputs.loader_dirs.iter().any(|d| same_dir(d, dir)) {
        return false;
    }
    let cached = inputs.ldconfig.as_deref().map(ldconfig_dirs).unwrap_or_default();
    !cached.iter().any(|d| same_dir(d, dir))
}

fn found(dir: PathBuf, lib: PathBuf, source: Source, inputs: &Inputs) -> Found {
    let dir = dir.canonicalize().unwrap_or(dir);
    let link = Link::of(&lib);
    let lib = lib.canonicalize().unwrap_or(lib);
    let needs_rpath = needs_rpath(&dir, link, inputs);
    Found { dir, lib, link, source, needs_rpath }
}

fn show(path: &Path) -> String {
    path.display().to_string()
}

fn show_list(dirs: &[PathBuf]) -> String {
    dirs.iter().map(|d| show(d)).collect::<Vec<_>>().join(", ")
}

/// The search: `STRIDEMEM_LIB_DIR` (when set, the only place), pkg-config,
/// the system linker path, the repository's build directories.
pub fn discover(inputs: &Inputs) -> Result<Found, NotFound> {
    let choice = inputs.choice;
    let name = choice.wanted();
    let mut tried = Vec::new();

    // 1. An explicit directory is a decision: no fallback that could link
    //    some other copy of the library.
    if let Some(dir) = &inputs.env_dir {
        if let Some(lib) = library_in(dir, choice) {
            return Ok(found(dir.clone(), lib, Source::EnvDir, inputs));
        }
        tried.push(format!(
            "{ENV_DIR}={}: no {name} there (no other place is searched while {ENV_DIR} is set)",
            show(dir)
        ));
        return Err(NotFound { choice, tried });
    }
    tried.push(format!("{ENV_DIR}: not set"));

    // 2. pkg-config: an installed prefix that is not a system one.
    let pc_path = match &inputs.pkg_config_path {
        Some(p) if !p.is_empty() => format!("PKG_CONFIG_PATH={p}"),
        _ => "PKG_CONFIG_PATH not set".to_string(),
    };
    match &inputs.pkg_config {
        PkgConfig::NotInstalled => tried.push("pkg-config: not installed".to_string()),
        PkgConfig::NoPackage(why) => {
            let why = why.lines().next().unwrap_or("").trim();
            let why = if why.is_empty() { "package stridemem not found" } else { why };
            tried.push(format!("pkg-config ({pc_path}): {why}"));
        }
        PkgConfig::Dirs(dirs) => {
            for dir in dirs {
                if let Some(lib) = library_in(dir, choice) {
                    return Ok(found(dir.clone(), lib, Source::PkgConfig, inputs));
                }
            }
            tried.push(format!(
                "pkg-config ({pc_path}): package stridemem found, but no {name} in its directories [{}]",
                show_list(dirs)
            ));
        }
    }

    // 3. Where the system linker would look: LIBRARY_PATH, ld.so's cache,
    //    the standard directories (/usr/local/lib, multiarch, /usr/lib, ...).
    let mut system: Vec<PathBuf> = Vec::new();
    let cached = inputs.ldconfig.as_deref().map(ldconfig_dirs).unwrap_or_default();
    for dir in inputs.library_path.iter().chain(&cached).chain(&inputs.standard_dirs) {
        if !system.iter().any(|d| d == dir) {
            system.push(dir.clone());
        }
    }
    for dir in &system {
        if let Some(lib) = library_in(dir, choice) {
            return Ok(found(dir.clone(), lib, Source::System, inputs));
        }
    }
    let ld = if inputs.ldconfig.is_some() { "no libstridemem in ld.so's cache" } else { "ldconfig -p not available" };
    tried.push(format!("the system linker path ({ld}): [{}]", show_list(&system)));

    // 4. The repository's own CMake build directories (a checkout).
    let default = inputs.repo.join("build");
    if let Some(lib) = library_in(&default, choice) {
        return Ok(found(default, lib, Source::RepoBuild, inputs));
    }
    let (builds, skipped) = fallback_build_dirs(&inputs.repo, choice);
    if let Some((dir, lib)) = builds.into_iter().next() {
        return Ok(found(dir, lib, Source::RepoBuild, inputs));
    }
    let mut line = format!(
        "the repository's build directories: {} and {}",
        show(&default),
        show(&inputs.repo.join("build-*"))
    );
    if !skipped.is_empty() {
        let _ = write!(line, " (skipped sanitizer builds, which need their runtime preloaded: {})", show_list(&skipped));
    }
    tried.push(line);
    Err(NotFound { choice, tried })
}

/// The standard library directories of a Linux-like system, in the order
/// GCC's linker searches them, for a target `arch`/`os`/`env` (cargo's
/// `CARGO_CFG_TARGET_*`).
pub fn standard_dirs(arch: &str, os: &str, env: &str) -> Vec<PathBuf> {
    let triple = multiarch(arch, os, env);
    let mut dirs = Vec::new();
    let mut push = |d: String| dirs.push(PathBuf::from(d));
    if let Some(t) = &triple {
        push(format!("/usr/local/lib/{t}"));
    }
    push("/usr/local/lib".into());
    push("/usr/local/lib64".into());
    if let Some(t) = &triple {
        push(format!("/lib/{t}"));
        push(format!("/usr/lib/{t}"));
    }
    push("/lib64".into());
    push("/usr/lib64".into());
    push("/lib".into());
    push("/usr/lib".into());
    dirs
}

/// The directories glibc's loader searches even without its cache (so a
/// library there needs no rpath).
pub fn trusted_loader_dirs(arch: &str, os: &str, env: &str) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(t) = multiarch(arch, os, env) {
        dirs.push(PathBuf::from(format!("/lib/{t}")));
        dirs.push(PathBuf::from(format!("/usr/lib/{t}")));
    }
    for d in ["/lib64", "/usr/lib64", "/lib", "/usr/lib"] {
        dirs.push(PathBuf::from(d));
    }
    dirs
}

/// Debian's multiarch name for the target, e.g. `x86_64-linux-gnu`.
pub fn multiarch(arch: &str, os: &str, env: &str) -> Option<String> {
    if os != "linux" {
        return None;
    }
    let arch = match arch {
        "x86" => "i386",
        "powerpc64" => "powerpc64le",
        a => a,
    };
    let env = if env.is_empty() { "gnu" } else { env };
    Some(format!("{arch}-linux-{env}"))
}

/// Parses pkg-config's `--libs-only-L` output into directories.
pub fn parse_libs_only_l(output: &str) -> Vec<PathBuf> {
    output.split_whitespace().filter_map(|flag| flag.strip_prefix("-L")).map(PathBuf::from).collect()
}

/// Runs `pkg_config` (the binary; cargo users set `$PKG_CONFIG` to choose
/// another) about the package `stridemem`. `extra_path` goes in front of
/// `$PKG_CONFIG_PATH`.
pub fn query_pkg_config(pkg_config: &str, extra_path: &[PathBuf], args: &[&str]) -> Result<String, PkgConfig> {
    let mut cmd = Command::new(pkg_config);
    cmd.args(args).arg("stridemem");
    if !extra_path.is_empty() {
        let mut paths: Vec<PathBuf> = extra_path.to_vec();
        if let Some(old) = std::env::var_os("PKG_CONFIG_PATH") {
            paths.extend(std::env::split_paths(&old));
        }
        if let Ok(joined) = std::env::join_paths(paths) {
            cmd.env("PKG_CONFIG_PATH", joined);
        }
    }
    match cmd.output() {
        Err(_) => Err(PkgConfig::NotInstalled),
        Ok(out) if !out.status.success() => Err(PkgConfig::NoPackage(String::from_utf8_lossy(&out.stderr).into_owned())),
        Ok(out) => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
    }
}

/// What pkg-config says about where the library is.
pub fn pkg_config_dirs(pkg_config: &str) -> PkgConfig {
    let out = match query_pkg_config(pkg_config, &[], &["--libs-only-L"]) {
        Ok(out) => out,
        Err(e) => return e,
    };
    let mut dirs = parse_libs_only_l(&out);
    if dirs.is_empty() {
        // pkg-config drops -L flags for system directories; libdir remains.
        if let Ok(libdir) = query_pkg_config(pkg_config, &[], &["--variable=libdir"]) {
            let libdir = libdir.trim();
            if !libdir.is_empty() {
                dirs.push(PathBuf::from(libdir));
            }
        }
    }
    PkgConfig::Dirs(dirs)
}

/// The extra link directives a static link of libstridemem.a needs (the C++
/// runtime; with the CUDA backend, the static CUDA runtime, libdl, librt and
/// pthreads), as cargo `rustc-link-*` values: `("search", dir)` or
/// `("lib", "kind=name")`.
///
/// They are the `Libs.private` of `pkg-config --static --libs stridemem`,
/// from the `.pc` file beside the archive (`dir/pkgconfig` when installed,
/// `dir` itself in a build directory) or on PKG_CONFIG_PATH. Without
/// pkg-config only the C++ runtime is added: enough for a CPU-only build.
pub fn static_link_deps(dir: &Path, pkg_config: &str) -> Vec<(String, String)> {
    let extra = [dir.join("pkgconfig"), dir.to_path_buf()];
    let mut out = query_pkg_config(pkg_config, &extra, &["--static", "--libs"])
        .map(|flags| static_flags(&flags))
        .unwrap_or_default();
    let stdcxx = ("lib".to_string(), "dylib=stdc++".to_string());
    if !out.contains(&stdcxx) {
        out.push(stdcxx);
    }
    out
}

/// pkg-config's `--static --libs` flags as cargo directives, without
/// stridemem itself (linked by build.rs) and its own `-L`.
pub fn static_flags(flags: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for flag in flags.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            // A build tree's .pc points at a prefix not installed yet.
            if Path::new(dir).is_dir() {
                out.push(("search".to_string(), format!("native={dir}")));
            }
        } else if let Some(name) = flag.strip_prefix("-l") {
            if name == "stridemem" {
                continue;
            }
            // The static CUDA runtime is an archive; everything else is a
            // system library linked the usual way.
            let kind = if name.ends_with("_static") { "static" } else { "dylib" };
            out.push(("lib".to_string(), format!("{kind}={name}")));
        } else if flag == "-pthread" {
            out.push(("lib".to_string(), "dylib=pthread".to_string()));
        } else if let Some((dir, name, kind)) = library_file(flag) {
            // CMake may write a dependency as the archive's full path.
            out.push(("search".to_string(), format!("native={dir}")));
            out.push(("lib".to_string(), format!("{kind}={name}")));
        }
    }
    out
}

/// `/dir/libNAME.a` (or `.so`) as `(dir, NAME, kind)`.
fn library_file(flag: &str) -> Option<(String, String, &'static str)> {
    let path = Path::new(flag);
    let file = path.file_name()?.to_str()?;
    let stem = file.strip_prefix("lib")?;
    let (name, kind) = if let Some(n) = stem.strip_suffix(".a") {
        (n, "static")
    } else {
        (stem.strip_suffix(".so")?, "dylib")
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    Some((dir.display().to_string(), name.to_string(), kind))
}
