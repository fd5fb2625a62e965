/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The first sample of a stay in the kernel (the now fixture): with
 * kernel.unwind_deferred_try_first bit 1 set, a system call's first
 * sample takes its user stack at once, walked for the whole stay; samples
 * that follow in the same stay defer and get that walk in their record,
 * with no second walk. With the bit clear, every sample defers.
 *
 * Included once, by deferred_callchain.c.
 */
#include "deferred_callchain_common.h"

#define TRY_USER	1	/* kernel.unwind_deferred_try_first bits */
#define TRY_KERNEL	2

/* System calls sampled after a first one that sets up the walk cache. */
#define NOW_CALLS	8

FIXTURE(now) {
	struct ctx x;
	int saved;
	long exit_tp;
};

FIXTURE_VARIANT(now) {
	int try_first;
};

FIXTURE_VARIANT_ADD(now, on) { TRY_USER | TRY_KERNEL };
FIXTURE_VARIANT_ADD(now, off) { TRY_USER };

FIXTURE_SETUP(now)
{
	/* A setup that skips gets no teardown: skip before ctx_setup(). */
	self->saved = -1;
	if (sizeof(long) == 4)
		SKIP(return, "syscall tracepoints do not trace compat tasks");
	self->exit_tp = tracepoint_id("syscalls/sys_exit_getppid");
	if (tracepoint_id("syscalls/sys_enter_getppid") < 0 || self->exit_tp < 0)
		SKIP(return, "no syscalls:sys_{enter,exit}_getppid tracepoints");
	if (ctx_setup(_metadata, &self->x))
		return;
	/* Could ctx_setup() not set it either, it changed nothing. */
	if (try_first_set(variant->try_first, &self->saved))
		SKIP(return, "cannot set %s", TRY_FIRST_SYSCTL);
}

FIXTURE_TEARDOWN(now)
{
	try_first_restore(self->saved);
	ctx_teardown(&self->x);
}

/* The index of PERF_CONTEXT_USER in a classic chain, or -1. */
static int user_part(const struct sample *s)
{
	__u64 i;

	for (i = 0; i < s->nr; i++)
		if (s->ips[i] == PERF_CONTEXT_USER)
			return i;
	return -1;
}

/* The user part of a sample holds the chain's frames, the IP first. */
static void check_user_part(struct __test_metadata *_metadata,
			    const struct sample *s, int at,
			    const struct chain *c)
{
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	int i, n = chain_frames(c, want);

	ASSERT_LE(at + 1 + n, (int)s->nr) {
		TH_LOG("the user part has %d entries; the program has %d frames",
		       (int)s->nr - at - 1, n);
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ((unsigned long long)want[i], s->ips[at + 1 + i]) {
			TH_LOG("frame %d: the sample has %#llx, the program recorded %#lx",
			       i, (unsigned long long)s->ips[at + 1 + i], want[i]);
		}
	}
}

/* Run the chain @n times, one getppid() each, events @fds enabled. */
static void run_calls(struct ctx *x, int from, int to, int n)
{
	int i, k;

	chain_set_syscall(x->c, __NR_getppid, 0, 0, 0);
	for (k = from; k <= to; k++)
		ioctl(x->fd[k], PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < n; i++)
		chain_run(x->c, DEPTH, leaf_syscall);
	for (k = from; k <= to; k++)
		ioctl(x->fd[k], PERF_EVENT_IOC_DISABLE, 0);
}

/*
 * A first system call sampled by event 0, whose deferred walk sets up the
 * task's walk cache (a walk at once needs one); its sample and record are
 * dropped.
 */
static void warm_up(struct __test_metadata *_metadata, struct ctx *x)
{
	run_calls(x, 0, 0, 1);
	ASSERT_LE(1, wait_matched(&x->rb[0], x->recs, gettid(), 1)) {
		TH_LOG("the first system call's sample did not defer");
	}
	recs_free(x->recs);
}

