"""Finds and loads libstridemem for the Python binding.

Standard library only, and importing this module loads nothing, so it can be
unit-tested (and used by the build backend) without a library at hand.

Order (the first that loads wins; see :func:`load`):

1. ``STRIDEMEM_LIB``: an explicit path. When it is set it is the only
   candidate: if it cannot be used, that is the error (a silent fall-through
   would hide a typo and load some other library).
2. ``bundled``: ``<package>/_lib/<SONAME>``, put there by a wheel built with
   the library bundled (scripts/python-wheel.sh).
3. ``system``: the installed library: ``pkg-config --variable=libdir
   stridemem``, then the SONAME on the dynamic linker's search path
   (LD_LIBRARY_PATH, the ldconfig cache, the default directories), then
   ``ctypes.util.find_library("stridemem")``.

The SONAME is ``libstridemem.so.<major>.<minor>`` while the major version is
0 (each 0.x minor may break the ABI: 0.4 is ``libstridemem.so.0.4``), from
1.0 on ``libstridemem.so.<major>`` (see library_name).
4. ``source tree``: only when the package is imported from the repository:
   ``build/libstridemem.so`` then ``build-*/libstridemem.so``.

A sanitizer build is never loaded unless its runtime is already in the
process: dlopen of an ASan (or TSan, MSan, HWASan) library without its
runtime loaded first aborts the interpreter (ASan) or fails, so such a file
is recognised from its dynamic string table before it is opened.
"""

import ctypes
import ctypes.util
import os
import shutil
import struct
import subprocess
import sysconfig

ENV_VAR = "STRIDEMEM_LIB"
SOURCE_ENV = "STRIDEMEM_LIB"
SOURCE_BUNDLED = "bundled"
SOURCE_SYSTEM = "system"
SOURCE_TREE = "source tree"

# pkg-config and ldconfig are asked with this limit: import must never hang.
TOOL_TIMEOUT_S = 5

# (name, markers in the dynamic string table, a symbol its runtime defines,
#  markers meaning the file NEEDs a runtime the dynamic loader can bring in
#  itself, or None when the runtime must be in the process before the file
#  is opened). UBSan's standalone runtime may be dlopen'ed like any library
#  (an ASan+UBSan build under LD_PRELOAD=libasan.so gets libubsan this way);
#  ASan aborts ("runtime does not come first"), TSan fails (static TLS).
_SANITIZERS = (
    ("ASan", (b"__asan_init", b"libasan.so", b"libclang_rt.asan"), "__asan_init", None),
    ("TSan", (b"__tsan_init", b"libtsan.so", b"libclang_rt.tsan"), "__tsan_init", None),
    ("MSan", (b"__msan_init", b"libclang_rt.msan"), "__msan_init", None),
    ("HWASan", (b"__hwasan_init", b"libhwasan.so", b"libclang_rt.hwasan"), "__hwasan_init",
     None),
    ("UBSan", (b"__ubsan_handle_", b"libubsan.so", b"libclang_rt.ubsan"),
     "__ubsan_handle_builtin_unreachable", (b"libubsan.so", b"libclang_rt.ubsan")),
)
_RUNTIME_LIB = {"ASan": "libasan.so", "TSan": "libtsan.so", "MSan": "libclang_rt.msan",
                "HWASan": "libhwasan.so", "UBSan": "libubsan.so"}


def version_tuple(text):
    """(major, minor, patch) of a version such as "0.2.0" or "0.2.0-dev";
    ValueError when it is not one."""
    return tuple(int(p) for p in text.split("-")[0].split(".")[:3])


def repo_version(repo):
    """The first line of the repository's VERSION file, or None when it
    cannot be read."""
    try:
        with open(os.path.join(repo, "VERSION")) as f:
            return f.readline().strip()
    except OSError:
        return None


def soversion(version):
    """The part of the SONAME that names the ABI of `version` (a (major,
    minor, ...) tuple): "0.4" for 0.4.x, where every minor version may break
    the ABI; "1" for 1.x.y. Matches SOVERSION in CMakeLists.txt."""
    major, minor = int(version[0]), int(version[1])
    return "%d.%d" % (major, minor) if major == 0 else "%d" % major


