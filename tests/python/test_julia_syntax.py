#!/usr/bin/env python3
"""Tests tools/check_julia_syntax.sh, the tree-sitter-julia parse of the Julia
package (no Julia runtime is available, so this grammar check is what keeps
the files parseable).

The real tree must parse with no problem; copies of a package file with one
planted syntax error each must fail, naming file:line:col and showing the
source line. Needs node and the locked packages of tools/julia-syntax: when
they are not installed it installs them first (tools/julia-syntax/install.sh,
npm ci, as scripts/setup-deps.sh does) and says so; without node, or without
npm to install them, it exits 77 (skipped) with the command to run. Run as a
script: exit 0 when every case passes; prints `N passed, M failed`.
"""

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
CHECKER = os.path.join(REPO, "tools", "check_julia_syntax.sh")
SYNTAX_DIR = os.path.join(REPO, "tools", "julia-syntax")
INSTALL = os.path.join(SYNTAX_DIR, "install.sh")
NPM_CI = "npm ci --ignore-scripts --no-audit --no-fund --loglevel=error"
JULIA_TREE = os.path.join(REPO, "bindings", "julia")
VIEWS = os.path.join(JULIA_TREE, "StrideMem", "src", "views.jl")

cases = Cases()
case = cases.case


def run_checker(*paths, cwd=REPO):
    r = subprocess.run(["bash", CHECKER] + list(paths), capture_output=True, text=True,
                       cwd=cwd, timeout=120)
    return r.returncode, r.stdout + r.stderr


def planted(tmp, edit, name="views.jl"):
    """A copy of src/views.jl changed by edit(lines) -> lines; returns its path."""
    lines = open(VIEWS, encoding="utf-8").read().split("\n")
    path = os.path.join(tmp, name)
    open(path, "w", encoding="utf-8").write("\n".join(edit(lines)))
    return path


def line_of(lines, prefix):
    """0-based index of the one line starting with prefix (a stale test fails
    loudly instead of planting nowhere)."""
    hits = [i for i, l in enumerate(lines) if l.startswith(prefix)]
    expect(len(hits) == 1, "planting: %r starts %d lines of views.jl, expected 1"
           % (prefix, len(hits)))
    return hits[0]


@case
def real_tree_parses():
    rc, out = run_checker()
    expect(rc == 0, "the package's own files do not parse (exit %d)" % rc, out)
    n = sum(1 for d, _, fs in os.walk(JULIA_TREE) for f in fs if f.endswith(".jl"))
    expect(n > 20, "expected the whole package under %s, found %d .jl files" % (JULIA_TREE, n))
    expect(re.search(r"parsed %d \.jl file\(s\) with tree-sitter-julia [0-9.]+, "
                     r"web-tree-sitter [0-9.]+: 0 problem\(s\)" % n, out) is not None,
           "expected every one of the %d .jl files parsed with the pinned versions" % n, out)


@case
def stray_parenthesis_is_located():
    with tempfile.TemporaryDirectory() as tmp:
        at = []

        def edit(lines):
            i = line_of(lines, "function narrow(")
            at.append(i + 1)  # the 1-based line of the planted text
            return lines[:i] + ["x = 1)"] + lines[i:]
        path = planted(tmp, edit)
        rc, out = run_checker(path)
        expect(rc == 1, "a stray `)` passed (exit %d)" % rc, out)
        expect(re.search(r"views\.jl:%d:\d+: ERROR" % at[0], out) is not None,
               "the error is not located at views.jl:%d" % at[0], out)
        expect("\n    x = 1)\n" in out, "the offending source line is not shown", out)
        expect("1 problem(s)" in out, "expected exactly one problem", out)


@case
def unclosed_tuple_reports_the_missing_token():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "unclosed.jl")
        open(path, "w").write("x = (1, 2\n")
        rc, out = run_checker(path)
        expect(rc == 1, "an unclosed tuple passed (exit %d)" % rc, out)
        expect("unclosed.jl:1:10: MISSING: `)`" in out,
               "the missing `)` is not reported where the parser needed it", out)


@case
def missing_end_fails():
    with tempfile.TemporaryDirectory() as tmp:
        def edit(lines):
            i = line_of(lines, "function narrow(")
            j = lines.index("end", i)  # the `end` closing narrow
            return lines[:j] + lines[j + 1:]
        rc, out = run_checker(planted(tmp, edit))
        expect(rc == 1, "a function without its `end` passed (exit %d)" % rc, out)
        expect(re.search(r"views\.jl:\d+:\d+: (ERROR|MISSING)", out) is not None,
               "the problem is not located in views.jl", out)


@case
def folders_are_searched_and_every_bad_file_reported():
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "pkg", "src"))
        os.makedirs(os.path.join(tmp, "pkg", "node_modules"))  # skipped
        open(os.path.join(tmp, "pkg", "src", "good.jl"), "w").write("f(x) = x + 1\n")
        open(os.path.join(tmp, "pkg", "src", "bad.jl"), "w").write("g(x) = (x +\n")
        open(os.path.join(tmp, "pkg", "node_modules", "vendored.jl"), "w").write("((((\n")
        open(os.path.join(tmp, "pkg", "notes.txt"), "w").write("((((\n")
        rc, out = run_checker(os.path.join(tmp, "pkg"))
        expect(rc == 1, "a bad file in a folder passed (exit %d)" % rc, out)
        expect("parsed 2 .jl file(s)" in out, "expected good.jl and bad.jl only", out)
        expect(re.search(r"bad\.jl:1:\d+: ", out) is not None, "bad.jl is not reported", out)
        expect("good.jl:" not in out and "vendored.jl" not in out, "wrong file reported", out)


