/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What sframe_probe.c takes from outside its C code: the instructions of
 * sframe_probed(), listed at build time from the disassembly of its object
 * (sframe_insns.awk), and the functions it writes in assembly.
 */
#ifndef SELFTESTS_UNWIND_SFRAME_PROBE_H
#define SELFTESTS_UNWIND_SFRAME_PROBE_H

struct probe_chain;

/* Where sframe_probed() starts in its object's section, and its size. */
extern const unsigned long sframe_probed_sym[2];
/* The address of each of its instructions in that section, in order. */
extern const unsigned long sframe_probed_insns[];
extern const unsigned int sframe_probed_nr_insns;

/*
 * Call leaf(c) with @bad_ra in the slot of the function's own return
 * address: described by CFI, and so by an SFrame row
 * (sframe_bad_ra_sframe), or found by frame pointers in a function with no
 * unwind table (sframe_bad_ra_fp). The slot is restored before they return.
 */
long sframe_bad_ra_sframe(long (*leaf)(struct probe_chain *c),
			  struct probe_chain *c, unsigned long bad_ra);
long sframe_bad_ra_fp(long (*leaf)(struct probe_chain *c),
		      struct probe_chain *c, unsigned long bad_ra);

#endif /* SELFTESTS_UNWIND_SFRAME_PROBE_H */
