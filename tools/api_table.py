#!/usr/bin/env python3
"""One table of the C API, and every binding checked against it.

The table is read from include/stridemem_version.h, stridemem.h and
stridemem_dlpack.h: every SM_API function (name, return type, argument
types), every constant (#define and enum values) and every struct (field
names, types, offsets, size, alignment). `--dump` prints it. The target ABI
is LP64 (Linux on x86-64/aarch64): long and size_t are 8 bytes, pointers 8,
structs naturally aligned.

Each binding is checked against the table with one type model (integers by
size and signedness, floats by size, pointers by what they point to,
by-value structs by layout, function pointers by signature):

  julia   bindings/julia/StrideMem, read as text (no Julia runtime): every
          `@ccall` (symbol, argument count and types, return type, no
          varargs, no plain `ccall(`), every @cfunction callback against the
          header's function-pointer types, the structs named after a C
          struct (`const sm_device = SMDevice`), every `const SM_*` value;
          plus the package checks of tools/check_julia_package.py.
  rust    bindings/rust/src/sys.rs, read as text: every `pub fn` of the
          extern "C" block, every #[repr(C)] struct named after a C struct
          (fields, types, offsets, size), every `pub const` named after a
          header constant, callbacks as Option<extern "C" fn> of the right
          signature.
  python  bindings/python, imported (STRIDEMEM_LIB set to --lib): the
          argtypes/restype of every function configured on `stridemem.lib`,
          every ctypes.Structure of the package named after a C struct
          (sm_device -> SmDevice, sm_memory_stats_t -> SmMemoryStats,
          sm_DLTensor -> DLTensor; offsets and sizeof from ctypes itself), and
          the constants `stridemem.NAME` == SM_NAME (plus DLPACK_FLAG_*),
          DTYPES, FORMATS, OPS and STATUS_NAMES; the map _PY_NAMES (C name ->
          the Python call, for messages) names every header function but those
          in PY_UNNAMED. c_void_p is accepted for any pointer (noted when C
          has a typed one).

For every binding, a header function it does not declare is a problem (a
note with --partial), and so is a declaration the header lacks; every
declared symbol must be exported by the library (`nm -D --defined-only`).
Each problem names the binding, its file:line, what the header says (with
its file:line) and what the binding says.

Usage:
  api_table.py [--lib PATH] [--only julia,rust,python] [--julia DIR]
               [--rust SYS_RS] [--python DIR] [--header H ...] [--partial]
               [--quiet] [--dump]

The library comes from --lib or STRIDEMEM_LIB; a missing library is an
error (the nm part is never skipped). The Python part imports the package,
so run the tool with an interpreter that has what the package imports.
Exit status: 0 when no problem was found, 1 when problems were found, 2 when
the inputs could not be read.
"""

import argparse
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_text import closing, mask_julia, rel  # noqa: E402  (shared with check_julia_package)


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
    """The type with what it is on LP64, for messages."""
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


def align_of(t):
    """Alignment on LP64 with natural alignment (what every compiler here does)."""
    if t.kind == "struct":
        return max([align_of(f) for _, f in t.fields] or [1])
    if t.kind == "array":
        return align_of(t.elem)
    if t.kind in ("ptr", "funcptr"):
        return 8
    return max(t.size, 1)


def size_of(t):
    if t.kind == "struct":
        return layout(t)[1]
    if t.kind == "array":
        return t.count * size_of(t.elem)
    if t.kind in ("ptr", "funcptr"):
        return 8
    return t.size


def layout(t):
    """([(field name, offset, Ty)], size) of a struct."""
    off = 0
    out = []
    for name, f in t.fields:
        a = align_of(f)
        off = (off + a - 1) // a * a
        out.append((name, off, f))
        off += size_of(f)
    a = align_of(t)
    return out, (off + a - 1) // a * a


layout_size = size_of


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
    e = re.sub(r"\bU?INT(?:8|16|32|64|MAX)_C\(\s*([^()]*?)\s*\)", r"(\1)", e)
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
    """The table: every SM_API function, constant (#define and enum), typedef
    and struct of the headers given, read in order (a later header may use
    the types of an earlier one)."""

    def __init__(self, paths):
        if isinstance(paths, str):
            paths = [paths]
        self.paths = list(paths)
        self.constants = {}   # name -> int
        self.const_where = {}  # name -> "file:line"
        self.typedefs = {}    # alias -> Ty
        self.structs = {}     # tag -> Ty
        self.struct_where = {}  # typedef name or tag -> "file:line"
        self.functions = {}   # name -> (ret Ty, [(param name, Ty)], line)
        self.where = {}       # function name -> "file:line"
        self.funcptrs = {}    # function-pointer typedef name -> Ty (fret, fparams)
        self.problems = []
        for path in self.paths:
            self._read(path)
        self.path = self.paths[0]

    def _read(self, path):
        self.path = path
        raw = open(path, encoding="utf-8").read()
        text = strip_c_comments(raw)
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
                    self.const_where[m.group(1)] = "%s:%d" % (rel(path), len(lines) + 1)
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
                lead = len(body[start:pos]) - len(body[start:pos].lstrip())
                self._statement(body[start:pos].strip(), self._line_of(body, start + lead))
                start = pos + 1
            pos += 1

    def _statement(self, st, line):
        st = re.sub(r'extern\s+"C"\s*\{', "", st).strip()
        st = st.lstrip("}").strip()
        if not st:
            return
        m = re.fullmatch(r"enum\s*\w*\s*\{(.*)\}\s*\w*", st, flags=re.S)
        if m:
            self._enum(m.group(1), line)
            return
        m = re.fullmatch(r"typedef\s+enum\s*\w*\s*\{(.*)\}\s*(\w+)", st, flags=re.S)
        if m:
            self._enum(m.group(1), line)
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
                self.struct_where[tag] = "%s:%d" % (rel(self.path), line)
            if m.group(1) and alias:
                self.typedefs[alias] = t
                self.struct_where[alias] = "%s:%d" % (rel(self.path), line)
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
                self.where[m.group(2)] = "%s:%d" % (rel(self.path), line)

    def _enum(self, body, line):
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
                self.const_where[name.strip()] = "%s:%d" % (rel(self.path), line)

    def _fields(self, body, line):
        fields = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            fp = re.fullmatch(r"(.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)", decl)
            if fp:  # a function-pointer field
                t = Ty("funcptr", decl, 8)
                t.fret = self.parse_type(fp.group(1))
                t.fparams = self._params(fp.group(3), fp.group(2), line)
                fields.append((fp.group(2), t))
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
            k = closing(masked, i, "{", "}")
            i = n if k < 0 else k + 1
        else:
            break
    return start, i


