#!/usr/bin/env python3
"""Checks that the source rooms stay small and their comments say why, not when.

For every file under the given root (default: the repository's src/):

  * file length: a file of more than --max-file-lines lines (default 800);
  * function length (C, C++, CUDA files: .c .h .cpp .hpp .cc .cu .cuh): a
    function body of more than --max-function-lines lines (default 150);
  * comments (same files): an issue number ("issue 14", "PR #3"), a date
    (2026-11-25) or a history phrase ("until now", "used to", "no longer",
    "formerly", "in the past", "before this change").

How a function is measured: comments, string and character literals and
preprocessor lines are blanked first (newlines kept). Braces are then
counted. A '{' met at namespace, class or file scope opens a function body
when the text since the previous ';', '{' or '}' at that scope (its head) has
balanced parentheses, contains a '(' and no '=' outside parentheses and
angle brackets (operator names aside), and does not start with class,
struct, union, enum or namespace; that covers free functions, member
functions, constructors with initializer lists, operators, lambdas assigned
to nothing, CUDA kernels and macro-made heads such as TEST(a, b). The length
is the number of lines from the line of that '{' to the line of its matching
'}', both included; lambdas and local classes inside a function count toward
it. Braces of initializers ('= {', 'x{1}') are never function bodies.

Each finding is printed as FILE:LINE: message. Exit status: 0 when nothing
was found, 1 when something was, 2 when the root cannot be read.
"""

import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE_EXTS = ('.c', '.h', '.cpp', '.hpp', '.cc', '.cu', '.cuh')

ISSUE_RE = re.compile(r'\b(?:issues?|PR|pull request|ticket|bug)\s*#?\s*\d+\b|\bgh-\d+\b',
                      re.IGNORECASE)
DATE_RE = re.compile(r'\b(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b')
HISTORY_RE = re.compile(r'\b(?:until now|up to now|used to|no longer|formerly|in the past|'
                        r'before this change)\b', re.IGNORECASE)


