"""tools/cuda_fatbin.py (the reader behind abi.cuda_architectures) on
libraries made here, byte by byte, so that it is tested in every build, with
or without CUDA; and the coverage rule of tests/scripts/check_cuda_arches.py:
the old default (sm_90 only) misses the A100, the default misses nothing."""

import os
import struct
import sys
import tempfile

from _util import Results

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools"))
sys.path.insert(0, os.path.join(REPO, "tests", "scripts"))
import cuda_fatbin as F  # noqa: E402
import check_cuda_arches as C  # noqa: E402

R = Results("test_cuda_fatbin")


def cubin(arch, abi_version=8):
    """A CUDA ELF header saying `arch` (the reader looks no further)."""
    head = bytearray(64)
    head[:9] = b"\x7fELF\x02\x01\x01" + bytes([F.ELFOSABI_CUDA, abi_version])
    flags = (arch << 8) if abi_version >= 8 else arch
    struct.pack_into("<I", head, 0x30, flags)
    return bytes(head)


def entry(kind, arch, payload, flags=0x11):
    head = bytearray(64)
    struct.pack_into("<HHIQ", head, 0, kind, 0x0101, 64, len(payload))
    struct.pack_into("<I", head, 28, arch)
    struct.pack_into("<Q", head, 40, flags)
    return bytes(head) + payload


def container(*entries):
    body = b"".join(entries)
    blob = struct.pack("<IHHQ", F.FATBIN_MAGIC, 1, 16, len(body)) + body
    return blob + b"\0" * (-len(blob) % 8)


def elf(sections):
    """A 64-bit little-endian ELF file holding `sections` ({name: bytes})
    and its section name table, nothing else."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n in sections) + b".shstrtab\0"
    data, offsets, at = b"", [], 64
    for body in list(sections.values()) + [names]:
        offsets.append(at + len(data))
        data += body
    shoff = 64 + len(data)
    head = bytearray(64)
    head[:7] = b"\x7fELF\x02\x01\x01"
    struct.pack_into("<Q", head, 0x28, shoff)
    struct.pack_into("<HHH", head, 0x3A, 64, len(sections) + 2, len(sections) + 1)
    table = b"\0" * 64
    name_at = 1
    for (name, body), off in zip(list(sections.items()) + [(".shstrtab", names)], offsets):
        table += struct.pack("<IIQQQQIIQQ", name_at, 1 if name != ".shstrtab" else 3, 0, 0,
                             off, len(body), 0, 0, 1, 0)
        name_at += len(name) + 1
    return bytes(head) + data + table


def write(tmp, name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def reader(tmp):
    # Two translation units, as nvcc links them: SASS for 80 and PTX (compressed)
    # for 120 in one, SASS for 90 in the other.
    fat = (container(entry(F.KIND_ELF, 80, cubin(80)), entry(F.KIND_PTX, 120, b"x" * 13,
                                                             flags=0x2011))
           + container(entry(F.KIND_ELF, 90, cubin(90))))
    lib = write(tmp, "lib.so", elf({".text": b"\x90" * 16, ".nv_fatbin": fat}))
    got = F.list_library(lib)
    R.equal(got, [("sass", 80), ("ptx", 120), ("sass", 90)], "entries of two containers")
    R.equal(F.summary(got), {"sass": [80, 90], "ptx": [120]}, "summary")
    older = write(tmp, "older.so", elf({".nv_fatbin": container(
        entry(F.KIND_ELF, 75, cubin(75, abi_version=7)))}))
    R.equal(F.list_library(older), [("sass", 75)], "a cubin of the CUDA ELF ABI before 8")
    R.equal(F.list_library(write(tmp, "cpu.so", elf({".text": b"\x90"}))), None,
            "no .nv_fatbin: None (a CPU-only library)")
    bad = {
        "a cubin that disagrees with its entry": container(entry(F.KIND_ELF, 90, cubin(80))),
        "a bad magic": struct.pack("<IHHQ", 0xDEADBEEF, 1, 16, 0),
        "a container longer than the section": container(entry(F.KIND_ELF, 80, cubin(80)))[:-24],
        "an unknown entry kind": container(entry(7, 80, b"")),
    }
    for what, blob in bad.items():
        path = write(tmp, "bad.so", elf({".nv_fatbin": blob}))
        try:
            F.list_library(path)
            R.fail("%s is refused" % what)
        except F.FatbinError as e:
            R.ok("%s is refused: %s" % (what, e))
    try:
        F.list_library(write(tmp, "text.so", b"not an ELF file at all" * 4))
        R.fail("a file that is not ELF is refused")
    except F.FatbinError:
        R.ok("a file that is not ELF is refused")
    R.equal(F.main(["cuda_fatbin", os.path.join(tmp, "cpu.so")]), 3, "CLI: no device code")


def coverage():
    old = {"sass": {90}, "ptx": {90}}
    why = C.coverage_failures(old, "90-real,90-virtual")
    R.check(any("sm_80 " in w for w in why) and any("sm_89 " in w for w in why),
            "the old default misses sm_80..sm_89: %s" % why)
    default = "80-real,90-real,100-real,120-real,120-virtual"
    want = C.parse_arches(default)
    R.equal(want, {"sass": {80, 90, 100, 120}, "ptx": {120}}, "parse_arches of the default")
    R.equal(C.coverage_failures(want, default), [], "the default misses no GPU")
    no_ptx = {"sass": {80, 90, 100, 120}, "ptx": {90}}
    R.check(C.coverage_failures(no_ptx, default) != [], "PTX older than the newest SASS fails")
    no_blackwell = {"sass": {80, 90}, "ptx": {90}}
    R.check(any("sm_120" in w for w in C.coverage_failures(no_blackwell, default)),
            "a default with Blackwell that lacks its SASS fails")
    R.equal(C.coverage_failures(no_blackwell, "80-real,90-real,90-virtual"), [],
            "an nvcc without Blackwell: sm_80..sm_90 and PTX suffice")
    for other in ("native", "all", "all-major", "OFF"):
        R.equal(C.parse_arches(other), None, "%s cannot be known here" % other)
    R.equal(C.parse_arches("90a-real,86"), {"sass": {90, 86}, "ptx": {86}},
            "suffixes and plain numbers")


def main():
    tmp = tempfile.mkdtemp(prefix="sm-fatbin-")
    try:
        R.run("reader", reader, tmp)
        R.run("coverage", coverage)
    finally:
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())
