#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Seed inputs of the unwind table fuzzer (fuzz_tables.c), from ELF files.

Each file's .eh_frame_hdr, .eh_frame and .sframe (taken out with objcopy
-O binary --only-section) are laid out at their addresses relative to each
other and wrapped in the fuzzer's input header (struct fuzz_hdr, fuzz.h),
with IPs of the functions they describe: the whole tables where they are
small, and windows of a few functions each, rewritten into small tables of
their own (a search table, their CIEs and FDEs; an SFrame index and its
rows), where they are not. --hand writes the small hand-made seeds kept in
tests/fuzz/tables/seeds/ instead.

usage: mkseeds.py OUTDIR ELF...
       mkseeds.py --hand OUTDIR
"""
import os
import struct
import subprocess
import sys
import tempfile

HDR = struct.Struct("<BBHIiIiIiiiIii")     # struct fuzz_hdr
EH, SFRAME, RULES, WS4, RACE = 0x01, 0x02, 0x04, 0x08, 0x80
M_FP, M_SFRAME, M_EH = 1, 2, 4
MAX_IPS = 16
MAX_WHOLE = 48 << 10        # bytes of tables kept whole
WINDOW = 8                  # functions per window
WINDOWS = 6                 # windows per file
ODD_WINDOWS = 3             # more, at FDEs of odd CFA rules
PAD = 256                   # bytes of the segment mapped past the tables
PT_LOAD, PF_X = 1, 1
SF_HDR = struct.Struct("<HBBBbbBIIIII")    # SFrame v3, 28 bytes
SF_FDE = struct.Struct("<qII")


def seed(mode, ips, payload, eh=(0, 0, 0, 0), sf=(0, 0), text=(0, 0),
         methods=M_FP | M_SFRAME | M_EH, budget=0, page=0):
    ips = [max(-2**31, min(2**31 - 1, ip)) for ip in ips[:MAX_IPS]]
    h = HDR.pack(mode | methods << 4, len(ips), page, budget, 0, 0,
                 eh[0], eh[1], eh[2], eh[3], sf[0], sf[1], text[0], text[1])
    return h + struct.pack("<%di" % len(ips), *ips) + payload


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        done = (v == 0 and not b & 0x40) or (v == -1 and b & 0x40)
        out.append(b | (0 if done else 0x80))
        if done:
            return bytes(out)


def read_leb(b, i, signed=False):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            break
    if signed and c & 0x40:
        v -= 1 << shift
    return v, i


class Elf:
    """The sections and segments of an ELF file, and their bytes."""

    def __init__(self, path):
        self.path = path
        d = open(path, "rb").read()
        if d[:4] != b"\x7fELF" or d[5] != 1:
            raise ValueError("not a little-endian ELF file")
        self.ws = 8 if d[4] == 2 else 4
        if self.ws == 8:
            shoff, = struct.unpack_from("<Q", d, 0x28)
            phoff, = struct.unpack_from("<Q", d, 0x20)
            phentsize, phnum, shentsize, shnum, shstrndx = \
                struct.unpack_from("<HHHHH", d, 0x36)
        else:
            phoff, shoff = struct.unpack_from("<II", d, 0x1c)
            phentsize, phnum, shentsize, shnum, shstrndx = \
                struct.unpack_from("<HHHHH", d, 0x2a)
        self.loads = []
        for i in range(phnum):
            o = phoff + i * phentsize
            if self.ws == 8:
                t, fl, _, va, _, _, msz, _ = struct.unpack_from("<IIQQQQQQ", d, o)
            else:
                t, _, va, _, _, msz, fl, _ = struct.unpack_from("<IIIIIIII", d, o)
            if t == PT_LOAD:
                self.loads.append((va, va + msz, fl))
        shdrs = []
        for i in range(shnum):
            o = shoff + i * shentsize
            if self.ws == 8:
                name, _, _, addr, off, size = struct.unpack_from("<IIQQQQ", d, o)
            else:
                name, _, _, addr, off, size = struct.unpack_from("<IIIIII", d, o)
            shdrs.append((name, addr, off, size))
        strs = shdrs[shstrndx][2] if shnum else 0
        self.sections = {}
        for name, addr, _, size in shdrs:
            n = d[strs + name:d.index(b"\0", strs + name)].decode()
            self.sections[n] = (addr, size)

    def bytes(self, name):
        """The section's bytes, as objcopy takes them out."""
        with tempfile.NamedTemporaryFile() as t:
            subprocess.run(["objcopy", "-O", "binary", "--only-section=" + name,
                            self.path, t.name], check=True)
            return open(t.name, "rb").read()

    def load_of(self, addr):
        for lo, hi, fl in self.loads:
            if lo <= addr < hi:
                return lo, hi
        return None

    def text(self):
        for lo, hi, fl in self.loads:
            if fl & PF_X:
                return lo, hi
        return None


