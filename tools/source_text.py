"""What the repository's checking tools share about source text: how files
are named in findings (rel) and Julia source with its comments and strings
blanked (mask_julia), so that tools/api_table.py and
tools/check_julia_package.py read the same text the same way and neither
imports the other for it."""

import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rel(path):
    """path relative to the working directory when it is below it, else
    relative to the repository when it is in it, else as given."""
    for base in (os.getcwd(), REPO):
        try:
            r = os.path.relpath(path, base)
        except ValueError:
            continue
        if not r.startswith(".."):
            return r
    return path


def mask_julia(src):
    """The source with comments blanked and string/char contents replaced by
    spaces (delimiters and newlines kept), so that positions and line numbers
    stay the same and no @ccall inside a docstring or comment is seen."""
    out = list(src)
    i = 0
    n = len(src)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    prev_sig = ""  # last non-space character outside strings/comments
    while i < n:
        c = src[i]
        if c == "#" and src.startswith("#=", i):
            depth = 1
            j = i + 2
            while j < n and depth:
                if src.startswith("#=", j):
                    depth += 1
                    j += 2
                elif src.startswith("=#", j):
                    depth -= 1
                    j += 2
                else:
                    j += 1
            blank(i, j)
            i = j
            continue
        if c == "#":
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
            continue
        if c == '"':
            triple = src.startswith('"""', i)
            delim = '"""' if triple else '"'
            j = i + len(delim)
            while j < n and not src.startswith(delim, j):
                if src[j] == "\\":
                    j += 1
                elif src[j] == "$" and j + 1 < n and src[j + 1] == "(":
                    # interpolation: skip the balanced expression
                    k = closing(src, j + 1, "(", ")")
                    j = n if k < 0 else k
                j += 1
            blank(i + len(delim), min(j, n))
            i = j + len(delim)
            prev_sig = '"'
            continue
        if c == "'" and not (prev_sig.isalnum() or prev_sig in ")]}_'\"."):
            # a character literal ('a', '\n', '\'')
            m = re.match(r"'(\\.[^']*|[^\\'])'", src[i:])
            if m:
                blank(i + 1, i + len(m.group(0)) - 1)
                i += len(m.group(0))
                prev_sig = "'"
                continue
        if not c.isspace():
            prev_sig = c
        i += 1
    return "".join(out)


def closing(text, i, openers, closers):
    """Index of the bracket that closes the one at text[i], counting every
    bracket in openers / closers alike; -1 when it never closes."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] in openers:
            depth += 1
        elif text[j] in closers:
            depth -= 1
            if depth == 0:
                return j
    return -1
