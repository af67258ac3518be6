#!/usr/bin/python3
"""The README's C example is the tested program: the first ```c block under
"## A taste, in C" in README.md must be, line for line, the lines between
README-BEGIN and README-END of tests/c/test_readme_example.c (which ctest
compiles, runs and checks as c_test_readme_example), less their indent."""

import os
import re
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _util import Results  # noqa: E402

R = Results("test_readme_c_example")


def readme_block(text):
    m = re.search(r"^## A taste, in C\n(?:(?!^## ).)*?^```c\n(.*?)^```", text, re.S | re.M)
    return m.group(1).splitlines() if m else None


def program_block(text):
    m = re.search(r"/\* README-BEGIN \*/\n(.*?)^\s*/\* README-END \*/", text, re.S | re.M)
    return textwrap.dedent(m.group(1)).splitlines() if m else None


def compare(readme, program):
    """The first difference, or None."""
    for i, (a, b) in enumerate(zip(readme, program)):
        if a.rstrip() != b.rstrip():
            return "line %d of the block: README has %r, the program %r" % (i + 1, a, b)
    if len(readme) != len(program):
        return "README's block has %d lines, the program's %d" % (len(readme), len(program))
    return None


readme = readme_block(open(os.path.join(REPO, "README.md"), encoding="utf-8").read())
program = program_block(open(os.path.join(REPO, "tests", "c", "test_readme_example.c")).read())
if R.check(readme is not None, "README.md has no ```c block under '## A taste, in C'") and \
        R.check(program is not None, "test_readme_example.c has no README-BEGIN/README-END lines"):
    R.check(len(program) >= 10, "the marked program is %d lines" % len(program))
    diff = compare(readme, program)
    R.check(diff is None, "README.md's C example is not the tested program: %s (paste the lines "
            "between the markers of tests/c/test_readme_example.c)" % diff)
    # The comparison itself: a changed argument, a missing line and an extra one are found.
    changed = list(program)
    changed[6] = changed[6].replace("shape, 2,", "shape, 3,")
    R.check(compare(changed, program) is not None, "a changed line went unseen")
    R.check(compare(program[:-1], program) is not None, "a missing line went unseen")
    R.check(compare(program + ["extra();"], program) is not None, "an extra line went unseen")
sys.exit(R.finish())
