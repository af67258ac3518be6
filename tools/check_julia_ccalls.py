#!/usr/bin/env python3
"""Mechanical check of the Julia package's @ccalls against the C API.

No Julia runtime is needed: this reads every `@ccall` in the package's
src/**/*.jl and verifies, for each one, against include/stridemem.h and the
dynamic symbol table of the built library (`nm -D --defined-only`):

  * the symbol is declared in the header and exported by the library;
  * the number of arguments matches the prototype (no varargs);
  * each argument type and the return type match the C type: integers by
    size and signedness, floats by size, pointers by what they point to
    (Ptr{T}/Ref{T}/Cstring/handle aliases), by-value structs by layout;
  * `ccall(` written without the macro is refused (it cannot be checked);
  * every `const SM_* = value` in the package equals the header's value;
  * the package hangs together: every file included once, versions agree
    with VERSION, every dependency has a [compat] bound, and the package's
    LICENSE is there and the same as the repository's.

The target ABI is LP64 (Linux on x86-64/aarch64): long and size_t are 8 bytes.

Usage:
  check_julia_ccalls.py [--lib PATH] [--header PATH] [--package DIR] [--quiet]

The library comes from --lib or the environment variable STRIDEMEM_LIB; a
missing library is an error (the nm part is never skipped). Exit status: 0
when no problem was found, 1 when problems were found, 2 when the inputs
could not be read.
"""

import argparse
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --------------------------------------------------------------------------
# A small type model shared by both sides.
# --------------------------------------------------------------------------

class Ty:
    """kind: int, float, bool, char, void, struct, opaque, funcptr, ptr, array,
    unknown. `text` is the spelling used in messages."""

    def __init__(self, kind, text, size=0, signed=None, name=None, pointee=None,
                 fields=None, count=0, elem=None, mutable=False):
        self.kind = kind
        self.text = text
        self.size = size
        self.signed = signed
        self.name = name
        self.pointee = pointee
        self.fields = fields  # list of (field name, Ty)
        self.count = count    # arrays: number of elements
        self.elem = elem      # arrays: element type
        self.mutable = mutable

    def __repr__(self):
        return self.text


def describe(t):
    if t.kind == "int":
        return "%s (%d-byte %s integer)" % (t.text, t.size,
                                            "signed" if t.signed else "unsigned")
    if t.kind == "float":
        return "%s (%d-byte float)" % (t.text, t.size)
    if t.kind == "ptr":
        return "%s (pointer to %s)" % (t.text, t.pointee.text)
    if t.kind == "struct":
        return "%s (struct of %d bytes)" % (t.text, layout_size(t))
    return "%s (%s)" % (t.text, t.kind)


def flatten(t):
    """Scalar layout of a type: a list of (kind, size, signedness)."""
    if t.kind == "struct":
        out = []
        for _, f in t.fields:
            out.extend(flatten(f))
        return out
    if t.kind == "array":
        return flatten(t.elem) * t.count
    if t.kind in ("ptr", "funcptr"):
        return [("ptr", 8, None)]
    if t.kind == "char":
        return [("int", 1, None)]
    if t.kind == "bool":
        return [("int", 1, False)]
    return [(t.kind, t.size, t.signed)]


def layout_size(t):
    """Size of a struct with natural alignment (what both compilers do)."""
    off = 0
    align = 1
    for kind, size, _ in flatten(t):
        a = max(size, 1)
        off = (off + a - 1) // a * a + size
        align = max(align, a)
    return (off + align - 1) // align * align


# --------------------------------------------------------------------------
# C side: the header.
# --------------------------------------------------------------------------

C_INTS = {
    "int8_t": (1, True), "uint8_t": (1, False), "int16_t": (2, True),
    "uint16_t": (2, False), "int32_t": (4, True), "uint32_t": (4, False),
    "int64_t": (8, True), "uint64_t": (8, False),
    "signed char": (1, True), "unsigned char": (1, False),
    "short": (2, True), "short int": (2, True), "unsigned short": (2, False),
    "int": (4, True), "signed": (4, True), "signed int": (4, True),
    "unsigned": (4, False), "unsigned int": (4, False),
    "long": (8, True), "long int": (8, True), "unsigned long": (8, False),
    "long long": (8, True), "unsigned long long": (8, False),
    "size_t": (8, False), "ssize_t": (8, True), "ptrdiff_t": (8, True),
    "intptr_t": (8, True), "uintptr_t": (8, False),
}
C_FLOATS = {"float": 4, "double": 8}


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def eval_c_int(expr, known):
    """Evaluates a small integer constant expression from the header."""
    e = expr.strip()
    e = re.sub(r"\bINT64_MIN\b", str(-(2 ** 63)), e)
    e = re.sub(r"\bINT64_MAX\b", str(2 ** 63 - 1), e)
    e = re.sub(r"\bINT32_MIN\b", str(-(2 ** 31)), e)
    e = re.sub(r"\bINT32_MAX\b", str(2 ** 31 - 1), e)
    e = re.sub(r"\b([A-Za-z_]\w*)\b",
               lambda m: str(known[m.group(1)]) if m.group(1) in known else m.group(1), e)
    e = re.sub(r"(?<=\d)[uUlL]+\b", "", e)
    if not re.fullmatch(r"[0-9xXa-fA-F+\-*/()<>\s]+", e):
        return None
    try:
        return int(eval(e, {"__builtins__": {}}, {}))  # digits and operators only
    except Exception:
        return None