def tools_copy(tmp):
    """The checker and tools/julia-syntax (without node_modules) copied to
    tmp/tools; returns the copy of the checker."""
    dst = os.path.join(tmp, "tools", "julia-syntax")
    os.makedirs(dst)
    shutil.copy2(CHECKER, os.path.join(tmp, "tools"))
    for name in os.listdir(SYNTAX_DIR):
        if name != "node_modules":
            shutil.copy2(os.path.join(SYNTAX_DIR, name), dst)
    return os.path.join(tmp, "tools", "check_julia_syntax.sh")


def bin_dir(tmp, tools):
    """A folder for PATH holding only `tools` (links to the real ones)."""
    d = os.path.join(tmp, "bin")
    os.makedirs(d)
    for t in tools:
        os.symlink(shutil.which(t), os.path.join(d, t))
    return d


@case
def missing_packages_are_installed_first_and_said():
    # A copy of the tools without node_modules, and an npm that records how
    # it is called and installs by copying the real node_modules.
    with tempfile.TemporaryDirectory() as tmp:
        checker = tools_copy(tmp)
        bins = bin_dir(tmp, ["bash", "node", "dirname", "cmp", "cp"])
        log = os.path.join(tmp, "npm.log")
        npm = os.path.join(bins, "npm")
        open(npm, "w").write('#!/bin/sh\necho "$PWD: $*" >>%s\ncp -r %s ./node_modules\n'
                             % (log, os.path.join(SYNTAX_DIR, "node_modules")))
        os.chmod(npm, 0o755)
        good = os.path.join(tmp, "good.jl")
        open(good, "w").write("f(x) = x + 1\n")
        env = dict(os.environ, PATH=bins)
        for run in (1, 2):
            r = subprocess.run(["/bin/bash", checker, good], capture_output=True, text=True,
                               env=env, timeout=120)
            out = r.stdout + r.stderr
            expect(r.returncode == 0, "run %d: exit %d" % (run, r.returncode), out)
            expect("parsed 1 .jl file(s)" in r.stdout, "run %d: good.jl not parsed" % run, out)
            calls = open(log).read().splitlines() if os.path.exists(log) else []
            expect(len(calls) == 1, "run %d: npm called %d times, expected once in all"
                   % (run, len(calls)), "\n".join(calls))
            said = "julia-syntax: installing the locked packages" in r.stderr
            expect(said == (run == 1), "run %d: the install %s said" %
                   (run, "is not" if run == 1 else "is"), out)
        where = os.path.realpath(os.path.join(tmp, "tools", "julia-syntax"))
        expect(calls[0] == "%s: %s" % (where, NPM_CI[len("npm "):]),
               "npm ci is not run in the tools' folder with setup-deps' flags", calls[0])
    # scripts/setup-deps.sh installs through the same script.
    setup = open(os.path.join(REPO, "scripts", "setup-deps.sh")).read()
    runs_npm = [l for l in setup.splitlines() if "npm ci" in l and not l.lstrip().startswith("#")]
    expect("tools/julia-syntax/install.sh" in setup and not runs_npm,
           "scripts/setup-deps.sh does not install through tools/julia-syntax/install.sh",
           "\n".join(runs_npm))


@case
def without_npm_it_exits_77_with_the_command():
    with tempfile.TemporaryDirectory() as tmp:
        checker = tools_copy(tmp)
        bins = bin_dir(tmp, ["bash", "node", "dirname", "cmp"])
        good = os.path.join(tmp, "good.jl")
        open(good, "w").write("f(x) = x + 1\n")
        r = subprocess.run(["/bin/bash", checker, good], capture_output=True, text=True,
                           env=dict(os.environ, PATH=bins), timeout=60)
        out = r.stdout + r.stderr
        expect(r.returncode == 77, "exit %d, expected 77" % r.returncode, out)
        cmd = "(cd %s && %s)" % (os.path.join(tmp, "tools", "julia-syntax"), NPM_CI)
        expect(cmd in r.stderr, "the command to run is not given: %s" % cmd, out)
        expect("apt-get install nodejs npm" in r.stderr, "how to get npm is not said", out)
        expect("parsed" not in out, "it went on to parse", out)


@case
def unusable_inputs_exit_2():
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = run_checker(os.path.join(tmp, "absent.jl"))
        expect(rc == 2, "a missing path: exit %d, expected 2" % rc, out)
        rc, out = run_checker(tmp)
        expect(rc == 2, "a folder with no .jl file: exit %d, expected 2" % rc, out)
        expect("no .jl file" in out, "the reason is not given", out)


def prepare():
    """node, and the locked packages (installed now when missing, saying so);
    exits 77 with what to run when that cannot be done."""
    if shutil.which("node") is None:
        print("SKIP: node is not installed: apt-get install nodejs npm (or scripts/setup-deps.sh)")
        sys.exit(77)
    r = subprocess.run(["bash", INSTALL], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    if r.stdout:
        print(r.stdout.rstrip())
    if r.returncode == 77:
        print("SKIP: the Julia grammar cannot be installed here (above)")
        sys.exit(77)
    if r.returncode != 0:
        print("FAIL: installing the Julia grammar (%s) failed with exit %d" % (INSTALL, r.returncode))
        sys.exit(1)


if __name__ == "__main__":
    prepare()
    sys.exit(cases.run())
