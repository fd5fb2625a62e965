// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user callchains: attr.defer_callchain, attr.defer_output and
 * PERF_RECORD_CALLCHAIN_DEFERRED, checked by reading the ring buffer.
 *
 * The program makes its samples happen at the bottom of a call chain whose
 * return addresses it records itself (../unwind/chain.h), and checks that a
 * sample carries its kernel part, PERF_CONTEXT_USER_DEFERRED and a cookie,
 * and that the one record with that cookie holds exactly the program's
 * frames. Every wait for a record is bounded and says what was missing.
 * Built twice: as a 64-bit program and as an ia32 compat program.
 */
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

/* What every test needs: a shared chain, records, two events. */
struct ctx {
	struct chain *c;
	struct recs *recs;
	struct rb rb[2];
	int fd[2];
	long getppid_tp;
};

static int ctx_setup(struct __test_metadata *_metadata, struct ctx *x)
{
	memset(x, 0, sizeof(*x));
	x->fd[0] = -1;
	x->fd[1] = -1;
	x->recs = calloc(1, sizeof(*x->recs));
	ASSERT_TRUE(!!x->recs);
	x->c = mmap(NULL, sizeof(*x->c), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(x->c != MAP_FAILED);
	memset(x->c, 0, sizeof(*x->c));
	x->getppid_tp = tracepoint_id("syscalls/sys_enter_getppid");
	return defer_or_skip(_metadata);
}

static void ctx_teardown(struct ctx *x)
{
	int i;

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

/*
 * Leaves for the event kinds: each records its return address, and those
 * whose IP at the sample is known record it as top[0].
 */
static unsigned int bp_target;
static char *fault_page;

static __attribute__((noipa)) void leaf_touch_page(struct chain *c)
{
	c->leaf_ra = (unsigned long)__builtin_return_address(0);
	c->ntop = 1;	/* the IP at the sample: not known, not compared */
	__atomic_store_n(fault_page, 1, __ATOMIC_RELAXED);	/* first touch: a fault */
}

static __attribute__((noipa)) void leaf_write_watched(struct chain *c)
{
	c->leaf_ra = (unsigned long)__builtin_return_address(0);
	c->ntop = 1;	/* the IP at the sample: not known, not compared */
	__atomic_fetch_add(&bp_target, 1, __ATOMIC_RELAXED);	/* a write breakpoint fires */
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

/* The uprobe sits on this function's first instruction. */
static __attribute__((noipa)) void leaf_probed(struct chain *c)
{
	c->leaf_ra = (unsigned long)__builtin_return_address(0);
	c->ntop = 1;	/* the IP at the sample: not known, not compared */
	asm volatile("" ::: "memory");
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

enum kind { TRACEPOINT, CONTEXT_SWITCH, PAGE_FAULT, CPU_CLOCK, BREAKPOINT, UPROBE };

FIXTURE(kind) {
	struct ctx x;
	int saved_try_first;
};

FIXTURE_VARIANT(kind) {
	enum kind kind;
	int kernel_part;	/* the sample has a kernel part */
	int from;		/* the record matches the chain from this frame */
	int try_first;		/* kernel.unwind_deferred_try_first */
};

FIXTURE_SETUP(kind)
{
	if (ctx_setup(_metadata, &self->x))
		return;
	/*
	 * Samples taken in the kernel defer with try-first on; cpu-clock
	 * samples of a task spinning in user space defer with it off.
	 */
	try_first_set(variant->try_first, &self->saved_try_first);
}

FIXTURE_TEARDOWN(kind)
{
	try_first_restore(self->saved_try_first);
	ctx_teardown(&self->x);
}

FIXTURE_VARIANT_ADD(kind, tracepoint) { TRACEPOINT, 0, 0, 1 };
FIXTURE_VARIANT_ADD(kind, context_switch) { CONTEXT_SWITCH, 1, 0, 1 };
FIXTURE_VARIANT_ADD(kind, page_fault) { PAGE_FAULT, 0, 1, 1 };
FIXTURE_VARIANT_ADD(kind, cpu_clock) { CPU_CLOCK, 0, 1, 0 };
FIXTURE_VARIANT_ADD(kind, breakpoint) { BREAKPOINT, 0, 1, 1 };
FIXTURE_VARIANT_ADD(kind, uprobe) { UPROBE, 0, 1, 1 };

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

/*
 * Set up @kind's event in @attr and its leaf; returns a reason to skip,
 * or NULL.
 */
static const char *event_kind_setup(struct ctx *x, enum kind which,
				    struct perf_event_attr *attr,
				    void (**leaf)(struct chain *c))
{
	static const struct timespec ts = { 0, 1000 * 1000 };
	long type, off;

	*leaf = leaf_syscall;
	switch (which) {
	case TRACEPOINT:
		if (sizeof(long) == 4)
			return "syscall tracepoints do not trace compat tasks";
		if (x->getppid_tp < 0)
			return "no syscalls:sys_enter_getppid tracepoint";
		attr_init(attr, PERF_TYPE_TRACEPOINT, x->getppid_tp);
		x->c->nr = __NR_getppid;
		break;
	case CONTEXT_SWITCH:
		attr_init(attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
		x->c->nr = __NR_nanosleep;
		x->c->a = (long)&ts;
		x->c->b = 0;
		break;
	case PAGE_FAULT:
		attr_init(attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
		fault_page = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fault_page == MAP_FAILED)
			return "mmap failed";
		*leaf = leaf_touch_page;
		break;
	case CPU_CLOCK:
		attr_init(attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
		attr->sample_period = 2000000;	/* 2 ms */
		*leaf = leaf_spin;
		break;
	case BREAKPOINT:
		attr_init(attr, PERF_TYPE_BREAKPOINT, 0);
		attr->bp_type = HW_BREAKPOINT_W;
		attr->bp_addr = (unsigned long)&bp_target;
		attr->bp_len = HW_BREAKPOINT_LEN_4;
		*leaf = leaf_write_watched;
		break;
	case UPROBE:
		type = pmu_type("uprobe");
		off = file_offset((unsigned long)leaf_probed);
		if (type < 0 || off < 0)
			return "no uprobe PMU";
		attr_init(attr, type, 0);
		attr->config1 = (unsigned long)"/proc/self/exe";
		attr->config2 = off;
		*leaf = leaf_probed;
		break;
	}
	return NULL;
}

TEST_F(kind, sample_and_record)
{
	void (*leaf)(struct chain *c);
	struct perf_event_attr attr;
	const char *skip;
	pthread_t timer;

	skip = event_kind_setup(&self->x, variant->kind, &attr, &leaf);
	if (skip)
		SKIP(return, "%s", skip);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);

	__atomic_store_n(&spin_stop, 0, __ATOMIC_RELAXED);
	if (variant->kind == CPU_CLOCK)
		ASSERT_EQ(0, pthread_create(&timer, NULL, spin_timer, NULL));
	ioctl(self->x.fd[0], PERF_EVENT_IOC_ENABLE, 0);
	if (variant->kind == CONTEXT_SWITCH)
		chain_run_switched(self->x.c, DEPTH, leaf);
	else
		chain_run(self->x.c, DEPTH, leaf);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_DISABLE, 0);
	if (variant->kind == CPU_CLOCK)
		pthread_join(timer, NULL);

	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
		TH_LOG("no deferred sample with its record within %d ms", WAIT_MS);
	}
	check_all(_metadata, &self->x, gettid(), variant->kernel_part,
		  variant->from);
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

TEST_F(defer, two_samples_one_entry_one_record)
{
	struct perf_event_attr attr;
	struct sample s[2];
	int i, n = 0;

	switch_attr(&attr);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	attr.defer_output = 0;
	self->x.fd[1] = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, self->x.fd[1]);
	ASSERT_EQ(0, ioctl(self->x.fd[1], PERF_EVENT_IOC_SET_OUTPUT, self->x.fd[0]));

	ioctl(self->x.fd[1], PERF_EVENT_IOC_ENABLE, 0);
	run_sleep_chain(&self->x, self->x.fd[0]);
	ioctl(self->x.fd[1], PERF_EVENT_IOC_DISABLE, 0);

	ASSERT_LE(2, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 2));
	for (i = 0; i < self->x.recs->n && n < 2; i++)
		if (parse_sample(self->x.recs->r[i], &s[n]) &&
		    s[n].tid == gettid() && sample_cookie(&s[n]))
			n++;
	ASSERT_EQ(2, n);
	EXPECT_EQ(sample_cookie(&s[0]), sample_cookie(&s[1])) {
		TH_LOG("two samples in one syscall got different cookies");
	}
	EXPECT_EQ(1, count_deferred(self->x.recs, sample_cookie(&s[0]), NULL)) {
		TH_LOG("one entry context must give exactly one record");
	}
	check_all(_metadata, &self->x, gettid(), 1, 0);
}

TEST_F(defer, successive_entries_get_new_cookies)
{
	struct perf_event_attr attr;
	__u64 cookies[64];
	struct sample s;
	int i, j, n = 0;

	switch_attr(&attr);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	for (i = 0; i < 3; i++)
		run_sleep_chain(&self->x, self->x.fd[0]);
	ASSERT_LE(3, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 3));
	/* One sleep may switch more than once: count distinct cookies. */
	for (i = 0; i < self->x.recs->n && n < 64; i++) {
		if (!parse_sample(self->x.recs->r[i], &s) || s.tid != gettid() ||
		    !sample_cookie(&s))
			continue;
		for (j = 0; j < n && cookies[j] != sample_cookie(&s); j++)
			;
		if (j == n)
			cookies[n++] = sample_cookie(&s);
	}
	EXPECT_LE(3, n) TH_LOG("three system calls gave %d distinct cookies", n);
	check_all(_metadata, &self->x, gettid(), 1, 0);
}

static int count_type(const struct recs *recs, __u32 type)
{
	int i, n = 0;

	for (i = 0; i < recs->n; i++)
		n += recs->r[i]->type == type;
	return n;
}

TEST_F(defer, classic_without_defer_callchain)
{
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	struct perf_event_attr attr;
	int i, k, n, samples = 0, found = 0;
	struct sample s;
	__u64 j;

	switch_attr(&attr);
	attr.defer_callchain = 0;
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	run_sleep_chain(&self->x, self->x.fd[0]);
	rb_drain(&self->x.rb[0], self->x.recs);

	/* Other switches (in the ioctls) may be sampled too: find the sleep. */
	n = chain_frames(self->x.c, want);
	for (i = 0; i < self->x.recs->n; i++) {
		if (!parse_sample(self->x.recs->r[i], &s) || s.tid != gettid())
			continue;
		samples++;
		EXPECT_EQ(0, sample_cookie(&s)) TH_LOG("a sample deferred without defer_callchain");
		for (j = 0; j < s.nr && s.ips[j] != PERF_CONTEXT_USER; j++)
			;
		if (j + n >= s.nr)
			continue;
		for (k = 0; k < n && want[k] == s.ips[j + 1 + k]; k++)
			;
		found |= k == n;
	}
	EXPECT_LE(1, samples) TH_LOG("no sample");
	EXPECT_TRUE(found) TH_LOG("no sample has the classic user part of %d frames", n);
	EXPECT_EQ(0, count_type(self->x.recs, PERF_RECORD_CALLCHAIN_DEFERRED));
}

TEST_F(defer, exclude_callchain_user_disables_deferral)
{
	struct perf_event_attr attr;
	struct sample s;
	int i, found = 0;
	__u64 j;

	switch_attr(&attr);
	attr.exclude_callchain_user = 1;
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	run_sleep_chain(&self->x, self->x.fd[0]);
	rb_drain(&self->x.rb[0], self->x.recs);

	for (i = 0; i < self->x.recs->n; i++) {
		if (!parse_sample(self->x.recs->r[i], &s) || s.tid != gettid())
			continue;
		found = 1;
		for (j = 0; j < s.nr; j++) {
			EXPECT_NE(PERF_CONTEXT_USER_DEFERRED, s.ips[j]);
			EXPECT_NE(PERF_CONTEXT_USER, s.ips[j]);
		}
	}
	EXPECT_TRUE(found) TH_LOG("no sample");
	EXPECT_EQ(0, count_type(self->x.recs, PERF_RECORD_CALLCHAIN_DEFERRED)) {
		TH_LOG("a record came although nothing was deferred");
	}
}

TEST_F(defer, exclude_callchain_kernel_leaves_marker_and_cookie)
{
	struct perf_event_attr attr;
	struct sample s;

	switch_attr(&attr);
	attr.exclude_callchain_kernel = 1;
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	run_sleep_chain(&self->x, self->x.fd[0]);
	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1));
	ASSERT_TRUE(first_deferred_sample(self->x.recs, gettid(), &s));
	EXPECT_EQ(2, s.nr) TH_LOG("the chain should be just the marker and the cookie");
	check_all(_metadata, &self->x, gettid(), 0, 0);
}