class Header:
    def __init__(self, path):
        self.path = path
        raw = open(path, encoding="utf-8").read()
        text = strip_c_comments(raw)
        self.constants = {}   # name -> int
        self.typedefs = {}    # alias -> Ty
        self.structs = {}     # tag -> Ty
        self.functions = {}   # name -> (ret Ty, [(param name, Ty)], line)
        self.funcptrs = {}    # function-pointer typedef name -> Ty (fret, fparams)
        self.problems = []
        lines = []
        cplusplus = 0  # inside `#ifdef __cplusplus` (the header is read as C)
        for line in text.split("\n"):
            if re.match(r"\s*#\s*if(def)?\s+(defined\s*\(?\s*)?__cplusplus", line):
                cplusplus = 1
            elif cplusplus and re.match(r"\s*#\s*if", line):
                cplusplus += 1
            elif cplusplus and re.match(r"\s*#\s*endif", line):
                cplusplus -= 1
                lines.append("")
                continue
            if cplusplus:
                lines.append("")
                continue
            m = re.match(r"\s*#\s*define\s+(\w+)\s+(.+?)\s*$", line)
            if m:
                v = eval_c_int(m.group(2), self.constants)
                if v is not None:
                    self.constants[m.group(1)] = v
            lines.append("" if line.lstrip().startswith("#") else line)
        body = "\n".join(lines)
        self._parse_decls(body)

    def _line_of(self, body, pos):
        return body.count("\n", 0, pos) + 1

    def _parse_decls(self, body):
        # Statements at file scope end with ';' (braces may nest in structs).
        pos = 0
        depth = 0
        start = 0
        while pos < len(body):
            c = body[pos]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif c == ";" and depth == 0:
                self._statement(body[start:pos].strip(), self._line_of(body, start))
                start = pos + 1
            pos += 1

    def _statement(self, st, line):
        st = re.sub(r'extern\s+"C"\s*\{', "", st).strip()
        st = st.lstrip("}").strip()
        if not st:
            return
        m = re.fullmatch(r"enum\s*\w*\s*\{(.*)\}\s*\w*", st, flags=re.S)
        if m:
            self._enum(m.group(1))
            return
        m = re.fullmatch(r"typedef\s+enum\s*\w*\s*\{(.*)\}\s*(\w+)", st, flags=re.S)
        if m:
            self._enum(m.group(1))
            self.typedefs[m.group(2)] = Ty("int", m.group(2), 4, True)
            return
        m = re.fullmatch(r"typedef\s+struct\s+(\w+)\s*\*\s*(\w+)", st)
        if m:  # opaque handle
            tag, alias = m.group(1), m.group(2)
            opaque = self.structs.get(tag) or Ty("opaque", "struct " + tag, name=tag)
            self.typedefs[alias] = Ty("ptr", alias, 8, pointee=opaque)
            return
        m = re.fullmatch(r"(typedef\s+)?struct\s+(\w*)\s*\{(.*)\}\s*(\w*)", st, flags=re.S)
        if m:
            tag = m.group(2)
            alias = m.group(4)
            fields = self._fields(m.group(3), line)
            t = Ty("struct", alias or ("struct " + tag), name=tag or alias, fields=fields)
            if tag:
                self.structs[tag] = t
            if m.group(1) and alias:
                self.typedefs[alias] = t
            return
        m = re.fullmatch(r"typedef\s+(.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)", st, flags=re.S)
        if m:
            t = Ty("funcptr", m.group(2), 8)
            t.fret = self.parse_type(m.group(1))
            t.fparams = self._params(m.group(3), m.group(2), line)
            self.typedefs[m.group(2)] = t
            if t.fret is not None and t.fparams is not None:
                self.funcptrs[m.group(2)] = t
            return
        m = re.fullmatch(r"typedef\s+(.+?)\s+(\w+)", st, flags=re.S)
        if m:
            t = self.parse_type(m.group(1))
            if t is not None:
                t = Ty(t.kind, m.group(2), t.size, t.signed, t.name, t.pointee, t.fields)
                self.typedefs[m.group(2)] = t
            return
        m = re.fullmatch(r"SM_API\s+(.+?)\b(\w+)\s*\((.*)\)", st, flags=re.S)
        if m:
            ret = self.parse_type(m.group(1))
            params = self._params(m.group(3), m.group(2), line)
            if ret is None:
                self.problems.append("%s:%d: cannot parse the return type of %s: %r"
                                     % (self.path, line, m.group(2), m.group(1)))
                return
            if params is not None:
                self.functions[m.group(2)] = (ret, params, line)

    def _enum(self, body):
        value = -1
        for item in body.split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                name, expr = item.split("=", 1)
                value = eval_c_int(expr, self.constants)
            else:
                name = item
                value = value + 1 if value is not None else None
            if value is not None:
                self.constants[name.strip()] = value

    def _fields(self, body, line):
        fields = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            m = re.fullmatch(r"(.+?)\s*\b(\w+)\s*(\[\s*(\w+)\s*\])?", decl)
            t = self.parse_type(m.group(1)) if m else None
            if t is None:
                self.problems.append("%s:%d: cannot parse struct field %r" % (self.path, line, decl))
                continue
            if m.group(3):
                n = eval_c_int(m.group(4), self.constants)
                t = Ty("array", "%s[%s]" % (t.text, m.group(4)), count=n, elem=t)
            fields.append((m.group(2), t))
        return fields

    def _params(self, text, fname, line):
        text = " ".join(text.split())
        if text in ("", "void"):
            return []
        out = []
        for p in text.split(","):
            p = p.strip()
            toks = re.findall(r"\w+|\*|\[\s*\w*\s*\]", p)
            name = ""
            # The last identifier is the parameter name when a type remains.
            words = [t for t in toks if re.fullmatch(r"\w+", t) and t != "const"]
            if len(words) >= 2 and re.fullmatch(r"\w+", toks[-1]) or \
                    (len(toks) >= 2 and toks[-1].startswith("[")):
                if toks[-1].startswith("["):
                    arr = toks.pop()
                    name = toks.pop()
                    toks.append("*")
                else:
                    name = toks.pop()
            t = self.parse_type(" ".join(toks))
            if t is None:
                self.problems.append("%s:%d: %s: cannot parse parameter %r"
                                     % (self.path, line, fname, p))
                return None
            out.append((name, t))
        return out

    def parse_type(self, text):
        """`const int64_t *` -> Ty. None when unknown."""
        toks = re.findall(r"\w+|\*", text)
        stars = 0
        base = []
        for t in toks:
            if t == "*":
                stars += 1
            elif t in ("const", "volatile", "restrict", "SM_API"):
                continue
            else:
                if stars:
                    return None  # `int * const x`-style is not used by this header
                base.append(t)
        spelled = " ".join(base)
        if spelled in C_INTS:
            size, signed = C_INTS[spelled]
            t = Ty("int", spelled, size, signed)
        elif spelled in C_FLOATS:
            t = Ty("float", spelled, C_FLOATS[spelled])
        elif spelled == "char":
            t = Ty("char", "char", 1)
        elif spelled == "void":
            t = Ty("void", "void")
        elif spelled in ("_Bool", "bool"):
            t = Ty("bool", spelled, 1)
        elif len(base) == 2 and base[0] == "struct":
            t = self.structs.get(base[1]) or Ty("opaque", spelled, name=base[1])
        elif spelled in self.typedefs:
            t = self.typedefs[spelled]
        else:
            return None
        for _ in range(stars):
            t = Ty("ptr", t.text + "*", 8, pointee=t)
        if "const" in toks and stars:
            t.text = "const " + t.text
        return t


