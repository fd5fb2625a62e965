# SPDX-License-Identifier: GPL-2.0
"""A CPU-bound Python program for the demo's third and fourth acts
(harness/guest-demo): Debian's own python3, built without frame pointers,
with .eh_frame and no SFrame, sampled by perf and by bpftrace.

Each round descends DEPTH levels of a recursive function; every level
calls the next through map() and sum(), C code, so that each level is a
native frame of the interpreter (_PyEval_EvalFrameDefault and the C calls
between), not only a Python frame. At the bottom the time goes to C code
(zlib's deflate in libz.so.1, Python's zlib module) and to a loop in the
interpreter.

usage: python3 python_work.py ROUNDS [DEPTH]    (ROUNDS 0: until killed)
"""
import sys
import zlib

WORDS = (b'stack', b'frame', b'unwind', b'table', b'deferred', b'sample',
         b'kernel', b'python')


def text(n):
    """n words picked by a linear congruential generator: compressible,
    never the same line twice."""
    x, out = 1, []
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0x7fffffff
        out.append(WORDS[x >> 16 & 7])
    return b' '.join(out)


def leaf(data):
    """The bottom: a checksum in the interpreter, then deflate in libz."""
    s = 0
    for b in data[:6000]:
        s = (s * 31 + b) & 0xffffffff
    return s + len(zlib.compress(data[:30000], 6))


def descend(n, data):
    """n more levels, each one entered from C (map, then sum)."""
    if n == 0:
        return leaf(data)
    return sum(map(descend, [n - 1], [data]))


def main():
    rounds = int(sys.argv[1])
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    data = text(5000)
    i = 0
    while rounds == 0 or i < rounds:
        descend(depth, data)
        i += 1


if __name__ == '__main__':
    main()
