// SPDX-License-Identifier: GPL-2.0
/*
 * What the benchmarks share (bench.h declares it): the output, the
 * workload's call chains, the perf events and the tally of their ring
 * buffer, the unwinder's switches, pinning to a CPU, and the statistics.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

int no_callchain_parts;
bool have_try_first = true;
enum mode last_mode = PREDICTED;

void die(const char *what)
{
	fprintf(stderr, "deferred_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

void emit(const char *bench, const char *c, const char *mode,
	  const char *metric, double value)
{
	printf("%s\t%s\t%s\t%s\t%.6g\n", bench, c, mode, metric, value);
	fflush(stdout);
}

long read_long(const char *path, const char *key)
{
	char k[64];
	long v;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld%*[^\n]", k, &v) == 2) {
		size_t n = strlen(k);

		if (n && k[n - 1] == ':')
			k[n - 1] = '\0';
		if (!strcmp(k, key)) {
			fclose(f);
			return v;
		}
	}
	fclose(f);
	return -1;
}

/* A call chain of @depth frame-pointer frames, then one getppid(). */
__attribute__((noipa)) long descend(int depth)
{
	long ret;

	if (depth > 1)
		ret = descend(depth - 1);
	else
		ret = syscall(__NR_getppid);
	asm volatile("" ::: "memory");	/* not a tail call */
	return ret;
}

/*
 * The same depth through four functions in turn, each with its own frame
 * size, so that no two frames in a row share a return address: the walk
 * bench's worst case for an unwinder that looks each frame up.
 */
#define HOP(name, next, bytes)						\
__attribute__((noipa)) long name(int depth)				\
{									\
	volatile char pad[bytes];					\
	long ret;							\
									\
	pad[0] = (char)depth;						\
	ret = depth > 1 ? next(depth - 1) : syscall(__NR_getppid);	\
	asm volatile("" ::: "memory");	/* not a tail call */		\
	return ret + pad[0];						\
}
static HOP(hop3, hop0, 200)
static HOP(hop2, hop3, 56)
static HOP(hop1, hop2, 1000)
HOP(hop0, hop1, 8)

const char * const mode_name[] = {
	"none", "classic", "deferred", "try-first", "predicted",
};

int mode_try_first(enum mode mode)
{
	return mode == PREDICTED ? 7 : mode == TRY_FIRST ? 3 : 0;
}

void set_try_first(int bits)
{
	FILE *f;

	if (!have_try_first && !bits)
		return;
	f = fopen(TRY_FIRST_SYSCTL, "w");
	if (!f || fprintf(f, "%d\n", bits) < 0 || fclose(f))
		die(TRY_FIRST_SYSCTL);
}

/*
 * @k getppid events of @mode for @pid on @cpu, all into the first one's
 * ring buffer.
 */
void events_open_on(struct events *ev, enum mode mode, int k,
		    size_t pages, pid_t pid, int cpu, int inherit)
{
	struct perf_event_attr attr;
	int i;

	memset(ev, 0, sizeof(*ev));
	ev->n = mode == NONE ? 0 : k;
	ev->pages = pages;
	for (i = 0; i < ev->n; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_TRACEPOINT;
		attr.config = tp_getppid;
		attr.sample_period = 1;
		/* What perf record asks for by default, with -g. */
		attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				   PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
				   PERF_SAMPLE_CALLCHAIN;
		attr.sample_id_all = 1;
		attr.disabled = 1;
		attr.inherit = inherit;
		attr.exclude_callchain_user = no_callchain_parts;
		attr.exclude_callchain_kernel = no_callchain_parts;
		attr.defer_callchain = mode >= DEFERRED;
		/* One receiver, like perf's tracking event. */
		attr.defer_output = mode >= DEFERRED && i == 0;
		ev->fd[i] = syscall(__NR_perf_event_open, &attr, pid, cpu, -1, 0);
		if (ev->fd[i] < 0)
			die("perf_event_open");
		if (!i) {
			ev->rb = mmap(NULL, (pages + 1) * getpagesize(),
				      PROT_READ | PROT_WRITE, MAP_SHARED,
				      ev->fd[0], 0);
			if (ev->rb == MAP_FAILED)
				die("mmap");
		} else if (ioctl(ev->fd[i], PERF_EVENT_IOC_SET_OUTPUT, ev->fd[0])) {
			die("PERF_EVENT_IOC_SET_OUTPUT");
		}
	}
}

