#!/usr/bin/env python3
"""Lists the GPU code in a library's .nv_fatbin section: which SASS (ELF,
cubin) and which PTX entries it holds, for which architecture.

    tools/cuda_fatbin.py [--cuobjdump] LIBRARY

prints one line per entry, e.g. "sass sm_80", "ptx compute_120". With
--cuobjdump it also runs cuobjdump --list-elf/--list-ptx (when cuobjdump is on
the PATH or in /usr/local/cuda/bin) and fails when the two lists differ.
Exit status: 0 listed, 1 unreadable or inconsistent, 3 no .nv_fatbin section
(a library built without device code).

Standard library only. The formats, as nvcc writes them:

* The section holds fatbin containers one after another (one per .cu
  translation unit, each 8-byte aligned, zero padding between them). A
  container is a 16-byte header: magic 0xBA55ED50 (u32), version (u16),
  header size (u16), size of the entries that follow (u64).
* Each entry: kind (u16: 1 PTX, 2 ELF), a u16, header size (u32), payload
  size (u64), then at offset 28 the architecture (u32, e.g. 90 for sm_90 or
  compute_90) and at offset 40 flags (u64; 0x2000: the payload is
  compressed). The payload follows the entry header.
* An ELF payload that is stored as it is (not compressed: it starts with the
  ELF magic) is a cubin: its e_flags carry the architecture too (bits 8-15
  from the CUDA ELF ABI version 8 on, bits 0-7 before), which is checked
  against the entry's own. (nvcc 13 stores SASS as it is, PTX compressed.)
"""

import os
import re
import shutil
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
FLAG_COMPRESSED = 0x2000
ELFOSABI_CUDA = 0x41


class FatbinError(Exception):
    """The file is not an ELF file, or its .nv_fatbin section is malformed."""


