/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_PERF_DEFER_TYPES_H
#define _LINUX_PERF_DEFER_TYPES_H

#include <linux/types.h>

/* Distinct CPUs and ring buffers remembered per entry context. */
#define PERF_DEFER_SLOTS	4

/* Bits in perf_defer_wait::flags. */
enum {
	PERF_DEFER_MANY_CPUS,	/* samples on more CPUs than there are slots */
	PERF_DEFER_MANY_RBS,	/* samples in more buffers than there are slots */
	PERF_DEFER_NMI,		/* a waiting sample was taken in NMI */
};

/**
 * struct perf_defer_wait - who waits for the current entry context's
 *			    deferred user callchain
 * @max_stack: the longest user chain a waiting sample's event keeps
 * @flags: PERF_DEFER_* bits
 * @cpus: the CPUs (plus one) the waiting samples were taken on; 0 is free
 * @rbs: the ring buffers the waiting samples went to, compared but never
 *	 followed; 0 is free
 *
 * Filled by the task's own samples (task, IRQ and NMI context, so only with
 * atomic ops, and slots are only ever filled); read and cleared by perf's
 * deferred-unwind callback, after which requests of the same entry context
 * fail and add nothing.
 */
struct perf_defer_wait {
	unsigned int	max_stack;
	unsigned long	flags;
	unsigned long	cpus[PERF_DEFER_SLOTS];
	unsigned long	rbs[PERF_DEFER_SLOTS];
};

#endif /* _LINUX_PERF_DEFER_TYPES_H */