void events_open(struct events *ev, enum mode mode, int k, size_t pages)
{
	events_open_on(ev, mode, k, pages, 0, -1, 0);
}

void events_enable(struct events *ev, int on)
{
	int i;

	for (i = 0; i < ev->n; i++)
		ioctl(ev->fd[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

void events_close(struct events *ev)
{
	int i;

	if (ev->n)
		munmap(ev->rb, (ev->pages + 1) * getpagesize());
	for (i = 0; i < ev->n; i++)
		close(ev->fd[i]);
}

/* Walk the ring buffer (it must not have wrapped) and tally the records. */
void tally(struct events *ev, struct tally *t)
{
	struct perf_event_mmap_page *pg = ev->rb;
	char *data = (char *)ev->rb + getpagesize();
	__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	size_t size = ev->pages * getpagesize();
	__u64 off, i;

	memset(t, 0, sizeof(*t));
	t->bytes = head - pg->data_tail;
	for (off = pg->data_tail; off + 8 <= head;) {
		struct perf_event_header *h = (void *)(data + off % size);
		const __u64 *p = (const void *)(h + 1);

		if (!h->size)
			break;
		if (h->type == PERF_RECORD_SAMPLE) {
			t->samples++;
			t->sample_bytes += h->size;
			/* ip, tid, time, period, nr, ips */
			for (i = 0; off % size + h->size <= size && i < p[4]; i++) {
				if (p[5 + i] == PERF_CONTEXT_USER) {
					t->user_nr = p[4] - i - 1;
					t->user_frames += t->user_nr;
					t->classic++;
				}
				t->marked += p[5 + i] == PERF_CONTEXT_USER_DEFERRED;
			}
		} else if (h->type == PERF_RECORD_CALLCHAIN_DEFERRED) {
			t->deferred++;
			t->deferred_bytes += h->size;
			/* cookie, nr: no word straddles the buffer's end */
			t->deferred_frames += *(const __u64 *)(data + (off + 16) % size);
		} else if (h->type == PERF_RECORD_LOST) {
			t->lost += p[1];
		}
		off += h->size;
	}
	pg->data_tail = head;
}

/* Into @path, the directory of this program's file. */
int self_dir(char *path, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", path, size - 1);
	char *slash;

	if (n < 0)
		return -1;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return v[n / 2];
}

double run_loop(int depth, int iters)
{
	double t0 = now_ns();
	int i;

	for (i = 0; i < iters; i++)
		descend(depth);
	return (now_ns() - t0) / iters;
}

void pin_cpu0(bool on)
{
	cpu_set_t set;
	int cpu;

	CPU_ZERO(&set);
	for (cpu = 0; cpu < (on ? 1 : (int)sysconf(_SC_NPROCESSORS_ONLN)) &&
	     cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

bool methods_set(const char *list)
{
	FILE *f = fopen(METHODS, "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs(list, f) >= 0;
	return fclose(f) == 0 && ok;
}

/*
 * Walks are timed only when asked (or for an NMI sample): timing costs two
 * clock reads per walk. The benches that report walk time turn it on; the
 * cost benches measure with it off and time the walk in a pass of their
 * own. Kernels that time every walk have no switch: nothing to do there.
 */
#define TIME_WALKS	"/sys/kernel/debug/unwind_deferred/time_walks"

void time_walks(int on)
{
	FILE *f = fopen(TIME_WALKS, "w");

	if (!f)
		return;
	fprintf(f, "%d\n", on);
	fclose(f);
}

void irq_events_open(struct events *ev, enum mode mode, pid_t pid,
		     long period)
{
	struct perf_event_attr attr;

	memset(ev, 0, sizeof(*ev));
	if (mode == NONE)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = period;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	attr.sample_id_all = 1;
	attr.disabled = 1;
	attr.exclude_kernel = 0;
	attr.defer_callchain = mode >= DEFERRED;
	attr.defer_output = mode >= DEFERRED;
	ev->n = 1;
	ev->pages = 1024;
	ev->fd[0] = syscall(__NR_perf_event_open, &attr, pid, -1, -1, 0);
	if (ev->fd[0] < 0)
		die("perf_event_open cpu-clock");
	ev->rb = mmap(NULL, (ev->pages + 1) * getpagesize(),
		      PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd[0], 0);
	if (ev->rb == MAP_FAILED)
		die("mmap");
}
