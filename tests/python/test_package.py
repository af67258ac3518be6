"""The Python binding as an installable package, and how it finds libstridemem.

1. stridemem/_loader.py, loaded on its own (nothing is opened: fake openers,
   fake system searches, fixture files in a temporary directory): the order
   STRIDEMEM_LIB > bundled > system > source tree, an explicit path that fails
   loudly, sanitizer builds skipped unless their runtime is in the process
   (fixtures, and real gcc-built ASan/UBSan/TSan libraries for the ELF
   reader), the failure message listing every attempt.
2. The build backend in process: wheel contents and RECORD, the bundled
   wheel's platform tag, the refusals (sanitizer build, a library of another
   version, VERSION mismatch), an sdist that builds a wheel on its own.
3. The real thing, in subprocesses from a temporary directory: the source
   tree search (a sanitizer build in build/ is passed over), the version
   mismatch ImportError, and a fresh venv (--system-site-packages) with
   `pip install --no-index`: pure (STRIDEMEM_LIB), no library (the
   ImportError), the bundled wheel of scripts/python-wheel.sh (no
   STRIDEMEM_LIB, no PYTHONPATH), editable.

Every subprocess runs the interpreter running this test (sys.executable:
ctest's SM_PYTHON), so NumPy is the one it has. When that interpreter is
itself a venv, a venv made from it with --system-site-packages sees the BASE
interpreter's site-packages, not the running venv's (where NumPy is): the
test's venv then gets a .pth file adding the running interpreter's
site-packages, and a check proves it imports the same NumPy.

The real library is $STRIDEMEM_LIB (ctest sets it).
"""
import base64
import hashlib
import importlib.util
import json
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

from _util import Results

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BINDING = os.path.join(REPO, "bindings", "python")
PACKAGE = os.path.join(BINDING, "stridemem")
# The package's modules, each of which every wheel and sdist must hold.
PACKAGE_MODULES = ("__init__.py", "_loader.py", "_capi.py", "dtypes.py", "devices.py",
                   "_handle.py", "_from_host.py", "_registry.py", "_views.py", "_inplace.py",
                   "_host_exchange.py", "_indexing.py", "_dlpack_export.py", "_tensor.py",
                   "creation.py", "interop.py", "dlpack.py", "storage.py", "memory.py",
                   "multiprocessing.py", "mpi.py", "distributed.py", "memviz.py")
PY = sys.executable  # the interpreter ctest runs this test with (SM_PYTHON)
R = Results("test_package")

with open(os.path.join(REPO, "VERSION")) as _f:
    VERSION = _f.readline().strip()
VERSION_TUPLE = tuple(int(p) for p in VERSION.split("-")[0].split("."))
# The SONAME (CMakeLists.txt's SOVERSION): major.minor while the major is 0.
LIBNAME = "libstridemem.so." + (
    "%d.%d" % VERSION_TUPLE[:2] if VERSION_TUPLE[0] == 0 else "%d" % VERSION_TUPLE[0])