/* Count @tid's samples in @recs: classic user parts and deferred ones. */
static void count_samples(struct __test_metadata *_metadata,
			  const struct recs *recs, const struct chain *c,
			  __u32 tid, int *classic, int *deferred)
{
	struct sample s;
	int i, at;

	*classic = 0;
	*deferred = 0;
	for (i = 0; i < recs->n; i++) {
		if (!parse_sample(recs->r[i], &s) || s.tid != tid)
			continue;
		if (sample_cookie(&s)) {
			(*deferred)++;
			continue;
		}
		at = user_part(&s);
		ASSERT_LE(0, at) TH_LOG("a sample with neither marker nor user part");
		check_user_part(_metadata, &s, at, c);
		(*classic)++;
	}
}

/*
 * One sample per system call: with the bit set, each takes its stack at
 * once, a classic chain holding the program's frames, and makes no
 * record; with it clear, each defers.
 */
TEST_F(now, one_sample_per_stay_is_walked_at_once)
{
	struct perf_event_attr attr;
	long long used0;
	int classic, deferred;

	attr_init(&attr, PERF_TYPE_TRACEPOINT, self->x.getppid_tp);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	warm_up(_metadata, &self->x);
	used0 = core_counter("now_used");
	run_calls(&self->x, 0, 0, NOW_CALLS);
	if (variant->try_first & TRY_KERNEL) {
		rb_drain(&self->x.rb[0], self->x.recs);
		count_samples(_metadata, self->x.recs, self->x.c, gettid(),
			      &classic, &deferred);
		EXPECT_EQ(NOW_CALLS, classic) {
			TH_LOG("%d of %d system calls were walked at once (%d deferred)",
			       classic, NOW_CALLS, deferred);
		}
		EXPECT_EQ(0, count_type(self->x.recs,
					PERF_RECORD_CALLCHAIN_DEFERRED));
		if (used0 >= 0)
			EXPECT_LE(used0 + NOW_CALLS, core_counter("now_used"));
	} else {
		ASSERT_LE(NOW_CALLS, wait_matched(&self->x.rb[0], self->x.recs,
						  gettid(), NOW_CALLS));
		count_samples(_metadata, self->x.recs, self->x.c, gettid(),
			      &classic, &deferred);
		EXPECT_EQ(0, classic) {
			TH_LOG("%d samples in the kernel took a classic chain", classic);
		}
		EXPECT_EQ(NOW_CALLS, check_all(_metadata, &self->x, gettid(), 0, 0));
		if (used0 >= 0)
			EXPECT_EQ(used0, core_counter("now_used"));
	}
}

/*
 * Two samples per system call, by its entry tracepoint (event 0) and its
 * exit tracepoint (event 1): with the bit set, the entry's sample takes
 * the stack at once and the exit's defers, its record holding the same
 * walk, not made again (the record reuses it). With it clear, both defer.
 */
TEST_F(now, later_samples_of_the_stay_share_its_walk)
{
	struct recs *entries = calloc(1, sizeof(*entries));
	long long reuses0, walks0;
	struct perf_event_attr attr;
	int classic, deferred;

	ASSERT_TRUE(!!entries);
	attr_init(&attr, PERF_TYPE_TRACEPOINT, self->x.getppid_tp);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	attr_init(&attr, PERF_TYPE_TRACEPOINT, self->exit_tp);
	open_mapped(_metadata, &self->x, 1, &attr, 0, -1);
	warm_up(_metadata, &self->x);
	reuses0 = core_counter("cache_reuses");
	walks0 = core_counter("walks");
	run_calls(&self->x, 0, 1, NOW_CALLS);

	/* The exits' samples and their records, in event 1's buffer. */
	ASSERT_LE(NOW_CALLS, wait_matched(&self->x.rb[1], self->x.recs,
					  gettid(), NOW_CALLS)) {
		TH_LOG("an exit tracepoint's sample went without its record");
	}
	EXPECT_EQ(NOW_CALLS, check_all(_metadata, &self->x, gettid(), 0, 0));
	rb_drain(&self->x.rb[0], entries);
	count_samples(_metadata, entries, self->x.c, gettid(), &classic,
		      &deferred);
	recs_free(entries);
	free(entries);
	if (variant->try_first & TRY_KERNEL) {
		EXPECT_EQ(NOW_CALLS, classic);
		EXPECT_EQ(0, deferred);
		if (reuses0 >= 0) {
			EXPECT_LE(reuses0 + NOW_CALLS, core_counter("cache_reuses"));
			EXPECT_EQ(walks0, core_counter("walks")) {
				TH_LOG("%lld deferred walks for %d system calls walked at once",
				       core_counter("walks") - walks0, NOW_CALLS);
			}
		}
	} else {
		EXPECT_EQ(0, classic);
		EXPECT_EQ(NOW_CALLS, deferred);
	}
}

