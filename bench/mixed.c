// SPDX-License-Identifier: GPL-2.0
/*
 * A workload whose samples per kernel entry change (mixed): what each
 * setting of a deferring event costs and writes where one entry gets one
 * sample at one time and four at another, or where two threads differ.
 *
 * Phases: one thread runs phases of MIXED_ENTRIES system calls, one
 * sample each (k=1: one event of four enabled) and four each (k=4), in
 * turn. Each phase runs in each mode, the modes taking turns, after a
 * lead-in of the phase before's kind (what the task learns from its
 * stays carries from one phase to the next); a phase's cost per sample
 * is its time over the same phase with no event, the median of the
 * rounds, and its bytes per sample those of its ring buffer.
 *
 * Threads: two threads at once, one entering with k=1, the other with
 * k=4, each with its own events and buffer; cost and bytes per thread.
 *
 * The default (predicted) should match, in each phase and thread, the
 * better of walking every first sample at once (try-first) and deferring
 * every sample (deferred).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "bench.h"

#define MIXED_DEPTH	32
#define MIXED_ENTRIES	400	/* per phase */
#define MIXED_PHASES	6
#define MIXED_LEAD_IN	8
#define MIXED_ROUNDS	21
#define MIXED_K		4

/* Phase @p: k=1 on even phases, k=4 on odd ones. */
static int phase_k(int p)
{
	return p % 2 ? MIXED_K : 1;
}

/* Events 1 to 3 of @ev on or off: k=4 or k=1 (event 0 stays on). */
static void set_k(struct events *ev, int k)
{
	int i;

	for (i = 1; i < ev->n; i++)
		ioctl(ev->fd[i], k > 1 ? PERF_EVENT_IOC_ENABLE :
		      PERF_EVENT_IOC_DISABLE, 0);
}

/* The time of @n system calls at MIXED_DEPTH. */
static double run_entries(int n)
{
	return run_loop(MIXED_DEPTH, n) * n;
}

static void bench_phases(int rounds, int entries)
{
	static double ns[PREDICTED + 1][MIXED_PHASES][MIXED_ROUNDS];
	struct tally t[PREDICTED + 1][MIXED_PHASES], ta;
	struct events ev[PREDICTED + 1];
	double d[MIXED_ROUNDS];
	int i, m, p, r;
	char name[48];

	for (m = NONE; m <= PREDICTED; m++)
		events_open(&ev[m], m, MIXED_K, 1024);
	memset(t, 0, sizeof(t));
	for (r = 0; r < rounds; r++) {
		for (p = 0; p < MIXED_PHASES; p++) {
			/* odd rounds reverse the order: trends cancel */
			for (i = 0; i <= PREDICTED; i++) {
				m = r % 2 ? PREDICTED - i : i;
				if (m >= DEFERRED)
					set_try_first(mode_try_first(m));
				/*
				 * The lead-in, the end of the phase before:
				 * the task learns its stays, as it would
				 * have in a run of the phases in turn.
				 */
				if (m != NONE)
					ioctl(ev[m].fd[0], PERF_EVENT_IOC_ENABLE, 0);
				set_k(&ev[m], phase_k(p + MIXED_PHASES - 1));
				run_entries(MIXED_LEAD_IN);
				if (m != NONE)
					tally(&ev[m], &ta);
				set_k(&ev[m], phase_k(p));
				ns[m][p][r] = run_entries(entries);
				events_enable(&ev[m], 0);
				if (m != NONE)
					tally(&ev[m], r ? &ta : &t[m][p]);
			}
		}
	}
	for (m = NONE; m <= PREDICTED; m++)
		events_close(&ev[m]);
	set_try_first(0);

	for (p = 0; p < MIXED_PHASES; p++) {
		snprintf(name, sizeof(name), "phase %d,depth=%d,k=%d", p + 1,
			 MIXED_DEPTH, phase_k(p));
		for (m = CLASSIC; m <= PREDICTED; m++) {
			for (r = 0; r < rounds; r++)
				d[r] = (ns[m][p][r] - ns[NONE][p][r]) /
				       (entries * phase_k(p));
			emit("mixed", name, mode_name[m], "ns_per_sample",
			     median(d, rounds));
			emit("mixed", name, mode_name[m], "bytes_per_sample",
			     t[m][p].samples ? t[m][p].bytes / t[m][p].samples : 0);
		}
	}
}

