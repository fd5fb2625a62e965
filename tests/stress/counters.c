// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinder's debugfs counters, as the stress programs read them; see
 * counters.h.
 */
#include <stdio.h>
#include <string.h>

#include "counters.h"
#include "workload.h"

static const char * const counter_names[NR_C] = {
	"requests", "queued", "joined", "already_pending", "already_run",
	"rejected", "busy", "runs", "callbacks", "exit_completions",
	"exec_completions", "errors", "try_walks", "try_used",
	"try_not_resident", "try_maps_changed", "now_walks", "now_used",
};

int counters_read_names(const char * const *names, int n,
			unsigned long long *v)
{
	char name[64];
	unsigned long long val;
	FILE *f = fopen(COUNTERS, "r");
	int i, found = 0;

	memset(v, 0, n * sizeof(*v));
	if (!f)
		return -1;
	while (fscanf(f, "%63s %llu", name, &val) == 2) {
		for (i = 0; i < n; i++) {
			if (!strcmp(name, names[i])) {
				v[i] = val;
				found++;
			}
		}
	}
	fclose(f);
	return found;
}

int counters_read(struct counters *c)
{
	return counters_read_names(counter_names, NR_C, c->v) == NR_C ? 0 : -1;
}

const char *counters_check(const struct counters *before,
			   struct counters *after, char *buf, size_t len)
{
	unsigned long long outcomes;
	int i;

	for (i = 0; i < 300; i++) {
		if (counters_read(after))
			return "cannot read " COUNTERS;
		if (after->v[C_RUNS] == after->v[C_QUEUED])
			break;
		wl_usleep(10000);
	}
	outcomes = delta(before, after, C_QUEUED) + delta(before, after, C_JOINED) +
		delta(before, after, C_PENDING) + delta(before, after, C_RUN) +
		delta(before, after, C_REJECTED) + delta(before, after, C_BUSY);
	printf("# counters: %llu requests = %llu queued + %llu joined + ",
	       delta(before, after, C_REQUESTS), delta(before, after, C_QUEUED),
	       delta(before, after, C_JOINED));
	printf("%llu already pending + %llu already run + %llu rejected + %llu busy; ",
	       delta(before, after, C_PENDING), delta(before, after, C_RUN),
	       delta(before, after, C_REJECTED), delta(before, after, C_BUSY));
	printf("%llu task works ran, %llu callbacks, %llu exit and %llu exec completions\n",
	       delta(before, after, C_RUNS), delta(before, after, C_CALLBACKS),
	       delta(before, after, C_EXIT), delta(before, after, C_EXEC));
	if (delta(before, after, C_ERRORS)) {
		snprintf(buf, len, "counters: %llu errors",
			 delta(before, after, C_ERRORS));
		return buf;
	}
	if (delta(before, after, C_REQUESTS) != outcomes) {
		snprintf(buf, len, "counters: %llu requests but %llu outcomes",
			 delta(before, after, C_REQUESTS), outcomes);
		return buf;
	}
	printf("# try-first: %llu walks in an interrupt = %llu used + %llu not resident + %llu mappings changed (deferred)\n",
	       delta(before, after, C_TRY_WALKS), delta(before, after, C_TRY_USED),
	       delta(before, after, C_TRY_NOT_RESIDENT),
	       delta(before, after, C_TRY_MAPS_CHANGED));
	if (delta(before, after, C_TRY_WALKS) !=
	    delta(before, after, C_TRY_USED) + delta(before, after, C_TRY_NOT_RESIDENT) +
	    delta(before, after, C_TRY_MAPS_CHANGED)) {
		snprintf(buf, len, "counters: %llu walks tried in an interrupt, %llu used, %llu not resident, %llu mappings changed",
			 delta(before, after, C_TRY_WALKS), delta(before, after, C_TRY_USED),
			 delta(before, after, C_TRY_NOT_RESIDENT),
			 delta(before, after, C_TRY_MAPS_CHANGED));
		return buf;
	}
	printf("# first samples of a stay in the kernel: %llu walked at once, %llu used\n",
	       delta(before, after, C_NOW_WALKS), delta(before, after, C_NOW_USED));
	if (delta(before, after, C_NOW_USED) > delta(before, after, C_NOW_WALKS)) {
		snprintf(buf, len, "counters: %llu walks at once used of %llu made",
			 delta(before, after, C_NOW_USED),
			 delta(before, after, C_NOW_WALKS));
		return buf;
	}
	if (after->v[C_RUNS] != after->v[C_QUEUED]) {
		snprintf(buf, len,
			 "counters: %llu task works queued, %llu ran, 3 s after the tasks were gone",
			 after->v[C_QUEUED], after->v[C_RUNS]);
		return buf;
	}
	return NULL;
}
