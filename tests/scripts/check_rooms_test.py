#!/usr/bin/env python3
"""tools/check_rooms.py on small trees written to a temp dir: it must name
file and line for each kind of finding (long file, long function, issue
number, date, history phrase) and stay quiet on code that only looks like
them (initializer braces, strings, a function exactly at the limit)."""

import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(REPO, 'tools', 'check_rooms.py')


def function(name, body_lines):
    # A function whose body spans body_lines lines, '{' and '}' included.
    inner = ['  x += %d;' % k for k in range(body_lines - 2)]
    return ['int %s(int x) {' % name] + inner + ['}']


CLEAN = '\n'.join(
    ['// Why this file exists: it holds the clean cases.',
     '#include <vector>',
     '#define LONG_MACRO(a) \\',
     '  do { a; } while (0)',
     'namespace sm {',
     'const std::vector<int> kTable = {1, 2, 3};',
     'struct S {',
     '  int a_{0};',
     '  S() : a_{1} {}',
     '  int get() const { return a_; }',
     '};',
     'const char* kText = "until now, issue 14, 2026-11-25 in a string is data";',
     "const long kBig = 1'000'000;",
     ] + function('at_limit', 150) + [
     'auto f = [](int v) { return v; };',
     '}  // namespace sm',
     ''])


def run(files):
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, 'src')
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as f:
                f.write(text)
        p = subprocess.run([sys.executable, TOOL, root], capture_output=True, text=True)
        return p.returncode, p.stdout


failures = []


def expect(name, files, rc_want, lines_want=()):
    rc, out = run(files)
    if rc != rc_want:
        failures.append('%s: exit %d, expected %d; output:\n%s' % (name, rc, rc_want, out))
        return
    for want in lines_want:
        if want not in out:
            failures.append('%s: output lacks %r; output:\n%s' % (name, want, out))
    if rc_want == 0 and out.count('\n') != 1:
        failures.append('%s: expected one clean line; output:\n%s' % (name, out))


expect('clean tree', {'a/clean.cpp': CLEAN, 'a/clean.cu': CLEAN}, 0)

long_file = '\n'.join('int v%d = %d;' % (k, k) for k in range(801)) + '\n'
expect('file over 800 lines', {'a/clean.cpp': CLEAN, 'b/long.hpp': long_file}, 1,
       ['src/b/long.hpp:801: 801 lines, more than 800'])
expect('file of 800 lines', {'b/ok.hpp': '\n'.join(['int v;'] * 800) + '\n'}, 0)

long_fn = '\n'.join(['namespace sm {', '// Sums.'] + function('too_long', 151) + ['}']) + '\n'
expect('function over 150 lines', {'a/clean.cpp': CLEAN, 'c/fn.cpp': long_fn}, 1,
       ['src/c/fn.cpp:3: function too_long is 151 lines long, more than 150'])

member = '\n'.join(['struct Pool {', '  Pool(int n) : n_(n), m_{n} {'] +
                   ['    n_ += %d;' % k for k in range(160)] + ['  }', '  int n_, m_;', '};']) + '\n'
expect('constructor with initializer list', {'c/ctor.hpp': member}, 1,
       ['src/c/ctor.hpp:2: function Pool is 162 lines long'])

kernel = '\n'.join(['template <typename T>', '__global__ void __launch_bounds__(256) k(T* p) {'] +
                   ['  p[%d] = 0;' % k for k in range(160)] + ['}']) + '\n'
expect('CUDA kernel', {'c/k.cu': kernel}, 1, ['src/c/k.cu:2: function k is 162 lines long'])

expect('issue number in a comment', {'d/a.cpp': 'int x;\n// See issue 14 for numbers.\n'}, 1,
       ['src/d/a.cpp:2: comment carries an issue number ("issue 14")'])
expect('date in a comment', {'d/b.hpp': '/* measured\n   on 2026-11-25 */\nint y;\n'}, 1,
       ['src/d/b.hpp:2: comment carries a date ("2026-11-25")'])
expect('history phrase in a comment', {'d/c.cuh': 'int z;  // until now this was slow\n'}, 1,
       ['src/d/c.cuh:1: comment carries a history phrase ("until now")'])
expect('history phrase on a directive', {'d/d.h': '#define N 4  // used to be 8\n'}, 1,
       ['src/d/d.h:1: comment carries a history phrase ("used to")'])

if failures:
    print('\n\n'.join(failures))
    sys.exit(1)
print('check_rooms: every bad tree was caught, every clean case passed')
