/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of deferred_callchain.c share: the ring buffer and the
 * parsing of its records, the sysctls, the sampling event, the checks of
 * a sample and its record, the chains the tests sample, and the defer
 * fixture that most tests use.
 */
#ifndef SELFTESTS_PERF_EVENTS_DEFERRED_CALLCHAIN_COMMON_H
#define SELFTESTS_PERF_EVENTS_DEFERRED_CALLCHAIN_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "../unwind/chain.h"
#include "../unwind/perf_helpers.h"

#define RB_PAGES	64
#define WAIT_MS		2000
#define MAX_RECS	8192
#define DEPTH		6

struct rb {
	int fd;
	struct perf_event_mmap_page *pg;
	char *data;
	size_t size;
};

struct recs {
	int n;
	struct perf_event_header *r[MAX_RECS];
};

struct sample {
	__u32 pid, tid;
	__u64 nr;
	const __u64 *ips;
};

struct deferred {
	const struct perf_event_header *hdr;
	__u64 cookie, nr;
	const __u64 *ips;
	int has_id;
	__u32 pid, tid;
};

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid,
			       int cpu, int group_fd, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/*
 * kernel.unwind_deferred_try_first: a sample that interrupts user space
 * takes its resident stack at once instead of deferring. Tests of the
 * deferral itself with such samples turn it off.
 */
#define TRY_FIRST_SYSCTL "/proc/sys/kernel/unwind_deferred_try_first"

static int write_sysctl(const char *path, int val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fprintf(f, "%d\n", val) > 0 ? 0 : -EIO;
	if (fclose(f))
		ret = -errno;
	return ret;
}

/* 0 with the value in *@val, or -1 when @path cannot be read. */
static int sysctl_get(const char *path, int *val)
{
	FILE *f = fopen(path, "r");
	int ret = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", val) == 1)
		ret = 0;
	fclose(f);
	return ret;
}

/* Set try-first to @val; the old value goes to *@saved (-1: no sysctl). */
static int try_first_set(int val, int *saved)
{
	if (sysctl_get(TRY_FIRST_SYSCTL, saved) ||
	    write_sysctl(TRY_FIRST_SYSCTL, val))
		*saved = -1;
	return *saved < 0 ? -1 : 0;
}

static void try_first_restore(int saved)
{
	if (saved >= 0)
		write_sysctl(TRY_FIRST_SYSCTL, saved);
}

/* A sampling event: period 1, TID and CALLCHAIN, deferred, disabled. */
static void attr_init(struct perf_event_attr *attr, __u32 type, __u64 config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
	attr->sample_period = 1;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	attr->sample_id_all = 1;
	attr->defer_callchain = 1;
	attr->defer_output = 1;
	attr->disabled = 1;
	attr->exclude_hv = 1;
	attr->wakeup_events = 1;
}

