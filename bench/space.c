// SPDX-License-Identifier: GPL-2.0
/*
 * What deferral costs in memory: the ring-buffer bytes per sample (bytes),
 * what a small buffer nobody reads keeps and loses (lost), and the slab
 * memory of the tasks that unwound (memory).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"

/* Entries run before a bytes case is counted. */
#define BYTES_WARM_UP	8

/*
 * One case of bytes: @entries system calls at @depth, each sampled @k
 * times, in @mode, after a few that are not counted (a task's first
 * stays teach it how many samples its stays get).
 */
static void bytes_run(enum mode mode, int depth, int k, int entries,
		      struct tally *t)
{
	struct events ev;
	int e;

	if (mode >= DEFERRED)
		set_try_first(mode_try_first(mode));
	/* 8 MiB: 400 entries of 16 classic depth-128 samples fit. */
	events_open(&ev, mode, k, 2048);
	events_enable(&ev, 1);
	for (e = 0; e < BYTES_WARM_UP; e++)
		descend(depth);
	events_enable(&ev, 0);
	tally(&ev, t);
	events_enable(&ev, 1);
	for (e = 0; e < entries; e++)
		descend(depth);
	events_enable(&ev, 0);
	tally(&ev, t);
	events_close(&ev);
}

/*
 * Ring-buffer bytes per sample, against the ideal for the case: each
 * sample keeps its kernel part and two words instead of the user part,
 * and one record per entry holds the user part once; classic, and the
 * three settings of a deferring event (bench.h); and the bytes of a
 * classic sample of the deferred walk's chain, which walking at once
 * writes.
 */
void bench_bytes(void)
{
	static const int depths[] = { 8, 32, 128 }, ks[] = { 1, 2, 4, 16 };
	int entries = smoke ? 20 : 400, di, ki, m;
	struct tally t[PREDICTED + 1];
	char name[64];
	double ideal, kpart, nd;

	for (di = 0; di < 3; di++) {
		for (ki = 0; ki < 4; ki++) {
			int depth = depths[di], k = ks[ki];

			snprintf(name, sizeof(name), "depth=%d,k=%d", depth, k);
			for (m = CLASSIC; m <= PREDICTED; m++)
				bytes_run(m, depth, k, entries, &t[m]);
			for (m = CLASSIC; m <= PREDICTED; m++)
				if (!t[m].samples || t[m].lost)
					break;
			if (m <= PREDICTED) {
				fprintf(stderr, "deferred_bench: bytes %s: %s: %ld samples, %ld lost\n",
					name, mode_name[m], t[m].samples, t[m].lost);
				continue;
			}
			/*
			 * The chain is the deferred walk's, which can be
			 * longer than perf's frame-pointer walk: through
			 * libc by its .eh_frame, to _start.
			 */
			kpart = t[CLASSIC].sample_bytes / t[CLASSIC].samples -
				8.0 * (1 + t[CLASSIC].user_nr);
			nd = t[DEFERRED].deferred ?
			     t[DEFERRED].deferred_frames / t[DEFERRED].deferred : 0;
			ideal = kpart + 16 + (8 + 16 + 8.0 * nd + 16) / k;
			emit("bytes", name, "ideal", "bytes_per_sample", ideal);
			emit("bytes", name, "classic", "same_chain_bytes_per_sample",
			     kpart + 8.0 * (1 + nd));
			for (m = CLASSIC; m <= PREDICTED; m++) {
				emit("bytes", name, mode_name[m], "bytes_per_sample",
				     t[m].bytes / t[m].samples);
				if (m == CLASSIC)
					continue;
				emit("bytes", name, mode_name[m], "vs_ideal_pct",
				     100 * (t[m].bytes / t[m].samples / ideal - 1));
				emit("bytes", name, mode_name[m], "records_per_entry",
				     (double)t[m].deferred / entries);
				emit("bytes", name, mode_name[m], "inline_chains_per_entry",
				     (double)t[m].classic / entries);
			}
			emit("bytes", name, "classic", "user_frames", t[CLASSIC].user_nr);
			emit("bytes", name, "deferred", "user_frames", nd);
		}
	}
	set_try_first(0);
}

/* What a small buffer that nobody reads keeps, and what it loses. */
void bench_lost(void)
{
	int entries = smoke ? 50 : 2000, k = 4, e, m;
	const char *c = "depth=32,k=4,32KiB";
	struct events ev;
	struct tally t;

	for (m = CLASSIC; m <= DEFERRED; m++) {
		events_open(&ev, m, k, 8);	/* 32 KiB */
		events_enable(&ev, 1);
		for (e = 0; e < entries; e++)
			descend(32);
		events_enable(&ev, 0);
		tally(&ev, &t);
		events_close(&ev);
		emit("lost", c, mode_name[m], "samples_kept", t.samples);
		emit("lost", c, mode_name[m], "samples_lost_pct",
		     100.0 * (entries * k - t.samples) / (entries * k));
		if (m == DEFERRED)
			emit("lost", c, mode_name[m], "records_kept", t.deferred);
	}
}

/* Threads that each unwound once, and the slab memory that costs. */
static pthread_barrier_t mem_barrier;
static int mem_unwind;

static void *mem_thread(void *p)
{
	if (mem_unwind)
		descend(4);
	pthread_barrier_wait(&mem_barrier);	/* all alive at once */
	pthread_barrier_wait(&mem_barrier);	/* measured; go */
	return NULL;
}

void bench_memory(void)
{
	static const int counts[] = { 1000, 4000 };
	int ci, i, n, pass, cpu, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct events ev[64];
	long base[2];
	pthread_t *th;
	char name[32];

	for (ci = 0; ci < (smoke ? 1 : 2); ci++) {
		n = smoke ? 50 : counts[ci];
		th = calloc(n, sizeof(*th));
		/* Pass 0: threads that never unwind; pass 1: each unwinds once. */
		for (pass = 0; pass < 2; pass++) {
			mem_unwind = pass;
			/* Inherited by new threads: one per CPU, to be mappable. */
			for (cpu = 0; cpu < ncpu && cpu < 64; cpu++) {
				events_open_on(&ev[cpu], DEFERRED, 1, 16, 0, cpu, 1);
				events_enable(&ev[cpu], 1);
			}
			pthread_barrier_init(&mem_barrier, NULL, n + 1);
			for (i = 0; i < n; i++) {
				pthread_attr_t attr;

				pthread_attr_init(&attr);
				pthread_attr_setstacksize(&attr, 64 * 1024);
				if (pthread_create(&th[i], &attr, mem_thread, NULL))
					die("pthread_create");
			}
			pthread_barrier_wait(&mem_barrier);
			base[pass] = read_long("/proc/meminfo", "SUnreclaim");
			pthread_barrier_wait(&mem_barrier);
			for (i = 0; i < n; i++)
				pthread_join(th[i], NULL);
			pthread_barrier_destroy(&mem_barrier);
			for (cpu = 0; cpu < ncpu && cpu < 64; cpu++) {
				events_enable(&ev[cpu], 0);
				events_close(&ev[cpu]);
			}
		}
		free(th);
		snprintf(name, sizeof(name), "threads=%d", n);
		emit("memory", name, "deferred", "slab_bytes_per_unwound_task",
		     (base[1] - base[0]) * 1024.0 / n);
	}
}
