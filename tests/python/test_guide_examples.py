#!/usr/bin/python3
"""Every example of docs/GUIDE.md runs, and asserts what the guide claims.

The guide's fenced blocks are tagged ```c guide:NAME, ```python guide:NAME or
```rust guide:NAME. The blocks of one NAME and language, in the order they
appear, are one program:

  C       the blocks are the body of main() after the prologue below (the
          headers, CHECK, assert with NDEBUG off); after them the program
          checks that no handle is left (sm_debug_live_handles). Compiled
          with $CC (default cc) against the library ctest names in
          STRIDEMEM_LIB, with an rpath to its directory.
  Python  the blocks as they are, run with this interpreter and the package
          of bindings/python, in a temporary directory.
  Rust    the blocks are the body of
          fn main() -> Result<(), Box<dyn std::error::Error>>, one binary of
          a cargo project that depends on bindings/rust by path, built
          offline with STRIDEMEM_LIB_DIR = the library's directory. The
          project and its target dir live in that directory
          (guide-examples/), so later runs rebuild only what changed.
          Without cargo, and in a sanitizer run (the sanitizer's runtime in
          LD_PRELOAD, as scripts/reliability.sh runs the Python tests of its
          ASan build), the Rust programs are skipped (reported as such).

Line numbers in a failure (compiler errors, assert messages, tracebacks,
panics) are GUIDE.md's. Every fenced block must be tagged (an untagged block
would go unrun), and every NAME must have all three languages. Each runner
also runs a program whose assertion is false and must see it fail, so a
runner that ignored failures could not pass.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _util import Results  # noqa: E402

R = Results("test_guide_examples")
GUIDE = os.path.join(REPO, "docs", "GUIDE.md")
LANGS = ("c", "python", "rust")
TIMEOUT = 120           # one program's run
BUILD_TIMEOUT = 480     # the first cargo build compiles the crate
# scripts/reliability.sh runs the Python tests of its ASan build with the
# sanitizer runtime in LD_PRELOAD: the programs run under it, the compiler
# does not.
PRELOAD = os.environ.get("LD_PRELOAD", "")
SANITIZER_RUN = any(s in PRELOAD for s in ("libasan", "libtsan", "libubsan", "libmsan"))
TOOL_ENV = dict((k, v) for k, v in os.environ.items() if k != "LD_PRELOAD")

FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)
TAG = re.compile(r"^(c|python|rust)[ \t]+guide:([a-z0-9_]+)[ \t]*$")


def parse(text):
    """(programs, problems): programs maps NAME to {lang: [(first line, code)]},
    in the guide's order; problems lists untagged or badly tagged blocks."""
    programs, problems = {}, []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        info = m.group(1).strip()
        t = TAG.match(info)
        if not t:
            problems.append("GUIDE.md:%d: fenced block tagged %r, want '<c|python|rust> "
                            "guide:NAME' (every block runs)" % (line, info))
            continue
        lang, name = t.groups()
        programs.setdefault(name, {}).setdefault(lang, []).append((line + 1, m.group(2)))
    return programs, problems


def aligned(blocks, prologue, indent=""):
    """The prologue, then each block at its GUIDE.md line (blank lines
    between), so that line numbers in messages are the guide's. A prologue
    longer than the space before the first block is kept whole (numbers
    then shift)."""
    lines = list(prologue)
    for first, code in blocks:
        while len(lines) < first - 1:
            lines.append("")
        lines.extend((indent + l) if l else l for l in code.splitlines())
    return lines


C_PROLOGUE = """\
#undef NDEBUG
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stridemem.h"
#define CHECK(call) do { sm_status st_ = (call); if (st_ != SM_OK) { \\
    fprintf(stderr, "%s:%d: %s: %s\\n", __FILE__, __LINE__, #call, sm_last_error()); \\
    exit(1); } } while (0)
int main(void)
{
"""

C_EPILOGUE = """\
    {
        int64_t tensors = -1, storages = -1, stacks = -1;
        CHECK(sm_debug_live_handles(&tensors, &storages, &stacks));
        if (tensors || storages || stacks) {
            fprintf(stderr, "handles left unreleased: %lld tensors, %lld storages, "
                    "%lld stacks\\n", (long long)tensors, (long long)storages, (long long)stacks);
            return 1;
        }
    }
    return 0;
}
"""

