/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel.unwind_deferred_try_first (the try_first fixture): user-space
 * samples of a resident stack walked at once, and a stack not resident
 * still deferred.
 *
 * Included once, by deferred_callchain.c.
 */
#include "deferred_callchain_common.h"

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

/*
 * perf_event_max_contexts_per_stack 0 leaves no room for the user part's
 * PERF_CONTEXT_USER: a classic chain then holds no user entry, and one
 * walked at once must not hold any either (user addresses without their
 * marker read as kernel ones). Only the spin's samples are checked.
 */
TEST_F(try_first, no_user_entries_without_room_for_their_marker)
{
	int old = read_sysctl(MAX_CONTEXTS_SYSCTL), i, samples = 0;
	struct perf_event_attr attr;
	pthread_t timer;
	struct sample s;
	__u64 j;

	ASSERT_LT(0, old);
	if (write_sysctl(MAX_CONTEXTS_SYSCTL, 0))
		SKIP(return, "cannot set %s", MAX_CONTEXTS_SYSCTL);
	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 2000000;	/* 2 ms */
	self->x.fd[0] = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (self->x.fd[0] >= 0 && !rb_map(&self->x.rb[0], self->x.fd[0])) {
		__atomic_store_n(&spin_stop, 0, __ATOMIC_RELAXED);
		if (!pthread_create(&timer, NULL, spin_timer, NULL)) {
			ioctl(self->x.fd[0], PERF_EVENT_IOC_ENABLE, 0);
			chain_run(self->x.c, DEPTH, leaf_spin);
			ioctl(self->x.fd[0], PERF_EVENT_IOC_DISABLE, 0);
			pthread_join(timer, NULL);
		}
		rb_drain(&self->x.rb[0], self->x.recs);
	}
	/* The limit can only change back with no callchain event open. */
	rb_unmap(&self->x.rb[0]);
	if (self->x.fd[0] >= 0)
		close(self->x.fd[0]);
	self->x.fd[0] = -1;
	ASSERT_EQ(0, write_sysctl(MAX_CONTEXTS_SYSCTL, old));

	for (i = 0; i < self->x.recs->n; i++) {
		if (!parse_sample(self->x.recs->r[i], &s) || s.tid != gettid())
			continue;
		samples++;
		for (j = 0; j < s.nr; j++) {
			EXPECT_LE(PERF_CONTEXT_MAX, s.ips[j]) {
				TH_LOG("entry %llu of %llu is %#llx, not a context marker",
				       (unsigned long long)j,
				       (unsigned long long)s.nr,
				       (unsigned long long)s.ips[j]);
			}
		}
	}
	EXPECT_LE(1, samples) TH_LOG("no sample of the spin");
}