static int read_sysctl(const char *path)
{
	int val;

	return sysctl_get(path, &val) ? -1 : val;
}

#define MAX_STACK_SYSCTL "/proc/sys/kernel/perf_event_max_stack"

TEST_F(defer, record_never_exceeds_perf_event_max_stack)
{
	int old = read_sysctl(MAX_STACK_SYSCTL), limit = DEPTH - 2;
	struct perf_event_attr attr;
	struct deferred d;
	struct sample s;

	ASSERT_LT(0, old);
	if (write_sysctl(MAX_STACK_SYSCTL, limit))
		SKIP(return, "cannot set %s", MAX_STACK_SYSCTL);
	switch_attr(&attr);
	self->x.fd[0] = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (self->x.fd[0] >= 0 && !rb_map(&self->x.rb[0], self->x.fd[0])) {
		run_sleep_chain(&self->x, self->x.fd[0]);
		wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1);
	}
	if (self->x.fd[0] >= 0) {
		rb_unmap(&self->x.rb[0]);
		close(self->x.fd[0]);
		self->x.fd[0] = -1;
	}
	ASSERT_EQ(0, write_sysctl(MAX_STACK_SYSCTL, old));

	ASSERT_TRUE(chain_sample(self->x.recs, gettid(), self->x.c, &s, &d)) {
		TH_LOG("no deferred sample with perf_event_max_stack %d", limit);
	}
	ASSERT_EQ(1, count_deferred(self->x.recs, sample_cookie(&s), NULL));
	EXPECT_EQ(limit, d.nr) {
		TH_LOG("the record has %llu entries; the limit is %d",
		       (unsigned long long)d.nr, limit);
	}
}

TEST_F(defer, disabled_in_the_same_entry_still_gets_the_record)
{
	struct perf_event_attr attr;
	long id;

	if (sizeof(long) == 4)
		SKIP(return, "syscall tracepoints do not trace compat tasks");
	id = tracepoint_id("syscalls/sys_enter_ioctl");
	if (id < 0)
		SKIP(return, "no syscalls:sys_enter_ioctl tracepoint");
	attr_init(&attr, PERF_TYPE_TRACEPOINT, id);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_ENABLE, 0);
	/* Sampled on entry, then disabled by the very same system call. */
	chain_syscall(self->x.c, DEPTH, __NR_ioctl, self->x.fd[0],
		      PERF_EVENT_IOC_DISABLE, 0);
	ASSERT_EQ(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
		TH_LOG("the record of a sample taken before the disable is missing");
	}
	check_all(_metadata, &self->x, gettid(), 0, 0);
}

