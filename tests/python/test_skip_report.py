#!/usr/bin/python3
"""A skip can never read as a pass. ctest's "100% tests passed" counts
skipped tests as passed, so:

  - a Python test file whose every check skipped exits 77 (tests/python/
    _util.py), and every python.test_* test of this build is registered with
    SKIP_RETURN_CODE 77, so ctest shows it as Skipped;
  - scripts/skip_report.py, run after ctest by scripts/test.sh and
    scripts/reliability.sh, lists the tests skipped wholly with their reasons
    and the tests that passed with checks skipped.

Checked end to end: a small ctest directory written here (no CMake needed)
holds a GoogleTest-style skip, a Python file skipped wholly through Results,
one skipped in part, a clean pass and a failure; ctest runs it with
--output-junit and the report must name each skip and nothing else.
"""

import json
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

R = Results("test_skip_report")
REPORT = os.path.join(REPO, "scripts", "skip_report.py")

SCRIPT = """import sys
sys.path.insert(0, %(here)r)
from _util import Results
r = Results(%(name)r)
for i in range(%(passes)d):
    r.check(True, "a check")
for i in range(%(skips)d):
    r.skip("check %%d" %% i, %(why)r)
for i in range(%(fails)d):
    r.check(False, "a failing check")
sys.exit(r.finish())
"""


def results_exit_codes():
    """Results.finish(): 77 only when every check skipped."""
    with tempfile.TemporaryDirectory() as tmp:
        for passes, skips, fails, want in ((0, 3, 0, 77), (2, 1, 0, 0), (0, 0, 0, 1),
                                           (0, 2, 1, 1), (5, 0, 0, 0)):
            path = os.path.join(tmp, "s.py")
            with open(path, "w") as f:
                f.write(SCRIPT % dict(here=HERE, name="probe", passes=passes, skips=skips,
                                      fails=fails, why="no reason"))
            rc = subprocess.call([sys.executable, path], stdout=subprocess.DEVNULL)
            R.equal(rc, want, "Results.finish with %d passed, %d skipped, %d failed"
                    % (passes, skips, fails))


def ctest_directory(tmp):
    """A CTestTestfile.cmake that ctest runs as it is."""
    def script(name, passes, skips, fails, why):
        path = os.path.join(tmp, name + ".py")
        with open(path, "w") as f:
            f.write(SCRIPT % dict(here=HERE, name=name, passes=passes, skips=skips,
                                  fails=fails, why=why))
        return path

    gtest = os.path.join(tmp, "gtest_skip.sh")
    with open(gtest, "w") as f:
        f.write("echo '[ RUN      ] Gpu.Thing'\n"
                "echo 'test_gpu.cpp:12: Skipped'\n"
                "echo 'no usable CUDA device: the probe reason'\n"
                "echo '[  SKIPPED ] Gpu.Thing (0 ms)'\n")
    py = sys.executable
    lines = [
        'add_test(api.Gpu.Thing sh "%s")' % gtest,
        'set_tests_properties(api.Gpu.Thing PROPERTIES SKIP_REGULAR_EXPRESSION "\\\\[  SKIPPED \\\\]")',
        'add_test(api.Gpu.Other sh "%s")' % gtest,
        'set_tests_properties(api.Gpu.Other PROPERTIES SKIP_REGULAR_EXPRESSION "\\\\[  SKIPPED \\\\]")',
        'add_test(python.all_skipped "%s" "%s")' % (py, script("all_skipped", 0, 4, 0,
                                                                 "no torch here")),
        'add_test(python.part_skipped "%s" "%s")' % (py, script("part_skipped", 7, 2, 0,
                                                                  "this NumPy has no bool")),
        'add_test(python.clean "%s" "%s")' % (py, script("clean", 3, 0, 0, "")),
        'add_test(python.failing "%s" "%s")' % (py, script("failing", 1, 1, 1, "a skip")),
    ]
    # The real registration's property, on the wholly skipped file.
    lines.append("set_tests_properties(python.all_skipped python.part_skipped python.clean "
                 "python.failing PROPERTIES SKIP_RETURN_CODE 77)")
    with open(os.path.join(tmp, "CTestTestfile.cmake"), "w") as f:
        f.write("\n".join(lines) + "\n")


