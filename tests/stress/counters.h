/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unwinder's debugfs counters, as the stress programs read them: the
 * deferral core's, whose books must balance after a scenario, and any
 * other by name (the SFrame walker's sframe_*).
 */
#ifndef STRESS_COUNTERS_H
#define STRESS_COUNTERS_H

#include <stddef.h>

#define COUNTERS	"/sys/kernel/debug/unwind_deferred/counters"

/* The deferral core's counters. */
enum {
	C_REQUESTS, C_QUEUED, C_JOINED, C_PENDING, C_RUN, C_REJECTED, C_BUSY,
	C_RUNS, C_CALLBACKS, C_EXIT, C_EXEC, C_ERRORS,
	/* try-then-defer: walks in an interrupt, and how each ended */
	C_TRY_WALKS, C_TRY_USED, C_TRY_NOT_RESIDENT, C_TRY_MAPS_CHANGED,
	/* first samples of a stay in the kernel walked at once, and used */
	C_NOW_WALKS, C_NOW_USED, NR_C
};

struct counters {
	unsigned long long v[NR_C];
};

/*
 * Read the counters called @names[0..@n) into @v (0 where the file has
 * none); returns how many it has, or -1 when it cannot be read.
 */
int counters_read_names(const char * const *names, int n,
			unsigned long long *v);
/* The core's counters; 0, or -1 when the file lacks any of them. */
int counters_read(struct counters *c);

static inline unsigned long long delta(const struct counters *a,
				       const struct counters *b, int i)
{
	return b->v[i] - a->v[i];
}

/*
 * Check the counters after a scenario, all its tasks gone and its events
 * closed, and print them: every request has one outcome, no errors, and
 * every queued task work ran (a task blocked since gets 3 s), every
 * walk tried in an interrupt was either used or deferred, and no more
 * walks made at once were used than were made.  Fills
 * @after; returns NULL, or what is wrong (in @buf).
 */
const char *counters_check(const struct counters *before,
			   struct counters *after, char *buf, size_t len);

#endif