#define MAX_CONTEXTS_SYSCTL "/proc/sys/kernel/perf_event_max_contexts_per_stack"

/*
 * The marker and its cookie take two contexts: with room for the kernel
 * context and one more, the sample has no user part at all (never a
 * marker without its cookie); with room for three it defers.
 */
TEST_F(defer, marker_and_cookie_need_two_contexts)
{
	int old = read_sysctl(MAX_CONTEXTS_SYSCTL), limit, i, deferred[2] = { };
	struct perf_event_attr attr;
	struct sample s;
	__u64 j;

	ASSERT_LT(0, old);
	for (limit = 2; limit <= 3; limit++) {
		if (write_sysctl(MAX_CONTEXTS_SYSCTL, limit))
			SKIP(return, "cannot set %s", MAX_CONTEXTS_SYSCTL);
		switch_attr(&attr);
		self->x.fd[0] = sys_perf_event_open(&attr, 0, -1, -1, 0);
		if (self->x.fd[0] >= 0 && !rb_map(&self->x.rb[0], self->x.fd[0])) {
			run_sleep_chain(&self->x, self->x.fd[0]);
			rb_drain(&self->x.rb[0], self->x.recs);
		}
		if (self->x.fd[0] >= 0) {
			rb_unmap(&self->x.rb[0]);
			close(self->x.fd[0]);
			self->x.fd[0] = -1;
		}
		for (i = 0; i < self->x.recs->n; i++) {
			if (!parse_sample(self->x.recs->r[i], &s) || s.tid != gettid())
				continue;
			if (sample_cookie(&s)) {
				deferred[limit - 2]++;
				continue;
			}
			for (j = 0; j < s.nr; j++) {
				EXPECT_NE(PERF_CONTEXT_USER_DEFERRED, s.ips[j]) {
					TH_LOG("a marker without its cookie (limit %d)", limit);
				}
			}
		}
		recs_free(self->x.recs);
	}
	ASSERT_EQ(0, write_sysctl(MAX_CONTEXTS_SYSCTL, old));
	EXPECT_EQ(0, deferred[0]) TH_LOG("a sample deferred with room for two contexts");
	EXPECT_LE(1, deferred[1]) TH_LOG("no sample deferred with room for three contexts");
}

TEST_F(defer, defer_output_on_two_events_duplicates)
{
	struct perf_event_attr attr, dummy;
	struct deferred d[2];
	struct recs *other;
	struct sample s;

	switch_attr(&attr);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	memset(&dummy, 0, sizeof(dummy));
	dummy.size = sizeof(dummy);
	dummy.type = PERF_TYPE_SOFTWARE;
	dummy.config = PERF_COUNT_SW_DUMMY;
	dummy.sample_type = PERF_SAMPLE_TID;
	dummy.sample_id_all = 1;
	dummy.defer_output = 1;
	open_mapped(_metadata, &self->x, 1, &dummy, 0, -1);

	run_sleep_chain(&self->x, self->x.fd[0]);
	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1));
	ASSERT_TRUE(first_deferred_sample(self->x.recs, gettid(), &s));
	other = calloc(1, sizeof(*other));
	ASSERT_TRUE(!!other);
	rb_drain(&self->x.rb[1], other);
	EXPECT_EQ(1, count_deferred(self->x.recs, sample_cookie(&s), &d[0]));
	EXPECT_EQ(1, count_deferred(other, sample_cookie(&s), &d[1])) {
		TH_LOG("the second defer_output event did not get the record");
	}
	if (count_deferred(other, sample_cookie(&s), &d[1])) {
		EXPECT_EQ(d[0].nr, d[1].nr);
		EXPECT_EQ(0, memcmp(d[0].ips, d[1].ips, d[0].nr * 8));
		EXPECT_EQ(gettid(), d[1].tid);
	}
	recs_free(other);
	free(other);
}

TEST_F(defer, sample_id_all_off)
{
	struct perf_event_attr attr;
	struct deferred d;
	struct sample s;

	switch_attr(&attr);
	attr.sample_id_all = 0;
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	run_sleep_chain(&self->x, self->x.fd[0]);
	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1));
	ASSERT_TRUE(chain_sample(self->x.recs, gettid(), self->x.c, &s, &d));
	ASSERT_EQ(1, count_deferred(self->x.recs, sample_cookie(&s), NULL));
	EXPECT_FALSE(d.has_id) TH_LOG("sample_id_all is off, but the record has a sample_id");
	EXPECT_EQ(sizeof(struct perf_event_header) + 16 + 8 * d.nr, d.hdr->size);
	check_frames(_metadata, &d, self->x.c, 0);
}

TEST(feature_probe_opens)
{
	struct perf_event_attr attr;
	int fd;

	if (defer_or_skip(_metadata))
		return;
	/* What mainline perf opens to decide whether to use deferral. */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.disabled = 1;
	attr.defer_callchain = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("the feature probe failed: %s", strerror(errno));
	close(fd);
}

/*
 * Bits 38 and 39 are the defer bits: accepted alone where the kernel can
 * defer (it lists its methods), refused with EINVAL where it cannot, so
 * that tools fall back. Bits 40 to 63 are reserved everywhere.
 */
TEST(reserved_bits_are_refused)
{
	struct perf_event_attr attr;
	__u64 *flags = (__u64 *)((char *)&attr + 40);
	bool can_defer = !access(METHODS, F_OK);
	int bit, fd;

	ASSERT_EQ(40, offsetof(struct perf_event_attr, read_format) + 8);
	for (bit = 38; bit < 64; bit++) {
		attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
		attr.defer_callchain = 0;
		attr.defer_output = 0;
		*flags |= 1ULL << bit;
		fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
		if (bit < 40 && can_defer) {
			EXPECT_LE(0, fd) {
				TH_LOG("bit %d alone is refused: %s", bit,
				       strerror(errno));
			}
		} else if (bit < 40) {
			EXPECT_EQ(-1, fd) {
				TH_LOG("bit %d was accepted, but %s is absent",
				       bit, METHODS);
			}
			EXPECT_EQ(EINVAL, errno);
		} else {
			EXPECT_EQ(-1, fd) TH_LOG("reserved bit %d was accepted", bit);
			EXPECT_EQ(EINVAL, errno);
		}
		if (fd >= 0)
			close(fd);
	}
}

TEST_F(defer, cpu_wide_event_and_kernel_threads)
{
	struct perf_event_attr attr;
	int i, idle = 0, mine, saved;
	struct sample s;
	cpu_set_t set;
	pthread_t timer;
	__u64 j;

	/* The spin's samples must defer to reach the CPU-wide event. */
	try_first_set(0, &saved);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 1000000;	/* 1 ms */
	/* Only defer_output: no mmap or comm records asked for. */
	open_mapped(_metadata, &self->x, 0, &attr, -1, 0);

	__atomic_store_n(&spin_stop, 0, __ATOMIC_RELAXED);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_ENABLE, 0);
	nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);	/* idle */
	ASSERT_EQ(0, pthread_create(&timer, NULL, spin_timer, NULL));
	chain_run(self->x.c, DEPTH, leaf_spin);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_DISABLE, 0);
	pthread_join(timer, NULL);

	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
		TH_LOG("the CPU-wide event got no record for a deferred sample");
	}
	for (i = 0; i < self->x.recs->n; i++) {
		if (!parse_sample(self->x.recs->r[i], &s) || s.pid)
			continue;
		idle++;
		for (j = 0; j < s.nr; j++) {
			EXPECT_NE(PERF_CONTEXT_USER_DEFERRED, s.ips[j]) {
				TH_LOG("a kernel thread's sample deferred");
			}
			EXPECT_NE(PERF_CONTEXT_USER, s.ips[j]);
		}
	}
	try_first_restore(saved);
	EXPECT_LE(1, idle) TH_LOG("no sample of the idle task");
	mine = check_all(_metadata, &self->x, gettid(), 0, 1);
	EXPECT_LE(1, mine);
}