def library_name(version):
    """The file name the library is installed and bundled under (its SONAME)
    for the ABI of `version`, a (major, minor, ...) tuple."""
    return "libstridemem.so." + soversion(version)


# ---------------------------------------------------------------- sanitizers

def _dynamic_strings(f):
    """The dynamic string table (symbol names and NEEDED entries) of the ELF
    file open as `f`, or None when it is not an ELF file this reader
    understands. Reads the header, the section headers and that table only."""
    head = f.read(64)
    if head[:4] != b"\x7fELF" or len(head) < 64 or head[4] not in (1, 2):
        return None
    end = {1: "<", 2: ">"}.get(head[5])
    if end is None:
        return None
    if head[4] == 2:  # ELFCLASS64
        shoff, = struct.unpack_from(end + "Q", head, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", head, 0x3A)
        sh_fmt = end + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(end + "I", head, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", head, 0x2E)
        sh_fmt = end + "IIIIIIIIII"
    if not shoff or not shnum or shentsize < struct.calcsize(sh_fmt):
        return None
    f.seek(shoff)
    table = f.read(shnum * shentsize)
    try:
        # (sh_name, sh_type, ..., sh_offset [4], sh_size [5], sh_link [6], ...)
        sections = [struct.unpack_from(sh_fmt, table, i * shentsize) for i in range(shnum)]
    except struct.error:
        return None
    # SHT_DYNSYM (11) names its string table in sh_link; so does SHT_DYNAMIC (6).
    for wanted in (11, 6):
        for sh in sections:
            if sh[1] == wanted and 0 <= sh[6] < len(sections):
                strtab = sections[sh[6]]
                f.seek(strtab[4])
                return f.read(strtab[5])
    return None


def _string_table(path):
    """What the sanitizer markers are looked for in: the dynamic string table
    of an ELF file, or the whole content of anything else (a file without
    section headers; the tests' small fixtures)."""
    with open(path, "rb") as f:
        strings = _dynamic_strings(f)
        if strings is not None:
            return strings
        f.seek(0)
        return f.read()


def _built_with(path):
    """(the string table of `path`, the _SANITIZERS entries whose markers it
    holds). OSError if unreadable."""
    table = _string_table(path)
    return table, [e for e in _SANITIZERS if any(m in table for m in e[1])]


def sanitizers_of(path):
    """Names of the sanitizers `path` was built with ("ASan", "UBSan", ...),
    in a fixed order; empty for a normal build. OSError if unreadable."""
    return [e[0] for e in _built_with(path)[1]]


_SELF: list = []  # the process's own symbols (ctypes.CDLL(None)), opened once


def runtime_in_process(symbol):
    """Is `symbol` (e.g. "__asan_init") defined in the running process, i.e.
    was that sanitizer's runtime loaded (LD_PRELOAD) or linked in?"""
    if not _SELF:
        _SELF.append(ctypes.CDLL(None))
    try:
        getattr(_SELF[0], symbol)
        return True
    except AttributeError:
        return False


def missing_runtimes(path, has_runtime=runtime_in_process):
    """The sanitizers of `path` whose runtime is absent and cannot be brought
    in safely by opening the file; empty when the file may be opened."""
    table, entries = _built_with(path)
    missing = []
    for name, _, symbol, needed in entries:
        if needed is not None and any(m in table for m in needed):
            continue
        if not has_runtime(symbol):
            missing.append(name)
    return missing


def sanitizer_advice(names):
    """What to do about a sanitizer build whose runtime is not loaded."""
    preload = ":".join("$(gcc -print-file-name=%s)" % _RUNTIME_LIB[n] for n in names)
    return ("opening it without its runtime loaded first would abort or fail; run "
            "with LD_PRELOAD=%s (as scripts/reliability.sh does) or use a normal "
            "(non-sanitizer) build" % preload)


# ---------------------------------------------------------------- system search

def _run_tool(argv):
    """(returncode, stdout) of a short tool run, or (None, why) when it could
    not run or ran past TOOL_TIMEOUT_S."""
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TOOL_TIMEOUT_S,
                           universal_newlines=True)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % TOOL_TIMEOUT_S
    except OSError as e:
        return None, str(e)
    return p.returncode, p.stdout if p.returncode == 0 else p.stderr


def pkg_config_libdir():
    """(libdir, None) from `pkg-config --variable=libdir stridemem`, or
    (None, why not)."""
    exe = shutil.which("pkg-config")
    if not exe:
        return None, "pkg-config is not installed"
    rc, out = _run_tool([exe, "--variable=libdir", "stridemem"])
    if rc is None:
        return None, "pkg-config " + out
    if rc != 0:
        return None, "pkg-config knows no package 'stridemem'"
    libdir = out.strip()
    return (libdir, None) if libdir else (None, "pkg-config gave an empty libdir")


def _ldconfig_cache(name):
    exe = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)
    if not exe:
        return []
    rc, out = _run_tool([exe, "-p"])
    if rc != 0:
        return []
    found = []
    for line in out.splitlines():
        # "\tlibstridemem.so.0.4 (libc6,x86-64) => /usr/local/lib/libstridemem.so.0.4"
        left, sep, right = line.partition(" => ")
        if sep and left.strip().split(" ")[0] == name:
            found.append(right.strip())
    return found