def match_paren(masked, i):
    """Index of the parenthesis closing the one at i (masked text)."""
    return closing(masked, i, "([{", ")]}")


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

def match_types(c, j, where, is_return=False, who="Julia"):
    """Problems (strings) when the binding's type j (in language `who`)
    does not match C type c."""
    if j.kind == "unknown":
        return ["%s: %s" % (where, j.name)]
    if is_return and j.kind == "ptr" and j.name == "Ref":
        return ["%s: Ref{...} is not a valid @ccall return type; use Ptr{...}" % where]
    bad = ["%s: %s %s does not match C %s; declare the C type's equivalent"
           % (where, who, describe(j), describe(c))]
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
        if j.kind == "funcptr":
            return match_funcptr(c, j, where, who)
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
            return ["%s: layout of %s %s %s differs from C %s %s"
                    % (where, who, jname, flatten(j), c.text, flatten(c))]
        return []
    if c.kind == "opaque":
        if j.kind == "opaque":
            return [] if j.name == c.name else bad
        if j.kind == "struct" and j.name == c.name:
            return []  # a struct's pointer to itself, declared before its body
        return bad
    if c.kind == "array":
        if j.kind == "array" and j.count == c.count:
            return match_types(c.elem, j.elem, where, who=who)
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
            return ["%s: %s %s loses the pointee type of C %s; spell the pointee"
                    % (where, who, j.text, c.text)]
        sub = match_types(cp, jp, where + " (pointee)", who=who)
        return sub
    return bad


def match_funcptr(c, j, where, who):
    """A typed function pointer of the binding (Rust's Option<extern "C" fn>,
    a ctypes CFUNCTYPE) against the C one: same arity, return and parameters."""
    out = []
    if getattr(j, "nullable", True) is False:
        out.append("%s: %s %s cannot be NULL but C passes NULL for no callback; wrap it in Option<...>"
                   % (where, who, j.text))
    cret, cparams = getattr(c, "fret", None), getattr(c, "fparams", None)
    jret, jparams = getattr(j, "fret", None), getattr(j, "fparams", None)
    if cret is None or cparams is None or jret is None or jparams is None:
        return out
    if len(cparams) != len(jparams):
        return out + ["%s: %s function pointer takes %d arguments, C %s takes %d"
                      % (where, who, len(jparams), c.text, len(cparams))]
    out += match_types(cret, jret, where + " (callback return)", who=who)
    for k, ((_, ct), (_, jt)) in enumerate(zip(cparams, jparams), 1):
        out += match_types(ct, jt, "%s (callback argument %d)" % (where, k), who=who)
    return out


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


# --------------------------------------------------------------------------
# Struct layouts, the same rule for every binding.
# --------------------------------------------------------------------------

def c_struct_names(header):
    """Each C struct once: (the name bindings mirror, [every name], Ty). The
    typedef name wins over the tag (sm_memory_stats_t over sm_memory_stats)."""
    out = []
    seen = {}
    for name, t in list(header.typedefs.items()) + list(header.structs.items()):
        if t.kind != "struct":
            continue
        if id(t) in seen:
            seen[id(t)][1].append(name)
            continue
        entry = (name, [name], t)
        seen[id(t)] = entry
        out.append(entry)
    return out


def field_name(name):
    """Rust spells a field named like a keyword with a trailing underscore (type_)."""
    return name[:-1] if name.endswith("_") and not name.endswith("__") else name


def struct_problems(cname, ct, bt, who, loc, offsets=None, size=None):
    """The binding's mirror bt of C struct ct: the same fields in the same
    order with matching types, offsets and size. offsets/size: what the
    binding's runtime says (ctypes), else computed from bt."""
    out = []
    where = "%s: struct %s" % (loc, cname)
    cl, csize = layout(ct)
    bl, bsize = layout(bt)
    if offsets is not None:
        bl = [(n, offsets.get(n, o), t) for n, o, t in bl]
    if size is not None:
        bsize = size
    cnames = [n for n, _, _ in cl]
    bnames = [field_name(n) for n, _, _ in bl]
    if cnames != bnames:
        out.append("%s: fields are (%s), the header has (%s); declare the header's fields in its order"
                   % (where, ", ".join(bnames), ", ".join(cnames)))
        return out
    for (n, coff, cf), (_, boff, bf) in zip(cl, bl):
        sub = match_types(cf, bf, "%s: field %s" % (where, n), who=who)
        out += sub
        if not sub and coff != boff:
            out.append("%s: field %s at offset %d, the header puts it at %d"
                       % (where, n, boff, coff))
    if not out and csize != bsize:
        out.append("%s: %d bytes, the header's struct has %d" % (where, bsize, csize))
    return out