def _standalone(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


L = _standalone("_loader_under_test", os.path.join(PACKAGE, "_loader.py"))
B = _standalone("_backend_under_test", os.path.join(BINDING, "_backend", "stridemem_backend.py"))


def write(path, data=b"\x7fNOT-ELF plain library fixture"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


class Opener(object):
    """A fake ctypes.CDLL: records each path; the paths in `broken` raise."""

    def __init__(self, broken=()):
        self.calls, self.broken = [], set(broken)

    def __call__(self, path):
        self.calls.append(path)
        if path in self.broken:
            raise OSError("%s: fake load failure" % path)
        return ("handle", path)


class Layout(object):
    """Every place the loader looks, as fixture files under `root`."""

    def __init__(self, root):
        self.root = root
        self.pkg = os.path.join(root, "site", "stridemem")
        os.makedirs(self.pkg)
        self.bundled = write(os.path.join(self.pkg, "_lib", LIBNAME))
        self.pc = write(os.path.join(root, "pcprefix", "lib", LIBNAME))
        self.linker = write(os.path.join(root, "ldpath", LIBNAME))
        self.findlib = write(os.path.join(root, "findlib", LIBNAME))
        self.repo = os.path.join(root, "repo")
        self.build = write(os.path.join(self.repo, "build", "libstridemem.so"))
        self.build_a = write(os.path.join(self.repo, "build-a", "libstridemem.so"))
        self.build_b = write(os.path.join(self.repo, "build-b", "libstridemem.so"))

    def hooks(self, system=True, repo=True):
        pc, ld, fl = self.pc, self.linker, self.findlib
        return dict(
            pkg_config=(lambda: (os.path.dirname(pc), None)) if system and os.path.exists(pc)
            else (lambda: (None, "pkg-config knows no package 'stridemem'")),
            search=lambda name, env: [ld] if system and os.path.exists(ld) and name == LIBNAME
            else [],
            find_library=lambda n: fl if system and os.path.exists(fl) else None,
            repo=self.repo if repo else None)

    def load(self, opener, env=None, runtimes=(), **kw):
        return L.load(VERSION_TUPLE, self.pkg, environ=env or {}, opener=opener,
                      has_runtime=lambda sym: sym in runtimes, **self.hooks(**kw))


def import_error(fn):
    try:
        fn()
    except ImportError as e:
        return str(e)
    return None


def loader_order(tmp):
    lay = Layout(os.path.join(tmp, "order"))
    everything = [lay.bundled, lay.pc, lay.linker, lay.findlib, lay.build, lay.build_a, lay.build_b]
    op = Opener(broken=everything)
    msg = import_error(lambda: lay.load(op))
    R.equal(op.calls, everything, "every candidate tried once, in order")
    R.check(msg is not None, "nothing loads: ImportError")
    if msg:
        at = [msg.find(p) for p in everything]
        R.check(all(a >= 0 for a in at) and at == sorted(at),
                "the failure message lists each attempt in order: %s" % msg)
        R.check(msg.count("fake load failure") == len(everything),
                "the failure message gives each attempt's reason: %s" % msg)
        for s in ("bundled:", "system:", "source tree:", "STRIDEMEM_LIB", "scripts/build.sh"):
            R.check(s in msg, "the failure message mentions %r: %s" % (s, msg))

    # Each place wins over every later one.
    for want, source, remove in [(lay.bundled, "bundled", None), (lay.pc, "system", lay.bundled),
                                 (lay.linker, "system", lay.pc),
                                 (lay.findlib, "system", lay.linker),
                                 (lay.build, "source tree", lay.findlib),
                                 (lay.build_a, "source tree", lay.build)]:
        if remove:
            os.remove(remove)
        got = lay.load(Opener())
        R.equal((got.path, got.source), (want, source), "first present candidate loads")
    # Outside the source tree, build directories are never searched.
    msg = import_error(lambda: lay.load(Opener(), repo=False))
    R.check(msg is not None and "not imported from the repository" in msg
            and lay.build_a not in msg, "no source tree: build dirs not searched: %s" % msg)
    # source_repo: the real package is in the repository; a copy is not.
    R.equal(L.source_repo(PACKAGE), REPO, "source_repo of the repository's package")
    R.equal(L.source_repo(lay.pkg), None, "source_repo of a package elsewhere")


def loader_explicit(tmp):
    lay = Layout(os.path.join(tmp, "explicit"))
    good = write(os.path.join(tmp, "explicit", "mine", "libstridemem.so"))
    op = Opener()
    got = lay.load(op, env={"STRIDEMEM_LIB": good})
    R.equal((got.path, got.source, op.calls), (good, "STRIDEMEM_LIB", [good]),
            "STRIDEMEM_LIB wins over everything and is opened alone")
    missing = os.path.join(tmp, "explicit", "nowhere", "libstridemem.so")
    op = Opener()
    msg = import_error(lambda: lay.load(op, env={"STRIDEMEM_LIB": missing}))
    R.check(msg is not None and missing in msg and "unset" in msg,
            "a missing STRIDEMEM_LIB is the error, with advice: %s" % msg)
    R.equal(op.calls, [], "a missing STRIDEMEM_LIB never falls through to the bundled copy")
    op = Opener(broken=[good])
    msg = import_error(lambda: lay.load(op, env={"STRIDEMEM_LIB": good}))
    R.check(msg is not None and good in msg and "fake load failure" in msg,
            "an unloadable STRIDEMEM_LIB is the error, with the loader's reason: %s" % msg)
    R.equal(op.calls, [good], "an unloadable STRIDEMEM_LIB does not fall through")
    asan = write(os.path.join(tmp, "explicit", "asan", "libstridemem.so"),
                 b"fixture ... __asan_init ... libasan.so.8")
    op = Opener()
    msg = import_error(lambda: lay.load(op, env={"STRIDEMEM_LIB": asan}))
    R.check(msg is not None and asan in msg and "ASan" in msg and "LD_PRELOAD" in msg
            and "libasan.so" in msg and "normal" in msg,
            "an ASan STRIDEMEM_LIB without its runtime: ImportError naming LD_PRELOAD: %s" % msg)
    R.equal(op.calls, [], "an ASan STRIDEMEM_LIB without its runtime is never opened")
    got = lay.load(Opener(), env={"STRIDEMEM_LIB": asan}, runtimes={"__asan_init"})
    R.equal(got.path, asan, "an ASan STRIDEMEM_LIB loads when the ASan runtime is present")


def soname_of(path):
    """The SONAME readelf reads from the library at `path`, or None."""
    exe = shutil.which("readelf")
    if not exe:
        return None
    out = subprocess.run([exe, "-d", path], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    m = re.search(r"\(SONAME\)[^\[]*\[([^\]]+)\]", out)
    return m.group(1) if m else None


def loader_soname(tmp, real):
    R.equal(L.library_name((0, 4, 0)), "libstridemem.so.0.4", "SONAME of 0.4.0")
    R.equal(L.library_name((0, 4, 9)), "libstridemem.so.0.4", "a 0.x patch keeps the SONAME")
    R.equal(L.library_name((0, 5, 0)), "libstridemem.so.0.5", "each 0.x minor has its own")
    R.equal(L.library_name((1, 2, 3)), "libstridemem.so.1", "from 1.0 on the major alone")
    R.equal(L.library_name(VERSION_TUPLE), LIBNAME, "the loader's name for VERSION")
    got = soname_of(real) if real and os.path.isfile(real) else None
    if got is None:
        R.skip("the built library's SONAME", "no readelf or no library")
    else:
        R.equal(got, LIBNAME, "the built library's SONAME is the name the loader looks for")


def loader_sanitizers(tmp):
    lay = Layout(os.path.join(tmp, "san"))
    for p in (lay.bundled, lay.pc, lay.linker, lay.findlib):
        os.remove(p)
    write(lay.build, b"fixture __asan_init __ubsan_handle_add_overflow libubsan.so.1")
    write(lay.build_a, b"fixture __tsan_init")
    got = lay.load(Opener())
    R.equal(got.path, lay.build_b, "ASan and TSan builds skipped without their runtimes")
    got = lay.load(Opener(), runtimes={"__asan_init"})
    R.equal(got.path, lay.build, "an ASan+UBSan build loads when the ASan runtime is present "
            "(libubsan is NEEDed, the loader brings it)")
    os.remove(lay.build_b)
    msg = import_error(lambda: lay.load(Opener()))
    R.check(msg is not None and "built with ASan+UBSan" not in msg
            and "built with ASan and" in msg and "built with TSan" in msg
            and "LD_PRELOAD" in msg, "skipped sanitizer builds are listed with why: %s" % msg)
    write(lay.build, b"fixture __ubsan_handle_add_overflow")      # UBSan, runtime not NEEDed
    write(lay.build_a, b"fixture __ubsan_handle_add_overflow libubsan.so.1")
    R.equal(lay.load(Opener()).path, lay.build_a,
            "UBSan: loads when libubsan is NEEDed, skipped when its runtime is missing")
    R.equal(L.sanitizers_of(lay.build), ["UBSan"], "sanitizers_of a UBSan fixture")
    R.equal(L.sanitizers_of(lay.build_b if os.path.exists(lay.build_b) else
                            write(lay.build_b)), [], "sanitizers_of a plain fixture")

    # The ELF reader on real libraries: only the dynamic string table is read.
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        R.skip("ELF sanitizer detection on real libraries", "no C compiler (scripts/setup-deps.sh)")
        return
    src = write(os.path.join(tmp, "san", "f.c"), b"int f(int a, int b) { return a + b; }\n")
    for flag, want in [("", []), ("-fsanitize=address", ["ASan"]),
                       ("-fsanitize=undefined", ["UBSan"]), ("-fsanitize=thread", ["TSan"]),
                       ("-fsanitize=address,undefined", ["ASan", "UBSan"])]:
        out = os.path.join(tmp, "san", "lib%s.so" % (flag.replace("=", "_").replace(",", "_")
                                                      or "plain"))
        p = subprocess.run([cc, "-shared", "-fPIC", "-O1"] + flag.split() + [src, "-o", out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            R.fail("cannot build a %r test library: %s" % (flag, p.stdout.decode()[-300:]))
            continue
        with open(out, "rb") as f:
            table = L._dynamic_strings(f)
        R.check(table is not None and b"f" in table, "ELF dynamic strings read from %s" % out)
        R.equal(L.sanitizers_of(out), want, "sanitizers_of a gcc %r library" % flag)
    real = os.environ.get("STRIDEMEM_LIB")
    if real:
        with open(real, "rb") as f:
            R.check(L._dynamic_strings(f) is not None, "the real library's ELF tables are read")


def wheel_entries(path):
    """{name: bytes} of a wheel, after checking every RECORD line."""
    with zipfile.ZipFile(path) as z:
        files = {n: z.read(n) for n in z.namelist()}
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in z.infolist()}
    record = [n for n in files if n.endswith(".dist-info/RECORD")]
    R.equal(len(record), 1, "%s has one RECORD" % path)
    listed = set()
    for line in files[record[0]].decode().splitlines():
        name, digest, size = line.rsplit(",", 2)
        listed.add(name)
        if name == record[0]:
            continue
        data = files.get(name, b"")
        want = "sha256=" + base64.urlsafe_b64encode(
            hashlib.sha256(data).digest()).rstrip(b"=").decode()
        R.check(digest == want and int(size) == len(data), "RECORD entry of %s" % name)
    R.equal(listed, set(files), "RECORD lists every file of %s" % os.path.basename(path))
    return files, modes


def backend(tmp, real, real_sans):
    out = os.path.join(tmp, "wheels")
    os.makedirs(out)
    R.equal(B.package_version(), VERSION, "the backend's version (__version__) is VERSION")
    name = B.build_wheel(out)
    R.equal(name, "stridemem-%s-py3-none-any.whl" % VERSION, "a pure wheel's name")
    files, _ = wheel_entries(os.path.join(out, name))
    di = "stridemem-%s.dist-info/" % VERSION
    for want in tuple("stridemem/" + m for m in PACKAGE_MODULES) + (
            "stridemem/py.typed", di + "METADATA", di + "WHEEL"):
        R.check(want in files, "the pure wheel holds %s" % want)
    R.check(not any("_lib/" in n for n in files), "a pure wheel bundles no library")
    R.check(b"\nVersion: %s\n" % VERSION.encode() in files.get(di + "METADATA", b""),
            "METADATA version")
    R.check(b"Root-Is-Purelib: true\nTag: py3-none-any\n" in files.get(di + "WHEEL", b""),
            "WHEEL of a pure wheel")
    # The license: pyproject.toml's [project] license in METADATA, the
    # repository's LICENSE text in the wheel (the tomllib-less reader agrees).
    R.check(b"\nLicense: BSD-3-Clause\n" in files.get(di + "METADATA", b""), "METADATA license")
    with open(os.path.join(REPO, "LICENSE"), "rb") as f:
        R.check(files.get(di + "LICENSE") == f.read(), "the wheel holds the repository's LICENSE")
    real_tomllib = sys.modules.get("tomllib")
    sys.modules["tomllib"] = None   # import tomllib now raises ImportError
    try:
        R.equal(B.project_license(), "BSD-3-Clause", "the license without tomllib")
    finally:
        if real_tomllib is None:
            del sys.modules["tomllib"]
        else:
            sys.modules["tomllib"] = real_tomllib

    fake_asan = write(os.path.join(tmp, "asan-fixture", "libstridemem.so"), b"x __asan_init x")
    for lib in (fake_asan, os.path.join(tmp, "nonexistent.so")):
        try:
            B.build_wheel(out, {"bundle-lib": lib})
            R.fail("bundling %s was accepted" % lib)
        except B.BuildError as e:
            R.check(lib in str(e), "bundling %s refused naming it: %s" % (lib, e))
            if lib == fake_asan:
                R.check("ASan" in str(e), "the refusal names the sanitizer: %s" % e)
    # A library of another version: a stand-in whose sm_version says 9.9.9.
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc:
        src = write(os.path.join(tmp, "v999", "v.c"),
                    b"int sm_version(int *a, int *b, int *c) { *a = 9; *b = 9; *c = 9; "
                    b"return 0; }\n")
        other = os.path.join(tmp, "v999", "libstridemem.so")
        p = subprocess.run([cc, "-shared", "-fPIC", src, "-o", other],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        R.check(p.returncode == 0, "built a 9.9.9 stand-in: %s" % p.stdout.decode()[-300:])
        try:
            B.build_wheel(out, {"bundle-lib": other})
            R.fail("bundling a 9.9.9 library was accepted")
        except B.BuildError as e:
            R.check("9.9.9" in str(e) and VERSION in str(e),
                    "bundling a library of another version refused naming both: %s" % e)
    else:
        R.skip("bundling a library of another version", "no C compiler (scripts/setup-deps.sh)")
    if real and not real_sans:
        os.environ[B.BUNDLE_ENV] = real       # the environment form of bundle-lib
        try:
            name = B.build_wheel(out)
        finally:
            del os.environ[B.BUNDLE_ENV]
        plat = re.sub(r"[^A-Za-z0-9_]", "_", sysconfig.get_platform())
        R.equal(name, "stridemem-%s-py3-none-%s.whl" % (VERSION, plat), "a bundled wheel's tag")
        files, modes = wheel_entries(os.path.join(out, name))
        lib = "stridemem/_lib/" + LIBNAME
        with open(real, "rb") as f:
            R.check(files.get(lib) == f.read(), "the bundled wheel holds the library as %s" % lib)
        R.equal(modes.get(lib), 0o755, "the bundled library is executable")
        R.check(b"Root-Is-Purelib: false\n" in files.get(di + "WHEEL", b""), "WHEEL: platlib")
    else:
        R.skip("bundling the real library in process", "STRIDEMEM_LIB is unset or a "
               "sanitizer build (%s)" % real_sans)

    sd = B.build_sdist(out)
    with tarfile.open(os.path.join(out, sd)) as t:
        names = t.getnames()
        t.extractall(os.path.join(tmp, "sdist"))
    base = "stridemem-%s/" % VERSION
    for want in ("pyproject.toml", "README.md", "LICENSE", "PKG-INFO", "_backend/stridemem_backend.py",
                 "stridemem/py.typed") + tuple("stridemem/" + m for m in PACKAGE_MODULES):
        R.check(base + want in names, "the sdist holds %s" % want)
    # The sdist builds a wheel with its own backend (no repository around it).
    p = run([PY, "-c", "import sys; sys.path.insert(0, '_backend'); import stridemem_backend "
                       "as b; print(b.build_wheel(sys.argv[1]))", os.path.join(tmp, "sdwheel")],
            cwd=os.path.join(tmp, "sdist", base), mkdir=os.path.join(tmp, "sdwheel"))
    R.check(p.returncode == 0 and "py3-none-any.whl" in p.stdout,
            "the sdist builds a wheel: %s" % p.stdout[-500:])


def run(argv, cwd, env=None, mkdir=None):
    if mkdir:
        os.makedirs(mkdir, exist_ok=True)
    return subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=240)


def clean_env(**extra):
    """The environment of a user's shell: no PYTHONPATH, no STRIDEMEM_LIB."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "STRIDEMEM_LIB", "STRIDEMEM_BUNDLE_LIB")
           and not k.startswith("PIP_")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    env.update(extra)
    return env


PROBE = """
import json, numpy as np, os, stridemem as sm
t = sm.from_numpy(np.arange(6, dtype=np.float32)).view(2, 3)
v = t.T
v.add_(1.0)
print("PROBE" + json.dumps(dict(file=sm.__file__, version=sm.__version__,
    path=sm.LIBRARY_PATH, source=sm.LIBRARY_SOURCE, values=v.contiguous().numpy().tolist(),
    typed=os.path.exists(os.path.join(os.path.dirname(sm.__file__), "py.typed")))))
"""
PROBE_WANT = [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]


def probe(python, cwd, env):
    p = run([python, "-c", PROBE], cwd, env)
    m = re.search(r"^PROBE(.*)$", p.stdout, re.M)
    return (json.loads(m.group(1)) if p.returncode == 0 and m else None), p.stdout


def system_library():
    """A libstridemem installed on this machine: it would be found before the
    source tree, so the checks that assume none is installed cannot run."""
    return (L.pkg_config_libdir()[0] or L.linker_search(LIBNAME, {}) or None)


def fake_repo(tmp, real):
    """A copy of the repository's shape: VERSION, the header, bindings/python, an
    ASan fixture in build/ and the real library in build-rel/."""
    repo = os.path.join(tmp, "fakerepo")
    shutil.copytree(BINDING, os.path.join(repo, "bindings", "python"),
                    ignore=shutil.ignore_patterns("__pycache__", "_lib"))
    write(os.path.join(repo, "VERSION"), (VERSION + "\n").encode())
    write(os.path.join(repo, "include", "stridemem.h"), b"/* fixture */\n")
    write(os.path.join(repo, "build", "libstridemem.so"), b"fixture __asan_init libasan.so.8")
    os.makedirs(os.path.join(repo, "build-rel"))
    os.symlink(real, os.path.join(repo, "build-rel", "libstridemem.so"))
    return repo


def source_tree_and_versions(tmp, real):
    repo = fake_repo(tmp, real)
    pkgdir = os.path.join(repo, "bindings", "python")
    if system_library():
        R.skip("source tree search end to end", "a libstridemem is installed on this machine "
               "and is found first (%s)" % system_library())
    else:
        got, out = probe(PY, tmp, clean_env(PYTHONPATH=pkgdir, LD_LIBRARY_PATH=""))
        want = os.path.join(repo, "build-rel", "libstridemem.so")
        R.check(got is not None and got["path"] == want and got["source"] == "source tree"
                and got["values"] == PROBE_WANT,
                "from the source tree, an ASan build/ is passed over for build-rel/: %s" % out)
    # A library/binding version mismatch: the binding of this copy declares
    # the next minor version, so the real library is too old for it.
    init = os.path.join(pkgdir, "stridemem", "_capi.py")
    with open(init) as f:
        text = f.read()
    major, minor = (int(x) for x in VERSION.split(".")[:2])
    text2 = re.sub(r"^BINDING_VERSION = \(.*\)$", "BINDING_VERSION = (%d, %d, 0)"
                   % (major, minor + 1), text, flags=re.M)
    R.check(text2 != text, "the binding declares BINDING_VERSION = (...)")
    with open(init, "w") as f:
        f.write(text2)
    p = run([PY, "-c", "import stridemem"], tmp, clean_env(PYTHONPATH=pkgdir, STRIDEMEM_LIB=real))
    want = "%d.%d.0" % (major, minor + 1)
    R.check(p.returncode != 0 and "ImportError" in p.stdout and real in p.stdout
            and VERSION in p.stdout and want in p.stdout,
            "a version mismatch is an ImportError naming both versions and the path: %s"
            % p.stdout[-600:])
    # The backend refuses a __version__ that is not the repository's VERSION.
    write(os.path.join(repo, "VERSION"), b"9.9.9\n")
    p = run([PY, "-c", "import sys; sys.path.insert(0, '_backend'); import stridemem_backend "
                       "as b; b.build_wheel(sys.argv[1])", tmp], pkgdir)
    R.check(p.returncode != 0 and "9.9.9" in p.stdout and VERSION in p.stdout,
            "the backend refuses a __version__ other than VERSION: %s" % p.stdout[-400:])


def see_running_site_packages(vpy, tmp):
    """Make the venv at vpy import what the running interpreter imports (NumPy
    for PROBE). From a system interpreter, --system-site-packages does it.
    From a venv, it does not: the new venv's "system" site-packages are the
    base interpreter's, not the running venv's, so a .pth file in the new venv
    adds the running interpreter's site-packages as site directories (after
    the new venv's own, so what pip installs there still wins). Then checks the venv imports the
    very NumPy this interpreter imports."""
    in_venv = sys.prefix != sys.base_prefix
    if in_venv:
        p = run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp,
                clean_env())
        if not R.check(p.returncode == 0, "the test venv's site-packages: %s" % p.stdout[-500:]):
            return False
        purelib = p.stdout.strip().splitlines()[-1]
        dirs = [d for d in site.getsitepackages() if os.path.isdir(d)]
        # addsitedir, not bare paths: the .pth files in those directories
        # (editable installs, path hooks) are processed as they are for the
        # running interpreter.
        with open(os.path.join(purelib, "_sm_test_running_site.pth"), "w") as f:
            f.write("".join("import site; site.addsitedir(%r)\n" % d for d in dirs))
    try:
        import numpy
    except ImportError as e:
        R.fail("the interpreter running this test (%s) has no NumPy, which PROBE needs: %s"
               % (PY, e))
        return False
    want = os.path.realpath(numpy.__file__)
    p = run([vpy, "-c", "import numpy, os; print('NUMPY' + os.path.realpath(numpy.__file__))"],
            tmp, clean_env())
    m = re.search(r"^NUMPY(.*)$", p.stdout, re.M)
    return R.check(p.returncode == 0 and m is not None and m.group(1) == want,
                   "the test venv imports the running interpreter's NumPy %s (%s; via %s): %s"
                   % (want, "running in a venv: a .pth adds its site-packages" if in_venv
                      else "--system-site-packages", PY, p.stdout[-800:]))


def installed_memviz(vpy, venv, tmp, real):
    """The memory viewer ships with the package: `python -m stridemem.memviz`
    draws a snapshot (and writes PyTorch's format), and the installed file
    also runs by its path with no library at all."""
    import memviz_fixtures
    snap = os.path.join(tmp, "snap.json")
    with open(snap, "w") as f:
        json.dump(memviz_fixtures.hand_timeline(), f)
    page, pick = os.path.join(tmp, "snap.html"), os.path.join(tmp, "snap.pickle")
    p = run([vpy, "-m", "stridemem.memviz", snap, "-o", page, "--pytorch", pick], tmp,
            clean_env(STRIDEMEM_LIB=real))
    R.check(p.returncode == 0 and os.path.isfile(page) and os.path.isfile(pick),
            "python -m stridemem.memviz in the venv: %s" % p.stdout[-800:])
    p = run([vpy, "-c", "import stridemem.memviz as m; print('FILE' + m.__file__)"], tmp,
            clean_env(STRIDEMEM_LIB=real))
    m = re.search(r"^FILE(.*)$", p.stdout, re.M)
    if not R.check(m is not None and m.group(1).startswith(venv + os.sep),
                   "stridemem.memviz is imported from the venv: %s" % p.stdout[-500:]):
        return
    os.remove(page)
    p = run([vpy, m.group(1), snap, "-o", page], "/", clean_env(LD_LIBRARY_PATH=""))
    R.check(p.returncode == 0 and os.path.isfile(page),
            "the installed memviz.py runs by its path without the library: %s"
            % p.stdout[-800:])


def venv_install(tmp, real, real_sans):
    try:
        import ensurepip  # noqa: F401  (python3-venv)
        have = subprocess.run([PY, "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0
    except ImportError:
        have = False
    if not have:
        R.fail("%s lacks venv/ensurepip or pip: install python3-venv and python3-pip "
               "(scripts/setup-deps.sh)" % PY)
        return
    venv = os.path.join(tmp, "venv")
    p = run([PY, "-m", "venv", "--system-site-packages", venv], tmp, clean_env())
    if not R.check(p.returncode == 0, "python3 -m venv --system-site-packages (python3-venv, "
                   "scripts/setup-deps.sh): %s" % p.stdout[-500:]):
        return
    vpy = os.path.join(venv, "bin", "python")
    if not see_running_site_packages(vpy, tmp):
        return
    pip = [vpy, "-m", "pip", "install", "--no-index", "--no-cache-dir"]

    # Pure install: the library comes from STRIDEMEM_LIB.
    p = run(pip + [BINDING], tmp, clean_env())
    if not R.check(p.returncode == 0, "pip install --no-index bindings/python: %s"
                   % p.stdout[-1500:]):
        return
    got, out = probe(vpy, tmp, clean_env(STRIDEMEM_LIB=real))
    R.check(got is not None, "the installed package imports with STRIDEMEM_LIB: %s" % out[-800:])
    if got:
        R.check(got["file"].startswith(venv + os.sep), "imported from the venv: %s" % got["file"])
        R.equal(got["version"], VERSION, "stridemem.__version__ of the installed package")
        R.equal((got["path"], got["source"]), (real, "STRIDEMEM_LIB"), "LIBRARY_PATH/SOURCE")
        R.equal(got["values"], PROBE_WANT, "a tensor op through the installed package")
        R.check(got["typed"], "py.typed is installed")
    installed_memviz(vpy, venv, tmp, real)

    # No library anywhere: the ImportError lists what was tried.
    if system_library():
        R.skip("the no-library ImportError", "a libstridemem is installed on this machine")
    else:
        p = run([vpy, "-c", "import stridemem"], tmp, clean_env(LD_LIBRARY_PATH=""))
        bundled = re.search(r"bundled: (\S*): not present", p.stdout)
        R.check(p.returncode != 0 and "ImportError" in p.stdout and "Tried, in order" in p.stdout
                and bundled is not None and bundled.group(1).startswith(venv + os.sep)
                and bundled.group(1).endswith("/stridemem/_lib/" + LIBNAME)
                and "system: pkg-config" in p.stdout
                and "system: %s" % LIBNAME in p.stdout and "find_library" in p.stdout
                and "source tree:" in p.stdout and "STRIDEMEM_LIB" in p.stdout,
                "without a library, import fails listing every place tried: %s"
                % p.stdout[-1500:])

    # The wheel of scripts/python-wheel.sh, with the library bundled.
    dist = os.path.join(tmp, "dist")
    p = run(["bash", os.path.join(REPO, "scripts", "python-wheel.sh"), "--lib", real, dist],
            tmp, clean_env())
    if real_sans:
        R.check(p.returncode != 0 and "refusing to bundle" in p.stdout,
                "python-wheel.sh refuses a sanitizer build: %s" % p.stdout[-600:])
        R.skip("a bundled wheel imported from a venv", "STRIDEMEM_LIB is built with %s, "
               "which is never bundled" % "+".join(real_sans))
    else:
        wheels = sorted(os.listdir(dist)) if os.path.isdir(dist) else []
        ok = R.check(p.returncode == 0 and len(wheels) == 1 and not wheels[0].endswith("any.whl"),
                     "python-wheel.sh --lib makes one platform wheel: %s %s"
                     % (wheels, p.stdout[-800:]))
        if ok:
            p = run(pip + ["--force-reinstall", os.path.join(dist, wheels[0])], tmp, clean_env())
            R.check(p.returncode == 0, "pip install the bundled wheel: %s" % p.stdout[-800:])
            got, out = probe(vpy, tmp, clean_env(LD_LIBRARY_PATH=""))
            R.check(got is not None, "the bundled wheel imports with STRIDEMEM_LIB and "
                    "PYTHONPATH unset: %s" % out[-800:])
            if got:
                R.check(got["path"].startswith(venv + os.sep)
                        and got["path"].endswith("/stridemem/_lib/" + LIBNAME)
                        and got["source"] == "bundled",
                        "LIBRARY_PATH is the bundled copy in the venv: %s" % got)
                R.equal(got["version"], VERSION, "__version__ of the bundled wheel")
                R.equal(got["values"], PROBE_WANT, "a tensor op through the bundled library")

    # Editable (PEP 660): the package is imported from the source tree.
    p = run(pip + ["-e", BINDING], tmp, clean_env())
    R.check(p.returncode == 0, "pip install -e bindings/python: %s" % p.stdout[-800:])
    got, out = probe(vpy, tmp, clean_env(STRIDEMEM_LIB=real))
    R.check(got is not None and got["file"] == os.path.join(PACKAGE, "__init__.py"),
            "an editable install imports the source tree's package: %s" % (got or out[-800:]))


def main():
    real = os.environ.get("STRIDEMEM_LIB")
    if not real or not os.path.isfile(real):
        R.fail("STRIDEMEM_LIB must name the built library (ctest sets it): %r" % real)
    real_sans = L.sanitizers_of(real) if real and os.path.isfile(real) else []
    tmp = tempfile.mkdtemp(prefix="sm-package-")
    try:
        R.run("loader SONAME", loader_soname, tmp, real)
        R.run("loader order", loader_order, tmp)
        R.run("loader STRIDEMEM_LIB", loader_explicit, tmp)
        R.run("loader sanitizers", loader_sanitizers, tmp)
        R.run("backend", backend, tmp, real, real_sans)
        if real and os.path.isfile(real):
            R.run("source tree and versions", source_tree_and_versions, tmp, real)
            R.run("venv install", venv_install, tmp, real, real_sans)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())