def _default_dirs():
    arch = sysconfig.get_config_var("MULTIARCH")
    dirs = []
    for d in ("/lib", "/usr/lib"):
        if arch:
            dirs.append(os.path.join(d, arch))
        dirs += [d + "64", d]
    return dirs


def linker_search(name, environ=None):
    """Existing files called `name` where the dynamic linker would look, in
    its order: LD_LIBRARY_PATH, the ldconfig cache, the default directories.
    (The file is located here, not by dlopen, so that it can be checked for
    a sanitizer build before it is opened.)"""
    environ = os.environ if environ is None else environ
    dirs = [d for d in environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    paths = [os.path.join(d, name) for d in dirs] + _ldconfig_cache(name)
    paths += [os.path.join(d, name) for d in _default_dirs()]
    found, seen = [], set()
    for p in paths:
        if os.path.isfile(p) and os.path.realpath(p) not in seen:
            seen.add(os.path.realpath(p))
            found.append(p)
    return found


# ---------------------------------------------------------------- candidates

def source_repo(package_dir):
    """The repository root when `package_dir` is its bindings/python/stridemem
    (the package is imported from the source tree), else None."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(package_dir))))
    inside = os.path.join(repo, "bindings", "python", "stridemem")
    if (os.path.isfile(os.path.join(repo, "VERSION"))
            and os.path.isfile(os.path.join(repo, "include", "stridemem.h"))
            and os.path.isdir(inside) and os.path.samefile(inside, package_dir)):
        return repo
    return None


def candidates(version, package_dir, environ=None, pkg_config=pkg_config_libdir,
               search=linker_search, find_library=ctypes.util.find_library,
               repo=None):
    """Yields (source, path, why_not) in the order they are tried; `why_not`
    is None for an existing file, else why this place has none. Lazy: the
    system search runs only when nothing before it loaded. `repo` is the
    source tree (see source_repo) or None. STRIDEMEM_LIB is not handled here
    (see load). `version` is the binding's (major, minor, ...) tuple."""
    environ = os.environ if environ is None else environ
    name = library_name(version)

    bundled = os.path.join(package_dir, "_lib", name)
    yield SOURCE_BUNDLED, bundled, None if os.path.isfile(bundled) else "not present"

    libdir, why = pkg_config()
    what = "pkg-config --variable=libdir stridemem"
    if libdir is None:
        yield SOURCE_SYSTEM, what, why
    else:
        p = os.path.join(libdir, name)
        yield SOURCE_SYSTEM, p, None if os.path.isfile(p) else "not present (from %s)" % what

    found = search(name, environ)
    for p in found:
        yield SOURCE_SYSTEM, p, None
    if not found:
        yield (SOURCE_SYSTEM, name, "not on the dynamic linker's search path "
               "(LD_LIBRARY_PATH, the ldconfig cache, /lib, /usr/lib)")

    hit = find_library("stridemem")
    if not hit:
        yield SOURCE_SYSTEM, 'ctypes.util.find_library("stridemem")', "found nothing"
    else:
        paths = [hit] if os.sep in hit else search(hit, environ)
        for p in paths:
            yield SOURCE_SYSTEM, p, None
        if not paths:
            yield SOURCE_SYSTEM, hit, "named by ctypes.util.find_library but not located"

    if repo is None:
        yield (SOURCE_TREE, package_dir, "the package is not imported from the "
               "repository, so its build directories are not searched")
        return
    try:
        others = sorted(d for d in os.listdir(repo) if d.startswith("build-"))
    except OSError:
        others = []
    for d in ["build"] + others:
        p = os.path.join(repo, d, "libstridemem.so")
        yield SOURCE_TREE, p, None if os.path.isfile(p) else "not present"


# ---------------------------------------------------------------- loading

class Loaded(object):
    """The library that was loaded: `handle` (a ctypes.CDLL), `path` (the file
    opened) and `source` (SOURCE_ENV, SOURCE_BUNDLED, SOURCE_SYSTEM or
    SOURCE_TREE)."""

    def __init__(self, handle, path, source):
        self.handle, self.path, self.source = handle, path, source


ADVICE = ("Set STRIDEMEM_LIB=/path/to/libstridemem.so, install the library "
          "(cmake --install build, or a wheel with the library bundled: "
          "scripts/python-wheel.sh), or build it in the repository (scripts/build.sh "
          "makes build/libstridemem.so).")


def _load_explicit(value, environ, opener, has_runtime):
    if os.sep in value:
        path = os.path.abspath(value)
    else:  # a bare name: located like dlopen would, so it can be checked first
        hits = linker_search(value, environ)
        if not hits:
            raise ImportError("stridemem: STRIDEMEM_LIB=%s is not a path and no such "
                              "file is on the dynamic linker's search path. %s"
                              % (value, ADVICE))
        path = hits[0]
    try:
        missing = missing_runtimes(path, has_runtime)
    except OSError as e:
        raise ImportError("stridemem: STRIDEMEM_LIB=%s cannot be read (%s). Point it at "
                          "a built libstridemem.so or unset it to search the bundled "
                          "copy, the system and the source tree."
                          % (value, e.strerror or e))
    if missing:
        raise ImportError("stridemem: STRIDEMEM_LIB=%s is built with %s and that runtime "
                          "is not loaded in this process: %s."
                          % (value, "+".join(missing), sanitizer_advice(missing)))
    try:
        return Loaded(opener(path), path, SOURCE_ENV)
    except OSError as e:
        raise ImportError("stridemem: STRIDEMEM_LIB=%s cannot be loaded: %s. Point it at "
                          "a working libstridemem.so or unset it." % (value, e))


def load(version, package_dir, environ=None, opener=ctypes.CDLL,
         has_runtime=runtime_in_process, **search):
    """Loads the library (see the module docstring for the order) and returns
    a Loaded for the ABI of `version`, the binding's (major, minor, ...)
    tuple. Raises ImportError listing every place tried and why each
    failed. `search` goes to candidates() (tests pass fakes); by default the
    source tree is searched when `package_dir` lies in it."""
    environ = os.environ if environ is None else environ
    value = environ.get(ENV_VAR)
    if value:
        return _load_explicit(value, environ, opener, has_runtime)
    if "repo" not in search:
        search["repo"] = source_repo(package_dir)
    tried, seen = [], set()
    for source, path, why in candidates(version, package_dir, environ, **search):
        if why is None:
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            try:
                missing = missing_runtimes(path, has_runtime)
            except OSError as e:
                why = "cannot be read: %s" % (e.strerror or e)
            else:
                if missing:
                    why = ("skipped: built with %s and that runtime is not loaded in "
                           "this process (LD_PRELOAD it to use this file)" % "+".join(missing))
                else:
                    try:
                        return Loaded(opener(path), path, source)
                    except OSError as e:
                        why = "cannot be loaded: %s" % e
        tried.append("  %s: %s: %s" % (source, path, why))
    raise ImportError("stridemem: cannot find a loadable libstridemem (%s; "
                      "STRIDEMEM_LIB is not set). Tried, in order:\n%s\n%s"
                      % (library_name(version), "\n".join(tried), ADVICE))