# --------------------------------------------------------------------------
# Julia side: the package sources.
# --------------------------------------------------------------------------

J_INTS = {
    "Int8": (1, True), "UInt8": (1, False), "Int16": (2, True), "UInt16": (2, False),
    "Int32": (4, True), "UInt32": (4, False), "Int64": (8, True), "UInt64": (8, False),
    "Int128": (16, True), "UInt128": (16, False), "Int": (8, True), "UInt": (8, False),
    "Cschar": (1, True), "Cuchar": (1, False), "Cshort": (2, True), "Cushort": (2, False),
    "Cint": (4, True), "Cuint": (4, False), "Clong": (8, True), "Culong": (8, False),
    "Clonglong": (8, True), "Culonglong": (8, False), "Csize_t": (8, False),
    "Cssize_t": (8, True), "Cptrdiff_t": (8, True), "Cintmax_t": (8, True),
    "Cuintmax_t": (8, False), "Cwchar_t": (4, True),
}
J_FLOATS = {"Float16": 2, "Float32": 4, "Float64": 8, "Cfloat": 4, "Cdouble": 8}

KEYWORDS_OPEN = {"function", "if", "for", "while", "let", "begin", "quote", "do",
                 "try", "struct", "macro", "module", "baremodule"}


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
                    d = 0
                    while j < n:
                        if src[j] == "(":
                            d += 1
                        elif src[j] == ")":
                            d -= 1
                            if d == 0:
                                break
                        j += 1
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