# --------------------------------------------------------------------------
# Rust side: src/sys.rs read as text.
# --------------------------------------------------------------------------

R_INTS = {
    "i8": (1, True), "u8": (1, False), "i16": (2, True), "u16": (2, False),
    "i32": (4, True), "u32": (4, False), "i64": (8, True), "u64": (8, False),
    "isize": (8, True), "usize": (8, False),
    "c_schar": (1, True), "c_uchar": (1, False), "c_short": (2, True), "c_ushort": (2, False),
    "c_int": (4, True), "c_uint": (4, False), "c_long": (8, True), "c_ulong": (8, False),
    "c_longlong": (8, True), "c_ulonglong": (8, False), "size_t": (8, False), "ssize_t": (8, True),
}
R_FLOATS = {"f32": 4, "f64": 8, "c_float": 4, "c_double": 8}


def mask_rust(src):
    """Comments blanked and string contents replaced by spaces, positions kept."""
    out = list(src)
    i, n = 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif src[i] == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def split_top_rust(text):
    """Splits at commas outside (), [], {} and <>."""
    parts, cur, depth = [], [], 0
    for k, c in enumerate(text):
        if c in "([{<":
            depth += 1
        elif c in ")]}" or (c == ">" and text[k - 1:k] != "-"):
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def eval_rust_int(expr, consts, depth=0):
    e = expr.strip()
    if depth > 10:
        return None
    e = re.sub(r"\bas\s+\w+", "", e)
    for ty, (size, signed) in R_INTS.items():
        lo = -(2 ** (8 * size - 1)) if signed else 0
        hi = 2 ** (8 * size - 1) - 1 if signed else 2 ** (8 * size) - 1
        e = re.sub(r"\b%s::MIN\b" % ty, "(%d)" % lo, e)
        e = re.sub(r"\b%s::MAX\b" % ty, "(%d)" % hi, e)

    def name(m):
        v = consts.get(m.group(0))
        if v is None:
            return m.group(0)
        r = eval_rust_int(v[1], consts, depth + 1)
        return m.group(0) if r is None else "(%d)" % r
    e = re.sub(r"\b[A-Za-z_]\w*\b", name, e)
    e = re.sub(r"(?<=[0-9a-fA-F])_?(i|u)(8|16|32|64|size)\b", "", e)
    e = e.replace("_", "")
    if not re.fullmatch(r"[0-9xXa-fA-F+\-*/()<>|&\s]+", e):
        return None
    try:
        return int(eval(e.replace("/", "//"), {"__builtins__": {}}, {}))
    except Exception:
        return None