struct thread_arg {
	struct chain c;
	pid_t tid;
};

static void *thread_fn(void *p)
{
	struct thread_arg *t = p;
	int i;

	t->tid = gettid();
	for (i = 0; i < 2; i++)
		sleep_chain(&t->c, DEPTH);
	return NULL;
}

TEST_F(defer, threads_and_cpus_get_their_own_cookies)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, j, n = 0, cpu, want;
	struct perf_event_attr attr;
	struct thread_arg t[2];
	__u64 cookies[64];
	struct deferred d;
	struct rb rb[8];
	int fd[8] = { };
	pthread_t th[2];
	struct sample s;
	cpu_set_t set;

	/* An inherited per-task event can only be mapped per CPU. */
	if (ncpu > 8)
		ncpu = 8;
	switch_attr(&attr);
	attr.inherit = 1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		fd[cpu] = sys_perf_event_open(&attr, 0, cpu, -1, 0);
		ASSERT_LE(0, fd[cpu]) TH_LOG("perf_event_open: %s", strerror(errno));
		ASSERT_EQ(0, rb_map(&rb[cpu], fd[cpu]));
	}
	for (cpu = 0; cpu < ncpu; cpu++)
		ioctl(fd[cpu], PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, thread_fn, &t[i]));
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < ncpu; i++) {
		CPU_ZERO(&set);
		CPU_SET(i, &set);
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
		sleep_chain(self->x.c, DEPTH);
	}
	for (cpu = 0; cpu < ncpu; cpu++)
		ioctl(fd[cpu], PERF_EVENT_IOC_DISABLE, 0);

	/*
	 * Two entries per thread, one per CPU for this task. Each CPU's buffer
	 * has one record for every entry sampled on that CPU (an entry whose
	 * task slept on one CPU and was sampled again on another has a record
	 * in both buffers).
	 */
	want = 4 + ncpu;
	for (cpu = 0; cpu < ncpu; cpu++) {
		rb_drain(&rb[cpu], self->x.recs);
		for (i = 0; i < self->x.recs->n; i++) {
			if (!parse_sample(self->x.recs->r[i], &s) || !sample_cookie(&s))
				continue;
			ASSERT_EQ(1, count_deferred(self->x.recs, sample_cookie(&s), &d)) {
				TH_LOG("CPU %d, cookie %#llx: %d records in its buffer", cpu,
				       (unsigned long long)sample_cookie(&s),
				       count_deferred(self->x.recs, sample_cookie(&s), NULL));
			}
			EXPECT_EQ(s.tid, d.tid) TH_LOG("a record names another thread");
			for (j = 0; j < n; j++)
				if (cookies[j] == sample_cookie(&s))
					break;
			if (j == n && n < 64)
				cookies[n++] = sample_cookie(&s);
		}
		recs_free(self->x.recs);
	}
	EXPECT_LE(want, n) TH_LOG("%d distinct cookies; expected %d", n, want);
	for (cpu = 0; cpu < ncpu; cpu++) {
		rb_unmap(&rb[cpu]);
		close(fd[cpu]);
	}
}

/*
 * A watched child makes the system call @tp traces from the bottom of a
 * chain and never returns from it (exit, exec) or returns in two tasks
 * (fork): the record must still come, for the right task.
 */
static void pending_at(struct __test_metadata *_metadata, struct ctx *x,
		       const char *tp, long nr, long a, long b, long c)
{
	struct perf_event_attr attr;
	int status, i, found = 0, go[2];
	struct deferred d;
	struct sample s;
	char byte = 0;
	long id;
	pid_t pid;

	if (sizeof(long) == 4)
		SKIP(return, "syscall tracepoints do not trace compat tasks");
	id = tracepoint_id(tp);
	if (id < 0)
		SKIP(return, "no %s tracepoint", tp);
	attr_init(&attr, PERF_TYPE_TRACEPOINT, id);
	attr.disabled = 0;
	ASSERT_EQ(0, pipe(go));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Wait until the parent watches this task. */
		if (read(go[0], &byte, 1) != 1)
			_exit(2);
		chain_syscall(x->c, DEPTH, nr, a, b, c);
		_exit(x->c->ret < 0 ? 3 : 0);	/* the fork case returns here */
	}
	open_mapped(_metadata, x, 0, &attr, pid, -1);
	ASSERT_EQ(1, write(go[1], &byte, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ioctl(x->fd[0], PERF_EVENT_IOC_DISABLE, 0);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));

	ASSERT_LE(1, wait_matched(&x->rb[0], x->recs, pid, 1)) {
		TH_LOG("no record for the child's pending request at %s", tp);
	}
	for (i = 0; i < x->recs->n; i++) {
		if (!parse_sample(x->recs->r[i], &s) || s.tid != pid ||
		    !sample_cookie(&s))
			continue;
		ASSERT_EQ(1, count_deferred(x->recs, sample_cookie(&s), &d)) {
			TH_LOG("a cookie must have exactly one record");
		}
		EXPECT_EQ(pid, d.tid);
		check_frames(_metadata, &d, x->c, 0);
		found = 1;
		break;
	}
	EXPECT_TRUE(found);
}

TEST_F(defer, exit_with_request_pending)
{
	pending_at(_metadata, &self->x, "syscalls/sys_enter_exit_group",
		   __NR_exit_group, 0, 0, 0);
}

TEST_F(defer, exec_with_request_pending)
{
	static char *const argv[] = { "true", NULL };
	static char *const envp[] = { NULL };

	if (access("/bin/true", X_OK))
		SKIP(return, "no /bin/true");
	pending_at(_metadata, &self->x, "syscalls/sys_enter_execve",
		   __NR_execve, (long)"/bin/true", (long)argv, (long)envp);
}

TEST_F(defer, fork_with_request_pending)
{
	pending_at(_metadata, &self->x, "syscalls/sys_enter_clone",
		   __NR_clone, SIGCHLD, 0, 0);
}

/*
 * Who gets a record: every sample that deferred must find its record in
 * its own ring buffer, and no event may get records its session never
 * asked for.
 */

/* An exclude_user event samples in the kernel; its callchain keeps the user part. */
TEST_F(defer, exclude_user_event_gets_its_records)
{
	struct perf_event_attr attr;
	struct sample s;

	switch_attr(&attr);
	attr.exclude_user = 1;
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	run_sleep_chain(&self->x, self->x.fd[0]);
	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
		rb_drain(&self->x.rb[0], self->x.recs);
		TH_LOG("%s: its samples deferred, but no record came",
		       first_deferred_sample(self->x.recs, gettid(), &s) ?
		       "exclude_user" : "no deferred sample at all");
	}
	check_all(_metadata, &self->x, gettid(), 1, 0);
}

FIXTURE_VARIANT(disabled) {
	int enable_on_exec;
};

FIXTURE(disabled) {
	struct ctx x;
};

FIXTURE_SETUP(disabled)
{
	if (ctx_setup(_metadata, &self->x))
		return;
}

FIXTURE_TEARDOWN(disabled)
{
	ctx_teardown(&self->x);
}

FIXTURE_VARIANT_ADD(disabled, by_ioctl) { 0 };
FIXTURE_VARIANT_ADD(disabled, waiting_for_exec) { 1 };

/*
 * A disabled defer_output event (never enabled, or waiting for exec) gets
 * no records of entries that another session sampled.
 */
