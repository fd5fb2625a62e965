// SPDX-License-Identifier: GPL-2.0
/*
 * A seeded, bounded perf_event_open() fuzzer around the deferred-callchain
 * bits: random attributes (every flag bit, with defer_callchain,
 * defer_output and their neighbours 34..41 picked most often; sample types,
 * stack limits, sizes), opened on this task, a child or a CPU, and used:
 * ring buffers mapped, events enabled over system calls from a call chain,
 * forks and exits, ioctls, outputs redirected, closes in random order.
 * Every record read back must be well formed, and a deferred record must
 * hold exactly its frames.  A failure prints the seed and the iteration to
 * replay it.  The kernel's side is judged by the harness: no splat.
 *
 * usage: perf_attr_fuzz [-s SEED] [-n ITERATIONS] [-t SECONDS]
 * Prints TAP (one test).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POOL		8
#define MAX_PAGES	8

static uint64_t rng;
static unsigned long iter;
static uint64_t seed;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int chance(int percent)
{
	return (int)(rnd() % 100) < percent;
}

static void fail(const char *what)
{
	printf("# replay: perf_attr_fuzz -s %llu (failed at iteration %lu)\n",
	       (unsigned long long)seed, iter);
	printf("not ok 1 perf_event_open attr fuzzer: %s\n", what);
	exit(1);
}

/* Events with sigtrap send SIGTRAP on overflow: take it, do nothing. */
static void on_sigtrap(int sig)
{
	(void)sig;
}

static __attribute__((noipa)) long chain(int depth)
{
	long r;

	if (depth > 0)
		r = chain(depth - 1);
	else
		r = syscall(__NR_getppid);
	asm volatile("" : "+r"(r));
	return r;
}

struct ev {
	int fd;
	void *rb;
	size_t pages;
	int defer;
	int backward;		/* write_backward: head moves down, tail unused */
};

static struct ev pool[POOL];

static void ev_close(struct ev *e)
{
	if (e->rb)
		munmap(e->rb, (e->pages + 1) * getpagesize());
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	e->rb = NULL;
}

