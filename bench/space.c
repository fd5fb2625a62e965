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

/* Ring-buffer bytes per sample, against the ideal for the case. */
void bench_bytes(void)
{
	static const int depths[] = { 8, 32, 128 }, ks[] = { 1, 4, 16 };
	int entries = smoke ? 20 : 400, di, ki, e;
	struct tally c, d;
	struct events ev;
	char name[64];
	double ideal;

	for (di = 0; di < 3; di++) {
		for (ki = 0; ki < 3; ki++) {
			int depth = depths[di], k = ks[ki];

			snprintf(name, sizeof(name), "depth=%d,k=%d", depth, k);
			/* 8 MiB: 400 entries of 16 classic depth-128 samples fit. */
			events_open(&ev, CLASSIC, k, 2048);
			events_enable(&ev, 1);
			for (e = 0; e < entries; e++)
				descend(depth);
			events_enable(&ev, 0);
			tally(&ev, &c);
			events_close(&ev);

			events_open(&ev, DEFERRED, k, 2048);
			events_enable(&ev, 1);
			for (e = 0; e < entries; e++)
				descend(depth);
			events_enable(&ev, 0);
			tally(&ev, &d);
			events_close(&ev);

			if (!c.samples || !d.samples || c.lost || d.lost) {
				fprintf(stderr, "deferred_bench: bytes %s: %ld/%ld samples, %ld/%ld lost\n",
					name, c.samples, d.samples, c.lost, d.lost);
				continue;
			}
			/*
			 * Ideal: each sample keeps its kernel part and two
			 * words instead of the user part; one record per
			 * entry holds the user part once.
			 */
			ideal = c.sample_bytes / c.samples - 8.0 * (1 + c.user_nr) + 16 +
				(8 + 16 + 8.0 * c.user_nr + 16) / k;
			emit("bytes", name, "classic", "bytes_per_sample", c.bytes / c.samples);
			emit("bytes", name, "deferred", "bytes_per_sample", d.bytes / d.samples);
			emit("bytes", name, "ideal", "bytes_per_sample", ideal);
			emit("bytes", name, "deferred", "records_per_entry",
			     (double)d.deferred / entries);
			emit("bytes", name, "classic", "user_frames", c.user_nr);
		}
	}
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
