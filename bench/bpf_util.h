/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the benches of BPF's stack helpers (bench/bpf.c, bench/hostile.c)
 * share: bench/bpf_stack.bpf.c loaded, its maps, a cpu-clock event that
 * runs it, the switch between the classic walk and the tables', the
 * unwinder's counters they read, and a thread that maps and unmaps memory
 * meanwhile (bpf_churn.c).
 */
#ifndef BPF_UTIL_H
#define BPF_UTIL_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "bpf_stack.h"

#define BPF_TABLES	"/sys/kernel/unwind_user/bpf_tables"
#define BPF_OBJECT	"bpf_stack.bpf.o"
#define MAX_STACK	127	/* perf_event_max_stack's default */

/* The loaded program and its maps. */
struct bpf_bench {
	struct bpf_object *obj;
	int prog, entries, timing, samples, nr;
};

extern struct bpf_bench bs;

/* The counters of the unwinder that the benches read, by index. */
enum { WALKS, UNMET, WARMUPS, WALK_NS, TIMED, TIMED_FRAMES, PROBE_NS,
       NOFAULT_STOPS, NKEYS };

void bpf_load(const char *dir);
/* bpf_tables: 0 walks by frame pointers as 6.12 does, 1 by the tables. */
void set_tables(int on);
/* The entries the program asks the helper for. */
void set_entries(__u32 n);
/* Clear the sums and the samples kept. */
void bpf_reset(void);
void bpf_timing(struct bpf_stack_timing *t);
/* The samples taken since bpf_reset(). */
__u32 nr_samples(void);
/* The samples kept into @s; how many there are. */
int bpf_samples(struct bpf_stack_sample *s);
int bpf_event_open(pid_t pid, long period, int on_exec);
void bpf_counters(long *c);
/* @d = @b - @a, key by key. */
void bpf_counters_diff(long *d, const long *a, const long *b);

/*
 * The churn (bpf_churn.c): start the thread that maps and unmaps memory
 * (@on) or stop it, if it is not so already; the mappings it has made.
 */
void churn_set(bool on);
long churn_maps(void);

#endif /* BPF_UTIL_H */