/* Every record between tail and head: sizes, types, deferred layouts. */
static void ev_check(struct ev *e)
{
	struct perf_event_mmap_page *pg = e->rb;
	size_t size = e->pages * getpagesize();
	const char *data = (const char *)e->rb + getpagesize();
	uint64_t head, tail;

	if (!pg || e->backward)
		return;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	if (head - tail > size)
		fail("data_head ran more than a buffer ahead of data_tail");
	while (tail < head) {
		struct perf_event_header h;
		uint64_t w[3];
		size_t at = tail % size;

		if (at + sizeof(h) > size)
			break;	/* wrapped header: skip the rest of this pass */
		memcpy(&h, data + at, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || tail + h.size > head)
			fail("a record with a bad size");
		if (!h.type || h.type >= PERF_RECORD_MAX)
			fail("a record of an unknown type");
		if (h.type == PERF_RECORD_CALLCHAIN_DEFERRED) {
			if (h.size < sizeof(h) + 16)
				fail("a deferred record shorter than cookie and nr");
			if (at + sizeof(h) + sizeof(w) <= size) {
				memcpy(w, data + at + sizeof(h), sizeof(w));
				if (!w[0])
					fail("a deferred record with cookie 0");
				if (sizeof(h) + 16 + 8 * w[1] > h.size)
					fail("a deferred record with more frames than bytes");
			}
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
}

static long tracepoint_id(void)
{
	FILE *f = fopen("/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id", "r");
	long id = -1;

	if (f) {
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

static void random_attr(struct perf_event_attr *a, long tp)
{
	static const uint64_t sw[] = {
		PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK,
		PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES,
		PERF_COUNT_SW_DUMMY,
	};
	uint64_t flags = 0;
	int i;

	memset(a, 0, sizeof(*a));
	if (tp >= 0 && chance(40)) {
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = tp;
	} else {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = sw[rnd() % (sizeof(sw) / sizeof(sw[0]))];
	}
	/* The flag word: the deferral bits and their neighbours most often. */
	for (i = 0; i < 64; i++)
		if (chance(i >= 34 && i <= 41 ? 30 : 3))
			flags |= 1ULL << i;
	if (chance(60))
		flags |= 1ULL << 38;			/* defer_callchain */
	if (chance(50))
		flags |= 1ULL << 39;			/* defer_output */
	if (chance(85))
		flags &= (1ULL << 40) - 1;		/* reserved bits clear */
	flags &= ~1ULL;					/* not disabled... */
	memcpy((char *)a + offsetof(struct perf_event_attr, read_format) + 8, &flags, 8);
	a->disabled = 1;				/* ...until enabled */
	a->sample_type = rnd() & ((PERF_SAMPLE_MAX - 1) | (chance(10) ? ~0ULL : 0));
	if (chance(80))
		a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TID;
	a->sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_BRANCH_STACK |
				      PERF_SAMPLE_AUX);
	a->sample_period = 1 + rnd() % (a->config == PERF_COUNT_SW_CPU_CLOCK ? 200000 : 4);
	a->sample_max_stack = rnd() % (chance(20) ? 2000 : 130);
	a->wakeup_events = rnd() % 3;
	a->exclude_hv = 1;
	a->size = chance(85) ? sizeof(*a) : (uint32_t)(rnd() % (sizeof(*a) + 32));
}

static void workload(int kind)
{
	int i;
	pid_t c;

	switch (kind) {
	case 0:	/* system calls from a call chain */
		for (i = 0; i < 50; i++)
			chain(rnd() % 40);
		break;
	case 1:	/* a child that calls and exits with work pending */
		c = fork();
		if (!c) {
			chain(20);
			_exit(0);
		}
		if (c > 0)
			waitpid(c, NULL, 0);
		break;
	default: {	/* user space, for cpu-clock samples */
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			for (i = 0; i < 10000; i++)
				asm volatile("" ::: "memory");
			clock_gettime(CLOCK_MONOTONIC, &t1);
		} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec < 2000000);
	}
	}
}

int main(int argc, char **argv)
{
	unsigned long n = 3000, opened = 0, deferring = 0;
	long tp = tracepoint_id(), secs = 120;
	struct perf_event_attr a;
	time_t end;
	int opt, i;

	seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	while ((opt = getopt(argc, argv, "s:n:t:")) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 't':
			secs = strtol(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-s SEED] [-n ITERATIONS] [-t SECONDS]\n", argv[0]);
			return 2;
		}
	}
	rng = seed ? seed : 1;
	signal(SIGTRAP, on_sigtrap);
	printf("TAP version 13\n1..1\n# seed %llu\n", (unsigned long long)seed);
	fflush(stdout);
	for (i = 0; i < POOL; i++)
		pool[i].fd = -1;
	end = time(NULL) + secs;

	for (iter = 0; iter < n && time(NULL) < end; iter++) {
		struct ev *e = &pool[rnd() % POOL];
		int cpu = chance(20) ? (int)(rnd() % 2) : -1;
		pid_t pid = cpu >= 0 && chance(50) ? -1 : 0;

		ev_close(e);
		random_attr(&a, tp);
		e->fd = syscall(__NR_perf_event_open, &a, pid, cpu, -1,
				PERF_FLAG_FD_CLOEXEC);
		if (e->fd >= 0) {
			opened++;
			e->defer = a.defer_callchain || a.defer_output;
			e->backward = a.write_backward;
			deferring += e->defer;
			e->pages = 1UL << (rnd() % 4);
			if (chance(85)) {
				e->rb = mmap(NULL, (e->pages + 1) * getpagesize(),
					     PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
				if (e->rb == MAP_FAILED)
					e->rb = NULL;
			}
			if (chance(20)) {
				struct ev *o = &pool[rnd() % POOL];

				if (o != e && o->fd >= 0)
					ioctl(e->fd, PERF_EVENT_IOC_SET_OUTPUT, o->fd);
			}
			ioctl(e->fd, PERF_EVENT_IOC_ENABLE, 0);
		}
		workload(rnd() % 3);
		for (i = 0; i < POOL; i++) {
			if (pool[i].fd < 0)
				continue;
			if (chance(10))
				ioctl(pool[i].fd, PERF_EVENT_IOC_DISABLE, 0);
			else if (chance(5))
				ioctl(pool[i].fd, PERF_EVENT_IOC_PERIOD, &(uint64_t){ 1 + rnd() % 8 });
			ev_check(&pool[i]);
		}
	}
	for (i = 0; i < POOL; i++) {
		ev_check(&pool[i]);
		ev_close(&pool[i]);
	}
	printf("ok 1 perf_event_open attr fuzzer: %lu attributes, %lu opened, %lu with defer bits (seed %llu)\n",
	       iter, opened, deferring, (unsigned long long)seed);
	return 0;
}