def split_code_and_comments(text):
    """Returns (code, comments): code has comments, literals and preprocessor
    lines blanked to spaces (newlines kept, so offsets and line numbers hold);
    comments is a list of (line, text) for every comment."""
    out = list(text)
    comments = []
    i, n = 0, len(text)
    line = 1
    at_line_start = True

    def blank(a, b):
        for k in range(a, b):
            if out[k] != '\n':
                out[k] = ' '

    while i < n:
        c = text[i]
        if c == '\n':
            line += 1
            at_line_start = True
            i += 1
            continue
        if at_line_start and c in ' \t':
            i += 1
            continue
        if at_line_start and c == '#':
            # A preprocessor line, with its backslash continuations.
            j = i
            while j < n:
                if text[j] == '\n' and text[j - 1] != '\\':
                    break
                j += 1
            # Comments on a directive still count as comments.
            for m in re.finditer(r'//[^\n]*|/\*.*?\*/', text[i:j], re.S):
                comments.append((line + text[i:i + m.start()].count('\n'), m.group(0)))
            line += text[i:j].count('\n')
            blank(i, j)
            i = j
            continue
        at_line_start = False
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            comments.append((line, text[i:j]))
            blank(i, j)
            i = j
            continue
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            comments.append((line, text[i:j]))
            line += text[i:j].count('\n')
            blank(i, j)
            i = j
            continue
        m = re.match(r'(?:u8|[uUL])?R"([^()\\\s]{0,16})\(', text[i:i + 24])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            end = text.find(')' + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            line += text[i:j].count('\n')
            blank(i, j)
            i = j
            continue
        if c in '"\'':
            # A digit separator (1'000'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and re.match(r"[0-9a-fA-F]", text[i + 1:i + 2] or ' ') \
                    and re.search(r"\b(?:0[xXbB])?[0-9][0-9a-fA-F']*$", text[max(0, i - 40):i]):
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            blank(i + 1, j - 1)
            i = j
            continue
        i += 1
    return ''.join(out), comments


# Words written like calls in a function's head that are not its name.
ATTRIBUTE_WORDS = {'__launch_bounds__', '__attribute__', '__declspec', 'alignas', 'decltype',
                   'noexcept', 'SM_API'}

SCOPE_HEAD_RE = re.compile(r'^(?:template\s*<.*>\s*)?(?:typedef\s+)?'
                           r'(?:class|struct|union|enum|namespace)\b', re.S)


def _strip_angles_and_operators(head):
    head = re.sub(r'\boperator\s*(?:\(\)|[^\s(]+)', 'operator', head)
    # Template argument lists (default arguments may hold '=').
    prev = None
    while prev != head:
        prev = head
        head = re.sub(r'<[^<>(){};]*>', '', head)
    return head


FUNCTION_TAIL_RE = re.compile(r'(?:\)|\b(?:const|noexcept|override|final|mutable|volatile|try)|&&?)$')


def is_function_head(head):
    h = ' '.join(head.split())
    if not h or '(' not in h or SCOPE_HEAD_RE.match(h):
        return False
    if re.match(r'^extern\s*""', h):
        return False
    h = _strip_angles_and_operators(h)
    # Initializer braces met in the head (a constructor's "m_{n}") say nothing.
    prev = None
    while prev != h:
        prev = h
        h = re.sub(r'\{[^{}]*\}', '()', h)
    depth = 0
    for ch in h:
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
            if depth < 0:
                return False
        elif ch == '=' and depth == 0:
            return False
    if depth != 0:
        return False
    # A body follows a parameter list, its qualifiers or a trailing return
    # type; a name right before '{' is an initializer ("m_{n}", "S s{1}").
    h = h.rstrip()
    if FUNCTION_TAIL_RE.search(h):
        return True
    last_paren = h.rfind(')')
    return '->' in h[last_paren:] or re.search(r'\)\s*:\s*.*\)$', h) is not None


def find_long_functions(code, limit):
    """Yields (line, name, length) for each function body longer than limit."""
    line_of = []
    ln = 1
    for ch in code:
        line_of.append(ln)
        if ch == '\n':
            ln += 1
    # Stack of scope kinds: 'scope' (file/namespace/class: heads are
    # classified), 'other' (initializer or unclassified braces).
    stack = ['scope']
    head_start = 0
    i, n = 0, len(code)
    while i < n:
        ch = code[i]
        if ch == ';':
            if stack[-1] == 'scope':
                head_start = i + 1
        elif ch == '{':
            if stack[-1] == 'scope':
                head = code[head_start:i]
                if is_function_head(head):
                    depth, j = 1, i + 1
                    while j < n and depth:
                        if code[j] == '{':
                            depth += 1
                        elif code[j] == '}':
                            depth -= 1
                        j += 1
                    end = j - 1 if depth == 0 else n - 1
                    length = line_of[end] - line_of[i] + 1
                    if length > limit:
                        flat = _strip_angles_and_operators(' '.join(head.split()))
                        names = [m for m in re.findall(r'([~\w:]+)\s*\(', flat)
                                 if m not in ATTRIBUTE_WORDS]
                        yield line_of[i], (names[0] if names else '?'), length
                    i = end + 1
                    head_start = i
                    continue
                if SCOPE_HEAD_RE.match(' '.join(head.split())) or re.match(r'^\s*extern\s*""\s*$', head):
                    stack.append('scope')
                    head_start = i + 1
                else:
                    # Initializer braces stay part of the head they are in.
                    stack.append('other')
            else:
                stack.append('other')
        elif ch == '}':
            if len(stack) > 1:
                kind = stack.pop()
                # An initializer's closing brace stays part of the head
                # (a constructor's "x_{1}" before its body).
                if kind == 'scope':
                    head_start = i + 1
            else:
                head_start = i + 1
        i += 1


def check_file(path, rel, max_file_lines, max_function_lines, report):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            text = f.read()
    except OSError as e:
        report(rel, 1, 'cannot read: %s' % e)
        return
    nlines = text.count('\n') + (0 if text.endswith('\n') or not text else 1)
    if nlines > max_file_lines:
        report(rel, nlines, '%d lines, more than %d: split it along its sections'
               % (nlines, max_file_lines))
    if not rel.endswith(CODE_EXTS):
        return
    code, comments = split_code_and_comments(text)
    for line, name, length in find_long_functions(code, max_function_lines):
        report(rel, line, 'function %s is %d lines long, more than %d'
               % (name, length, max_function_lines))
    for line, comment in comments:
        for k, part in enumerate(comment.split('\n')):
            for what, rx in (('an issue number', ISSUE_RE), ('a date', DATE_RE),
                             ('a history phrase', HISTORY_RE)):
                m = rx.search(part)
                if m:
                    report(rel, line + k, 'comment carries %s ("%s"): say why, not when'
                           % (what, m.group(0)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('root', nargs='?', default=os.path.join(REPO, 'src'),
                    help='tree to check (default: the repository\'s src/)')
    ap.add_argument('--max-file-lines', type=int, default=800)
    ap.add_argument('--max-function-lines', type=int, default=150)
    args = ap.parse_args(argv)
    if not os.path.isdir(args.root):
        print('check_rooms: %s is not a directory' % args.root, file=sys.stderr)
        return 2
    findings = []

    def report(rel, line, msg):
        findings.append('%s:%d: %s' % (rel, line, msg))

    base = os.path.dirname(os.path.abspath(args.root))
    for dirpath, dirnames, filenames in os.walk(args.root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, base)
            check_file(path, rel, args.max_file_lines, args.max_function_lines, report)
    for f in findings:
        print(f)
    if findings:
        print('check_rooms: %d finding(s) in %s' % (len(findings), args.root), file=sys.stderr)
        return 1
    print('check_rooms: %s is clean (files <= %d lines, functions <= %d lines, comments '
          'without issue numbers, dates or history)' % (args.root, args.max_file_lines,
                                                       args.max_function_lines))
    return 0


if __name__ == '__main__':
    sys.exit(main())
