// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf bench's churn (case "churn,depth=N", bench/bpf.c): a sibling
 * thread of the sampled one that maps CHURN_BYTES of anonymous memory,
 * writes its first page and unmaps it, in a loop, as allocators, garbage
 * collectors and language runtimes do. Every mapping is a writer of the
 * mmap lock (its sequence count moves) and a TLB flush of the process's
 * other CPUs; none is executable, so the process's text does not change.
 * The thread runs on every CPU but CPU 0, where the sampled thread spins
 * (unless CPU 0 is the only one), so that the two run at the same time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "bpf_util.h"

#define CHURN_BYTES	(64 << 10)

static struct {
	pthread_t thread;
	atomic_bool on;
	atomic_long maps;	/* mappings made and unmapped */
} churner;

static void *churn_loop(void *arg)
{
	char *p;

	while (atomic_load_explicit(&churner.on, memory_order_relaxed)) {
		p = mmap(NULL, CHURN_BYTES, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die("the churn's mmap");
		p[0] = 1;
		if (munmap(p, CHURN_BYTES))
			die("the churn's munmap");
		atomic_fetch_add_explicit(&churner.maps, 1, memory_order_relaxed);
	}
	return NULL;
}

void churn_set(bool on)
{
	int cpu, cpus = sysconf(_SC_NPROCESSORS_ONLN), err = 0;
	pthread_attr_t attr;
	cpu_set_t set;

	if (on == atomic_load(&churner.on))
		return;
	atomic_store(&churner.on, on);
	if (!on) {
		errno = pthread_join(churner.thread, NULL);
		if (errno)
			die("joining the churn thread");
		return;
	}
	CPU_ZERO(&set);
	for (cpu = 1; cpu < cpus && cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	if (cpus > 1)
		err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!err)
		err = pthread_create(&churner.thread, &attr, churn_loop, NULL);
	pthread_attr_destroy(&attr);
	errno = err;
	if (err) {
		atomic_store(&churner.on, false);
		die("starting the churn thread");
	}
}

long churn_maps(void)
{
	return atomic_load(&churner.maps);
}