class RustSys:
    """pub type / pub const / #[repr(C)] pub struct / extern "C" fn of sys.rs."""

    def __init__(self, path):
        self.path = path
        self.src = open(path, encoding="utf-8").read()
        m = mask_rust(self.src)
        self.masked = m
        self.aliases = {}    # name -> (type text, line)
        self.consts = {}     # name -> (type text, expr text, line)
        self.structs = {}    # name -> (repr_c, [(field, type text)], line)
        self.functions = {}  # name -> ([(arg, type text)], ret text or None, line)
        self.problems = []
        line = lambda pos: m.count("\n", 0, pos) + 1  # noqa: E731
        for x in re.finditer(r"^\s*pub\s+type\s+(\w+)\s*=\s*([^;]+);", m, flags=re.M):
            self.aliases[x.group(1)] = (" ".join(x.group(2).split()), line(x.start(1)))
        for x in re.finditer(r"^\s*pub\s+const\s+(\w+)\s*:\s*([^=]+?)\s*=\s*([^;]+);", m, flags=re.M):
            self.consts[x.group(1)] = (x.group(2).strip(), " ".join(self.src[x.start(3):x.end(3)].split()),
                                       line(x.start(1)))
        for x in re.finditer(r"((?:#\[[^\]]*\]\s*)*)pub\s+struct\s+(\w+)\s*\{", m):
            close = match_paren(m, x.end() - 1)
            fields = []
            for part in split_top_rust(m[x.end():close]):
                fm = re.fullmatch(r"(?:pub(?:\([^)]*\))?\s+)?(\w+)\s*:\s*(.+)", part, flags=re.S)
                if fm:
                    fields.append((fm.group(1), " ".join(fm.group(2).split())))
            repr_c = re.search(r"#\[repr\(\s*C\b", x.group(1)) is not None
            self.structs[x.group(2)] = (repr_c, fields, line(x.start(2)))
        for blk in re.finditer(r"(?:unsafe\s+)?extern\s+\"[^\"]*\"\s*\{", m):
            close = match_paren(m, blk.end() - 1)
            body = m[blk.end():close]
            for x in re.finditer(r"\bfn\s+(\w+)\s*\(", body):
                start = blk.end() + x.end() - 1
                end = match_paren(m, start)
                args = []
                for part in split_top_rust(m[start + 1:end]):
                    am = re.fullmatch(r"(\w+)\s*:\s*(.+)", part, flags=re.S)
                    if am:
                        args.append((am.group(1), " ".join(am.group(2).split())))
                    else:
                        self.problems.append("%s:%d: %s: cannot parse argument %r"
                                             % (rel(path), line(start), x.group(1), part))
                rm = re.match(r"\s*->\s*([^;]+);", m[end + 1:])
                ret = " ".join(rm.group(1).split()) if rm else None
                self.functions[x.group(1)] = (args, ret, line(blk.end() + x.start(1)))

    def parse_type(self, text, seen=frozenset()):
        t = " ".join(text.split())
        m = re.fullmatch(r"\*\s*(mut|const)\s+(.+)", t)
        if m:
            return Ty("ptr", t, 8, pointee=self.parse_type(m.group(2), seen))
        m = re.fullmatch(r"\[\s*(.+?)\s*;\s*(.+?)\s*\]", t)
        if m:
            n = eval_rust_int(m.group(2), self.consts)
            return Ty("array", t, count=n or 0, elem=self.parse_type(m.group(1), seen))
        m = re.fullmatch(r"(Option\s*<\s*)?(?:unsafe\s+)?extern\s+\"[^\"]*\"\s+fn\s*\((.*?)\)\s*(?:->\s*(.+?))?\s*(>)?",
                         t)
        if m:
            f = Ty("funcptr", t, 8)
            f.nullable = bool(m.group(1))
            f.fparams = []
            for part in split_top_rust(m.group(2)):
                am = re.fullmatch(r"(?:(\w+)\s*:\s*)?(.+)", part)
                f.fparams.append((am.group(1) or "", self.parse_type(am.group(2), seen)))
            f.fret = self.parse_type(m.group(3), seen) if m.group(3) else Ty("void", "()")
            return f
        if t == "()":
            return Ty("void", t)
        name = t.split("::")[-1].strip()
        if name in R_INTS:
            size, signed = R_INTS[name]
            return Ty("int", t, size, signed)
        if name in R_FLOATS:
            return Ty("float", t, R_FLOATS[name])
        if name == "c_char":
            return Ty("char", t, 1)
        if name == "bool":
            return Ty("bool", t, 1)
        if name == "c_void":
            return Ty("void", t)
        if name in seen and name in self.structs:
            return Ty("opaque", name, name=name)  # a struct's pointer to itself
        if name in seen:
            return Ty("unknown", t, name="recursive type %r" % name)
        if name in self.structs:
            _, fields, _ = self.structs[name]
            if all(f.startswith("_") for f, _ in fields):
                return Ty("opaque", name, name=name)
            return Ty("struct", name, name=name,
                      fields=[(f, self.parse_type(ft, seen | {name})) for f, ft in fields])
        if name in self.aliases:
            inner = self.parse_type(self.aliases[name][0], seen | {name})
            if inner.kind == "unknown":
                return inner
            out = Ty(inner.kind, name, inner.size, inner.signed, inner.name, inner.pointee,
                     inner.fields, inner.count, inner.elem)
            for a in ("fret", "fparams", "nullable"):
                if hasattr(inner, a):
                    setattr(out, a, getattr(inner, a))
            return out
        return Ty("unknown", t, name="unknown Rust type %r" % t)


def check_rust(header, sys_rs, exports, partial=False):
    """(problems, notes, summary) for the Rust crate's sys.rs."""
    problems, notes = [], []
    if not os.path.isfile(sys_rs):
        return ["rust %s: no such file" % rel(sys_rs)], notes, "rust: not checked"
    rs = RustSys(sys_rs)
    problems += ["rust " + p for p in rs.problems]
    loc = lambda line: "rust %s:%d" % (rel(sys_rs), line)  # noqa: E731
    if not rs.functions:
        problems.append("rust %s: no extern \"C\" fn found" % rel(sys_rs))
    for name, (args, ret, line) in sorted(rs.functions.items()):
        where = "%s: %s" % (loc(line), name)
        if name not in exports:
            problems.append("%s: not exported by the library (nm -D --defined-only)" % where)
        proto = header.functions.get(name)
        if proto is None:
            problems.append("%s: not declared in the header; remove it or add it to the header"
                            % where)
            continue
        cret, cparams, _ = proto
        hdr = header.where[name]
        if len(args) != len(cparams):
            problems.append("%s: %d arguments, the header (%s) has %d (%s); declare them as the "
                            "header does" % (where, len(args), hdr, len(cparams),
                                             ", ".join("%s %s" % (t.text, n) for n, t in cparams)
                                             or "void"))
        else:
            for k, ((aname, atext), (pname, ctype)) in enumerate(zip(args, cparams), 1):
                at = "%s: argument %d (%s)" % (where, k, pname or aname)
                problems += match_types(ctype, rs.parse_type(atext), at, who="Rust")
                if ctype.kind == "ptr" and not ctype.text.startswith("const ") and \
                        re.match(r"\*\s*const\b", atext):
                    problems.append("%s: Rust %s but C %s is not const (the library may write "
                                    "through it); declare *mut" % (at, atext, ctype.text))
        rt = rs.parse_type(ret) if ret else Ty("void", "()")
        problems += match_types(cret, rt, "%s: return type" % where, is_return=True, who="Rust")
    for name in sorted(set(header.functions) - set(rs.functions)):
        msg = "rust %s: %s: declared in %s but not in sys.rs; add `pub fn %s(...)` to the extern block" \
              % (rel(sys_rs), name, header.where[name], name)
        (notes if partial else problems).append(msg)
    nstruct = 0
    for cname, names, ct in c_struct_names(header):
        rname = next((n for n in names if n in rs.structs), None)
        if rname is None:
            msg = "rust %s: struct %s (%s) has no #[repr(C)] mirror; add one" \
                  % (rel(sys_rs), cname, header.struct_where.get(cname, "header"))
            (notes if partial else problems).append(msg)
            continue
        nstruct += 1
        repr_c, _, line = rs.structs[rname]
        if not repr_c:
            problems.append("%s: struct %s is not #[repr(C)]: Rust may reorder its fields; add #[repr(C)]"
                            % (loc(line), rname))
        problems += struct_problems(cname, ct, rs.parse_type(rname), "Rust", loc(line))
    nconst = 0
    for name, (ty, expr, line) in sorted(rs.consts.items()):
        if name.startswith("SM_VERSION_STRING"):
            continue
        if name not in header.constants:
            if name.startswith(("SM_", "sm_")):
                problems.append("%s: const %s is not a constant of the header; remove it"
                                % (loc(line), name))
            continue
        nconst += 1
        v = eval_rust_int(expr, rs.consts)
        if v is None:
            problems.append("%s: const %s = %s: cannot evaluate (use an integer literal)"
                            % (loc(line), name, expr))
        elif v != header.constants[name]:
            problems.append("%s: const %s = %d, the header (%s) says %d"
                            % (loc(line), name, v, header.const_where.get(name, "?"),
                               header.constants[name]))
    for name in sorted(k for k in header.constants if k not in rs.consts):
        notes.append("rust %s: header constant %s has no const" % (rel(sys_rs), name))
    summary = "rust: %d functions, %d structs, %d constants" % (len(rs.functions), nstruct, nconst)
    return problems, notes, summary