def end_to_end():
    ctest = shutil.which("ctest")
    if not R.check(ctest is not None, "ctest not found (scripts/setup-deps.sh installs cmake)"):
        return
    with tempfile.TemporaryDirectory() as tmp:
        ctest_directory(tmp)
        junit = os.path.join(tmp, "junit.xml")
        p = subprocess.run([ctest, "--test-dir", tmp, "--output-junit", junit],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        R.check(p.returncode != 0, "ctest passed a directory with a failing test:\n" + p.stdout)
        skipped = set(re.findall(r"\d+ - (\S+) \(Skipped\)", p.stdout))
        R.equal(skipped, {"api.Gpu.Thing", "api.Gpu.Other", "python.all_skipped"},
                "ctest's own list of skipped tests")
        r = subprocess.run([sys.executable, REPORT, junit, "--label", "probe"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        out = r.stdout
        R.equal(r.returncode, 0, "skip_report exit status (output: %s)" % out)
        R.check("== skips (probe): 3 of 6 tests skipped wholly, 1 passed with checks skipped" in out,
                "the headline counts the skips:\n" + out)
        R.check(re.search(r"skipped 2: api\.Gpu\.\* \(2\)\n\s+why: no usable CUDA device: the probe reason",
                          out) is not None, "the two GoogleTest skips, grouped, with their reason:\n" + out)
        R.check(re.search(r"skipped 1: python\.all_skipped\n\s+why: SKIP: check 0: no torch here",
                          out) is not None, "the Python file skipped wholly, with its reason:\n" + out)
        R.check(re.search(r"python\.part_skipped: 2 of 9 checks skipped\n\s+SKIP: check 0: this NumPy "
                          r"has no bool\n\s+SKIP: check 1", out) is not None,
                "the file skipped in part, counted, with its skip lines:\n" + out)
        R.check("python.clean" not in out, "a clean pass is not listed:\n" + out)
        R.check("python.failing" not in out, "a failure is ctest's to report, not a skip:\n" + out)
        bad = subprocess.run([sys.executable, REPORT, os.path.join(tmp, "missing.xml")],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        R.check(bad.returncode == 2 and "cannot read" in bad.stdout,
                "an unreadable file: exit %d, %r" % (bad.returncode, bad.stdout))


def build_ctest(build):
    """The ctest of the CMake that configured BUILD (its CMakeCache.txt), else
    the one on PATH."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                m = re.match(r"CMAKE_CTEST_COMMAND:\w+=(.+)$", line.rstrip("\n"))
                if m and os.path.exists(m.group(1)):
                    return m.group(1)
    except OSError:
        pass
    return shutil.which("ctest")


def registered_tests(build):
    """The tests of BUILD as its ctest lists them (--show-only=json-v1): name ->
    {property: value}. Read through ctest, not from CTestTestfile.cmake, whose
    text is CMake's own and differs between versions and policies."""
    ctest = build_ctest(build)
    if not R.check(ctest is not None, "no ctest for the build in %s" % build):
        return {}
    p = subprocess.run([ctest, "-N", "--show-only=json-v1"], cwd=build, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if not R.check(p.returncode == 0, "%s -N --show-only=json-v1 in %s: exit %d: %s"
                   % (ctest, build, p.returncode, p.stderr.strip())):
        return {}
    tests = {}
    for t in json.loads(p.stdout).get("tests", []):
        tests[t["name"]] = {prop["name"]: prop["value"] for prop in t.get("properties", [])}
    return tests


def real_registration():
    """Every tests/python/test_*.py is registered as python.test_* in this
    build, each with SKIP_RETURN_CODE 77."""
    lib = os.environ.get("STRIDEMEM_LIB", "")
    build = os.path.dirname(lib)
    if not R.check(lib and os.path.exists(os.path.join(build, "CMakeCache.txt")),
                   "STRIDEMEM_LIB (%r) is not in a CMake build directory: run through ctest" % lib):
        return
    tests = registered_tests(build)
    names = sorted(n for n in tests if re.match(r"python\.test_\w+$", n))
    R.check(len(names) >= 20, "found %d python.test_* tests in the build %s" % (len(names), build))
    files = sorted("python." + f[:-3] for f in os.listdir(HERE) if re.match(r"test_\w+\.py$", f))
    R.equal([f for f in files if f not in tests], [],
            "tests/python/test_*.py files that the build has no python.test_* test for")
    for name in names:
        R.check(tests[name].get("SKIP_RETURN_CODE") in (77, "77"),
                "%s is registered without SKIP_RETURN_CODE 77 (%r): a file that skipped wholly "
                "would show as Failed, not Skipped" % (name, tests[name].get("SKIP_RETURN_CODE")))


R.run("Results exit codes", results_exit_codes)
R.run("ctest + skip_report end to end", end_to_end)
R.run("the build's registration", real_registration)
sys.exit(R.finish())