/*
 * Whether the first sample of a stay is walked at once where more come
 * (the predict fixture): with bit 2 of kernel.unwind_deferred_try_first,
 * a task whose recent stays had two samples or more defers its first
 * sample too, so that the stay's chain is written once, in its record;
 * a task whose stays have one sample each keeps walking it at once. The
 * task follows a change within two stays. Without bit 2 (3, the setting
 * before it), every first sample is walked at once.
 *
 * The pattern of a run is its entry samples in order (event 0's buffer):
 * C for a classic user part, D for a deferred one.
 */
#define TRY_PREDICT	4

FIXTURE(predict) {
	struct ctx x;
	int saved;
};

FIXTURE_VARIANT(predict) {
	int try_first;
	const char *k2;		/* 16 stays of two samples, from a fresh task */
	const char *k1;		/* 16 stays of one sample */
	const char *change;	/* 8 stays of two, then 8 of one, 8 of two */
};

FIXTURE_VARIANT_ADD(predict, on) {
	.try_first = TRY_USER | TRY_KERNEL | TRY_PREDICT,
	.k2 = "CCDDDDDDDDDDDDDD",
	.k1 = "CCCCCCCCCCCCCCCC",
	.change = "CCDDDDDDDDCCCCCCCCDDDDDD",
};

FIXTURE_VARIANT_ADD(predict, off) {
	.try_first = TRY_USER | TRY_KERNEL,
	.k2 = "CCCCCCCCCCCCCCCC",
	.k1 = "CCCCCCCCCCCCCCCC",
	.change = "CCCCCCCCCCCCCCCCCCCCCCCC",
};

FIXTURE_SETUP(predict)
{
	struct perf_event_attr attr;
	long exit_tp;

	self->saved = -1;
	if (sizeof(long) == 4)
		SKIP(return, "syscall tracepoints do not trace compat tasks");
	exit_tp = tracepoint_id("syscalls/sys_exit_getppid");
	if (tracepoint_id("syscalls/sys_enter_getppid") < 0 || exit_tp < 0)
		SKIP(return, "no syscalls:sys_{enter,exit}_getppid tracepoints");
	if (ctx_setup(_metadata, &self->x))
		return;
	if (try_first_set(variant->try_first, &self->saved))
		SKIP(return, "cannot set %s", TRY_FIRST_SYSCTL);
	/* Event 0 on each stay's entry, event 1 on its exit. */
	attr_init(&attr, PERF_TYPE_TRACEPOINT, self->x.getppid_tp);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	attr_init(&attr, PERF_TYPE_TRACEPOINT, exit_tp);
	open_mapped(_metadata, &self->x, 1, &attr, 0, -1);
	/* A stay of one sample: it sets up the walk cache, and counts as one. */
	warm_up(_metadata, &self->x);
}

FIXTURE_TEARDOWN(predict)
{
	try_first_restore(self->saved);
	ctx_teardown(&self->x);
}

/*
 * The pattern of the entry samples in event 0's buffer, in order; each
 * classic user part holds the program's frames, and every deferred sample
 * has its one record there, with the frames. Returns the pattern's length.
 */