def split_top(text, seps=","):
    """Splits at separators that are not inside (), {}, []."""
    parts = []
    depth = 0
    cur = []
    for c in text:
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        if c in seps and depth == 0:
            parts.append("".join(cur))
            cur = [c] if c == ";" else []
            continue
        cur.append(c)
    parts.append("".join(cur))
    return parts


def rsplit_annotation(arg):
    """`value::Type` -> (value, Type), splitting at the last top-level `::`."""
    depth = 0
    last = -1
    i = 0
    while i < len(arg):
        c = arg[i]
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif depth == 0 and arg.startswith("::", i):
            last = i
            i += 1
        i += 1
    if last < 0:
        return arg.strip(), None
    return arg[:last].strip(), arg[last + 2:].strip()


class CCall:
    def __init__(self, path, line, symbol, library, args, ret, varargs, problems):
        self.path = path
        self.line = line
        self.symbol = symbol
        self.library = library
        self.args = args        # list of (value text, type text or None)
        self.ret = ret          # type text or None
        self.varargs = varargs
        self.problems = problems  # parse problems


IDENT = r"[A-Za-z_][A-Za-z0-9_!]*"


def scan_expr_end(masked, i):
    """From index i, the end of a Julia type expression such as
    `LibStrideMem.Ptr{Int64}` (identifiers, dots, balanced braces)."""
    n = len(masked)
    while i < n and masked[i] in " \t":
        i += 1
    start = i
    while i < n:
        c = masked[i]
        if c.isalnum() or c in "_.!":
            i += 1
        elif c == "{":
            depth = 0
            while i < n:
                if masked[i] == "{":
                    depth += 1
                elif masked[i] == "}":
                    depth -= 1
                    if depth == 0:
                        i += 1
                        break
                i += 1
        else:
            break
    return start, i


