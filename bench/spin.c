// SPDX-License-Identifier: GPL-2.0
/*
 * A spin at the bottom of a call chain of known depth: what cpu-clock
 * samples interrupt in user space (irqcost, bpf). deferred_bench has it
 * with frame pointers; harness/bench builds it again into the bpf bench's
 * libraries, each built the way one kind of code is (bench/bpf.c).
 */
#include "bench.h"

__attribute__((noipa)) unsigned long spin_at(int depth, long n)
{
	unsigned long x = 0;
	long i;

	if (depth > 1)
		x = spin_at(depth - 1, n);
	else
		for (i = 0; i < n; i++)
			x = x * 31 + i;
	asm volatile("" : "+r"(x));	/* not a tail call */
	return x;
}