TEST_F(disabled, event_gets_no_other_sessions_records)
{
	struct perf_event_attr attr, off;
	struct recs *other;
	int n;

	switch_attr(&attr);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	memset(&off, 0, sizeof(off));
	off.size = sizeof(off);
	off.type = PERF_TYPE_SOFTWARE;
	off.config = PERF_COUNT_SW_DUMMY;
	off.sample_type = PERF_SAMPLE_TID;
	off.sample_id_all = 1;
	off.defer_output = 1;
	off.disabled = 1;
	off.enable_on_exec = variant->enable_on_exec;
	open_mapped(_metadata, &self->x, 1, &off, 0, -1);

	run_sleep_chain(&self->x, self->x.fd[0]);
	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
		TH_LOG("the enabled session got no record");
	}
	other = calloc(1, sizeof(*other));
	ASSERT_TRUE(!!other);
	rb_drain(&self->x.rb[1], other);
	n = count_type(other, PERF_RECORD_CALLCHAIN_DEFERRED);
	recs_free(other);
	free(other);
	EXPECT_EQ(0, n) TH_LOG("a disabled event got %d records it never asked for", n);
}

/*
 * The task is sampled on CPU 0 as it goes to sleep, moved to CPU 1 while
 * it sleeps, and returns to user space there: the record belongs to the
 * events of CPU 0, where the sample was taken. A session limited to CPU 1
 * never sampled it and gets nothing.
 */
FIXTURE(migrate) {
	struct ctx x;
	struct rb rb1;
	int fd1;
};

FIXTURE_VARIANT(migrate) {
	int per_task;	/* events of the task bound to a CPU, else CPU-wide */
};

FIXTURE_VARIANT_ADD(migrate, cpu_wide) { 0 };
FIXTURE_VARIANT_ADD(migrate, per_task_per_cpu) { 1 };

FIXTURE_SETUP(migrate)
{
	if (ctx_setup(_metadata, &self->x))
		return;
	self->fd1 = -1;
	memset(&self->rb1, 0, sizeof(self->rb1));
}

FIXTURE_TEARDOWN(migrate)
{
	rb_unmap(&self->rb1);
	if (self->fd1 >= 0)
		close(self->fd1);
	ctx_teardown(&self->x);
}

struct sleeper {
	struct chain *c;
	pid_t tid;
	int go[2];
};

static int pin(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(tid, sizeof(set), &set);
}

static void *sleeper_fn(void *p)
{
	static const struct timespec nap = { 0, 300 * 1000 * 1000 };
	struct sleeper *sl = p;
	char byte;

	if (pin(0, 0))
		return NULL;
	__atomic_store_n(&sl->tid, gettid(), __ATOMIC_RELEASE);
	if (read(sl->go[0], &byte, 1) != 1)
		return NULL;
	chain_syscall(sl->c, DEPTH, __NR_nanosleep, (long)&nap, 0, 0);
	return NULL;
}

/* Report the tid, wait for the go, then execve() from the chain. */
static void *exec_thread_fn(void *p)
{
	struct sleeper *sl = p;
	char byte;

	__atomic_store_n(&sl->tid, gettid(), __ATOMIC_RELEASE);
	if (read(sl->go[0], &byte, 1) != 1)
		return NULL;
	chain_syscall(sl->c, DEPTH, __NR_execve, sl->c->a, sl->c->b, sl->c->c);
	return NULL;
}

TEST_F(migrate, record_goes_to_the_cpu_of_the_sample)
{
	struct perf_event_attr attr;
	struct recs *other;
	struct sleeper sl;
	struct sample s;
	pthread_t th;
	pid_t target;
	char byte = 0;
	int i, n, cpu;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	sl.c = self->x.c;
	sl.tid = 0;
	ASSERT_EQ(0, pipe(sl.go));
	ASSERT_EQ(0, pthread_create(&th, NULL, sleeper_fn, &sl));
	while (!__atomic_load_n(&sl.tid, __ATOMIC_ACQUIRE))
		usleep(1000);

	/* One session per CPU: a sampler that is also the receiver. */
	switch_attr(&attr);
	attr.disabled = 0;
	/*
	 * No wakeup per sample: on PREEMPT_RT perf's wakeup irq_work runs
	 * in the irq_work/N thread, whose own switches a CPU-wide
	 * context-switch event samples, each waking it again; the ping-pong
	 * starves the sleeper. The test drains the buffers without poll().
	 */
	attr.wakeup_events = 0;
	target = variant->per_task ? sl.tid : -1;
	for (cpu = 0; cpu < 2; cpu++) {
		int fd = sys_perf_event_open(&attr, target, cpu, -1, 0);

		ASSERT_LE(0, fd) TH_LOG("perf_event_open on CPU %d: %s", cpu, strerror(errno));
		ASSERT_EQ(0, rb_map(cpu ? &self->rb1 : &self->x.rb[0], fd));
		if (cpu)
			self->fd1 = fd;
		else
			self->x.fd[0] = fd;
	}

	ASSERT_EQ(1, write(sl.go[1], &byte, 1));
	usleep(100 * 1000);		/* asleep on CPU 0 by now */
	ASSERT_EQ(0, pin(sl.tid, 1));	/* it wakes up on CPU 1 */
	pthread_join(th, NULL);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_DISABLE, 0);
	ioctl(self->fd1, PERF_EVENT_IOC_DISABLE, 0);

	n = wait_matched(&self->x.rb[0], self->x.recs, sl.tid, 1);
	ASSERT_TRUE(first_deferred_sample(self->x.recs, sl.tid, &s)) {
		TH_LOG("no deferred sample of the sleeper on CPU 0");
	}
	ASSERT_LE(1, n) {
		TH_LOG("CPU 0's session sampled the sleep but got no record");
	}
	check_all(_metadata, &self->x, sl.tid, 1, 0);

	other = calloc(1, sizeof(*other));
	ASSERT_TRUE(!!other);
	rb_drain(&self->rb1, other);
	for (i = 0; i < self->x.recs->n; i++) {
		if (!parse_sample(self->x.recs->r[i], &s) || s.tid != sl.tid ||
		    !sample_cookie(&s))
			continue;
		EXPECT_EQ(0, count_deferred(other, sample_cookie(&s), NULL)) {
			TH_LOG("CPU 1's session got the record of a sample taken on CPU 0");
		}
	}
	recs_free(other);
	free(other);
	close(sl.go[0]);
	close(sl.go[1]);
}

/*
 * A thread other than the leader calls execve(): it takes the leader's tid
 * on the way. The record of its sample at the execve() entry carries the
 * tid the sample carries.
 */
