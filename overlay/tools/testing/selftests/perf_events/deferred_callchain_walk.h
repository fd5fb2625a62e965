/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the walk puts in a record: the real return addresses where
 * uretprobes put their trampoline, and no more entries than the sampling
 * event keeps (nor a deeper walk).
 *
 * Included once, by deferred_callchain.c.
 */
#include "deferred_callchain_common.h"

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