/* The id of a tracepoint, or -1 when tracefs does not have it. */
static long tracepoint_id(const char *name)
{
	static const char * const roots[] = {
		"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events",
	};
	char path[256];
	unsigned int i;
	long id = -1;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(roots) && id < 0; i++) {
		snprintf(path, sizeof(path), "%s/%s/id", roots[i], name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

static int rb_map(struct rb *rb, int fd)
{
	size_t page = getpagesize();
	void *p;

	rb->fd = fd;
	rb->size = RB_PAGES * page;
	p = mmap(NULL, (RB_PAGES + 1) * page, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	rb->pg = p;
	rb->data = (char *)p + page;
	return 0;
}

static void rb_unmap(struct rb *rb)
{
	if (rb->pg)
		munmap(rb->pg, (RB_PAGES + 1) * getpagesize());
	rb->pg = NULL;
}

/* Move every complete record out of the ring buffer into @recs. */
static void rb_drain(struct rb *rb, struct recs *recs)
{
	__u64 head = __atomic_load_n(&rb->pg->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = rb->pg->data_tail;
	struct perf_event_header h;

	while (tail < head && recs->n < MAX_RECS) {
		ring_copy(rb->data, rb->size, tail, &h, sizeof(h));
		if (!h.size)
			break;
		recs->r[recs->n] = malloc(h.size);
		if (!recs->r[recs->n])
			break;
		ring_copy(rb->data, rb->size, tail, recs->r[recs->n], h.size);
		recs->n++;
		tail += h.size;
	}
	__atomic_store_n(&rb->pg->data_tail, tail, __ATOMIC_RELEASE);
}

static void recs_free(struct recs *recs)
{
	while (recs->n)
		free(recs->r[--recs->n]);
}

static int parse_sample(const struct perf_event_header *h, struct sample *s)
{
	const __u64 *p = (const void *)(h + 1);

	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof(*h) + 16)
		return 0;
	s->pid = (__u32)p[0];
	s->tid = (__u32)(p[0] >> 32);
	s->nr = p[1];
	s->ips = &p[2];
	return h->size >= sizeof(*h) + 16 + 8 * s->nr;
}

static int parse_deferred(const struct perf_event_header *h,
			  struct deferred *d)
{
	const __u64 *p = (const void *)(h + 1);
	size_t body;

	if (h->type != PERF_RECORD_CALLCHAIN_DEFERRED ||
	    h->size < sizeof(*h) + 16)
		return 0;
	d->hdr = h;
	d->cookie = p[0];
	d->nr = p[1];
	d->ips = &p[2];
	body = sizeof(*h) + 16 + 8 * d->nr;
	if (h->size < body)
		return 0;
	d->has_id = h->size >= body + 8;
	if (d->has_id) {
		d->pid = (__u32)p[2 + d->nr];
		d->tid = (__u32)(p[2 + d->nr] >> 32);
	}
	return 1;
}

/* The cookie of a deferred sample, 0 for a sample that did not defer. */
static __u64 sample_cookie(const struct sample *s)
{
	if (s->nr < 2 || s->ips[s->nr - 2] != PERF_CONTEXT_USER_DEFERRED)
		return 0;
	return s->ips[s->nr - 1];
}

static int count_deferred(const struct recs *recs, __u64 cookie,
			  struct deferred *first)
{
	struct deferred d;
	int i, n = 0;

	for (i = 0; i < recs->n; i++) {
		if (!parse_deferred(recs->r[i], &d) || d.cookie != cookie)
			continue;
		if (!n++ && first)
			*first = d;
	}
	return n;
}

/*
 * Deferred samples of @tid whose record is there too. Waits (bounded)
 * until there are at least @want of them; returns how many there are.
 */
static int wait_matched(struct rb *rb, struct recs *recs, __u32 tid,
			int want)
{
	struct timespec ts = { 0, 1000 * 1000 };
	struct sample s;
	int i, n = 0, waited;

	for (waited = 0; waited <= WAIT_MS; waited++) {
		rb_drain(rb, recs);
		n = 0;
		for (i = 0; i < recs->n; i++) {
			if (!parse_sample(recs->r[i], &s) || s.tid != tid ||
			    !sample_cookie(&s))
				continue;
			if (count_deferred(recs, sample_cookie(&s), NULL))
				n++;
		}
		if (n >= want)
			break;
		nanosleep(&ts, NULL);
	}
	return n;
}

/* The first deferred sample of @tid, if any. */
static int first_deferred_sample(const struct recs *recs, __u32 tid,
				 struct sample *out)
{
	int i;

	for (i = 0; i < recs->n; i++)
		if (parse_sample(recs->r[i], out) && out->tid == tid &&
		    sample_cookie(out))
			return 1;
	return 0;
}

/*
 * The deferred sample of @tid whose record agrees longest with the frames
 * the program recorded, and that record. A context-switch event also
 * samples preemptions that land elsewhere (in the enabling ioctl(), on a
 * uprobe hit); the sample taken in the chain's system call is the one a
 * test checks. Returns 0 if no deferred sample of @tid has a record.
 */
static int chain_sample(const struct recs *recs, __u32 tid,
			const struct chain *c, struct sample *out,
			struct deferred *rec)
{
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	int i, k, best = -1, nwant = chain_frames(c, want);
	struct deferred d;
	struct sample s;

	for (i = 0; i < recs->n; i++) {
		if (!parse_sample(recs->r[i], &s) || s.tid != tid ||
		    !sample_cookie(&s) ||
		    !count_deferred(recs, sample_cookie(&s), &d))
			continue;
		for (k = 0; k < nwant && k < (int)d.nr; k++)
			if (d.ips[k] != want[k])
				break;
		if (k > best) {
			best = k;
			*out = s;
			*rec = d;
		}
	}
	return best >= 0;
}

/* The sample's chain: the kernel part (if any), then marker and cookie. */
static void check_sample_shape(struct __test_metadata *_metadata,
			       const struct sample *s, int kernel_part)
{
	__u64 i;

	ASSERT_LE(2, s->nr) TH_LOG("a deferred sample needs marker and cookie");
	EXPECT_EQ(PERF_CONTEXT_USER_DEFERRED, s->ips[s->nr - 2]);
	EXPECT_NE(0, s->ips[s->nr - 1]) TH_LOG("the cookie is zero");
	if (kernel_part) {
		ASSERT_LT(2, s->nr) TH_LOG("no kernel part before the marker");
		EXPECT_EQ(PERF_CONTEXT_KERNEL, s->ips[0]);
	}
	for (i = 0; i + 2 < s->nr; i++) {
		EXPECT_NE(PERF_CONTEXT_USER, s->ips[i]) {
			TH_LOG("a deferred sample also has a classic user part");
		}
	}
}

/* The record holds the chain's frames, from entry @from on. */
static void check_frames(struct __test_metadata *_metadata,
			 const struct deferred *d, const struct chain *c,
			 int from)
{
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	int i, n = chain_frames(c, want);

	ASSERT_LE(n, d->nr) {
		TH_LOG("the record has %llu frames; the program has at least %d",
		       (unsigned long long)d->nr, n);
	}
	for (i = from; i < n; i++) {
		ASSERT_EQ((unsigned long long)want[i], d->ips[i]) {
			TH_LOG("frame %d: the record has %#llx, the program recorded %#lx",
			       i, (unsigned long long)d->ips[i], want[i]);
		}
	}
}

#define METHODS "/sys/kernel/unwind_user/methods"

/*
 * Skip (and return 1) when this kernel cannot defer: without CONFIG_UNWIND_DEFERRED (an
 * architecture without a user stack walker, or the option turned off)
 * perf_event_open() refuses defer_callchain with EINVAL, as kernels
 * before the feature do, and there is no METHODS file. Refused where the
 * file exists is a failure.
 */
static int defer_or_skip(struct __test_metadata *_metadata)
{
	struct perf_event_attr attr;
	int fd, err;

	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	err = errno;
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (err == EINVAL && access(METHODS, F_OK))
		SKIP(return 1, "%s",
		     "no CONFIG_UNWIND_DEFERRED: defer_callchain gets EINVAL");
	ASSERT_LE(0, fd) {
		TH_LOG("a defer_callchain event: %s, though %s exists",
		       strerror(err), METHODS);
	}
	return 0;
}

/*
 * What every test needs: a shared chain, records, two events. The tests
 * of deferral take kernel.unwind_deferred_try_first to samples of user
 * space only (bit 0): with bit 1, the first sample of a stay in the
 * kernel is walked at once (deferred_callchain_now.h tests that), and a
 * test of deferral would depend on which samples came first.
 */
struct ctx {
	struct chain *c;
	struct recs *recs;
	struct rb rb[2];
	int fd[2];
	long getppid_tp;
	int saved_try_first;
};

static int ctx_setup(struct __test_metadata *_metadata, struct ctx *x)
{
	memset(x, 0, sizeof(*x));
	x->fd[0] = -1;
	x->fd[1] = -1;
	x->saved_try_first = -1;
	/*
	 * A setup that skips gets no teardown: skip before changing
	 * anything the teardown would put back.
	 */
	if (defer_or_skip(_metadata))
		return 1;
	try_first_set(1, &x->saved_try_first);
	x->recs = calloc(1, sizeof(*x->recs));
	ASSERT_TRUE(!!x->recs);
	x->c = mmap(NULL, sizeof(*x->c), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(x->c != MAP_FAILED);
	memset(x->c, 0, sizeof(*x->c));
	x->getppid_tp = tracepoint_id("syscalls/sys_enter_getppid");
	return 0;
}

static void ctx_teardown(struct ctx *x)
{
	int i;

	try_first_restore(x->saved_try_first);
	for (i = 0; i < 2; i++) {
		rb_unmap(&x->rb[i]);
		if (x->fd[i] >= 0)
			close(x->fd[i]);
	}
	if (x->recs)
		recs_free(x->recs);
	free(x->recs);
	if (x->c && x->c != MAP_FAILED)
		munmap(x->c, sizeof(*x->c));
}

/* Open @attr for @pid on @cpu as event @i, with its own ring buffer. */
static void open_mapped(struct __test_metadata *_metadata, struct ctx *x,
			int i, struct perf_event_attr *attr, pid_t pid, int cpu)
{
	x->fd[i] = sys_perf_event_open(attr, pid, cpu, -1, 0);
	ASSERT_LE(0, x->fd[i]) TH_LOG("perf_event_open: %s", strerror(errno));
	ASSERT_EQ(0, rb_map(&x->rb[i], x->fd[i]));
}

/*
 * Every deferred sample of @tid has exactly one record, with @tid in its
 * sample_id; *@matching counts the records that hold the chain's frames
 * from @from on. Returns the number of deferred samples.
 */
static int check_records(struct __test_metadata *_metadata, struct ctx *x,
			 __u32 tid, int kernel_part, int from, int *matching)
{
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	int i, j, k, n = 0, nwant;
	struct deferred d;
	struct sample s;

	nwant = chain_frames(x->c, want);
	for (i = 0; i < x->recs->n; i++) {
		if (!parse_sample(x->recs->r[i], &s) || s.tid != tid ||
		    !sample_cookie(&s))
			continue;
		n++;
		check_sample_shape(_metadata, &s, kernel_part);
		EXPECT_EQ(1, count_deferred(x->recs, sample_cookie(&s), &d)) {
			TH_LOG("sample %d: %d records for cookie %#llx", i,
			       count_deferred(x->recs, sample_cookie(&s), NULL),
			       (unsigned long long)sample_cookie(&s));
		}
		if (!count_deferred(x->recs, sample_cookie(&s), &d))
			continue;
		EXPECT_EQ(PERF_RECORD_MISC_USER, d.hdr->misc);
		EXPECT_TRUE(d.has_id) TH_LOG("sample_id_all is set; the record has no sample_id");
		EXPECT_EQ(tid, d.tid) TH_LOG("the record names another task");
		if (d.nr < (unsigned int)nwant)
			continue;
		for (j = from, k = 1; j < nwant && k; j++)
			k = d.ips[j] == want[j];
		*matching += k;
	}
	return n;
}

/* check_records(), and at least one record holds the chain's frames. */
static int check_all(struct __test_metadata *_metadata, struct ctx *x,
		     __u32 tid, int kernel_part, int from)
{
	int matching = 0, n;

	n = check_records(_metadata, x, tid, kernel_part, from, &matching);
	EXPECT_LE(1, matching) {
		TH_LOG("no record holds the program's frames (of %d deferred samples)",
		       n);
	}
	return n;
}

static int spin_stop;

/* Spin in this frame, in user mode, until another thread says stop. */
static __attribute__((noipa)) void leaf_spin(struct chain *c)
{
	c->leaf_ra = (unsigned long)__builtin_return_address(0);
	c->ntop = 1;	/* the IP at the sample: not known, not compared */
	while (!__atomic_load_n(&spin_stop, __ATOMIC_RELAXED))
		;
}

/* The bit of @field in a PMU's config ("config:N" in its format), or -1. */
static int pmu_format_bit(const char *pmu, const char *field)
{
	char path[160];
	int bit = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/format/%s",
		 pmu, field);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "config:%d", &bit) != 1)
		bit = -1;
	fclose(f);
	return bit;
}

/* Long enough that the task really sleeps, so a context switch happens. */
static const struct timespec short_sleep = { 0, 1000 * 1000 };

/*
 * Run the chain, again (at most 5 times) until the thread really blocked
 * in its leaf. Under an emulator on a busy host, the timer of a short
 * nanosleep() can expire before the task gets to schedule(); the call
 * then returns without a context switch, and the test without its sample.
 */
static void chain_run_switched(struct chain *c, int depth,
			       void (*leaf)(struct chain *c))
{
	struct rusage before, after;
	int i;

	for (i = 0; i < 5; i++) {
		getrusage(RUSAGE_THREAD, &before);
		chain_run(c, depth, leaf);
		getrusage(RUSAGE_THREAD, &after);
		if (after.ru_nvcsw > before.ru_nvcsw)
			return;
	}
}

/* The chain with short_sleep's nanosleep() at the bottom, which blocks. */
static void sleep_chain(struct chain *c, int depth)
{
	chain_set_syscall(c, __NR_nanosleep, (long)&short_sleep, 0, 0);
	chain_run_switched(c, depth, leaf_syscall);
}

static void *spin_timer(void *arg)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	__atomic_store_n(&spin_stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* A context-switch event: every nanosleep() samples in the scheduler. */
static void switch_attr(struct perf_event_attr *attr)
{
	attr_init(attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
}

static void run_sleep_chain(struct ctx *x, int fd)
{
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	sleep_chain(x->c, DEPTH);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

static int count_type(const struct recs *recs, __u32 type)
{
	int i, n = 0;

	for (i = 0; i < recs->n; i++)
		n += recs->r[i]->type == type;
	return n;
}

#define COUNTERS "/sys/kernel/debug/unwind_deferred/counters"

/* A counter of the deferral core, or -1. */
static long long core_counter(const char *name)
{
	char key[64];
	long long v, ret = -1;
	FILE *f = fopen(COUNTERS, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, name))
			ret = v;
	fclose(f);
	return ret;
}

FIXTURE(defer) {
	struct ctx x;
};

FIXTURE_SETUP(defer)
{
	if (ctx_setup(_metadata, &self->x))
		return;
}

FIXTURE_TEARDOWN(defer)
{
	ctx_teardown(&self->x);
}

#endif /* SELFTESTS_PERF_EVENTS_DEFERRED_CALLCHAIN_COMMON_H */