static int entry_pattern(struct __test_metadata *_metadata, struct ctx *x,
			 char *pat, int max)
{
	struct sample s;
	int i, n = 0, at;

	recs_free(x->recs);
	rb_drain(&x->rb[0], x->recs);
	for (i = 0; i < x->recs->n && n < max; i++) {
		if (!parse_sample(x->recs->r[i], &s) || s.tid != (__u32)gettid())
			continue;
		if (sample_cookie(&s)) {
			pat[n++] = 'D';
			continue;
		}
		at = user_part(&s);
		EXPECT_LE(0, at) TH_LOG("a sample with neither marker nor user part");
		if (at >= 0)
			check_user_part(_metadata, &s, at, x->c);
		pat[n++] = 'C';
	}
	pat[n] = '\0';
	if (strchr(pat, 'D'))
		check_all(_metadata, x, gettid(), 0, 0);
	return n;
}

/* Every exit sample (event 1) deferred, each with its record. */
static void check_exits(struct __test_metadata *_metadata, struct ctx *x,
			int n)
{
	recs_free(x->recs);
	EXPECT_EQ(n, wait_matched(&x->rb[1], x->recs, gettid(), n)) {
		TH_LOG("an exit sample went without its record");
	}
	EXPECT_EQ(n, check_all(_metadata, x, gettid(), 0, 0));
}

/*
 * Stays of two samples: after the first two, the entry sample defers as
 * the exit's does, and the stay's chain is only in its record, not also
 * inline. Without bit 2 every entry sample takes its chain inline.
 */
TEST_F(predict, two_samples_per_stay_write_the_chain_once)
{
	long long predicted0 = core_counter("now_predicted");
	long long many0 = core_counter("entries_many");
	char pat[64];
	int n, d = strlen(variant->k2) - strspn(variant->k2, "C");

	run_calls(&self->x, 0, 1, 16);
	check_exits(_metadata, &self->x, 16);
	n = entry_pattern(_metadata, &self->x, pat, sizeof(pat) - 1);
	ASSERT_EQ(16, n) TH_LOG("16 stays gave %d entry samples", n);
	EXPECT_STREQ(variant->k2, pat);
	/* Each event's buffer gets the record of every stay it sampled. */
	EXPECT_EQ(16, count_type(self->x.recs, PERF_RECORD_CALLCHAIN_DEFERRED)) {
		TH_LOG("entry samples %s: not one record per stay", pat);
	}
	if (predicted0 >= 0) {
		EXPECT_LE(predicted0 + d, core_counter("now_predicted"));
		EXPECT_LE(many0 + 16, core_counter("entries_many"));
	}
}

/* Stays of one sample keep walking it at once: no record, no task work. */
TEST_F(predict, one_sample_per_stay_keeps_walking_at_once)
{
	long long one0 = core_counter("entries_one");
	long long used0 = core_counter("now_used");
	char pat[64];
	int n;

	run_calls(&self->x, 0, 0, 16);
	n = entry_pattern(_metadata, &self->x, pat, sizeof(pat) - 1);
	ASSERT_EQ(16, n) TH_LOG("16 stays gave %d entry samples", n);
	EXPECT_STREQ(variant->k1, pat);
	EXPECT_EQ(0, count_type(self->x.recs, PERF_RECORD_CALLCHAIN_DEFERRED));
	if (one0 >= 0) {
		EXPECT_LE(one0 + 16, core_counter("entries_one"));
		EXPECT_LE(used0 + 16, core_counter("now_used"));
	}
}

/*
 * A task that changes from stays of two samples to stays of one and back
 * follows within two stays each time, and every sample is whole: classic
 * ones hold the frames, deferred ones have their record.
 */
TEST_F(predict, a_change_is_followed_within_two_stays)
{
	char pat[64];
	int n;

	run_calls(&self->x, 0, 1, 8);
	run_calls(&self->x, 0, 0, 8);
	run_calls(&self->x, 0, 1, 8);
	check_exits(_metadata, &self->x, 16);
	n = entry_pattern(_metadata, &self->x, pat, sizeof(pat) - 1);
	ASSERT_EQ(24, n) TH_LOG("24 stays gave %d entry samples", n);
	EXPECT_STREQ(variant->change, pat);
}