/* A thread of the two: its own events, k samples per entry. */
struct mixed_thread {
	pthread_t th;
	pid_t tid;
	int k, entries;
	pthread_barrier_t *go;
	double ns;
};

static void *mixed_thread(void *p)
{
	struct mixed_thread *a = p;

	a->tid = gettid();
	pthread_barrier_wait(a->go);	/* its events are opened */
	pthread_barrier_wait(a->go);	/* both start */
	a->ns = run_entries(a->entries);
	pthread_barrier_wait(a->go);	/* both done */
	return NULL;
}

/* One round of both threads in @mode: each one's time, and its tally. */
static void threads_round(enum mode mode, int entries, double *ns,
			  struct tally *t)
{
	struct mixed_thread a[2];
	struct events ev[2];
	pthread_barrier_t go;
	int i;

	pthread_barrier_init(&go, NULL, 3);
	for (i = 0; i < 2; i++) {
		a[i] = (struct mixed_thread){ .k = i ? MIXED_K : 1,
					      .entries = entries, .go = &go };
		if (pthread_create(&a[i].th, NULL, mixed_thread, &a[i]))
			die("pthread_create");
	}
	pthread_barrier_wait(&go);
	for (i = 0; i < 2; i++) {
		events_open_on(&ev[i], mode, a[i].k, 1024, a[i].tid, -1, 0);
		events_enable(&ev[i], 1);
	}
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&go);
	for (i = 0; i < 2; i++) {
		pthread_join(a[i].th, NULL);
		events_enable(&ev[i], 0);
		if (mode != NONE)
			tally(&ev[i], &t[i]);
		events_close(&ev[i]);
		ns[i] = a[i].ns;
	}
	pthread_barrier_destroy(&go);
}

static void bench_threads(int rounds, int entries)
{
	static double ns[PREDICTED + 1][2][MIXED_ROUNDS];
	struct tally t[PREDICTED + 1][2], ta[2];
	double d[MIXED_ROUNDS], one[2];
	int m, i, r;
	char name[48];

	for (r = 0; r < rounds; r++) {
		for (m = NONE; m <= PREDICTED; m++) {
			if (m >= DEFERRED)
				set_try_first(mode_try_first(m));
			threads_round(m, entries, one, r ? ta : t[m]);
			ns[m][0][r] = one[0];
			ns[m][1][r] = one[1];
		}
	}
	set_try_first(0);
	for (i = 0; i < 2; i++) {
		int k = i ? MIXED_K : 1;

		snprintf(name, sizeof(name), "thread %d of 2,depth=%d,k=%d",
			 i + 1, MIXED_DEPTH, k);
		for (m = CLASSIC; m <= PREDICTED; m++) {
			for (r = 0; r < rounds; r++)
				d[r] = (ns[m][i][r] - ns[NONE][i][r]) /
				       (entries * k);
			emit("mixed", name, mode_name[m], "ns_per_sample",
			     median(d, rounds));
			emit("mixed", name, mode_name[m], "bytes_per_sample",
			     t[m][i].samples ? t[m][i].bytes / t[m][i].samples : 0);
		}
	}
}

void bench_mixed(void)
{
	int rounds = smoke ? 1 : MIXED_ROUNDS;
	int entries = smoke ? 20 : MIXED_ENTRIES;

	pin_cpu0(true);
	bench_phases(rounds, entries);
	pin_cpu0(false);
	bench_threads(rounds, entries * 2);
}