RUST_PROLOGUE = ["#![allow(unused_imports, unused_variables, unused_mut)]",
                 "fn main() -> Result<(), Box<dyn std::error::Error>> {"]
RUST_EPILOGUE = ["Ok(())", "}"]


def c_source(blocks):
    src = C_PROLOGUE
    for first, code in blocks:
        src += '#line %d "docs/GUIDE.md"\n%s' % (first, code)
    return src + C_EPILOGUE


def run(cmd, what, cwd, env=None, timeout=TIMEOUT):
    """(ok, output) of one command; a timeout is a failure."""
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "%s: no result within %d s" % (what, timeout)
    except OSError as e:
        return False, "%s: %s" % (what, e)
    return p.returncode == 0, p.stdout.decode("utf-8", "replace")


def check_run(ok, out, what, want_ok=True):
    if want_ok:
        R.check(ok, "%s failed:\n%s" % (what, out.rstrip()))
    else:
        R.check(not ok, "%s: a false assertion passed, the runner would miss a wrong "
                "claim:\n%s" % (what, out.rstrip()))


class CRunner(object):
    def __init__(self, lib, work):
        self.lib, self.work = lib, work
        self.cc = os.environ.get("CC", "cc")

    def run(self, name, blocks, want_ok=True):
        src = os.path.join(self.work, "guide_%s.c" % name)
        exe = os.path.join(self.work, "guide_%s" % name)
        with open(src, "w") as f:
            f.write(c_source(blocks))
        ok, out = run([self.cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                       "-I", os.path.join(REPO, "include"), src, "-o", exe, self.lib,
                       "-Wl,-rpath," + os.path.dirname(self.lib), "-lm"],
                      "C %s: compile" % name, self.work, TOOL_ENV)
        if ok:
            ok, out = run([exe], "C %s" % name, self.work)
        check_run(ok, out, "the C program guide:%s" % name, want_ok)


class PythonRunner(object):
    def __init__(self, work):
        self.work = work
        self.env = dict(os.environ)
        path = os.path.join(REPO, "bindings", "python")
        self.env["PYTHONPATH"] = os.pathsep.join(
            [path] + [p for p in [os.environ.get("PYTHONPATH")] if p])

    def run(self, name, blocks, want_ok=True):
        src = os.path.join(self.work, "guide_%s.py" % name)
        with open(src, "w") as f:
            f.write("\n".join(aligned(blocks, [])) + "\n")
        ok, out = run([sys.executable, src], "Python %s" % name, self.work, self.env)
        check_run(ok, out, "the Python program guide:%s" % name, want_ok)


class RustRunner(object):
    """One cargo project, one binary per program, built in one go."""

    def __init__(self, lib_dir):
        self.cargo = shutil.which("cargo")
        self.lib_dir = lib_dir
        self.project = os.path.join(lib_dir, "guide-examples")
        self.env = dict(TOOL_ENV)
        self.env.update(STRIDEMEM_LIB_DIR=lib_dir,
                        CARGO_TARGET_DIR=os.path.join(self.project, "target"))
        # Run as a newcomer's program runs: nothing set at run time (the
        # crate links libstridemem.a by default, and the project has no
        # build.rs), so a guide whose programs would not start fails here.
        self.run_env = dict(os.environ)
        self.run_env.pop("LD_LIBRARY_PATH", None)

    def write(self, programs):
        """programs: {binary name: blocks}. Rewrites only changed files, so
        cargo rebuilds only what changed."""
        bins = os.path.join(self.project, "src", "bin")
        os.makedirs(bins, exist_ok=True)
        crate = os.path.join(REPO, "bindings", "rust").replace("\\", "/")
        files = {
            "Cargo.toml": '[package]\nname = "guide_examples"\nversion = "0.0.0"\n'
                          'edition = "2024"\npublish = false\n\n[dependencies]\n'
                          'stridemem = { path = "%s" }\n\n[workspace]\n' % crate,
        }
        for name, blocks in programs.items():
            files[os.path.join("src", "bin", name + ".rs")] = \
                "\n".join(aligned(blocks, RUST_PROLOGUE, "    ") + RUST_EPILOGUE) + "\n"
        stale = os.path.join(self.project, "build.rs")  # an older runner wrote one
        if os.path.exists(stale):
            os.remove(stale)
        for old in os.listdir(bins):
            if os.path.join("src", "bin", old) not in files:
                os.remove(os.path.join(bins, old))
        for rel, text in files.items():
            path = os.path.join(self.project, rel)
            if not os.path.exists(path) or open(path).read() != text:
                with open(path, "w") as f:
                    f.write(text)

    def build(self):
        return run([self.cargo, "build", "--offline", "--quiet", "--bins",
                    "-j" + os.environ.get("CARGO_JOBS", "2")],
                   "cargo build", self.project, self.env, BUILD_TIMEOUT)

    def run(self, name, want_ok=True):
        exe = os.path.join(self.project, "target", "debug", name)
        ok, out = run([exe], "Rust %s" % name, self.project, self.run_env)
        check_run(ok, out, "the Rust program guide:%s" % name, want_ok)


