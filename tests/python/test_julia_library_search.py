#!/usr/bin/env python3
"""The Julia package's library search (bindings/julia/StrideMem/src/StrideMem.jl,
`_find_library`), checked without a Julia runtime: its order is read from the
source and compared with the Python loader's and the Rust build script's, and
the pkg-config command it runs is taken from the source and run against a
private prefix laid out as `cmake --install --prefix` lays it out (the real
.pc template), where it must name the library's folder.

Run as a script: exit 0 when every case passes; prints `N passed, M failed`.
Needs pkg-config (scripts/setup-deps.sh).
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import Cases, expect  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
# The Python loader module on its own (stdlib only): importing the package
# would load a library, which this test does not need.
_spec = importlib.util.spec_from_file_location(
    "stridemem_loader", os.path.join(REPO, "bindings", "python", "stridemem", "_loader.py"))
_loader = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_loader)
JULIA = os.path.join(REPO, "bindings", "julia", "StrideMem", "src", "StrideMem.jl")
RUST = os.path.join(REPO, "bindings", "rust", "build_support", "discover.rs")
PC_TEMPLATE = os.path.join(REPO, "cmake", "stridemem.pc.in")

cases = Cases()
case = cases.case


def julia_function(name):
    """The text of `function name(...) ... end` (from its first line to the
    first `end` at the start of a line)."""
    src = open(JULIA, encoding="utf-8").read()
    m = re.search(r"^function %s\(.*?^end$" % re.escape(name), src, re.S | re.M)
    expect(m is not None, "no `function %s` in %s" % (name, JULIA))
    return m.group(0)


def julia_pkg_config_args():
    """The strings of `const _PKG_CONFIG_ARGS = [...]`."""
    src = open(JULIA, encoding="utf-8").read()
    m = re.search(r"^const _PKG_CONFIG_ARGS = \[([^\]]*)\]$", src, re.M)
    expect(m is not None, "no `const _PKG_CONFIG_ARGS = [...]` in %s" % JULIA)
    return re.findall(r'"([^"]*)"', m.group(1))


def positions(text, needles, what):
    """The offsets of needles in text, each expected exactly once."""
    at = []
    for n in needles:
        expect(text.count(n) == 1, "%s: %r appears %d times, expected once"
               % (what, n, text.count(n)), text)
        at.append(text.index(n))
    return at


@case
def julia_order_is_explicit_pkg_config_system_repository():
    body = julia_function("_find_library")
    steps = ['get(env, "STRIDEMEM_LIB"', "pkg_config_library()", "system_library()",
             "isfile(repository_library)"]
    at = positions(body, steps, "_find_library")
    expect(at == sorted(at), "_find_library does not try, in this order: %s" % steps, body)
    # The error lists the places in the order they are tried.
    listed = ["1. ENV[", "2. pkg-config", "3. the system library search path",
              "4. the repository's build"]
    at = positions(body, listed, "_find_library's error")
    expect(at == sorted(at), "the error does not list the places in order", body)


@case
def python_and_rust_try_pkg_config_at_the_same_step():
    # Python: after STRIDEMEM_LIB (load()) and the wheel's bundled copy (which
    # Julia has no counterpart of), pkg-config, then the linker's search path,
    # then the source tree.
    with tempfile.TemporaryDirectory() as repo:
        got = [path for _, path, _ in _loader.candidates(
            (0, 4), os.path.join(repo, "pkg"), environ={},
            pkg_config=lambda: ("/pc/lib", None),
            search=lambda name, environ: ["/sys/" + name],
            find_library=lambda name: None, repo=repo)]
    order = [next(i for i, p in enumerate(got) if p.startswith(prefix))
             for prefix in ("/pc/lib/", "/sys/", os.path.join(repo, "build"))]
    expect(order == sorted(order), "the Python loader's order changed: %s" % got)
    # Rust: the numbered steps of discover().
    src = open(RUST, encoding="utf-8").read()
    at = positions(src, ["// 1. An explicit directory", "// 2. pkg-config",
                         "// 3. Where the system linker would look",
                         "// 4. The repository's own CMake build"], "discover.rs")
    expect(at == sorted(at), "discover.rs's steps are out of order")


@case
def julia_asks_pkg_config_what_python_asks():
    julia = julia_pkg_config_args()
    expect(julia == ["--variable=libdir", "stridemem"], "Julia's pkg-config arguments: %s" % julia)
    seen = []

    def run_tool(argv):
        seen.append(argv)
        return 0, "/somewhere/lib\n"
    saved = _loader.shutil.which, _loader._run_tool
    _loader.shutil.which, _loader._run_tool = (lambda name: "/usr/bin/" + name), run_tool
    try:
        libdir, why = _loader.pkg_config_libdir()
    finally:
        _loader.shutil.which, _loader._run_tool = saved
    expect((libdir, why) == ("/somewhere/lib", None), "Python's pkg_config_libdir: %r" % ((libdir, why),))
    expect([a[1:] for a in seen] == [julia], "Python runs %s, Julia %s" % (seen, julia))


@case
def julia_pkg_config_step_finds_a_private_prefix():
    pkg_config = shutil.which("pkg-config")
    expect(pkg_config is not None, "pkg-config is not installed (scripts/setup-deps.sh installs it)")
    body = julia_function("_pkg_config_library")
    # The file it looks for in libdir: libstridemem.<dlext>, "so" on Linux.
    expect('joinpath(libdir, "libstridemem." * Libdl.dlext)' in body,
           "_pkg_config_library no longer looks for libstridemem.<dlext> in libdir", body)
    expect("`$pkg_config $_PKG_CONFIG_ARGS`" in body,
           "_pkg_config_library no longer runs pkg-config with _PKG_CONFIG_ARGS", body)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "prefix")
        pcdir = os.path.join(prefix, "lib", "pkgconfig")
        os.makedirs(pcdir)
        pc = open(PC_TEMPLATE, encoding="utf-8").read()
        for key, value in (("SM_PC_TO_PREFIX", "../.."), ("CMAKE_INSTALL_LIBDIR", "lib"),
                           ("CMAKE_INSTALL_INCLUDEDIR", "include"), ("PROJECT_VERSION", "0.0.0"),
                           ("SM_PC_LIBS_PRIVATE", "-lstdc++")):
            pc = pc.replace("@%s@" % key, value)
        expect("@" not in pc, "cmake/stridemem.pc.in has a variable this test does not fill", pc)
        open(os.path.join(pcdir, "stridemem.pc"), "w").write(pc)
        lib = os.path.join(prefix, "lib", "libstridemem.so")
        open(lib, "w").close()
        env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
        r = subprocess.run([pkg_config] + julia_pkg_config_args(), env=env,
                           capture_output=True, text=True, timeout=30)
        expect(r.returncode == 0, "pkg-config %s failed" % julia_pkg_config_args(), r.stderr)
        libdir = r.stdout.strip()
        found = os.path.join(libdir, "libstridemem.so")
        expect(os.path.isfile(found) and os.path.samefile(found, lib),
               "pkg-config named %r, not the prefix's lib folder %s" % (libdir, os.path.dirname(lib)))
        # Without the prefix on PKG_CONFIG_PATH the package is unknown (or
        # some other install's): the step does not name this prefix.
        env.pop("PKG_CONFIG_PATH")
        r = subprocess.run([pkg_config] + julia_pkg_config_args(), env=env,
                           capture_output=True, text=True, timeout=30)
        expect(tmp not in r.stdout, "pkg-config found the private prefix without PKG_CONFIG_PATH")


if __name__ == "__main__":
    sys.exit(cases.run())