def match_paren(masked, i):
    """Index of the parenthesis closing the one at i (masked text)."""
    depth = 0
    for j in range(i, len(masked)):
        c = masked[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j
    return -1


def parse_ccalls(path, src):
    masked = mask_julia(src)
    calls = []
    raw = []
    for m in re.finditer(r"(?<![\w@])ccall\s*\(", masked):
        raw.append(masked.count("\n", 0, m.start()) + 1)
    for m in re.finditer(r"@ccall\b", masked):
        line = masked.count("\n", 0, m.start()) + 1
        i = m.end()
        problems = []
        # options such as gc_safe=true before the call
        while True:
            mo = re.match(r"\s*(\w+)\s*=\s*(\w+)\s+", masked[i:])
            if mo and not re.match(r"\s*\w+\s*=\s*\w+\s*[.(]", masked[i:]):
                i += mo.end()
            else:
                break
        mm = re.match(r"\s*", masked[i:])
        i += mm.end()
        # the callee: everything up to the '(' that opens the argument list
        j = i
        depth = 0
        while j < len(masked):
            c = masked[j]
            if c == "(" and depth == 0:
                # `libstridemem()` and `$(lib)` are part of the callee
                k = match_paren(masked, j)
                after = masked[k + 1:k + 2] if k >= 0 else ""
                if after == ".":
                    j = k + 1
                    continue
                break
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
            elif c == "\n" and depth == 0:
                break
            j += 1
        callee = src[i:j].strip()
        if j >= len(masked) or masked[j] != "(":
            calls.append(CCall(path, line, None, None, [], None, False,
                               ["cannot parse the @ccall callee %r" % callee]))
            continue
        close = match_paren(masked, j)
        if close < 0:
            calls.append(CCall(path, line, None, None, [], None, False,
                               ["unbalanced parentheses in @ccall"]))
            continue
        inner = masked[j + 1:close]
        inner_src = src[j + 1:close]
        # return type
        k = close + 1
        ret = None
        mr = re.match(r"\s*::", masked[k:])
        if mr:
            a, b = scan_expr_end(masked, k + mr.end())
            ret = masked[a:b].strip()
        else:
            problems.append("no return type annotation")
        # symbol and library
        symbol = None
        library = None
        if callee.startswith("$") and "." not in callee.split(")")[-1]:
            problems.append("calls an interpolated function pointer %r: cannot be checked "
                            "against the header; call the library by symbol name" % callee)
        else:
            mc = re.fullmatch(r"(.*)\.\s*(" + IDENT + r")", callee, flags=re.S)
            if mc:
                library = mc.group(1).strip()
                symbol = mc.group(2)
            elif re.fullmatch(IDENT, callee):
                symbol = callee
            else:
                problems.append("cannot parse the @ccall callee %r" % callee)
        # arguments (positions from the masked text, spelled from the source)
        args = []
        varargs = False
        if inner.strip():
            offset = 0
            for part in split_top(inner, ",;"):
                if part.startswith(";"):
                    varargs = True
                    part = part[1:]
                    offset += 1
                text = part
                if text.strip():
                    value, ty = rsplit_annotation(text)
                    if ty is None:
                        problems.append("argument %r has no type annotation" % text.strip())
                    args.append((inner_src[offset:offset + len(value) + 1].strip() if value else "",
                                 ty))
                offset += len(part) + 1
        calls.append(CCall(path, line, symbol, library, args, ret, varargs, problems))
    cfuncs = []
    for m in re.finditer(r"@cfunction\s*\(", masked):
        line = masked.count("\n", 0, m.start()) + 1
        close = match_paren(masked, m.end() - 1)
        parts = [p.strip() for p in split_top(masked[m.end():close])] if close > 0 else []
        if len(parts) != 3 or not (parts[2].startswith("(") and parts[2].endswith(")")):
            cfuncs.append((path, line, None, None, "cannot parse @cfunction(callable, Ret, (Args...,))"))
            continue
        argtypes = [a.strip() for a in split_top(parts[2][1:-1]) if a.strip()]
        cfuncs.append((path, line, parts[1], argtypes, None))
    return calls, raw, masked, cfuncs


class JuliaPackage:
    def __init__(self, root):
        self.root = root
        self.files = []
        src_dir = os.path.join(root, "src")
        for d, _, names in os.walk(src_dir):
            for nm_ in sorted(names):
                if nm_.endswith(".jl"):
                    self.files.append(os.path.join(d, nm_))
        self.files.sort()
        self.aliases = {}      # name -> RHS text
        self.structs = {}      # name -> (mutable, [(field, type text)], path, line)
        self.primitives = {}   # name -> bits
        self.consts = {}       # name -> (RHS text, path, line)
        self.ccalls = []
        self.cfunctions = []   # (path, line, ret text, [arg type texts], parse problem)
        self.raw_ccalls = []   # (path, line)
        for path in self.files:
            src = open(path, encoding="utf-8").read()
            calls, raw, masked, cfuncs = parse_ccalls(path, src)
            self.ccalls.extend(calls)
            self.cfunctions.extend(cfuncs)
            self.raw_ccalls.extend((path, ln) for ln in raw)
            self._declarations(path, masked)

    def _declarations(self, path, masked):
        for m in re.finditer(r"^[ \t]*(?:global\s+)?const\s+(" + IDENT + r")\s*=\s*(.+?)\s*$",
                             masked, flags=re.M):
            line = masked.count("\n", 0, m.start()) + 1
            self.consts[m.group(1)] = (m.group(2), path, line)
            self.aliases[m.group(1)] = m.group(2)
        for m in re.finditer(r"^[ \t]*primitive\s+type\s+(" + IDENT + r")(?:\s*<:\s*[\w.]+)?\s+(\d+)\s+end",
                             masked, flags=re.M):
            self.primitives[m.group(1)] = int(m.group(2))
        for m in re.finditer(r"^[ \t]*(mutable\s+)?struct\s+(" + IDENT + r")(\{[^}]*\})?(\s*<:\s*[\w.{}, ]+)?",
                             masked, flags=re.M):
            line = masked.count("\n", 0, m.start()) + 1
            body, _ = self._block_body(masked, m.end())
            fields = []
            for fl in body.split("\n"):
                for piece in fl.split(";"):
                    piece = piece.strip()
                    # Whole keywords only: a field named `format` or `iffy` is a field.
                    if re.match(r"(?:function|if|for|while|let|begin)\b|\w+\s*\(.*\)\s*=", piece):
                        continue
                    fm = re.fullmatch(r"(" + IDENT + r")\s*::\s*(.+)", piece)
                    if fm:
                        fields.append((fm.group(1), fm.group(2).strip()))
            self.structs[m.group(2)] = (bool(m.group(1)), fields, path, line)

    @staticmethod
    def _block_body(masked, start):
        """Text from start to the `end` that closes the block opened just
        before start (keyword depth counting outside brackets)."""
        depth = 1
        bracket = 0
        i = start
        n = len(masked)
        while i < n:
            c = masked[i]
            if c in "([{":
                bracket += 1
            elif c in ")]}":
                bracket -= 1
            elif (c.isalpha() or c == "_") and (i == 0 or not (masked[i - 1].isalnum() or masked[i - 1] in "_.:@")):
                j = i
                while j < n and (masked[j].isalnum() or masked[j] in "_!"):
                    j += 1
                word = masked[i:j]
                if bracket == 0:
                    if word in KEYWORDS_OPEN:
                        # `abstract type`/`primitive type` ... end also open blocks
                        depth += 1
                    elif word == "end":
                        depth -= 1
                        if depth == 0:
                            return masked[start:i], j
                i = j
                continue
            i += 1
        return masked[start:], n

    def parse_type(self, text, seen=None):
        """Julia type text -> Ty (kind 'unknown' with a reason when it fails)."""
        seen = seen or set()
        t = " ".join(text.split())
        m = re.fullmatch(r"(?:[\w]+\.)*(" + IDENT + r")(\{(.*)\})?", t)
        if not m:
            return Ty("unknown", t, name="cannot parse the type %r" % t)
        name, params = m.group(1), m.group(3)
        if params is not None:
            ps = [p.strip() for p in split_top(params)]
            if name in ("Ptr", "Ref") and len(ps) == 1:
                inner = self.parse_type(ps[0], seen)
                return Ty("ptr", t, 8, pointee=inner, name=name)
            if name == "NTuple" and len(ps) == 2 and ps[0].isdigit():
                e = self.parse_type(ps[1], seen)
                return Ty("array", t, count=int(ps[0]), elem=e)
            return Ty("unknown", t, name="unsupported parametric type %r" % t)
        if name in J_INTS:
            size, signed = J_INTS[name]
            return Ty("int", name, size, signed)
        if name in J_FLOATS:
            return Ty("float", name, J_FLOATS[name])
        if name in ("Cvoid", "Nothing"):
            return Ty("void", name)
        if name == "Bool":
            return Ty("bool", name, 1)
        if name == "Cchar":
            return Ty("char", name, 1)
        if name == "Cstring":
            return Ty("ptr", name, 8, pointee=Ty("char", "Cchar", 1), name="Cstring")
        if name in seen:
            return Ty("unknown", t, name="recursive alias %r" % name)
        if name in self.structs:
            mutable, fields, _, _ = self.structs[name]
            if not fields:
                return Ty("opaque", name, name=name, mutable=mutable)
            fl = [(f, self.parse_type(ft, seen | {name})) for f, ft in fields]
            return Ty("struct", name, name=name, fields=fl, mutable=mutable)
        if name in self.primitives:
            bits = self.primitives[name]
            return Ty("float" if "Float" in name else "int", name, bits // 8, None)
        if name in self.aliases:
            inner = self.parse_type(self.aliases[name], seen | {name})
            if inner.kind == "unknown":
                return inner
            inner = Ty(inner.kind, name, inner.size, inner.signed, inner.name, inner.pointee,
                       inner.fields, inner.count, inner.elem, inner.mutable)
            return inner
        return Ty("unknown", t, name="unknown Julia type %r" % t)


# --------------------------------------------------------------------------
# Matching.
# --------------------------------------------------------------------------

def match_types(c, j, where, is_return=False):
    """Problems (strings) when Julia type j does not match C type c."""
    if j.kind == "unknown":
        return ["%s: %s" % (where, j.name)]
    if is_return and j.kind == "ptr" and j.name == "Ref":
        return ["%s: Ref{...} is not a valid @ccall return type; use Ptr{...}" % where]
    bad = ["%s: Julia %s does not match C %s" % (where, describe(j), describe(c))]
    if c.kind == "int":
        if j.kind != "int" or j.size != c.size or j.signed != c.signed:
            return bad
        return []
    if c.kind == "float":
        return [] if j.kind == "float" and j.size == c.size else bad
    if c.kind == "bool":
        return [] if j.kind == "bool" else bad
    if c.kind == "char":  # plain char: signedness is the platform's
        return [] if j.kind in ("char", "int") and j.size == 1 else bad
    if c.kind == "void":
        return [] if j.kind == "void" else bad
    if c.kind == "funcptr":
        if j.kind == "ptr" and j.pointee.kind == "void" and j.name != "Ref":
            return []
        return bad + ["%s: a C function pointer is passed as Ptr{Cvoid} (from @cfunction)" % where]
    if c.kind == "struct":
        if j.kind != "struct":
            return bad
        jname = j.text if j.text == j.name else "%s (= %s)" % (j.text, j.name)
        if j.mutable:
            return ["%s: %s is a mutable struct; a by-value C struct needs an immutable "
                    "(isbits) Julia struct" % (where, jname)]
        if flatten(j) != flatten(c):
            return ["%s: layout of Julia %s %s differs from C %s %s"
                    % (where, jname, flatten(j), c.text, flatten(c))]
        return []
    if c.kind == "opaque":
        if j.kind == "opaque":
            return [] if j.name == c.name else bad
        return bad
    if c.kind == "array":
        if j.kind == "array" and j.count == c.count:
            return match_types(c.elem, j.elem, where)
        return bad
    if c.kind == "ptr":
        if j.kind != "ptr":
            return bad
        cp, jp = c.pointee, j.pointee
        if j.name == "Cstring" and cp.kind != "char":
            return bad
        if cp.kind == "void":
            return []  # void* takes any pointer
        if jp.kind == "void":
            if cp.kind == "opaque":
                return []  # an untyped handle
            return ["%s: Julia %s loses the pointee type of C %s; spell the pointee"
                    % (where, j.text, c.text)]
        sub = match_types(cp, jp, where + " (pointee)")
        return sub
    return bad


def match_callback_param(c, j, where):
    """match_types for a parameter of an @cfunction callback, stricter on
    void*: the library passes the callback a void*, so the Julia side must
    take Ptr{Cvoid}. A typed Ptr{T} there would reinterpret the pointer, and
    would let any (Ptr{T}, Ptr{Cvoid}) callback pass as the (void*, void*)
    sm_deleter, whatever T is."""
    if c.kind == "ptr" and c.pointee.kind == "void" and j.kind == "ptr" and j.pointee.kind != "void":
        return ["%s: C %s arrives as Ptr{Cvoid} in a callback, not %s" % (where, c.text, j.text)]
    return match_types(c, j, where)


def nm_exports(lib):
    try:
        res = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                             text=True, check=False)
    except OSError as e:
        raise SystemExit("error: cannot run nm: %s" % e)
    if res.returncode != 0:
        raise SystemExit("error: nm -D --defined-only %s failed: %s" % (lib, res.stderr.strip()))
    syms = set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[-2] not in ("A",):
            syms.add(parts[-1].split("@")[0])
    return syms


def eval_julia_int(text, pkg, depth=0):
    """Value of a `const` right-hand side made of integer literals, integer
    conversions (Int32(3), sm_status(3)), typemin/typemax and + - * ()."""
    t = text.strip()
    if depth > 10:
        return None
    m = re.fullmatch(r"(typemin|typemax)\((\w+)\)", t)
    if m:
        ty = pkg.parse_type(m.group(2))
        if ty.kind != "int":
            return None
        bits = 8 * ty.size
        if m.group(1) == "typemin":
            return -(2 ** (bits - 1)) if ty.signed else 0
        return 2 ** (bits - 1) - 1 if ty.signed else 2 ** bits - 1
    m = re.fullmatch(r"(" + IDENT + r")\((.*)\)", t)
    if m and pkg.parse_type(m.group(1)).kind == "int":
        return eval_julia_int(m.group(2), pkg, depth + 1)
    if re.fullmatch(r"[0-9xa-fA-F_+\-*()\s]+", t):
        try:
            return int(eval(t.replace("_", ""), {"__builtins__": {}}, {}))
        except Exception:
            return None
    if re.fullmatch(IDENT, t) and t in pkg.consts:
        return eval_julia_int(pkg.consts[t][0], pkg, depth + 1)
    return None


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


def rel(path):
    try:
        r = os.path.relpath(path, os.getcwd())
    except ValueError:
        return path
    return path if r.startswith("..") else r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=os.environ.get("STRIDEMEM_LIB"),
                    help="libstridemem.so to check exports against (default: $STRIDEMEM_LIB)")
    ap.add_argument("--header", default=os.path.join(REPO, "include", "stridemem.h"))
    ap.add_argument("--package", default=os.path.join(REPO, "bindings", "julia", "StrideMem"))
    ap.add_argument("--quiet", action="store_true", help="only problems and the summary")
    args = ap.parse_args(argv)

    if not args.lib:
        print("error: no library: pass --lib or set STRIDEMEM_LIB (the nm check is never skipped)")
        return 2
    if not os.path.isfile(args.lib):
        print("error: library %s does not exist (the nm check is never skipped)" % args.lib)
        return 2
    if not os.path.isfile(args.header):
        print("error: header %s does not exist" % args.header)
        return 2
    if not os.path.isdir(os.path.join(args.package, "src")):
        print("error: %s has no src/ folder" % args.package)
        return 2

    header = Header(args.header)
    exports = nm_exports(args.lib)
    pkg = JuliaPackage(args.package)
    problems = list(header.problems)
    problems += structure_problems(args.package, os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(args.header))), "VERSION"))

    if not header.functions:
        problems.append("%s: no SM_API function prototypes found" % args.header)
    if not pkg.ccalls:
        problems.append("%s: no @ccall found in src/**/*.jl" % args.package)

    for path, line in pkg.raw_ccalls:
        problems.append("%s:%d: plain ccall(...) cannot be checked; use @ccall lib.sym(args)::T"
                        % (rel(path), line))

    wrapped = set()
    for call in pkg.ccalls:
        loc = "%s:%d" % (rel(call.path), call.line)
        name = call.symbol or "?"
        for p in call.problems:
            problems.append("%s: %s: %s" % (loc, name, p))
        if call.symbol is None:
            continue
        if call.library is None:
            problems.append("%s: %s: no library given (lib.sym form required)" % (loc, name))
        if call.varargs:
            problems.append("%s: %s: varargs (`;`) but the C function is not variadic" % (loc, name))
        proto = header.functions.get(call.symbol)
        if call.symbol not in exports:
            problems.append("%s: %s: not exported by %s (nm -D --defined-only)"
                            % (loc, name, args.lib))
        if proto is None:
            problems.append("%s: %s: not declared in %s" % (loc, name, rel(args.header)))
            continue
        wrapped.add(call.symbol)
        cret, cparams, _ = proto
        if len(call.args) != len(cparams):
            problems.append("%s: %s: %d arguments, the C prototype has %d (%s)"
                            % (loc, name, len(call.args), len(cparams),
                               ", ".join("%s %s" % (t.text, n) for n, t in cparams) or "void"))
        else:
            for k, ((value, jtext), (pname, ctype)) in enumerate(zip(call.args, cparams), 1):
                if jtext is None:
                    continue
                jt = pkg.parse_type(jtext)
                where = "%s: %s: argument %d (%s)" % (loc, name, k, pname or value)
                problems.extend(match_types(ctype, jt, where))
        if call.ret is not None:
            jt = pkg.parse_type(call.ret)
            problems.extend(match_types(cret, jt, "%s: %s: return type" % (loc, name),
                                        is_return=True))

    # @cfunction callbacks handed to the library: each must have the exact
    # signature of one of the header's function-pointer types.
    for path, line, jret, jargs, perr in pkg.cfunctions:
        loc = "%s:%d" % (rel(path), line)
        if perr:
            problems.append("%s: %s" % (loc, perr))
            continue
        fits = []
        for fname, ft in sorted(header.funcptrs.items()):
            if len(jargs) != len(ft.fparams):
                continue
            errs = match_types(ft.fret, pkg.parse_type(jret), "return", is_return=True)
            for k, (jt, (_, ct)) in enumerate(zip(jargs, ft.fparams), 1):
                errs += match_callback_param(ct, pkg.parse_type(jt), "argument %d" % k)
            if not errs:
                fits.append(fname)
        if not fits:
            problems.append("%s: @cfunction(_, %s, (%s)) matches no function-pointer type of the "
                            "header (%s)" % (loc, jret, ", ".join(jargs), "; ".join(
                                "%s: %s (%s)" % (n, t.fret.text, ", ".join(p.text for _, p in t.fparams))
                                for n, t in sorted(header.funcptrs.items()))))

    # Constants: every SM_* const in the package must equal the header's value.
    nconst = 0
    for cname, (rhs, path, line) in sorted(pkg.consts.items()):
        if not cname.startswith("SM_") or cname not in header.constants:
            if cname.startswith("SM_") and cname not in header.constants:
                problems.append("%s:%d: const %s is not a constant of the header"
                                % (rel(path), line, cname))
            continue
        v = eval_julia_int(rhs, pkg)
        nconst += 1
        if v is None:
            problems.append("%s:%d: const %s = %s: cannot evaluate (use an integer literal)"
                            % (rel(path), line, cname, rhs))
        elif v != header.constants[cname]:
            problems.append("%s:%d: const %s = %d, the header says %d"
                            % (rel(path), line, cname, v, header.constants[cname]))

    unwrapped = sorted(set(header.functions) - wrapped)
    missing_consts = sorted(k for k in header.constants
                            if k.startswith("SM_") and k not in pkg.consts
                            and not k.startswith("SM_VERSION"))
    exported_sm = sorted(s for s in exports if s.startswith("sm_"))
    undeclared = sorted(set(exported_sm) - set(header.functions))

    for p in problems:
        print("PROBLEM " + p)
    if not args.quiet:
        if unwrapped:
            print("info: header functions the package does not wrap (%d): %s"
                  % (len(unwrapped), ", ".join(unwrapped)))
        else:
            print("info: the package wraps every function of the header")
        if missing_consts:
            print("info: header constants without a Julia const (%d): %s"
                  % (len(missing_consts), ", ".join(missing_consts)))
        if undeclared:
            print("info: exported sm_ symbols not declared in the header: %s"
                  % ", ".join(undeclared))
    print("checked %d @ccall sites in %d files: %d distinct symbols of %d header functions "
          "(%d sm_ symbols exported by %s), %d @cfunction callbacks, %d constants; %d problem(s)"
          % (len(pkg.ccalls), len(pkg.files), len(wrapped), len(header.functions),
             len(exported_sm), os.path.basename(args.lib), len(pkg.cfunctions), nconst,
             len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
