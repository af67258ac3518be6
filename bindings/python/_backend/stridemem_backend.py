"""PEP 517 / PEP 660 build backend of the stridemem Python package.

Standard library only (pyproject.toml: ``requires = []``), so pip builds it
offline with its default build isolation. Hooks: build_wheel, build_sdist,
build_editable and their get_requires_* (none).

The version is read from the ``__version__ = "..."`` line of
stridemem/__init__.py (the package is not imported: that would load the
library) and must equal the repository's VERSION when the backend runs from
the repository. Name and license come from pyproject.toml's [project]
table; the license text (the repository's LICENSE) goes into every wheel's
.dist-info and into the sdist.

A wheel is pure (``py3-none-any``) unless a library is bundled: the path in
the config setting ``bundle-lib`` (``pip wheel --config-settings
bundle-lib=...``) or the environment variable STRIDEMEM_BUNDLE_LIB. That file goes into the wheel as
``stridemem/_lib/`` under its SONAME (``libstridemem.so.0.4`` for 0.4.x: the
loader's library_name), where the package's loader looks
first after STRIDEMEM_LIB, and the wheel is tagged for this platform
(``py3-none-<platform>``). A sanitizer build or a library of another version
is refused. scripts/python-wheel.sh builds the library and such a wheel.
"""

import base64
import ctypes
import functools
import hashlib
import importlib.util
import io
import os
import re
import sysconfig
import tarfile
import zipfile

NAME = "stridemem"
SUMMARY = ("Python binding (ctypes) of libstridemem: PyTorch's storage/view model "
           "over a C ABI")
BUNDLE_ENV = "STRIDEMEM_BUNDLE_LIB"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # bindings/python
PACKAGE = os.path.join(ROOT, NAME)
# Fixed timestamps: the same inputs give the same archive bytes.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class BuildError(RuntimeError):
    """The package cannot be built as asked; the message says what to do."""


@functools.lru_cache(maxsize=None)
def _loader():
    """stridemem/_loader.py loaded on its own (importing the package would
    load the library): the sanitizer check, the bundled file name, the
    repository and version rules the package itself uses."""
    spec = importlib.util.spec_from_file_location(
        "_stridemem_loader_for_build", os.path.join(PACKAGE, "_loader.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def package_version():
    """__version__ of stridemem/__init__.py, checked against the repository's
    VERSION when this runs from the repository (an sdist has none)."""
    with open(os.path.join(PACKAGE, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise BuildError("stridemem/__init__.py has no line __version__ = \"x.y.z\"")
    version = m.group(1)
    repo = _loader().source_repo(PACKAGE)
    repo_version = _loader().repo_version(repo) if repo else None
    if repo_version is not None and repo_version != version:
        raise BuildError("stridemem/__init__.py says __version__ = %r but %s says %r: "
                         "make them agree" % (version, os.path.join(repo, "VERSION"),
                                              repo_version))
    return version


def _check_bundle(path, version):
    """Refuses what must not be bundled; returns the file to put in."""
    if not os.path.isfile(path):
        raise BuildError("bundle-lib/%s=%s: no such file (build the library first: "
                         "scripts/build.sh makes build/libstridemem.so)" % (BUNDLE_ENV, path))
    sans = _loader().sanitizers_of(path)
    if sans:
        raise BuildError("refusing to bundle %s: it is built with %s (it would abort or fail "
                         "without its runtime preloaded); bundle a normal build such as "
                         "build/libstridemem.so" % (path, "+".join(sans)))
    # Not a sanitizer build, so opening it here is safe: the bundled library
    # must be the version the package declares.
    try:
        lib = ctypes.CDLL(os.path.abspath(path))
        v = [ctypes.c_int(), ctypes.c_int(), ctypes.c_int()]
        status = lib.sm_version(*[ctypes.byref(x) for x in v])
    except (OSError, AttributeError) as e:
        raise BuildError("cannot bundle %s: it does not load as libstridemem (%s)" % (path, e))
    got, want = tuple(x.value for x in v), _loader().version_tuple(version)
    if status != 0 or got[:2] != want[:2] or got < want:
        raise BuildError("cannot bundle %s: it is version %d.%d.%d, the package is %s; "
                         "rebuild the library from this tree"
                         % ((path,) + got + (version,)))
    return os.path.realpath(path)


def _package_files():
    """(archive name, file) of the package's sources: *.py, *.pyi, py.typed;
    never __pycache__ nor a _lib left in the source directory."""
    out = []
    for d, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(x for x in dirs if x not in ("__pycache__", "_lib"))
        for name in sorted(files):
            if name.endswith((".py", ".pyi")) or name == "py.typed":
                full = os.path.join(d, name)
                out.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), full))
    return out


def _project_table():
    """The string keys of pyproject.toml's [project] table. tomllib where the
    build interpreter has it (3.11+); before that a reader of the one-line
    `key = "value"` entries, which is all the backend takes from it."""
    path = os.path.join(ROOT, "pyproject.toml")
    try:
        import tomllib
    except ImportError:
        tomllib = None
    if tomllib is not None:
        with open(path, "rb") as f:
            table = tomllib.load(f).get("project", {})
        return {k: v for k, v in table.items() if isinstance(v, str)}
    table, inside = {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("["):
                inside = line.strip() == "[project]"
                continue
            m = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*"([^"]*)"\s*$', line)
            if inside and m:
                table[m.group(1)] = m.group(2)
    return table


