// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred perf callchains of code built without frame pointers
 * (-O2 -fomit-frame-pointer -Wa,--gsframe), sampled by uprobes at the
 * places where an SFrame walk is hardest to get right, and compared frame
 * by frame with the return addresses the program recorded itself:
 *
 * - every instruction of a function with a real frame (six registers
 *   pushed, %rbp among them, a stack frame, two calls), prologue and
 *   epilogue included; the instructions come from the toolchain's
 *   disassembly of the object at build time (sframe_insns.awk);
 * - every instruction of the .plt that a call into a DT_NEEDED library
 *   runs, lazily bound and then bound (the rows of a PC-mask FDE);
 * - a program that walked (its mm remembers its tables) execs itself, or
 *   its twin, at the same addresses: the new program's chain must be right
 *   and found from its own mm;
 * - a return address slot holding a kernel-half address: the walk ends
 *   there, counted as a bad frame.
 *
 * Every uprobe has two events: one with a deferred user callchain (the
 * SFrame walk, which must be complete) and one with the classic
 * frame-pointer callchain, of which the tests log how many frames were
 * right. Built twice: as a PIE (sframe_probe) and as a non-PIE program
 * (sframe_probe_nopie).
 */
#include "sframe_probe_common.h"
#include "sframe_probe_session.h"

/* The fixtures, in the order the tests run. */
#include "sframe_probe_probe.h"
#include "sframe_probe_exec.h"
#include "sframe_probe_kernel_half_ra.h"

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--exec-stage"))
		return exec_stage_main(argc - 2, argv + 2);
	return test_harness_run(argc, argv);
}
