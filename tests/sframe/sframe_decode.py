#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A reference decoder of SFrame v3 sections (x86_64), for the tests.

Reads the section a file's PT_GNU_SFRAME segment holds, decodes the
header, the function index and each function's frame row entries, and
prints them as binutils' "readelf --sframe" does (for default FDEs), so
that the two can be compared, and so that tests can build hostile
sections from well-formed ones and know what each field means. It is
written from the SFrame v3 layout (binutils' include/sframe.h); the
kernel's reader is separate code.

usage: sframe_decode.py FILE      print the table
       sframe_decode.py --lookup FILE ADDR...
                                  print the CFA/FP/RA rule for each address
"""
import struct
import sys

PT_GNU_SFRAME = 0x6474e554
MAGIC = 0xdee2
F_FDE_SORTED, F_FRAME_POINTER, F_FDE_FUNC_START_PCREL = 0x1, 0x2, 0x4
ABI_AMD64_LE = 3
HDR = struct.Struct("<HBBBbbBIIIII")       # 28 bytes
FDE_IDX = struct.Struct("<qII")            # 16 bytes
FDE_ATTR = struct.Struct("<HBBB")          # 5 bytes
PCTYPE_MASK = 1
FDE_TYPE_DEFAULT, FDE_TYPE_FLEX = 0, 1


class Bad(Exception):
    """The section breaks a rule; the message says which."""


def sframe_segment(data):
    """(section bytes, its virtual address) from the ELF's PT_GNU_SFRAME."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise Bad("not a little-endian ELF64 file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    found = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = \
            struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == PT_GNU_SFRAME:
            found.append((p_offset, p_vaddr, p_filesz))
    if len(found) != 1:
        raise Bad("%d PT_GNU_SFRAME segments" % len(found))
    off, vaddr, size = found[0]
    return data[off:off + size], vaddr


def header(sec):
    if len(sec) < HDR.size:
        raise Bad("section shorter than its header")
    (magic, version, flags, abi, fixed_fp, fixed_ra, auxlen, nfdes, nfres,
     frelen, fdeoff, freoff) = HDR.unpack_from(sec, 0)
    if magic != MAGIC:
        raise Bad("bad magic %#x" % magic)
    if version != 3:
        raise Bad("SFrame version %d, not 3" % version)
    if abi != ABI_AMD64_LE:
        raise Bad("ABI %d, not AMD64" % abi)
    base = HDR.size + auxlen
    end = base + max(fdeoff + nfdes * FDE_IDX.size, freoff + frelen)
    if end > len(sec) or fdeoff % 4 or freoff + frelen > len(sec) - base:
        raise Bad("sub-sections out of bounds")
    return dict(flags=flags, fixed_fp=fixed_fp, fixed_ra=fixed_ra,
                nfdes=nfdes, nfres=nfres, fres=base + freoff, frelen=frelen,
                fdes=base + fdeoff, size=end)


def fdes(sec, vaddr, h):
    """Each function: start address, size, PC type, rep size, its FREs."""
    out = []
    for i in range(h["nfdes"]):
        at = h["fdes"] + i * FDE_IDX.size
        start, size, freoff = FDE_IDX.unpack_from(sec, at)
        if h["flags"] & F_FDE_FUNC_START_PCREL:
            start += vaddr + at
        attr = h["fres"] + freoff
        if freoff + FDE_ATTR.size > h["frelen"]:
            raise Bad("FDE %d: attributes past the FRE area" % i)
        nfres, info, info2, rep = FDE_ATTR.unpack_from(sec, attr)
        fre_type, pc_type = info & 0xf, (info >> 4) & 1
        if fre_type > 2:
            raise Bad("FDE %d: FRE type %d" % (i, fre_type))
        at = attr + FDE_ATTR.size
        rows = []
        for _ in range(nfres):
            addr_size = 1 << fre_type
            if at + addr_size + 1 > h["fres"] + h["frelen"]:
                raise Bad("FDE %d: FRE past the FRE area" % i)
            fstart = int.from_bytes(sec[at:at + addr_size], "little")
            finfo = sec[at + addr_size]
            at += addr_size + 1
            count, wsize = (finfo >> 1) & 0xf, 1 << ((finfo >> 5) & 3)
            if wsize > 4:
                raise Bad("FDE %d: data word size %d" % (i, wsize))
            words = [int.from_bytes(sec[at + k * wsize:at + (k + 1) * wsize],
                                    "little", signed=True)
                     for k in range(count)]
            at += count * wsize
            rows.append(dict(start=fstart, base="sp" if finfo & 1 else "fp",
                             words=words))
        out.append(dict(start=start, size=size, pc_type=pc_type, rep=rep,
                        type=info2 & 0x1f, signal=info >> 7, rows=rows))
    return out


def rule(row, fixed_ra):
    """(cfa text, fp text, ra text) for a default FDE row, as readelf."""
    if not row["words"]:
        return "u", "u", "u"
    cfa = "%s+%d" % (row["base"], row["words"][0])
    fp = "c%+d" % row["words"][1] if len(row["words"]) > 1 else "u"
    ra = "f" if fixed_ra else "u"
    return cfa, fp, ra


def dump(path):
    data = open(path, "rb").read()
    sec, vaddr = sframe_segment(data)
    h = header(sec)
    for i, f in enumerate(fdes(sec, vaddr, h)):
        print("func idx [%d]: pc = %#x, size = %d bytes" % (i, f["start"], f["size"]))
        mask = f["pc_type"] == PCTYPE_MASK
        print("STARTPC[m]" if mask else "STARTPC")
        for r in f["rows"]:
            pc = r["start"] if mask else f["start"] + r["start"]
            cfa, fp, ra = rule(r, h["fixed_ra"])
            print("%016x %s %s %s" % (pc, cfa, fp, ra))


def lookup(path, addrs):
    data = open(path, "rb").read()
    sec, vaddr = sframe_segment(data)
    h = header(sec)
    table = fdes(sec, vaddr, h)
    for a in addrs:
        hit = [f for f in table if f["start"] <= a < f["start"] + f["size"]]
        if not hit:
            print("%#x none" % a)
            continue
        f = hit[-1]
        off = a - f["start"]
        if f["pc_type"] == PCTYPE_MASK and f["rep"]:
            off %= f["rep"]
        rows = [r for r in f["rows"] if r["start"] <= off]
        print("%#x %s" % (a, " ".join(rule(rows[-1], h["fixed_ra"])) if rows else "none"))


if __name__ == "__main__":
    try:
        if len(sys.argv) >= 3 and sys.argv[1] == "--lookup":
            lookup(sys.argv[2], [int(x, 0) for x in sys.argv[3:]])
        elif len(sys.argv) == 2:
            dump(sys.argv[1])
        else:
            sys.exit(__doc__.split("\n\n")[2])
    except Bad as e:
        sys.exit("sframe_decode: %s: %s" % (sys.argv[-1], e))