class EhFrame:
    """.eh_frame_hdr's search table and the entries of .eh_frame."""

    def __init__(self, elf):
        self.ws = elf.ws
        self.hdr_addr, _ = elf.sections[".eh_frame_hdr"]
        self.ehf_addr, _ = elf.sections[".eh_frame"]
        self.hdr = elf.bytes(".eh_frame_hdr")
        self.ehf = elf.bytes(".eh_frame")
        h = self.hdr
        if h[0] != 1 or h[2] != 0x03 or h[3] != 0x3b:
            raise ValueError("an .eh_frame_hdr of another form")
        count, = struct.unpack_from("<I", h, 8)
        self.table = [struct.unpack_from("<ii", h, 12 + 8 * i)
                      for i in range(count)]

    def entry(self, addr):
        """The bytes of the CIE or FDE at @addr, its length word included."""
        o = addr - self.ehf_addr
        n, = struct.unpack_from("<I", self.ehf, o)
        if n == 0xffffffff:
            raise ValueError("64-bit DWARF")
        return bytes(self.ehf[o:o + 4 + n])

    def cie_enc(self, cie):
        """Where a CIE's FDEs find their pc_begin: its 'R' encoding."""
        b = cie
        i = 9
        aug = b[i:b.index(b"\0", i)].decode()
        i += len(aug) + 1
        _, i = read_leb(b, i)
        _, i = read_leb(b, i, True)
        if b[8] == 1:
            i += 1
        else:
            _, i = read_leb(b, i)
        if not aug.startswith("z"):
            return 0
        _, i = read_leb(b, i)
        for c in aug[1:]:
            if c == "R":
                return b[i]
            if c == "P":
                enc = b[i] & 0x0f
                i += 1 + {0: self.ws, 2: 2, 3: 4, 4: 8, 0xa: 2, 0xb: 4,
                          0xc: 8}[enc]
            elif c == "L":
                i += 1
        return 0

    def fde(self, k):
        """The k-th FDE of the table: (address, bytes, CIE address, begin,
        range, pc_begin's encoding)."""
        loc, off = self.table[k]
        addr = self.hdr_addr + off
        b = self.entry(addr)
        cie = addr + 4 - struct.unpack_from("<I", b, 4)[0]
        enc = self.cie_enc(self.entry(cie))
        if enc & 0x0f not in (0x03, 0x0b) or enc & 0x70 not in (0, 0x10):
            raise ValueError("pc_begin encoding %#x" % enc)
        begin, rng = struct.unpack_from("<iI", b, 8)
        if enc & 0x70 == 0x10:
            begin += addr + 8
        return addr, b, cie, begin & (2**64 - 1), rng, enc

    def window(self, first, n):
        """A new .eh_frame_hdr and .eh_frame, at the old header's address,
        that describe the n functions from the table's first-th on; and
        their IPs, from the header."""
        fdes = [self.fde(k) for k in range(first, min(first + n,
                                                      len(self.table)))]
        hdr_len = 12 + 8 * len(fdes)
        ehf = bytearray()
        cies = {}
        for _, _, cie, _, _, _ in fdes:
            if cie not in cies:
                cies[cie] = hdr_len + len(ehf)
                ehf += self.entry(cie)
        table, ips = [], []
        for addr, b, cie, begin, rng, enc in fdes:
            pos = hdr_len + len(ehf)
            b = bytearray(b)
            struct.pack_into("<I", b, 4, pos + 4 - cies[cie])
            if enc & 0x70 == 0x10:
                struct.pack_into("<i", b, 8,
                                 begin - (self.hdr_addr + pos + 8))
            ehf += b
            start = begin - self.hdr_addr
            table.append((start, pos))
            ips += [start, start + rng // 2]
        ehf += b"\0\0\0\0"
        ips[1] = table[0][0] + fdes[0][4]       # past the first: a gap?
        ips[-1] = table[-1][0] + fdes[-1][4]    # past the last one
        hdr = bytes([1, 0x1b, 0x03, 0x3b]) + struct.pack(
            "<iI", hdr_len - 4, len(table))
        hdr += b"".join(struct.pack("<ii", *e) for e in sorted(table))
        return hdr + bytes(ehf), ips, hdr_len


def odd_cfa_fdes(eh):
    """Indexes of the FDEs with DW_CFA_def_cfa_expression, or with
    DW_CFA_def_cfa_register to a register other than SP and FP (byte
    matches in their instructions: a guess, good enough for seeds), those
    with an indexed expression first."""
    sp, fp = (7, 6) if eh.ws == 8 else (4, 5)
    ranked = []
    for k in range(len(eh.table)):
        try:
            b = eh.fde(k)[1]
        except (ValueError, KeyError, IndexError, struct.error):
            continue
        insns = b[16:]
        regs = [insns[i + 1] for i in range(len(insns) - 1)
                if insns[i] == 0x0d]
        # The indexed form first (mul; plus; deref), then the others.
        if b"\x1e\x22\x06" in insns:
            ranked.append((0, k))
        elif 0x0f in insns:
            ranked.append((1, k))
        elif any(r not in (sp, fp) for r in regs):
            ranked.append((2, k))
    return [k for _, k in sorted(ranked)]


def eh_seeds(elf, mode):
    """Seeds of a file's .eh_frame: whole, and in windows."""
    eh = EhFrame(elf)
    seg = elf.load_of(eh.hdr_addr)
    if not seg or not eh.table:
        return []
    out = []
    lo = min(eh.hdr_addr, eh.ehf_addr)
    hi = max(eh.hdr_addr + len(eh.hdr), eh.ehf_addr + len(eh.ehf))
    step = max(1, len(eh.table) // MAX_IPS)
    if hi - lo <= MAX_WHOLE:
        # The reader reads ahead, up to the segment's end.
        p = bytearray(min(hi + PAD, seg[1]) - lo)
        p[eh.hdr_addr - lo:eh.hdr_addr - lo + len(eh.hdr)] = eh.hdr
        p[eh.ehf_addr - lo:eh.ehf_addr - lo + len(eh.ehf)] = eh.ehf
        ips = [eh.hdr_addr - lo + loc + 1
               for loc, _ in eh.table[::step]]
        out.append(seed(mode, ips, bytes(p),
                        eh=(eh.hdr_addr - lo, len(eh.hdr), seg[0] - lo,
                            seg[1] - lo)))
    nwin = min(WINDOWS, (len(eh.table) + WINDOW - 1) // WINDOW)
    firsts = [w * (len(eh.table) - WINDOW) // max(1, nwin - 1)
              for w in range(nwin)]
    # And windows at FDEs whose CFA is an expression or another register
    # (hand-written assembly: OpenSSL's), which even windows rarely meet.
    for k in odd_cfa_fdes(eh):
        if len(firsts) >= nwin + ODD_WINDOWS:
            break
        if all(abs(k - f) >= WINDOW for f in firsts):
            firsts.append(k)
    for w, first in enumerate(firsts):
        try:
            p, ips, hdr_len = eh.window(max(0, first), WINDOW)
        except (ValueError, KeyError, IndexError, struct.error):
            continue
        p += bytes(min(PAD, seg[1] - eh.hdr_addr - len(p)))
        out.append(seed(mode | (RULES if w % 2 else 0) |
                        (RACE if w == 5 else 0), ips, p,
                        eh=(0, hdr_len, seg[0] - eh.hdr_addr,
                            seg[1] - eh.hdr_addr),
                        methods=M_FP | M_EH, budget=0 if w != 3 else 300,
                        page=(w * 0x3f5) & 0xfff))
    return out


def sframe_window(sec, addr, first, n):
    """A new SFrame section, at the old one's address, of the n functions
    from the first-th on; and their IPs, from the section."""
    h = list(SF_HDR.unpack_from(sec, 0))
    base = SF_HDR.size + h[6]
    fdes_at, fres_at, frelen = base + h[10], base + h[11], h[9]
    fdes = [SF_FDE.unpack_from(sec, fdes_at + 16 * k) for k in range(h[7])]
    offs = sorted(set(f[2] for f in fdes)) + [frelen]
    keep = list(range(first, min(first + n, len(fdes))))
    idx, fres, ips, nfres = b"", b"", [], 0
    for j, k in enumerate(keep):
        start, size, off = fdes[k]
        func = addr + fdes_at + 16 * k + start
        rows = sec[fres_at + off:fres_at + offs[offs.index(off) + 1]]
        new_at = SF_HDR.size + 16 * j
        idx += SF_FDE.pack(func - (addr + new_at), size, len(fres))
        nfres += struct.unpack_from("<H", rows, 0)[0] if len(rows) >= 2 else 0
        fres += rows
        ips += [func - addr, func - addr + size // 2]
    h[6], h[7], h[8], h[9], h[10], h[11] = (0, len(keep), nfres, len(fres),
                                            0, len(idx))
    return SF_HDR.pack(*h) + idx + fres, ips


def sframe_seeds(elf, mode):
    addr, _ = elf.sections[".sframe"]
    sec = elf.bytes(".sframe")
    text = elf.text()
    if not text or len(sec) < SF_HDR.size:
        return []
    t = (text[0] - addr, text[1] - addr)
    h = SF_HDR.unpack_from(sec, 0)
    nfdes = h[7]
    out = []
    if len(sec) <= MAX_WHOLE:
        p, ips = sframe_window(sec, addr, 0, nfdes)
        step = max(1, len(ips) // MAX_IPS)
        out.append(seed(mode, ips[::step], sec, sf=(0, len(sec)), text=t))
    nwin = min(WINDOWS, (nfdes + WINDOW - 1) // WINDOW)
    for w in range(nwin):
        first = max(0, w * (nfdes - WINDOW) // max(1, nwin - 1))
        p, ips = sframe_window(sec, addr, first, WINDOW)
        out.append(seed(mode | (RULES if w % 2 else 0) |
                        (RACE if w == 5 else 0), ips, p,
                        sf=(0, len(p)), text=t, methods=M_FP | M_SFRAME,
                        budget=0 if w != 3 else 40))
    return out


def both_seed(elf):
    """The tables of a file with both, in place, for the rule cache."""
    eh = EhFrame(elf)
    sf_addr, _ = elf.sections[".sframe"]
    sf = elf.bytes(".sframe")
    seg, text = elf.load_of(eh.hdr_addr), elf.text()
    parts = [(eh.hdr_addr, eh.hdr), (eh.ehf_addr, eh.ehf), (sf_addr, sf)]
    lo = min(a for a, _ in parts)
    hi = max(a + len(b) for a, b in parts)
    if hi - lo > MAX_WHOLE or not seg or not text:
        return []
    p = bytearray(min(hi + PAD, seg[1]) - lo)
    for a, b in parts:
        p[a - lo:a - lo + len(b)] = b
    step = max(1, len(eh.table) // MAX_IPS)
    ips = [eh.hdr_addr - lo + loc + 2 for loc, _ in eh.table[::step]]
    return [seed(EH | SFRAME | RULES, ips, bytes(p),
                 eh=(eh.hdr_addr - lo, len(eh.hdr), seg[0] - lo, seg[1] - lo),
                 sf=(sf_addr - lo, len(sf)),
                 text=(text[0] - lo, text[1] - lo), methods=methods)
            for methods in (M_FP | M_SFRAME | M_EH, M_FP | M_EH)]


def file_seeds(path):
    elf = Elf(path)
    ws4 = WS4 if elf.ws == 4 else 0
    out = []
    if ".eh_frame_hdr" in elf.sections and ".eh_frame" in elf.sections:
        out += eh_seeds(elf, EH | ws4)
    if ".sframe" in elf.sections and elf.ws == 8:
        out += sframe_seeds(elf, SFRAME)
        if ".eh_frame_hdr" in elf.sections:
            out += both_seed(elf)
    return out


def hand_eh():
    """A CIE and FDEs of each kind of row a walk follows: a prologue, the
    .plt's CFA expression, a realigned (DRAP) frame, a signal frame."""
    def cie(aug, insns):
        body = struct.pack("<IB", 0, 1) + aug + b"\0" + uleb(1) + sleb(-8)
        body += bytes([16]) + uleb(1) + bytes([0x1b]) + insns
        body += bytes(-(len(body) + 4) % 8)
        return struct.pack("<I", len(body)) + body

    def fde(at, cie_at, begin, rng, insns):
        body = struct.pack("<Ii", at + 4 - cie_at, begin - (at + 8))
        body += struct.pack("<I", rng) + uleb(0) + insns
        body += bytes(-(len(body) + 4) % 8)
        return struct.pack("<I", len(body)) + body

    init = bytes([0x0c, 7, 8, 0x90, 1])             # def_cfa rsp+8; rip
    plt = bytes([0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22])
    kinds = [
        # push %rbp; mov %rsp,%rbp; ...; leave; ret
        bytes([0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x4a, 0x0c, 7, 8]),
        # .plt: SP + 8, + 8 from byte 11 of each entry
        bytes([0x0e, 16, 0x46, 0x0e, 24, 0x4a, 0x0f, len(plt)]) + plt,
        # realigned: CFA the word at rbp-8, rbp saved at rbp
        bytes([0x44, 0x0f, 3, 0x76, 0x78, 0x06, 0x10, 6, 2, 0x76, 0]),
        # remember, restore, advance_loc2, an unknown register
        bytes([0x41, 0x0a, 0x0e, 32, 0x83, 3, 0x03, 8, 0, 0x0b, 0x09, 16, 3]),
    ]
    def breg(reg, off, deref=False):
        e = bytes([0x70 + reg]) + sleb(off) + (b"\x06" if deref else b"")
        return uleb(len(e)) + e

    # the kernel's rt_sigframe: the interrupted rsp, rip, rbp on the stack
    sig = b"\x0f" + breg(7, 160, True) + b"\x10\x10" + breg(7, 168) + \
        b"\x10\x06" + breg(7, 120)
    text = -0x4000                  # the code, from the header
    hdr_len = 12 + 8 * (len(kinds) + 1)
    ehf = bytearray(cie(b"zR", init))
    sig_cie = hdr_len + len(ehf)
    ehf += cie(b"zRS", b"")
    table, ips = [], []
    for k, insns in enumerate(kinds + [sig]):
        at = hdr_len + len(ehf)
        begin = text + 0x100 * k
        ehf += fde(at, sig_cie if insns is sig else hdr_len, begin, 0x40,
                   insns)
        table.append((begin, at))
        ips += [begin, begin + 5, begin + 0x1b]
    ehf += bytes(4)
    hdr = bytes([1, 0x1b, 0x03, 0x3b]) + struct.pack("<iI", hdr_len - 4,
                                                      len(table))
    hdr += b"".join(struct.pack("<ii", *e) for e in table)
    p = hdr + bytes(ehf)
    return seed(EH | RULES, ips, p, eh=(0, hdr_len, -0x8000, len(p)),
                methods=M_FP | M_EH)


def hand_sframe():
    """An SFrame v3 section: a default function, a .plt's (PC mask) and a
    flexible one (CFA from rbp, rbp saved in the frame)."""
    def fre(start, info, words):
        return bytes([start, info]) + b"".join(struct.pack("<b", w)
                                                 for w in words)
    default = struct.pack("<HBBB", 3, 0, 0, 0)
    default += fre(0, 0x03, [8]) + fre(1, 0x05, [16, -16]) + \
        fre(4, 0x04, [16, -16])
    plt = struct.pack("<HBBB", 2, 0x10, 0, 16)
    plt += fre(0, 0x03, [8]) + fre(11, 0x03, [16])
    flex = struct.pack("<HBBB", 3, 0, 1, 0)
    fp, sp = (6 << 3) | 1, (7 << 3) | 1          # register based
    flex += fre(0, 0x05, [sp, 8])                # CFA = rsp + 8
    flex += fre(4, 0x0a, [fp, 16, 0, fp | 2, 0])  # rbp + 16, rbp at rbp
    flex += fre(8, 0x04, [fp | 2, -8])           # the word at rbp - 8
    rows = [default, plt, flex]
    n = len(rows)
    idx, fres, ips = b"", b"", []
    for k, r in enumerate(rows):
        func = -0x4000 + 0x100 * k
        idx += SF_FDE.pack(func - (SF_HDR.size + 16 * k), 0x40, len(fres))
        fres += r
        ips += [func, func + 2, func + 0x1c]
    h = SF_HDR.pack(0xdee2, 3, 0x5, 3, 0, -8, 0, n, 8, len(fres), 0, len(idx))
    p = h + idx + fres
    return seed(SFRAME | RULES, ips, p, sf=(0, len(p)), text=(-0x4000, -0x3000),
                methods=M_FP | M_SFRAME)


def main(argv):
    if len(argv) == 3 and argv[1] == "--hand":
        os.makedirs(argv[2], exist_ok=True)
        for name, s in (("hand-eh-frame", hand_eh()),
                        ("hand-sframe", hand_sframe())):
            open(os.path.join(argv[2], name), "wb").write(s)
        return 0
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    os.makedirs(argv[1], exist_ok=True)
    total = 0
    for path in argv[2:]:
        try:
            seeds = file_seeds(path)
        except (OSError, ValueError, KeyError, struct.error,
                subprocess.CalledProcessError) as e:
            print("mkseeds: %s: skipped (%s)" % (path, e), file=sys.stderr)
            continue
        name = path.strip("/").replace("/", "_")
        for i, s in enumerate(seeds):
            open(os.path.join(argv[1], "%s-%d" % (name, i)), "wb").write(s)
        total += len(seeds)
    print("mkseeds: %d seeds from %d files" % (total, len(argv) - 2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
