/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU u64 counters of the unwinder, printed as "name value" lines in
 * its debugfs counters file. Internal to kernel/unwind/.
 */
#ifndef _KERNEL_UNWIND_STATS_H
#define _KERNEL_UNWIND_STATS_H

#include <linux/percpu.h>
#include <linux/seq_file.h>

/*
 * Print @n counters: @names[i] and the sum over the possible CPUs of the
 * per-CPU array @vals at index i.
 */
static inline void unwind_stats_show(struct seq_file *m,
				     const char * const *names,
				     const u64 __percpu *vals, unsigned int n)
{
	unsigned int i;
	int cpu;

	for (i = 0; i < n; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += READ_ONCE(per_cpu_ptr(vals, cpu)[i]);
		seq_printf(m, "%s %llu\n", names[i], sum);
	}
}

/* The counters of try_first.c, in the same file. */
void unwind_try_counters_show(struct seq_file *m);

#endif /* _KERNEL_UNWIND_STATS_H */