TEST_F(defer, exec_by_a_non_leader_thread)
{
	static char *const argv[] = { "true", NULL };
	static char *const envp[] = { NULL };
	struct perf_event_attr attr;
	int status, tidp[2], go[2];
	struct deferred d;
	struct sample s;
	pid_t pid, tid;
	char byte = 0;
	long id;

	if (sizeof(long) == 4)
		SKIP(return, "syscall tracepoints do not trace compat tasks");
	if (access("/bin/true", X_OK))
		SKIP(return, "no /bin/true");
	id = tracepoint_id("syscalls/sys_enter_execve");
	if (id < 0)
		SKIP(return, "no syscalls:sys_enter_execve tracepoint");
	ASSERT_EQ(0, pipe(tidp));
	ASSERT_EQ(0, pipe(go));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct sleeper sl = { .c = self->x.c };
		pthread_t th;

		/* The thread reports its tid, waits, then execs. */
		sl.go[0] = go[0];
		if (pthread_create(&th, NULL, exec_thread_fn, &sl))
			_exit(2);
		while (!__atomic_load_n(&sl.tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		if (write(tidp[1], &sl.tid, sizeof(sl.tid)) != sizeof(sl.tid))
			_exit(3);
		pthread_join(th, NULL);
		_exit(4);	/* execve failed */
	}
	ASSERT_EQ(sizeof(tid), read(tidp[0], &tid, sizeof(tid)));
	ASSERT_NE(pid, tid);
	attr_init(&attr, PERF_TYPE_TRACEPOINT, id);
	attr.disabled = 0;
	open_mapped(_metadata, &self->x, 0, &attr, tid, -1);
	self->x.c->a = (long)"/bin/true";
	self->x.c->b = (long)argv;
	self->x.c->c = (long)envp;
	ASSERT_EQ(1, write(go[1], &byte, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("the child did not exec /bin/true (status %#x)", status);
	}

	wait_matched(&self->x.rb[0], self->x.recs, tid, 1);
	ASSERT_TRUE(first_deferred_sample(self->x.recs, tid, &s)) {
		TH_LOG("no deferred sample of the thread at execve()");
	}
	ASSERT_EQ(1, count_deferred(self->x.recs, sample_cookie(&s), &d)) {
		TH_LOG("the sample at execve() has no single record");
	}
	EXPECT_EQ(tid, d.tid) {
		TH_LOG("the record names tid %u; the sample names %d (the leader is %d)",
		       d.tid, tid, pid);
	}
	check_frames(_metadata, &d, self->x.c, 0);
}

/* The [uprobes] mapping that holds the uretprobe trampoline, if any. */
static int uprobes_area(unsigned long *lo, unsigned long *hi)
{
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "[uprobes]") &&
			sscanf(line, "%lx-%lx", lo, hi) == 2;
	fclose(f);
	return found;
}

/*
 * No record of @tid holds a return address in the [uprobes] page, where the
 * uretprobe trampoline is. Entry 0 is the interrupted IP, which may be
 * there when a sample lands on the trampoline's breakpoint or on a probed
 * instruction stepped out of line.
 */
static void no_trampoline_in_records(struct __test_metadata *_metadata,
				     const struct recs *recs, __u32 tid)
{
	unsigned long lo, hi;
	struct deferred d;
	__u64 i;
	int r;

	ASSERT_TRUE(uprobes_area(&lo, &hi)) {
		TH_LOG("a uretprobe fired but there is no [uprobes] mapping");
	}
	for (r = 0; r < recs->n; r++) {
		if (!parse_deferred(recs->r[r], &d) || (d.has_id && d.tid != tid))
			continue;
		for (i = 1; i < d.nr; i++)
			EXPECT_FALSE(d.ips[i] >= lo && d.ips[i] < hi) {
				TH_LOG("record entry %llu is %#llx, in [uprobes]",
				       (unsigned long long)i,
				       (unsigned long long)d.ips[i]);
			}
	}
}

/*
 * A uretprobe replaces the return addresses of the function it probes with
 * its trampoline; the record holds the real ones, as classic chains do.
 */
TEST_F(defer, uretprobe_trampolines_are_replaced)
{
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	struct perf_event_attr attr, probe;
	struct chain *real;
	struct sample s;
	struct deferred d;
	long type, off;
	int bit, fd, i, n;

	type = pmu_type("uprobe");
	bit = pmu_format_bit("uprobe", "retprobe");
	off = file_offset((unsigned long)descend);
	if (type < 0 || bit < 0 || off < 0)
		SKIP(return, "no uprobe PMU with retprobe");

	/* The addresses without the probe: the same calls, the same sites. */
	run_sleep_chain(&self->x, -1);
	real = malloc(sizeof(*real));
	ASSERT_TRUE(!!real);
	*real = *self->x.c;

	memset(&probe, 0, sizeof(probe));
	probe.size = sizeof(probe);
	probe.type = type;
	probe.config = 1ULL << bit;
	probe.config1 = (unsigned long)"/proc/self/exe";
	probe.config2 = off;
	fd = sys_perf_event_open(&probe, 0, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("uretprobe on descend(): %s", strerror(errno));

	switch_attr(&attr);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	run_sleep_chain(&self->x, self->x.fd[0]);
	close(fd);

	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
		TH_LOG("no deferred sample of the sleep with its record");
	}
	no_trampoline_in_records(_metadata, self->x.recs, gettid());
	ASSERT_TRUE(chain_sample(self->x.recs, gettid(), real, &s, &d));
	ASSERT_EQ(1, count_deferred(self->x.recs, sample_cookie(&s), NULL)) {
		TH_LOG("%d records for the sleep's cookie",
		       count_deferred(self->x.recs, sample_cookie(&s), NULL));
	}
	n = chain_frames(real, want);
	ASSERT_LE(n, d.nr) {
		TH_LOG("the record closest to the sleep has %llu frames; the chain has %d",
		       (unsigned long long)d.nr, n);
	}
	for (i = 0; i < n; i++) {
		EXPECT_EQ((unsigned long long)want[i], d.ips[i]) {
			TH_LOG("frame %d: %#llx, the real return address is %#lx",
			       i, (unsigned long long)d.ips[i], want[i]);
		}
	}
	free(real);
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

#define DEEP		60
#define SHALLOW		8

/*
 * A sampling event that keeps SHALLOW entries (--call-graph fp,8,defer),
 * writing into the buffer of a receiver that has no limit: the record stops
 * at SHALLOW, like the sample's classic chain would, and the walk reads no
 * deeper than anyone waiting needs.
 */
TEST_F(defer, record_and_walk_keep_the_sampling_events_max_stack)
{
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	struct perf_event_attr attr, dummy;
	long long walks, frames;
	struct deferred d;
	struct sample s;
	int i, n;

	switch_attr(&attr);
	attr.defer_output = 0;
	attr.sample_max_stack = SHALLOW;
	memset(&dummy, 0, sizeof(dummy));
	dummy.size = sizeof(dummy);
	dummy.type = PERF_TYPE_SOFTWARE;
	dummy.config = PERF_COUNT_SW_DUMMY;
	dummy.sample_type = PERF_SAMPLE_TID;
	dummy.sample_id_all = 1;
	dummy.defer_output = 1;
	open_mapped(_metadata, &self->x, 1, &dummy, 0, -1);
	self->x.fd[0] = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, self->x.fd[0]) TH_LOG("perf_event_open: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(self->x.fd[0], PERF_EVENT_IOC_SET_OUTPUT, self->x.fd[1]));

	walks = core_counter("walks");
	frames = core_counter("frames");
	ioctl(self->x.fd[0], PERF_EVENT_IOC_ENABLE, 0);
	sleep_chain(self->x.c, DEEP);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_DISABLE, 0);

	ASSERT_LE(1, wait_matched(&self->x.rb[1], self->x.recs, gettid(), 1));
	ASSERT_TRUE(chain_sample(self->x.recs, gettid(), self->x.c, &s, &d));
	ASSERT_EQ(1, count_deferred(self->x.recs, sample_cookie(&s), NULL));
	ASSERT_EQ(SHALLOW, d.nr) {
		TH_LOG("the record has %llu entries; the sampling event keeps %d",
		       (unsigned long long)d.nr, SHALLOW);
	}
	n = chain_frames(self->x.c, want);
	for (i = 0; i < SHALLOW && i < n; i++)
		EXPECT_EQ((unsigned long long)want[i], d.ips[i]) TH_LOG("frame %d", i);
	if (walks < 0 || frames < 0)
		SKIP(return, "no %s to check the walk's depth", COUNTERS);
	walks = core_counter("walks") - walks;
	frames = core_counter("frames") - frames;
	ASSERT_LE(1, walks);
	EXPECT_GE(SHALLOW * walks, frames) {
		TH_LOG("%lld walks read %lld frames; nobody wanted more than %d each",
		       walks, frames, SHALLOW);
	}
}

/*
 * Permissions: under perf_event_paranoid 2, 1, 0 and -1, an unprivileged
 * task (uid and gid 65534) gets deferred records for itself and none for a
 * root task running beside it; it cannot attach to that task, nor open a
 * CPU-wide receiver unless the level allows CPU-wide events (0 and -1);
 * an exclude_user event gets only its own task's records, and an
 * exclude_callchain_user event neither defers nor gets records.
 */
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define NOBODY		65534

struct perms_result {
	int self_err;		/* errno opening its own event, 0 when opened */
	int self_deferred;	/* its samples that deferred */
	int self_records;	/* records with its tid */
	int foreign_records;	/* records with another tid */
	int other_err;		/* errno opening an event on the root task */
	int cpu_err;		/* errno opening a CPU-wide receiver */
	int excl_user_err;	/* errno opening an exclude_user event */
	int excl_user_foreign;	/* its records of another task */
	int excl_cc_err;	/* errno opening an exclude_callchain_user event */
	int excl_cc_deferred;	/* its samples that deferred */
	int excl_cc_records;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Sample a user-space spin with @attr on this task; count what comes back. */
/* 0 if @attr opens for @pid on @cpu (the event is closed again), else errno. */
static int open_errno(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd = sys_perf_event_open(attr, pid, cpu, -1, 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int perms_sample(struct perf_event_attr *attr, int *deferred,
			int *mine, int *foreign)
{
	struct recs *recs = calloc(1, sizeof(*recs));
	struct rb rb = { 0 };
	struct deferred d;
	struct sample s;
	int fd, i, err;
	double end;

	fd = sys_perf_event_open(attr, 0, -1, -1, 0);
	if (fd < 0 || !recs) {
		err = errno;
		free(recs);
		return err ?: ENOMEM;
	}
	if (rb_map(&rb, fd)) {
		err = errno;
		close(fd);
		free(recs);
		return err;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	end = now_ms() + 300;
	while (now_ms() < end)
		asm volatile("" ::: "memory");	/* stay in user space */
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	rb_drain(&rb, recs);
	for (i = 0; i < recs->n; i++) {
		if (parse_sample(recs->r[i], &s) && sample_cookie(&s))
			(*deferred)++;
		if (parse_deferred(recs->r[i], &d) && d.has_id) {
			if (d.tid == (__u32)gettid())
				(*mine)++;
			else
				(*foreign)++;
		}
	}
	recs_free(recs);
	free(recs);
	rb_unmap(&rb);
	close(fd);
	return 0;
}

static void perms_child(struct perms_result *res, pid_t root_task)
{
	struct perf_event_attr attr;
	int unused = 0;

	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		_exit(2);

	/* What paranoid 2 allows: user space only, kernel callchains too. */
	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 100000;
	attr.exclude_kernel = 1;
	attr.exclude_callchain_kernel = 1;
	res->self_err = perms_sample(&attr, &res->self_deferred,
				     &res->self_records, &res->foreign_records);

	res->other_err = open_errno(&attr, root_task, -1);

	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	attr.defer_callchain = 0;
	attr.exclude_kernel = 1;
	res->cpu_err = open_errno(&attr, -1, 0);

	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 100000;
	attr.exclude_user = 1;
	res->excl_user_err = perms_sample(&attr, &unused, &unused,
					  &res->excl_user_foreign);

	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 100000;
	attr.exclude_kernel = 1;
	attr.exclude_callchain_kernel = 1;
	attr.exclude_callchain_user = 1;
	res->excl_cc_err = perms_sample(&attr, &res->excl_cc_deferred, &res->excl_cc_records,
					&res->excl_cc_records);
	_exit(0);
}

FIXTURE(perms) {
	int saved, saved_ok, saved_try_first;
	pid_t root_task;
	struct perms_result *res;
};

FIXTURE_VARIANT(perms) {
	int paranoid;
};

FIXTURE_VARIANT_ADD(perms, paranoid_2) { 2 };
FIXTURE_VARIANT_ADD(perms, paranoid_1) { 1 };
FIXTURE_VARIANT_ADD(perms, paranoid_0) { 0 };
FIXTURE_VARIANT_ADD(perms, paranoid_minus_1) { -1 };

FIXTURE_SETUP(perms)
{
	self->root_task = -1;
	self->res = MAP_FAILED;
	self->saved_try_first = -1;
	self->saved_ok = !sysctl_get(PARANOID, &self->saved);
	if (geteuid())
		SKIP(return, "needs root, to set %s and become uid %d", PARANOID, NOBODY);
	if (defer_or_skip(_metadata))
		return;
	ASSERT_TRUE(self->saved_ok) TH_LOG("cannot read %s", PARANOID);
	ASSERT_EQ(0, write_sysctl(PARANOID, variant->paranoid));
	/* The unprivileged child's samples spin in user space: defer them. */
	try_first_set(0, &self->saved_try_first);
	self->res = mmap(NULL, sizeof(*self->res), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->res);
	memset(self->res, 0, sizeof(*self->res));
	/* A root task busy in system calls next to the unprivileged one. */
	self->root_task = fork();
	ASSERT_LE(0, self->root_task);
	if (!self->root_task) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			syscall(__NR_getppid);
	}
}

FIXTURE_TEARDOWN(perms)
{
	if (self->root_task > 0) {
		kill(self->root_task, SIGKILL);
		waitpid(self->root_task, NULL, 0);
	}
	if (self->saved_ok && !geteuid())
		write_sysctl(PARANOID, self->saved);
	try_first_restore(self->saved_try_first);
	if (self->res != MAP_FAILED)
		munmap(self->res, sizeof(*self->res));
}

TEST_F(perms, unprivileged_gets_records_only_for_its_own_tasks)
{
	const struct perms_result *r = self->res;
	int status;
	pid_t child;

	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		perms_child(self->res, self->root_task);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("the unprivileged child failed (status %#x)", status);
	}

	ASSERT_EQ(0, r->self_err) {
		TH_LOG("paranoid %d: its own user-space event: %s", variant->paranoid,
		       strerror(r->self_err));
	}
	EXPECT_LT(0, r->self_deferred) TH_LOG("none of its samples deferred");
	EXPECT_LT(0, r->self_records) TH_LOG("no record for its own task");
	EXPECT_EQ(0, r->foreign_records) {
		TH_LOG("%d records of another task reached it", r->foreign_records);
	}
	EXPECT_NE(0, r->other_err) TH_LOG("it opened an event on a root task");
	if (variant->paranoid >= 1)
		EXPECT_NE(0, r->cpu_err) {
			TH_LOG("paranoid %d let it open a CPU-wide receiver", variant->paranoid);
		}
	if (!r->excl_user_err)
		EXPECT_EQ(0, r->excl_user_foreign) {
			TH_LOG("an exclude_user event got %d records of another task",
			       r->excl_user_foreign);
		}
	ASSERT_EQ(0, r->excl_cc_err) TH_LOG("exclude_callchain_user event: %s",
					    strerror(r->excl_cc_err));
	EXPECT_EQ(0, r->excl_cc_deferred) {
		TH_LOG("an exclude_callchain_user event deferred %d samples", r->excl_cc_deferred);
	}
	EXPECT_EQ(0, r->excl_cc_records) {
		TH_LOG("an exclude_callchain_user event got %d records", r->excl_cc_records);
	}
}

/*
 * Try-then-defer: a cpu-clock sample of a task spinning in user space is
 * its own entry context. With kernel.unwind_deferred_try_first on, its
 * resident stack is walked at once and the sample carries a classic user
 * chain (no marker, no record); a stack that is not resident still defers.
 */
FIXTURE(try_first) {
	struct ctx x;
	int saved;
};

FIXTURE_VARIANT(try_first) {
	int on;
};

FIXTURE_VARIANT_ADD(try_first, on) { 1 };
FIXTURE_VARIANT_ADD(try_first, off) { 0 };

FIXTURE_SETUP(try_first)
{
	if (ctx_setup(_metadata, &self->x))
		return;
	if (try_first_set(variant->on, &self->saved))
		SKIP(return, "cannot set %s", TRY_FIRST_SYSCTL);
}

FIXTURE_TEARDOWN(try_first)
{
	try_first_restore(self->saved);
	ctx_teardown(&self->x);
}

/* A sample with no kernel part and a classic user part. */
static int classic_user_only(const struct sample *s)
{
	return s->nr >= 2 && s->ips[0] == PERF_CONTEXT_USER;
}

/*
 * The classic chain holds the program's frames: PERF_CONTEXT_USER, the IP
 * (not known to the program), then the leaf's and every level's return
 * address.
 */
static void check_classic_frames(struct __test_metadata *_metadata,
				 const struct sample *s, const struct chain *c)
{
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	int i, n = chain_frames(c, want);

	ASSERT_LE(1 + n, s->nr) {
		TH_LOG("the classic chain has %llu entries; the program has %d frames",
		       (unsigned long long)s->nr, n);
	}
	for (i = c->ntop; i < n; i++) {
		ASSERT_EQ((unsigned long long)want[i], s->ips[1 + i]) {
			TH_LOG("frame %d: the sample has %#llx, the program recorded %#lx",
			       i, (unsigned long long)s->ips[1 + i], want[i]);
		}
	}
}

/*
 * Samples of @tid: classic user-only ones, and deferred ones. A classic
 * sample taken in the chain's leaf (its caller is the leaf's return
 * address) must hold all of the chain's frames; a tick may also catch the
 * task elsewhere in user space (on the way down, around the ioctl()s), and
 * that chain is not the chain's. Returns the classic samples in the leaf.
 */
static int count_kinds(struct __test_metadata *_metadata, struct ctx *x,
		       __u32 tid, int *classic, int *deferred)
{
	struct sample s;
	int i, in_leaf = 0;

	*classic = 0;
	*deferred = 0;
	for (i = 0; i < x->recs->n; i++) {
		if (!parse_sample(x->recs->r[i], &s) || s.tid != tid)
			continue;
		if (sample_cookie(&s)) {
			(*deferred)++;
		} else if (classic_user_only(&s)) {
			(*classic)++;
			if (s.nr > 2 && s.ips[2] == x->c->leaf_ra) {
				in_leaf++;
				check_classic_frames(_metadata, &s, x->c);
			}
		}
	}
	return in_leaf;
}

TEST_F(try_first, user_space_samples_of_a_resident_stack)
{
	long long used0 = core_counter("try_used"), used1;
	struct perf_event_attr attr;
	int classic, deferred, in_leaf, matching = 0;
	pthread_t timer;

	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 2000000;	/* 2 ms */
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);

	__atomic_store_n(&spin_stop, 0, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_create(&timer, NULL, spin_timer, NULL));
	ioctl(self->x.fd[0], PERF_EVENT_IOC_ENABLE, 0);
	chain_run(self->x.c, DEPTH, leaf_spin);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_DISABLE, 0);
	pthread_join(timer, NULL);

	if (variant->on) {
		rb_drain(&self->x.rb[0], self->x.recs);
		in_leaf = count_kinds(_metadata, &self->x, gettid(), &classic,
				      &deferred);
		EXPECT_LE(1, in_leaf) {
			TH_LOG("no sample in the spin was walked at once (%d classic, %d deferred)",
			       classic, deferred);
		}
		/*
		 * Only a tick that caught the task in the kernel (around the
		 * chain, not in its spin) defers: its record is checked, not
		 * its frames.
		 */
		EXPECT_LT(deferred, classic);
		used1 = core_counter("try_used");
		if (used0 >= 0)
			EXPECT_LE(used0 + classic, used1) {
				TH_LOG("try_used went from %lld to %lld for %d classic samples",
				       used0, used1, classic);
			}
		if (deferred)
			check_records(_metadata, &self->x, gettid(), 0, 1,
				      &matching);
	} else {
		ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
			TH_LOG("with try-first off, no deferred sample with its record");
		}
		count_kinds(_metadata, &self->x, gettid(), &classic, &deferred);
		EXPECT_EQ(0, classic) {
			TH_LOG("%d samples took a classic chain with try-first off",
			       classic);
		}
		check_all(_metadata, &self->x, gettid(), 0, 1);
	}
}

