#!/usr/bin/env python3
"""Tests tools/check_julia_syntax.sh, the tree-sitter-julia parse of the Julia
package (no Julia runtime is available, so this grammar check is what keeps
the files parseable).

The real tree must parse with no problem; copies of a package file with one
planted syntax error each must fail, naming file:line:col and showing the
source line. Needs node and `npm ci` in tools/julia-syntax
(scripts/setup-deps.sh). Run as a script: exit 0 when every case passes;
prints `N passed, M failed`.
"""

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import Cases, expect  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
CHECKER = os.path.join(REPO, "tools", "check_julia_syntax.sh")
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


@case
def unusable_inputs_exit_2():
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = run_checker(os.path.join(tmp, "absent.jl"))
        expect(rc == 2, "a missing path: exit %d, expected 2" % rc, out)
        rc, out = run_checker(tmp)
        expect(rc == 2, "a folder with no .jl file: exit %d, expected 2" % rc, out)
        expect("no .jl file" in out, "the reason is not given", out)


if __name__ == "__main__":
    sys.exit(cases.run())
