#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The hostile bench's chain (bench/hostile.c): assembly for the worst
unwind tables a process can give the kernel's walk in an interrupt, all of
them valid, so that a walk that follows them is right.

- A search table of --table functions (.eh_frame_hdr lists one entry per
  FDE): every lookup's binary search takes its most probes.
- A chain of --depth functions, hostile_0() calling hostile_1() and so on,
  the last spinning until the process is killed. Each keeps a frame
  pointer (push %rbp; mov %rsp, %rbp), so that a classic frame-pointer
  walk of the same program goes as deep, and after it --sled instructions
  each with two CFA rows of its own (both right: %rsp equals %rbp there),
  so that finding the row of its call site decodes some 3 x --sled CFA
  instructions.
- Every call's return address less one (the address a caller's frame is
  looked up by) hashes to the same set of the kernel's per-mm rule cache
  (hash_64(ip >> 6, 6), 4 ways: a slot covers a row's part of a 64-byte
  block; each call has a row of its own): 126 rules competing for 4 slots, so that a walk keeps missing
  the rules the mm remembers.

The code is in its own section, .hostile, which the program is linked to
load at --base (-Wl,--section-start): the addresses, and so the hashes,
are the ones computed here. The last function spins at hostile_spin;
hostile_ras lists the return addresses (a count, then innermost first),
for bench/hostile_main.c to print. The output is one assembly file on
stdout.
"""
import argparse

GOLDEN_RATIO_64 = 0x61C8864680B583EB
RULE_SET_BITS = 6               # kernel/unwind/mm_cache.h: 64 sets
RULE_BLOCK_SHIFT = 6            # ... of 64-byte blocks
CALL_LEN = 5                    # call rel32


def rule_set(ip):
    """The set of the kernel's rule cache that @ip hashes to."""
    block = ip >> RULE_BLOCK_SHIFT
    return ((block * GOLDEN_RATIO_64) & (2**64 - 1)) >> (64 - RULE_SET_BITS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", type=lambda s: int(s, 0), default=0x10000000)
    ap.add_argument("--table", type=int, default=250000)
    ap.add_argument("--depth", type=int, default=127)
    ap.add_argument("--sled", type=int, default=1000)
    args = ap.parse_args()

    out = []
    emit = out.append
    emit('\t.section .hostile,"ax",@progbits')
    # The search table: functions of one "ret" each, never called.
    for k in range(args.table):
        emit(f"hostile_pad_{k}:\n\t.cfi_startproc\n\tret\n\t.cfi_endproc")
    pos = args.table                        # bytes so far: one per "ret"
    target = None
    for i in range(args.depth):
        last = i == args.depth - 1
        emit(f"\t.globl hostile_{i}\n\t.type hostile_{i}, @function")
        emit(f"hostile_{i}:\n\t.cfi_startproc")
        emit("\tpush %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbp, -16")
        emit("\tmov %rsp, %rbp\n\t.cfi_def_cfa_register %rbp")
        pos += 4
        for _ in range(args.sled):
            emit("\tnop\n\t.cfi_def_cfa %rsp, 16\n\t.cfi_def_cfa %rbp, 16")
        pos += args.sled
        if last:
            emit("\t.globl hostile_spin\nhostile_spin:\n\tjmp hostile_spin")
            pos += 2
        else:
            # The call's return address less one in the one set.
            call = pos
            while True:
                s = rule_set(args.base + call + CALL_LEN - 1)
                if target is None:
                    target = s
                # The call's row (the call and the pop after it) in one
                # 64-byte block: a row reaching out of it is kept in the
                # set of a larger block instead.
                one = ((args.base + call) >> RULE_BLOCK_SHIFT ==
                       (args.base + call + CALL_LEN) >> RULE_BLOCK_SHIFT)
                if s == target and one:
                    break
                call += 1
            emit(f"\t.org {call}, 0x90")
            # A row of its own for the call (%rsp equals %rbp here), so
            # that its rule is one of a 64-byte block's set.
            emit("\t.cfi_def_cfa %rsp, 16")
            emit(f"\tcall hostile_{i + 1}")
            emit(f"hostile_ret_{i}:")
            emit("\tpop %rbp\n\t.cfi_def_cfa %rsp, 8\n\tret")
            pos = call + CALL_LEN + 2
        emit(f"\t.cfi_endproc\n\t.size hostile_{i}, .-hostile_{i}")
    # The return addresses, innermost first, for the program to print.
    emit('\t.section .rodata\n\t.balign 8\n\t.globl hostile_ras')
    emit(f"hostile_ras:\n\t.quad {args.depth - 1}")
    for i in reversed(range(args.depth - 1)):
        emit(f"\t.quad hostile_ret_{i}")
    emit('\t.section .note.GNU-stack,"",@progbits')
    print("\n".join(out))


if __name__ == "__main__":
    main()