# --------------------------------------------------------------------------
# Python side: the package imported, its ctypes objects read at run time.
# --------------------------------------------------------------------------

# Python constants whose name is not the header's without "SM_".
PY_CONST_ALIASES = {"DLPACK_FLAG_READ_ONLY": "SM_DLPACK_FLAG_BITMASK_READ_ONLY",
                    "DLPACK_FLAG_IS_COPIED": "SM_DLPACK_FLAG_BITMASK_IS_COPIED"}
# Tables of the package: name -> (how a key becomes the header's name).
PY_CONST_TABLES = {"DTYPES": "SM_%s", "FORMATS": "SM_%s", "OPS": "SM_OP_%s"}


# Header functions the package's error messages never name (_PY_NAMES maps
# every other one to the Python call that reaches it).
PY_UNNAMED = {
    "sm_status_string": "returns a string, never a status to explain",
    "sm_last_error": "returns a string, never a status to explain",
    "sm_dtype_name": "returns a string, never a status to explain",
    "sm_debug_age_handle_slot": "a test hook of the C tests the package does not expose",
}


def py_struct_name(cname):
    """The ctypes Structure class mirroring C struct cname: sm_DLTensor ->
    DLTensor, sm_memory_stats_t -> SmMemoryStats, sm_oom_info -> SmOomInfo."""
    rest = cname[3:] if cname.startswith("sm_") else cname
    if rest.startswith("DL"):
        return rest
    if rest.endswith("_t"):
        rest = rest[:-2]
    return "Sm" + "".join(w[:1].upper() + w[1:] for w in rest.split("_"))


def py_ty(ct):
    import ctypes
    if ct is None:
        return Ty("void", "None")
    name = getattr(ct, "__name__", repr(ct))
    if isinstance(ct, type) and issubclass(ct, ctypes.Structure):
        return Ty("struct", name, name=name, fields=[(f[0], py_ty(f[1])) for f in ct._fields_])
    if isinstance(ct, type) and issubclass(ct, ctypes.Array):
        return Ty("array", name, count=ct._length_, elem=py_ty(ct._type_))
    if isinstance(ct, type) and issubclass(ct, ctypes._Pointer):
        return Ty("ptr", name, 8, pointee=py_ty(ct._type_))
    if isinstance(ct, type) and issubclass(ct, ctypes._CFuncPtr):
        f = Ty("funcptr", name, 8)
        f.fret = py_ty(ct._restype_)
        f.fparams = [("", py_ty(a)) for a in ct._argtypes_]
        return f
    code = getattr(ct, "_type_", None)
    if isinstance(code, str):
        if code == "z":
            return Ty("ptr", name, 8, pointee=Ty("char", "c_char", 1))
        if code == "P":
            return Ty("ptr", name, 8, pointee=Ty("void", "None"), name="c_void_p")
        if code == "c":
            return Ty("char", name, 1)
        if code == "?":
            return Ty("bool", name, 1)
        if code in "fdg":
            return Ty("float", name, ctypes.sizeof(ct))
        if code in "bBhHiIlLqQ":
            return Ty("int", name, ctypes.sizeof(ct), code.islower())
    return Ty("unknown", name, name="ctypes type %r is not understood" % name)


UNTYPED = []  # notes: where Python passes c_void_p for a typed C pointer


def match_python(c, j, where):
    """match_types with the one ctypes habit allowed: c_void_p for any data or
    function pointer (a raw address; ctypes checks nothing more for it)."""
    if j.kind == "ptr" and j.name == "c_void_p" and c.kind in ("ptr", "funcptr"):
        if c.kind == "ptr" and c.pointee.kind not in ("void", "opaque"):
            UNTYPED.append("%s: c_void_p for C %s (accepted; POINTER(...) would be checked)"
                           % (where, c.text))
        return []
    return match_types(c, j, where, who="Python")


