/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One entry context, one cookie, one record; and what the attr bits and
 * perf's limits do to them: no defer_callchain, exclude_callchain_user
 * and _kernel, perf_event_max_stack, an event disabled in the sampled
 * entry, perf_event_max_contexts_per_stack, defer_output on two events,
 * no sample_id_all, the feature probe and the reserved bits.
 *
 * Included once, by deferred_callchain.c.
 */
#include "deferred_callchain_common.h"

/*
 * The sleep's switch-out gives a sample on each of the two events, in one
 * system call. Other system calls of the test may switch out too (on
 * PREEMPT_RT the ioctl()s can block on a sleeping lock), so the samples
 * are grouped by cookie rather than taken as the first two.
 */
TEST_F(defer, two_samples_one_entry_one_record)
{
	struct perf_event_attr attr;
	struct sample s[64];
	__u64 cookie = 0;
	int i, j, n = 0, same;

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
	for (i = 0; i < self->x.recs->n && n < (int)ARRAY_SIZE(s); i++)
		if (parse_sample(self->x.recs->r[i], &s[n]) &&
		    s[n].tid == gettid() && sample_cookie(&s[n]))
			n++;
	ASSERT_LE(2, n);
	for (i = 0; i < n && !cookie; i++) {
		for (j = 0, same = 0; j < n; j++)
			same += sample_cookie(&s[j]) == sample_cookie(&s[i]);
		if (same >= 2)
			cookie = sample_cookie(&s[i]);
	}
	EXPECT_NE(0, cookie) {
		TH_LOG("no two of the %d samples share a cookie", n);
	}
	EXPECT_EQ(1, count_deferred(self->x.recs, cookie, NULL)) {
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