def elf_section(data, wanted):
    """The bytes of the section called `wanted` in the ELF image `data`, or
    None when it has none. FatbinError when `data` is not a 64-bit ELF file."""
    if data[:4] != b"\x7fELF" or len(data) < 64:
        raise FatbinError("not an ELF file")
    if data[4] != 2:
        raise FatbinError("not a 64-bit ELF file")
    end = {1: "<", 2: ">"}.get(data[5])
    if end is None:
        raise FatbinError("unknown ELF byte order")
    shoff, = struct.unpack_from(end + "Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x3A)
    fmt = end + "IIQQQQIIQQ"
    if not shoff or shentsize < struct.calcsize(fmt) or shstrndx >= shnum:
        raise FatbinError("no usable section header table")
    try:
        sections = [struct.unpack_from(fmt, data, shoff + i * shentsize) for i in range(shnum)]
    except struct.error:
        raise FatbinError("section header table runs past the end of the file")
    names = sections[shstrndx]
    for sh in sections:
        start = names[4] + sh[0]
        name = data[start:data.index(b"\0", start)].decode("ascii", "replace")
        if name == wanted:
            if sh[1] == 8:  # SHT_NOBITS: named but holds nothing in the file
                return b""
            return data[sh[4]:sh[4] + sh[5]]
    return None


def cubin_arch(payload):
    """The architecture an uncompressed cubin says it is for (its e_flags),
    or None when the payload is not a CUDA ELF file."""
    if len(payload) < 64 or payload[:4] != b"\x7fELF" or payload[7] != ELFOSABI_CUDA:
        return None
    end = "<" if payload[5] == 1 else ">"
    flags, = struct.unpack_from(end + "I", payload, 0x30 if payload[4] == 2 else 0x24)
    return (flags >> 8) & 0xFF if payload[8] >= 8 else flags & 0xFF


def parse_fatbin(section):
    """[(kind, arch)] for every entry of the containers in `section`, kind
    "sass" or "ptx", in the order they appear. FatbinError when malformed."""
    entries = []
    pos = 0
    while pos < len(section):
        if pos + 16 > len(section):
            if section[pos:].strip(b"\0"):
                raise FatbinError("stray bytes after the last container at %#x" % pos)
            break
        magic, version, header_size, fat_size = struct.unpack_from("<IHHQ", section, pos)
        if magic != FATBIN_MAGIC:
            if magic == 0:  # alignment padding between containers
                pos += 8
                continue
            raise FatbinError("bad container magic %#x at %#x" % (magic, pos))
        if header_size < 16:
            raise FatbinError("container header size %d at %#x" % (header_size, pos))
        start, end = pos + header_size, pos + header_size + fat_size
        if end > len(section):
            raise FatbinError("container at %#x runs past the section" % pos)
        epos = start
        while epos < end:
            if epos + 48 > end:
                raise FatbinError("truncated entry header at %#x" % epos)
            kind, _, ehead, psize = struct.unpack_from("<HHIQ", section, epos)
            arch, = struct.unpack_from("<I", section, epos + 28)
            flags, = struct.unpack_from("<Q", section, epos + 40)
            if ehead < 48 or epos + ehead + psize > end:
                raise FatbinError("entry at %#x does not fit its container" % epos)
            if kind == KIND_ELF:
                if not flags & FLAG_COMPRESSED:
                    said = cubin_arch(section[epos + ehead:epos + ehead + psize])
                    if said is not None and said != arch:
                        raise FatbinError("entry at %#x says sm_%d, its cubin sm_%d"
                                          % (epos, arch, said))
                entries.append(("sass", arch))
            elif kind == KIND_PTX:
                entries.append(("ptx", arch))
            else:
                raise FatbinError("unknown entry kind %d at %#x" % (kind, epos))
            epos += ehead + psize
        pos = (end + 7) & ~7  # the next container starts 8-byte aligned
    return entries


def list_library(path):
    """The entries of the library at `path` (see parse_fatbin), or None when
    it has no .nv_fatbin section."""
    with open(path, "rb") as f:
        data = f.read()
    section = elf_section(data, ".nv_fatbin")
    return None if section is None else parse_fatbin(section)


def summary(entries):
    """{"sass": sorted arches, "ptx": sorted arches}, duplicates (one per
    translation unit) merged."""
    return {k: sorted({a for kind, a in entries if kind == k}) for k in ("sass", "ptx")}


def find_cuobjdump():
    exe = shutil.which("cuobjdump")
    if exe:
        return exe
    fallback = "/usr/local/cuda/bin/cuobjdump"
    return fallback if os.access(fallback, os.X_OK) else None


def cuobjdump_summary(exe, path):
    """summary() as cuobjdump sees the library: its --list-elf and --list-ptx
    lines name files like "libstridemem.1.sm_90.cubin" / "....sm_90.ptx"."""
    got = {}
    for kind, option in (("sass", "--list-elf"), ("ptx", "--list-ptx")):
        p = subprocess.run([exe, option, path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        if p.returncode != 0 and p.stdout.strip():
            raise FatbinError("%s %s failed: %s" % (exe, option, p.stderr.strip()))
        got[kind] = sorted({int(m) for m in re.findall(r"\bsm_(\d+)[a-z]?\.", p.stdout)})
    return got


def main(argv):
    args = argv[1:]
    cross = "--cuobjdump" in args
    args = [a for a in args if a != "--cuobjdump"]
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        entries = list_library(args[0])
    except (OSError, FatbinError) as e:
        print("cuda_fatbin: %s: %s" % (args[0], e), file=sys.stderr)
        return 1
    if entries is None:
        print("cuda_fatbin: %s has no .nv_fatbin section (no device code)" % args[0],
              file=sys.stderr)
        return 3
    mine = summary(entries)
    for a in mine["sass"]:
        print("sass sm_%d" % a)
    for a in mine["ptx"]:
        print("ptx compute_%d" % a)
    if cross:
        exe = find_cuobjdump()
        if exe is None:
            print("cuda_fatbin: no cuobjdump on the PATH: not cross-checked", file=sys.stderr)
        else:
            theirs = cuobjdump_summary(exe, args[0])
            if theirs != mine:
                print("cuda_fatbin: cuobjdump lists %s, this reader %s" % (theirs, mine),
                      file=sys.stderr)
                return 1
            print("cuda_fatbin: cuobjdump agrees", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