def check_links(text):
    """The guide's relative links name files of the tree."""
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        R.check(os.path.exists(os.path.normpath(os.path.join(REPO, "docs", target))),
                "GUIDE.md links to %s, which does not exist" % target)


def check_readmes():
    """README.md and the binding READMEs link the guide; the binding READMEs'
    "now X.Y.Z" version claims are the repository's VERSION."""
    version = open(os.path.join(REPO, "VERSION")).read().strip()
    for rel, link in (("README.md", "docs/GUIDE.md"),
                      ("bindings/python/README.md", "../../docs/GUIDE.md"),
                      ("bindings/rust/README.md", "../../docs/GUIDE.md"),
                      ("bindings/julia/StrideMem/README.md", "../../../docs/GUIDE.md")):
        text = open(os.path.join(REPO, rel), encoding="utf-8").read()
        R.check("](%s)" % link in text, "%s does not link the guide (%s)" % (rel, link))
        for claim in re.findall(r"\bnow (\d+\.\d+\.\d+)", text):
            R.equal(claim, version, "%s says 'now %s'" % (rel, claim))


def main():
    text = open(GUIDE, encoding="utf-8").read()
    programs, problems = parse(text)
    for p in problems:
        R.fail(p)
    R.check(len(programs) >= 6, "GUIDE.md has %d tagged programs, want the six topics"
            % len(programs))
    for name, langs in programs.items():
        missing = [l for l in LANGS if l not in langs]
        R.check(not missing, "guide:%s has no %s example" % (name, ", ".join(missing)))
    check_links(text)
    check_readmes()

    lib = os.environ.get("STRIDEMEM_LIB")
    if not lib or not os.path.isfile(lib):
        R.fail("STRIDEMEM_LIB (the built library; ctest sets it) is %r" % lib)
        return
    lib = os.path.abspath(lib)
    lib_dir = os.path.dirname(lib)
    canary = {"c": [(1, "assert(1 + 1 == 3);\n")],
              "python": [(1, "assert 1 + 1 == 3\n")],
              "rust": [(1, "assert_eq!(1 + 1, 3);\n")]}

    work = tempfile.mkdtemp(prefix="stridemem-guide-")
    try:
        c, py = CRunner(lib, work), PythonRunner(work)
        for name, langs in programs.items():
            if "c" in langs:
                c.run(name, langs["c"])
            if "python" in langs:
                py.run(name, langs["python"])
        c.run("false_claim", canary["c"], want_ok=False)
        py.run("false_claim", canary["python"], want_ok=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rust = RustRunner(lib_dir)
    names = [n for n, langs in programs.items() if "rust" in langs]
    why = ("no cargo on PATH" if not rust.cargo else
           "a sanitizer run (its runtime in LD_PRELOAD): the main suite runs them"
           if SANITIZER_RUN else None)
    if why:
        for n in names:
            R.skip("the Rust program guide:%s" % n, why)
        return
    rust.write(dict([(n, programs[n]["rust"]) for n in names] +
                    [("false_claim", canary["rust"])]))
    ok, out = rust.build()
    if not R.check(ok, "cargo build of the guide's Rust programs (%s) failed:\n%s"
                   % (rust.project, out.rstrip())):
        return
    for n in names:
        rust.run(n)
    rust.run("false_claim", want_ok=False)


if __name__ == "__main__":
    main()
    sys.exit(R.finish())