def project_license():
    """The SPDX expression of pyproject.toml's [project] license."""
    table = _project_table()
    if table.get("name") != NAME:
        raise BuildError("bindings/python/pyproject.toml: [project] name must be %r" % NAME)
    if not table.get("license"):
        raise BuildError("bindings/python/pyproject.toml: [project] has no license = \"...\"")
    return table["license"]


def license_file():
    """The license text to ship: LICENSE beside pyproject.toml (an sdist),
    else the repository's own."""
    here = os.path.join(ROOT, "LICENSE")
    if os.path.isfile(here):
        return here
    repo = _loader().source_repo(PACKAGE)
    if repo and os.path.isfile(os.path.join(repo, "LICENSE")):
        return os.path.join(repo, "LICENSE")
    raise BuildError("no LICENSE beside %s nor at the repository root" % ROOT)


def _metadata(version):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    # Metadata 2.1 (what pip 23 knows): License carries the SPDX expression,
    # License-File names the text in .dist-info, as setuptools writes it.
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "License: %s\nLicense-File: LICENSE\n"
            "Classifier: License :: OSI Approved :: BSD License\n"
            "Requires-Python: >=3.8\nProvides-Extra: numpy\n"
            "Requires-Dist: numpy; extra == \"numpy\"\n"
            "Description-Content-Type: text/markdown\n\n%s"
            % (NAME, version, SUMMARY, project_license(), readme))


def _platform_tag():
    return re.sub(r"[^A-Za-z0-9_]", "_", sysconfig.get_platform())


class _Wheel(object):
    """A wheel being written: files plus RECORD (sha256, size)."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.record = []

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, _ZIP_TIME)
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        self.record.append("%s,sha256=%s,%d" % (arcname, digest.decode(), len(data)))

    def add_file(self, arcname, path, mode=0o644):
        with open(path, "rb") as f:
            self.add(arcname, f.read(), mode)

    def close(self, dist_info):
        record = dist_info + "/RECORD"
        self.record.append(record + ",,")
        info = zipfile.ZipInfo(record, _ZIP_TIME)
        info.external_attr = 0o100644 << 16
        self.zip.writestr(info, "\n".join(self.record) + "\n")
        self.zip.close()


def _build(wheel_directory, config_settings, editable):
    version = package_version()
    settings = config_settings or {}
    bundle = None if editable else (settings.get("bundle-lib") or os.environ.get(BUNDLE_ENV))
    lib = _check_bundle(bundle, version) if bundle else None
    tag = "py3-none-" + _platform_tag() if lib else "py3-none-any"
    dist_info = "%s-%s.dist-info" % (NAME, version)
    filename = "%s-%s-%s.whl" % (NAME, version, tag)
    w = _Wheel(os.path.join(wheel_directory, filename))
    try:
        if editable:
            # PEP 660: a .pth puts bindings/python on sys.path, so the package
            # is imported from the source tree (and finds build/ there).
            w.add("__editable__.%s-%s.pth" % (NAME, version), (ROOT + "\n").encode())
        else:
            for arcname, path in _package_files():
                w.add_file(arcname, path)
        if lib:
            name = _loader().library_name(_loader().version_tuple(version))
            w.add_file("%s/_lib/%s" % (NAME, name), lib, 0o755)
        w.add(dist_info + "/METADATA", _metadata(version).encode("utf-8"))
        w.add_file(dist_info + "/LICENSE", license_file())
        w.add(dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: stridemem_backend\n"
                                     "Root-Is-Purelib: %s\nTag: %s\n"
                                     % ("false" if lib else "true", tag)).encode())
    finally:
        w.close(dist_info)
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, config_settings, editable=False)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, config_settings, editable=True)


def build_sdist(sdist_directory, config_settings=None):
    """stridemem-<version>.tar.gz: pyproject.toml, README.md, LICENSE, the
    backend, the package sources and PKG-INFO (never a bundled library)."""
    version = package_version()
    base = "%s-%s" % (NAME, version)
    filename = base + ".tar.gz"
    files = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")),
             ("README.md", os.path.join(ROOT, "README.md")),
             ("_backend/stridemem_backend.py", os.path.abspath(__file__)),
             ("LICENSE", license_file())]
    files += _package_files()

    def add(tar, arcname, data):
        info = tarfile.TarInfo(base + "/" + arcname)
        info.size, info.mode, info.mtime = len(data), 0o644, 0
        tar.addfile(info, io.BytesIO(data))

    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz",
                      format=tarfile.PAX_FORMAT) as tar:
        for arcname, path in files:
            with open(path, "rb") as f:
                add(tar, arcname, f.read())
        add(tar, "PKG-INFO", _metadata(version).encode("utf-8"))
    return filename