def _py_package_files(pydir):
    out = []
    for d, _, names in os.walk(os.path.join(pydir, "stridemem")):
        out += [os.path.join(d, n) for n in sorted(names) if n.endswith(".py")]
    return sorted(out)


def _py_find(files, pattern):
    """file:line of the first line matching pattern in the package's sources."""
    rx = re.compile(pattern)
    for f in files:
        for k, text in enumerate(open(f, encoding="utf-8"), 1):
            if rx.search(text):
                return "%s:%d" % (rel(f), k)
    return rel(os.path.join(os.path.dirname(files[0]) if files else "", "?"))


def check_python(header, pydir, lib, partial=False):
    """(problems, notes, summary) for the Python package, imported."""
    problems, notes = [], []
    if not os.path.isdir(os.path.join(pydir, "stridemem")):
        return ["python %s: no stridemem package there" % rel(pydir)], notes, "python: not checked"
    os.environ["STRIDEMEM_LIB"] = os.path.abspath(lib)
    sys.path.insert(0, os.path.abspath(pydir))
    try:
        import ctypes
        import stridemem
    except Exception as e:  # an import that fails is a finding, not a crash
        return ["python %s: importing stridemem failed: %s: %s" % (rel(pydir), type(e).__name__, e)], \
            notes, "python: not checked"
    files = _py_package_files(pydir)
    cdll = getattr(stridemem, "lib", None)
    if not isinstance(cdll, ctypes.CDLL):
        return ["python %s: stridemem.lib is not a ctypes.CDLL" % rel(pydir)], notes, "python: not checked"
    configured = {n: f for n, f in vars(cdll).items()
                  if n.startswith("sm_") and getattr(f, "argtypes", None) is not None}
    for name in sorted(configured):
        fn = configured[name]
        where = "python %s: %s" % (_py_find(files, r"[\"']%s[\"']" % name), name)
        proto = header.functions.get(name)
        if proto is None:
            problems.append("%s: has argtypes but is not declared in the header; remove it" % where)
            continue
        cret, cparams, _ = proto
        args = list(fn.argtypes)
        if len(args) != len(cparams):
            problems.append("%s: argtypes has %d entries, the header (%s) has %d arguments (%s); "
                            "list them as the header does"
                            % (where, len(args), header.where[name], len(cparams),
                               ", ".join("%s %s" % (t.text, n) for n, t in cparams) or "void"))
        else:
            for k, (a, (pname, ctype)) in enumerate(zip(args, cparams), 1):
                problems += match_python(ctype, py_ty(a), "%s: argtypes[%d] (%s)" % (where, k - 1, pname))
        problems += match_python(cret, py_ty(fn.restype), "%s: restype" % where)
    for name in sorted(set(header.functions) - set(configured)):
        msg = "python %s: %s: declared in %s but stridemem.lib.%s has no argtypes; give it its " \
              "(restype, argtypes)" % (rel(pydir), name, header.where[name], name)
        (notes if partial else problems).append(msg)
    # Structures, wherever in the package they are defined.
    classes = {}
    for mname, mod in list(sys.modules.items()):
        if mod is None or not (mname == "stridemem" or mname.startswith("stridemem.")):
            continue
        for obj in list(vars(mod).values()):
            if isinstance(obj, type) and issubclass(obj, ctypes.Structure) and \
                    obj.__module__.startswith("stridemem"):
                classes.setdefault(obj.__name__, obj)
    nstruct = 0
    for cname, names, ct in c_struct_names(header):
        pname = py_struct_name(cname)
        cls = classes.get(pname)
        if cls is None:
            notes.append("python: struct %s has no Structure class %s" % (cname, pname))
            continue
        nstruct += 1
        # By its class statement: the package sets the classes' __module__ to
        # "stridemem" while they are defined in a submodule, which inspect misses.
        loc = "python %s" % _py_find(files, r"^class %s\b" % re.escape(pname))
        bt = py_ty(cls)
        offsets = {f[0]: getattr(cls, f[0]).offset for f in cls._fields_}
        for p in struct_problems(cname, ct, bt, "Python", loc, offsets=offsets, size=ctypes.sizeof(cls)):
            problems.append(p.replace("struct %s:" % cname, "struct %s (%s):" % (cname, pname), 1))
    # Constants: NAME == SM_NAME, the aliases, and the tables.
    nconst = 0

    def compare(pyname, cname, value, search=None):
        nonlocal nconst
        if cname not in header.constants or isinstance(value, bool) or not isinstance(value, int):
            return
        nconst += 1
        if value != header.constants[cname]:
            problems.append("python %s: %s = %d, the header (%s) says %s = %d"
                            % (_py_find(files, search or r"^\s*%s\s*=" % re.escape(pyname)), pyname,
                               value, header.const_where.get(cname, "?"), cname,
                               header.constants[cname]))
    for attr in sorted(dir(stridemem)):
        if attr.isupper() and not attr.startswith("SM_VERSION"):
            compare(attr, PY_CONST_ALIASES.get(attr, "SM_" + attr), getattr(stridemem, attr))
    for table, pattern in sorted(PY_CONST_TABLES.items()):
        for key, value in sorted(getattr(stridemem, table, {}).items()):
            code = value[0] if isinstance(value, tuple) else value
            compare("%s[%r]" % (table, key), pattern % key.upper(), code,
                    r"[\"']%s[\"']\s*:" % re.escape(key))
    for code, cname in sorted(getattr(stridemem, "STATUS_NAMES", {}).items()):
        compare("STATUS_NAMES key of %s" % cname, cname, code, r"[\"']%s[\"']" % cname)
    # _PY_NAMES (C name -> the Python call, for messages), wherever it is.
    py_names = None
    for mname, mod in sorted(sys.modules.items()):
        if mod is not None and (mname == "stridemem" or mname.startswith("stridemem.")) and \
                isinstance(vars(mod).get("_PY_NAMES"), dict):
            py_names = vars(mod)["_PY_NAMES"]
            break
    if py_names is None:
        problems.append("python %s: no _PY_NAMES map (C name -> Python call) in the package"
                        % rel(pydir))
    else:
        at = _py_find(files, r"^_PY_NAMES\s*=")
        for name in sorted(set(header.functions) - set(py_names) - set(PY_UNNAMED)):
            problems.append("python %s: _PY_NAMES has no entry for %s (%s): add the Python call that "
                            "reaches it, or list it in PY_UNNAMED of tools/api_table.py"
                            % (at, name, header.where[name]))
        for name in sorted(set(py_names) - set(header.functions)):
            problems.append("python %s: _PY_NAMES names %s, which the header does not declare; remove it"
                            % (at, name))
        for name in sorted(set(py_names) & set(PY_UNNAMED)):
            problems.append("python %s: _PY_NAMES names %s, which PY_UNNAMED of tools/api_table.py says "
                            "is never named; drop it from PY_UNNAMED" % (at, name))
    notes += UNTYPED
    summary = "python: %d functions, %d structs, %d constants" % (len(configured), nstruct, nconst)
    return problems, notes, summary


