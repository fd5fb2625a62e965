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

/* The deferral core's counters (deferred.c, try_first.c and bpf.c). */
enum unwind_stat {
	UNWIND_STAT_REQUESTS,
	UNWIND_STAT_REQUESTS_NMI,
	UNWIND_STAT_QUEUED,
	UNWIND_STAT_JOINED,
	UNWIND_STAT_ALREADY_PENDING,
	UNWIND_STAT_ALREADY_RUN,
	UNWIND_STAT_REJECTED,
	UNWIND_STAT_BUSY,
	UNWIND_STAT_WALKS,
	UNWIND_STAT_CACHE_REUSES,
	UNWIND_STAT_CACHED_SAMPLES,
	UNWIND_STAT_FRAMES,
	UNWIND_STAT_WALK_NS,
	UNWIND_STAT_TIMED_WALKS,
	UNWIND_STAT_TIMED_FRAMES,
	UNWIND_STAT_WAITED_WALKS,
	UNWIND_STAT_STOP_FAULT,
	UNWIND_STAT_STOP_BAD_FRAME,
	UNWIND_STAT_TRUNCATED,
	UNWIND_STAT_RUNS,
	UNWIND_STAT_CALLBACKS,
	UNWIND_STAT_EXIT_COMPLETIONS,
	UNWIND_STAT_EXIT_LOCKED_OUT,
	UNWIND_STAT_EXEC_COMPLETIONS,
	UNWIND_STAT_ERRORS,
	UNWIND_STAT_TRY_WALKS,
	UNWIND_STAT_TRY_USED,
	UNWIND_STAT_TRY_NOT_RESIDENT,
	UNWIND_STAT_TRY_SKIPPED_SFRAME,
	UNWIND_STAT_TRY_MAPS_CHANGED,
	UNWIND_STAT_BUSY_WALKED,
	UNWIND_STAT_NOW_WALKS,
	UNWIND_STAT_NOW_USED,
	UNWIND_STAT_NOW_PREDICTED,
	UNWIND_STAT_ENTRIES_ONE,
	UNWIND_STAT_ENTRIES_MANY,
	UNWIND_STAT_BPF_WALKS,
	UNWIND_STAT_BPF_COMPLETE,
	UNWIND_STAT_BPF_UNMET,
	UNWIND_STAT_BPF_BAD,
	UNWIND_STAT_BPF_FAULTABLE,
	UNWIND_STAT_BPF_NO_USER,
	UNWIND_STAT_BPF_WARMUPS_QUEUED,
	UNWIND_STAT_BPF_WARMUPS,
	NR_UNWIND_STATS
};

struct unwind_stats {
	u64 val[NR_UNWIND_STATS];
};

DECLARE_PER_CPU(struct unwind_stats, unwind_stats);

/* this_cpu_add() is a single instruction on x86: safe from NMI. */
static __always_inline void unwind_stat_add(enum unwind_stat stat, u64 val)
{
	this_cpu_add(unwind_stats.val[stat], val);
}

static __always_inline void unwind_stat_inc(enum unwind_stat stat)
{
	unwind_stat_add(stat, 1);
}

/* The try-first switch, for the counters file (try_first.c). */
void unwind_try_first_show(struct seq_file *m);
bool unwind_deferred_refusing(void);

#endif /* _KERNEL_UNWIND_STATS_H */