#define SPIN_STACK	(256 * 1024)

struct dropped_stack {
	struct chain *c;
	char *stack;
	pid_t tid;
	pthread_barrier_t start;
};

/* The spinning thread, on a stack whose pages another thread drops. */
static void *spin_on_dropped_stack(void *p)
{
	struct dropped_stack *d = p;

	__atomic_store_n(&d->tid, gettid(), __ATOMIC_RELEASE);
	pthread_barrier_wait(&d->start);	/* until watched */
	chain_run(d->c, DEPTH, leaf_spin);
	return NULL;
}

TEST_F(try_first, stack_not_resident_still_defers)
{
	long long nonres0 = core_counter("try_not_resident"), nonres1;
	struct timespec ms = { 0, 1000 * 1000 };
	struct dropped_stack d = { .c = self->x.c };
	struct perf_event_attr attr;
	pthread_attr_t pattr;
	pthread_t th, timer;
	int fd;

	/*
	 * MADV_DONTNEED on a shared memory file keeps the data: the spinner
	 * runs on, and the deferred walk faults the pages back in.
	 */
	fd = memfd_create("spin-stack", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, SPIN_STACK));
	d.stack = mmap(NULL, SPIN_STACK, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	ASSERT_NE(MAP_FAILED, d.stack);
	ASSERT_EQ(0, pthread_barrier_init(&d.start, NULL, 2));
	ASSERT_EQ(0, pthread_attr_init(&pattr));
	ASSERT_EQ(0, pthread_attr_setstack(&pattr, d.stack, SPIN_STACK));
	__atomic_store_n(&spin_stop, 0, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_create(&th, &pattr, spin_on_dropped_stack, &d));
	while (!__atomic_load_n(&d.tid, __ATOMIC_ACQUIRE))
		sched_yield();

	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 2000000;	/* 2 ms */
	open_mapped(_metadata, &self->x, 0, &attr, d.tid, -1);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_ENABLE, 0);
	ASSERT_EQ(0, pthread_create(&timer, NULL, spin_timer, NULL));
	pthread_barrier_wait(&d.start);
	while (!__atomic_load_n(&spin_stop, __ATOMIC_RELAXED)) {
		madvise(d.stack, SPIN_STACK, MADV_DONTNEED);
		nanosleep(&ms, NULL);
	}
	pthread_join(th, NULL);
	pthread_join(timer, NULL);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_DISABLE, 0);

	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, d.tid, 1)) {
		TH_LOG("no sample of the spinner on a dropped stack deferred");
	}
	check_all(_metadata, &self->x, d.tid, 0, 1);
	nonres1 = core_counter("try_not_resident");
	if (variant->on && nonres0 >= 0)
		EXPECT_LT(nonres0, nonres1) {
			TH_LOG("try_not_resident stayed at %lld", nonres1);
		}
	if (!variant->on && nonres0 >= 0)
		EXPECT_EQ(nonres0, nonres1) TH_LOG("a walk was tried with try-first off");
	pthread_barrier_destroy(&d.start);
	munmap(d.stack, SPIN_STACK);
	close(fd);
}

TEST_HARNESS_MAIN