# --------------------------------------------------------------------------
# Julia side: the @ccalls, structs and consts of the package, read as text.
# --------------------------------------------------------------------------

def check_julia(header, package, exports, lib, repo_root, partial=False):
    """(problems, notes, summary) for the Julia package."""
    problems, notes = [], []
    if not os.path.isdir(os.path.join(package, "src")):
        return ["julia %s: no src/ folder" % rel(package)], notes, "julia: not checked"
    pkg = JuliaPackage(package)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import check_julia_package
    problems += ["julia " + p for p in check_julia_package.structure_problems(
        package, os.path.join(repo_root, "VERSION"))]
    if not pkg.ccalls:
        problems.append("julia %s: no @ccall found in src/**/*.jl" % rel(package))
    for path, line in pkg.raw_ccalls:
        problems.append("julia %s:%d: plain ccall(...) cannot be checked; use @ccall lib.sym(args)::T"
                        % (rel(path), line))

    wrapped = set()
    for call in pkg.ccalls:
        loc = "%s:%d" % (rel(call.path), call.line)
        name = call.symbol or "?"
        for p in call.problems:
            problems.append("julia %s: %s: %s" % (loc, name, p))
        if call.symbol is None:
            continue
        if call.library is None:
            problems.append("julia %s: %s: no library given (lib.sym form required)" % (loc, name))
        if call.varargs:
            problems.append("julia %s: %s: varargs (`;`) but the C function is not variadic" % (loc, name))
        proto = header.functions.get(call.symbol)
        if call.symbol not in exports:
            problems.append("julia %s: %s: not exported by %s (nm -D --defined-only)"
                            % (loc, name, lib))
        if proto is None:
            problems.append("julia %s: %s: not declared in %s; call a header function"
                            % (loc, name, ", ".join(rel(h) for h in header.paths)))
            continue
        wrapped.add(call.symbol)
        cret, cparams, _ = proto
        if len(call.args) != len(cparams):
            problems.append("julia %s: %s: %d arguments, the C prototype has %d (%s: %s); "
                            "declare them as the header does"
                            % (loc, name, len(call.args), len(cparams), header.where[call.symbol],
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
            problems.append("julia %s: %s" % (loc, perr))
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
            problems.append("julia %s: @cfunction(_, %s, (%s)) matches no function-pointer type of the "
                            "header (%s)" % (loc, jret, ", ".join(jargs), "; ".join(
                                "%s: %s (%s)" % (n, t.fret.text, ", ".join(p.text for _, p in t.fparams))
                                for n, t in sorted(header.funcptrs.items()))))

    # Constants: every SM_* const in the package must equal the header's value.
    nconst = 0
    for cname, (rhs, path, line) in sorted(pkg.consts.items()):
        if not cname.startswith("SM_") or cname not in header.constants:
            if cname.startswith("SM_") and cname not in header.constants:
                problems.append("julia %s:%d: const %s is not a constant of the header"
                                % (rel(path), line, cname))
            continue
        v = eval_julia_int(rhs, pkg)
        nconst += 1
        if v is None:
            problems.append("julia %s:%d: const %s = %s: cannot evaluate (use an integer literal)"
                            % (rel(path), line, cname, rhs))
        elif v != header.constants[cname]:
            problems.append("julia %s:%d: const %s = %d, the header (%s) says %d"
                            % (rel(path), line, cname, v, header.const_where.get(cname, "?"),
                               header.constants[cname]))

    unwrapped = sorted(set(header.functions) - wrapped)
    for name in unwrapped:
        msg = "julia %s: %s: declared in %s but no @ccall calls it (the package does not wrap it)" \
              % (rel(package), name, header.where[name])
        (notes if partial else problems).append(msg)
    # Structs the package mirrors under the header's name (const sm_device = SMDevice).
    nstruct = 0
    for cname, names, ct in c_struct_names(header):
        jname = next((n for n in names if n in pkg.aliases or n in pkg.structs), None)
        if jname is None:
            notes.append("julia: struct %s has no Julia mirror named after it" % cname)
            continue
        jt = pkg.parse_type(jname)
        if jt.kind != "struct":
            continue  # a handle or Ptr{Cvoid} stand-in: no layout to compare
        nstruct += 1
        _, _, path, line = pkg.structs[jt.name]
        problems += struct_problems(cname, ct, jt, "Julia", "julia %s:%d" % (rel(path), line))
    missing_consts = sorted(k for k in header.constants
                            if k.startswith("SM_") and k not in pkg.consts
                            and not k.startswith("SM_VERSION"))
    if missing_consts:
        notes.append("julia: header constants without a Julia const (%d): %s"
                     % (len(missing_consts), ", ".join(missing_consts)))
    problems = [p if p.startswith("julia ") else "julia " + p for p in problems]
    summary = ("julia: %d @ccall sites in %d files, %d distinct symbols of %d header functions, "
               "%d @cfunction callbacks, %d structs, %d constants"
               % (len(pkg.ccalls), len(pkg.files), len(wrapped), len(header.functions),
                  len(pkg.cfunctions), nstruct, nconst))
    return problems, notes, summary


def dump_table(header, out=sys.stdout):
    """The table as text: what every binding is checked against."""
    for name in sorted(header.functions):
        ret, params, _ = header.functions[name]
        out.write("function %s %s(%s)  # %s\n" % (ret.text, name, ", ".join(
            "%s %s" % (t.text, n) for n, t in params) or "void", header.where[name]))
    for cname, names, ct in c_struct_names(header):
        fields, size = layout(ct)
        out.write("struct %s size %d align %d  # %s\n" % (cname, size, align_of(ct),
                                                       header.struct_where.get(cname, "?")))
        for n, off, t in fields:
            out.write("  +%-3d %s %s\n" % (off, t.text, n))
    for name in sorted(header.constants):
        out.write("constant %s = %d  # %s\n" % (name, header.constants[name],
                                                header.const_where.get(name, "?")))


BINDINGS = ("julia", "rust", "python")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=os.environ.get("STRIDEMEM_LIB"),
                    help="libstridemem.so to check exports against (default: $STRIDEMEM_LIB)")
    ap.add_argument("--header", action="append",
                    help="a header to read (repeatable; default: include/stridemem_version.h, "
                         "stridemem.h and stridemem_dlpack.h)")
    ap.add_argument("--julia", default=os.path.join(REPO, "bindings", "julia", "StrideMem"),
                    help="the Julia package folder")
    ap.add_argument("--rust", default=os.path.join(REPO, "bindings", "rust", "src", "sys.rs"),
                    help="the Rust crate's sys.rs")
    ap.add_argument("--python", default=os.path.join(REPO, "bindings", "python"),
                    help="the folder holding the stridemem Python package")
    ap.add_argument("--only", default=",".join(BINDINGS),
                    help="comma-separated bindings to check (default: %s)" % ",".join(BINDINGS))
    ap.add_argument("--partial", action="store_true",
                    help="header functions and structs a binding lacks are notes, not problems")
    ap.add_argument("--dump", action="store_true", help="print the table and exit")
    ap.add_argument("--quiet", action="store_true", help="only problems and the summary")
    args = ap.parse_args(argv)

    headers = args.header or [os.path.join(REPO, "include", h) for h in
                              ("stridemem_version.h", "stridemem.h", "stridemem_dlpack.h")]
    for h in headers:
        if not os.path.isfile(h):
            print("error: header %s does not exist" % h)
            return 2
    header = Header(headers)
    if args.dump:
        dump_table(header)
        return 0
    only = [b.strip() for b in args.only.split(",") if b.strip()]
    for b in only:
        if b not in BINDINGS:
            print("error: --only %s: the bindings are %s" % (b, ", ".join(BINDINGS)))
            return 2
    if not args.lib:
        print("error: no library: pass --lib or set STRIDEMEM_LIB (the nm check is never skipped)")
        return 2
    if not os.path.isfile(args.lib):
        print("error: library %s does not exist (the nm check is never skipped)" % args.lib)
        return 2
    exports = nm_exports(args.lib)
    repo_root = os.path.dirname(os.path.dirname(os.path.abspath(headers[-1])))

    problems = list(header.problems)
    notes = []
    summaries = []
    if not header.functions:
        problems.append("%s: no SM_API function prototypes found" % ", ".join(headers))
    for name in sorted(header.functions):
        if name not in exports:
            problems.append("header %s: %s is not exported by %s (nm -D --defined-only)"
                            % (header.where[name], name, args.lib))
    if "julia" in only:
        p, n, s = check_julia(header, args.julia, exports, args.lib, repo_root, args.partial)
        problems += p
        notes += n
        summaries.append(s)
    if "rust" in only:
        p, n, s = check_rust(header, args.rust, exports, args.partial)
        problems += p
        notes += n
        summaries.append(s)
    if "python" in only:
        p, n, s = check_python(header, args.python, args.lib, args.partial)
        problems += p
        notes += n
        summaries.append(s)

    for p in problems:
        print("PROBLEM " + p)
    if not args.quiet:
        for n in notes:
            print("note: " + n)
    exported_sm = sorted(s for s in exports if s.startswith("sm_"))
    print("table: %d functions, %d structs, %d constants from %s; %d sm_ symbols exported by %s"
          % (len(header.functions), len(c_struct_names(header)), len(header.constants),
             ", ".join(rel(h) for h in headers), len(exported_sm), os.path.basename(args.lib)))
    for s in summaries:
        print("checked " + s)
    print("%d problem(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
