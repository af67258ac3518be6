#!/usr/bin/env python3
"""The GPU code in the built library is what the build asked for, and the
default build runs on the GPUs users have.

    check_cuda_arches.py LIB HAVE_CUDA --arches=ARCHES --default=DEFAULT_ARCHES

ARCHES and DEFAULT_ARCHES are CMAKE_CUDA_ARCHITECTURES as configured and as
CMakeLists.txt's default would be, ','-separated (empty without CUDA). Checks:

1. The library's .nv_fatbin (read by tools/cuda_fatbin.py; cross-checked with
   cuobjdump where it is installed) holds exactly the SASS and PTX that ARCHES
   names ("80-real": SASS, "120-virtual": PTX, "90": both). Not checked for
   "native", "all" and "all-major", which depend on the machine or compiler.
2. When ARCHES is the default: every GPU of USERS_GPUS has SASS it can run (a
   cubin of its major version, of a minor version not above its own), and
   there is PTX at least as new as the newest SASS, for GPUs newer than all.

Exit 77 (skipped, with the reason) for a library built without CUDA.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tools"))
import cuda_fatbin  # noqa: E402

# Compute capability -> GPUs of it. The default must run on all of them.
USERS_GPUS = {
    80: "A100, A30",
    86: "RTX 30 series, A10, A40, A6000",
    87: "Jetson Orin",
    89: "RTX 40 series, L4, L40S",
    90: "H100, H200",
}
# ... and, where the compiler can build them (CUDA 12.8 and later):
BLACKWELL_GPUS = {
    100: "B200",
    103: "B300",
    120: "RTX 50 series, RTX PRO Blackwell",
    121: "GB10",
}


def parse_arches(text):
    """{"sass": set, "ptx": set} that a CMAKE_CUDA_ARCHITECTURES list asks
    for, or None when it cannot be known here (native, all, all-major, OFF:
    nvcc's own default)."""
    want = {"sass": set(), "ptx": set()}
    for item in filter(None, text.split(",")):
        number, _, kind = item.partition("-")
        if not number.rstrip("abf").isdigit() or kind not in ("", "real", "virtual"):
            return None
        arch = int(number.rstrip("abf"))
        if kind in ("", "real"):
            want["sass"].add(arch)
        if kind in ("", "virtual"):
            want["ptx"].add(arch)
    return want


def runs_on(gpu, sass):
    """Does some cubin of `sass` run on a GPU of compute capability `gpu`?"""
    return any(a // 10 == gpu // 10 and a % 10 <= gpu % 10 for a in sass)


def coverage_failures(got, default_arches):
    """Why the default build misses a GPU users have (empty when it misses none)."""
    why = []
    gpus = dict(USERS_GPUS)
    built = parse_arches(default_arches)
    if built is not None and max(built["sass"] | built["ptx"] or {0}) >= 100:
        gpus.update(BLACKWELL_GPUS)
    for gpu, names in sorted(gpus.items()):
        if not runs_on(gpu, got["sass"]):
            why.append("no SASS runs on sm_%d (%s)" % (gpu, names))
    if not got["ptx"] or (got["sass"] and max(got["ptx"]) < max(got["sass"])):
        why.append("no PTX at least as new as the newest SASS (sm_%s): GPUs newer than the "
                   "list cannot JIT it" % (max(got["sass"]) if got["sass"] else "?"))
    return why


def main(argv):
    opts = dict(a[2:].split("=", 1) for a in argv[1:] if a.startswith("--") and "=" in a)
    rest = [a for a in argv[1:] if not a.startswith("--")]
    if len(rest) != 2 or set(opts) != {"arches", "default"}:
        print(__doc__, file=sys.stderr)
        return 2
    (lib, have_cuda), arches, default_arches = rest, opts["arches"], opts["default"]
    if have_cuda.upper() not in ("ON", "TRUE", "1", "YES"):
        print("SKIPPED: the library was built without the CUDA backend (no device code)")
        return 77
    entries = cuda_fatbin.list_library(lib)
    if entries is None:
        print("FAIL: %s was built with CUDA but has no .nv_fatbin section" % lib)
        return 1
    got = cuda_fatbin.summary(entries)
    print("%s: SASS %s, PTX %s" % (lib, ["sm_%d" % a for a in got["sass"]],
                                   ["compute_%d" % a for a in got["ptx"]]))
    failures = []
    exe = cuda_fatbin.find_cuobjdump()
    if exe:
        theirs = cuda_fatbin.cuobjdump_summary(exe, lib)
        if theirs != got:
            failures.append("cuobjdump lists %s, tools/cuda_fatbin.py %s" % (theirs, got))
        else:
            print("cuobjdump (%s) lists the same" % exe)
    else:
        print("no cuobjdump on the PATH: tools/cuda_fatbin.py's reading alone")
    want = parse_arches(arches)
    if want is None:
        print("CMAKE_CUDA_ARCHITECTURES=%s depends on the machine: not compared" % arches)
    else:
        want = {k: sorted(v) for k, v in want.items()}
        if want != got:
            failures.append("CMAKE_CUDA_ARCHITECTURES=%s asks for SASS %s, PTX %s"
                            % (arches, want["sass"], want["ptx"]))
    if arches == default_arches:
        failures += coverage_failures({k: set(v) for k, v in got.items()}, default_arches)
    else:
        print("not the default list (%s): coverage of users' GPUs not checked" % default_arches)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
