#!/usr/bin/env python3
"""Checks of the Julia package that are not about the C API, made without
Julia: every src/*.jl and test/*.jl file is include()d exactly once (a file
nobody includes is never loaded), every include() names a file that exists,
the versions (Project.toml, BINDING_VERSION) agree with the repository's
VERSION in major.minor, every dependency and julia itself have a [compat]
bound, and the package folder holds its own copy of the repository's LICENSE.

tools/api_table.py runs these as part of its Julia check; this script runs
them alone.

Usage: check_julia_package.py [--package DIR] [--repo DIR]
Exit status: 0 when no problem was found, 1 when problems were found.
"""

import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_text import mask_julia, rel  # noqa: E402  (one rule with api_table)


def structure_problems(package, version_file):
    """The package hangs together: every include()d file exists, every
    src/*.jl and test/*.jl is included exactly once (a file nobody includes
    is never loaded), and the versions agree with the repository's VERSION."""
    problems = []
    name = os.path.basename(os.path.normpath(package))
    roots = [("src", name + ".jl"), ("test", "runtests.jl")]
    for folder, root in roots:
        base = os.path.join(package, folder)
        if not os.path.isfile(os.path.join(base, root)):
            if folder == "src":
                problems.append("%s: missing (the module file)" % os.path.join(base, root))
            continue
        counts = {}
        todo = [os.path.join(base, root)]
        seen = set()
        while todo:
            f = todo.pop()
            if f in seen:
                continue
            seen.add(f)
            masked = mask_julia(open(f, encoding="utf-8").read())
            src = open(f, encoding="utf-8").read()
            for m in re.finditer(r"\binclude\(\s*\"", masked):
                end = src.index('"', m.end())
                target = os.path.normpath(os.path.join(os.path.dirname(f), src[m.end():end]))
                counts[target] = counts.get(target, 0) + 1
                if not os.path.isfile(target):
                    problems.append("%s: include(\"%s\"): no such file"
                                    % (rel(f), os.path.relpath(target, os.path.dirname(f))))
                else:
                    todo.append(target)
        for d, _, names in os.walk(base):
            for n in names:
                full = os.path.normpath(os.path.join(d, n))
                if not n.endswith(".jl") or n == root:
                    continue
                c = counts.get(full, 0)
                if c != 1:
                    problems.append("%s: included %d times (expected once)" % (rel(full), c))
    problems += project_problems(package, os.path.dirname(version_file))
    versions = []
    project = os.path.join(package, "Project.toml")
    if os.path.isfile(project):
        m = re.search(r'^version\s*=\s*"([^"]+)"', open(project, encoding="utf-8").read(), re.M)
        if m:
            versions.append(("Project.toml version", m.group(1)))
    for f in [os.path.join(package, "src", name + ".jl")]:
        if os.path.isfile(f):
            m = re.search(r'BINDING_VERSION\s*=\s*v"([^"]+)"', open(f, encoding="utf-8").read())
            if m:
                versions.append(("BINDING_VERSION", m.group(1)))
    if os.path.isfile(version_file) and versions:
        repo = open(version_file, encoding="utf-8").read().strip()
        rmaj = repo.split(".")[:2]
        for what, v in versions:
            if v.split(".")[:2] != rmaj:
                problems.append("%s %s does not match %s %s (major.minor)"
                                % (what, v, version_file, repo))
    return problems


def project_problems(package, repo_root):
    """What Julia's General registry asks of a package, checkable without
    Julia: every dependency (test-only extras too) and julia itself have a
    [compat] bound in Project.toml, and the package folder holds a LICENSE.
    Pkg installs only the package's own folder, so that LICENSE is a copy, not
    a symlink to the repository's; it must stay byte-identical to the
    repository's LICENSE (when the repository has one)."""
    problems = []
    project = os.path.join(package, "Project.toml")
    if not os.path.isfile(project):
        return problems  # not a package Pkg could install (a test's bare src/ folder)
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the check needs a TOML reader
        problems.append("%s: cannot check [compat]: Python %d.%d has no tomllib"
                        % (rel(project), sys.version_info[0], sys.version_info[1]))
    else:
        with open(project, "rb") as f:
            toml = tomllib.load(f)
        compat = toml.get("compat", {})
        needed = ["julia"] + sorted(toml.get("deps", {})) + sorted(toml.get("extras", {}))
        for name in needed:
            if name not in compat:
                problems.append("%s: no [compat] entry for %s" % (rel(project), name))
    lic = os.path.join(package, "LICENSE")
    root_lic = os.path.join(repo_root, "LICENSE")
    if os.path.islink(lic) or not os.path.isfile(lic):
        problems.append("%s: missing or a symlink (the package folder needs its own copy of "
                        "the license: Pkg installs that folder alone)" % rel(lic))
    elif os.path.isfile(root_lic):
        with open(lic, "rb") as a, open(root_lic, "rb") as b:
            if a.read() != b.read():
                problems.append("%s differs from %s: copy the repository's LICENSE over it"
                                % (rel(lic), rel(root_lic)))
    return problems



def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", default=os.path.join(REPO, "bindings", "julia", "StrideMem"))
    ap.add_argument("--repo", default=REPO, help="the repository root (VERSION, LICENSE)")
    args = ap.parse_args(argv)
    problems = structure_problems(args.package, os.path.join(args.repo, "VERSION"))
    for p in problems:
        print("PROBLEM julia " + p)
    print("checked the Julia package %s; %d problem(s)" % (rel(args.package), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
