// SPDX-License-Identifier: GPL-2.0
/*
 * Completeness (complete): the chains that reach the outermost frame when
 * the stack pages are not resident, from a system call and, with
 * try-first, from an interrupt.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/*
 * Completeness: a thread runs on a stack in a shared memory file whose
 * pages it drops (MADV_DONTNEED) right before each sampled system call, so
 * the sampling context finds them not resident.
 */
#define STACK_SIZE	(1 << 20)

struct complete_arg {
	char *stack;
	int depth, rounds;
	pid_t tid;
	pthread_barrier_t start;
	unsigned long root_ra;
	int spin, stop;		/* spin in user space at the bottom until stop */
	int spinning;		/* ... and it is there */
};

static __attribute__((noipa)) void dropping_descend(struct complete_arg *a,
						     int depth)
{
	/*
	 * Frames spread over many stack pages, farther apart than the
	 * 64 KiB that fault-around maps back on the first refault.
	 */
	char pad[4096];

	asm volatile("" : : "r"(pad) : "memory");
	if (depth > 1) {
		dropping_descend(a, depth - 1);
	} else if (a->spin) {
		/* another thread drops the pages; cpu-clock samples the spin */
		__atomic_store_n(&a->spinning, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&a->stop, __ATOMIC_RELAXED))
			;
	} else {
		madvise(a->stack, STACK_SIZE, MADV_DONTNEED);
		syscall(__NR_getppid);
	}
	asm volatile("" ::: "memory");
}

static __attribute__((noipa)) void complete_root(struct complete_arg *a)
{
	int i;

	a->root_ra = (unsigned long)__builtin_return_address(0);
	for (i = 0; i < a->rounds; i++)
		dropping_descend(a, a->depth);
}

static void *complete_thread(void *p)
{
	struct complete_arg *a = p;

	a->tid = gettid();
	pthread_barrier_wait(&a->start);	/* until watched */
	complete_root(a);
	return NULL;
}

/*
 * Chains holding @ra, over all chains of the mode: CLASSIC the samples,
 * DEFERRED the records, TRY_FIRST both the samples with a classic user
 * part (a stack walked at once) and the records (a deferred one).
 */
static void count_complete(struct events *ev, unsigned long ra, long *with,
			   long *total, enum mode which)
{
	struct perf_event_mmap_page *pg = ev->rb;
	char *data = (char *)ev->rb + getpagesize();
	__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	__u64 off, i, nr;
	const __u64 *ips;
	int classic;

	*with = 0;
	*total = 0;
	for (off = pg->data_tail; off < head;) {
		struct perf_event_header *h = (void *)(data + off % (ev->pages * getpagesize()));
		const __u64 *p = (const void *)(h + 1);

		if (!h->size)
			break;
		off += h->size;
		if (h->type == PERF_RECORD_CALLCHAIN_DEFERRED && which != CLASSIC) {
			nr = p[1];
			ips = &p[2];
		} else if (h->type == PERF_RECORD_SAMPLE && which != DEFERRED) {
			/* ip, tid, time, period, nr, ips */
			nr = p[4];
			ips = &p[5];
			for (i = 0, classic = which == CLASSIC; i < nr; i++)
				classic |= ips[i] == PERF_CONTEXT_USER;
			if (!classic)
				continue;
		} else {
			continue;
		}
		(*total)++;
		for (i = 0; i < nr; i++)
			if (ips[i] == ra) {
				(*with)++;
				break;
			}
	}
	pg->data_tail = head;
}

/* Start the thread on the dropped stack; returns once it is known. */
static void complete_start(struct complete_arg *a, pthread_t *th)
{
	pthread_attr_t attr;

	pthread_barrier_init(&a->start, NULL, 2);
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, a->stack, STACK_SIZE);
	if (pthread_create(th, &attr, complete_thread, a))
		die("pthread_create");
	while (!__atomic_load_n(&a->tid, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void complete_end(struct complete_arg *a, pthread_t th)
{
	pthread_join(th, NULL);
	a->tid = 0;
	pthread_barrier_destroy(&a->start);
}

void bench_complete(void)
{
	struct complete_arg a = { .depth = 64, .rounds = smoke ? 5 : 100 };
	const char *c = "depth=64,stack not resident";
	struct timespec ms = { 0, 1000 * 1000 };
	long with, total, n0, u0;
	struct events ev;
	pthread_t th;
	int fd, m, i;

	fd = memfd_create("bench-stack", 0);
	if (fd < 0 || ftruncate(fd, STACK_SIZE))
		die("memfd");
	a.stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a.stack == MAP_FAILED)
		die("mmap stack");
	for (m = CLASSIC; m <= DEFERRED; m++) {
		complete_start(&a, &th);
		/* Watch just that thread. */
		events_open_on(&ev, m, 1, 1024, a.tid, -1, 0);
		events_enable(&ev, 1);
		pthread_barrier_wait(&a.start);
		complete_end(&a, th);
		events_enable(&ev, 0);
		count_complete(&ev, a.root_ra, &with, &total, m);
		events_close(&ev);
		emit("complete", c, mode_name[m], "chains_reaching_root_pct",
		     total ? 100.0 * with / total : 0);
		emit("complete", c, mode_name[m], "chains", total);
	}

	/*
	 * cpu-clock samples of a thread spinning in user space on that
	 * stack, whose pages the main thread drops every millisecond, with
	 * try-first on: the samples that find a page missing must defer.
	 */
	set_try_first(mode_try_first(TRY_FIRST));
	a.spin = 1;
	a.rounds = 1;
	a.stop = 0;
	a.spinning = 0;
	complete_start(&a, &th);
	irq_events_open(&ev, TRY_FIRST, a.tid, 1000000);	/* 1 ms */
	pthread_barrier_wait(&a.start);
	/* Only samples of the spin: none of the thread's start or exit. */
	while (!__atomic_load_n(&a.spinning, __ATOMIC_ACQUIRE))
		sched_yield();
	n0 = read_long(COUNTERS, "try_not_resident");
	u0 = read_long(COUNTERS, "try_used");
	events_enable(&ev, 1);
	for (i = 0; i < (smoke ? 50 : 1000); i++) {
		madvise(a.stack, STACK_SIZE, MADV_DONTNEED);
		nanosleep(&ms, NULL);
	}
	events_enable(&ev, 0);
	__atomic_store_n(&a.stop, 1, __ATOMIC_RELAXED);
	complete_end(&a, th);
	n0 = read_long(COUNTERS, "try_not_resident") - n0;
	u0 = read_long(COUNTERS, "try_used") - u0;
	sleep(1);	/* the last records */
	count_complete(&ev, a.root_ra, &with, &total, TRY_FIRST);
	events_close(&ev);
	c = "cpu-clock,depth=64,stack not resident";
	emit("complete", c, "try-first", "chains_reaching_root_pct",
	     total ? 100.0 * with / total : 0);
	emit("complete", c, "try-first", "chains", total);
	emit("complete", c, "try-first", "not_resident_deferred_pct",
	     n0 + u0 > 0 ? 100.0 * n0 / (n0 + u0) : 0);
	munmap(a.stack, STACK_SIZE);
	close(fd);
}
