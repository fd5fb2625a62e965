/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf session of a test: uprobes, each with a deferred and a classic
 * callchain event, into one ring buffer; runs of the chain; and the check
 * of every sample's chain against the return addresses the program
 * recorded.
 */
#ifndef SELFTESTS_UNWIND_SFRAME_PROBE_SESSION_H
#define SELFTESTS_UNWIND_SFRAME_PROBE_SESSION_H

#include "sframe_probe_common.h"

/* A uprobe with two events: the deferred callchain's, the classic one's. */
struct point {
	unsigned long addr;
	const char *sym;
	unsigned long off;
	int hits;		/* how many times one run executes it */
	int fd[2];
};

/*
 * The events of a test: every sample goes to the ring buffer of a dummy
 * event with defer_output, which gets the deferred records too.
 */
struct session {
	int fd;
	struct perf_event_mmap_page *pg;
	char *data;
	size_t size;
	long uprobe_type;
	int nr;
	struct point pt[MAX_POINTS];
	int nrecs;
	struct perf_event_header *recs[MAX_RECS];
	int lost;
	long long sframe_frames;	/* the counter before the runs */
};

struct sample {
	__u64 ip;
	__u32 tid;
	__u64 nr;
	const __u64 *ips;
};

struct deferred {
	__u64 cookie, nr;
	const __u64 *ips;
};

/*
 * A uprobe's sample is taken in task context, on the way out of the
 * kernel: with kernel.unwind_deferred_try_first's bit 1 (the default) the
 * kernel walks it at once, as the first sample of a stay in the kernel,
 * wherever the mm's tables are at hand, and it does not defer. These tests
 * check the deferred walk: each fixture clears the bit for its test and
 * puts the old value back. *@saved is -1 when the sysctl is missing.
 */
#define TRY_FIRST_PATH	"/proc/sys/kernel/unwind_deferred_try_first"
#define TRY_FIRST_KERNEL	2

static void try_first_kernel_off(int *saved)
{
	char buf[16];

	*saved = -1;
	if (!knob_read(TRY_FIRST_PATH, buf, sizeof(buf)))
		return;
	*saved = atoi(buf);
	snprintf(buf, sizeof(buf), "%d", *saved & ~TRY_FIRST_KERNEL);
	if (knob_write(TRY_FIRST_PATH, buf))
		*saved = -1;
}

static void try_first_restore(int saved)
{
	char buf[16];

	if (saved < 0)
		return;
	snprintf(buf, sizeof(buf), "%d", saved);
	knob_write(TRY_FIRST_PATH, buf);
}

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid,
			       int cpu, int group_fd, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static struct session *session_open(struct __test_metadata *_metadata)
{
	struct perf_event_attr attr = { };
	struct session *s;
	size_t page = getpagesize();
	void *p;

	s = calloc(1, sizeof(*s));
	ASSERT_NE(NULL, s);
	s->uprobe_type = pmu_type("uprobe");
	ASSERT_LE(0, s->uprobe_type) TH_LOG("no uprobe PMU");

	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID;
	attr.sample_id_all = 1;
	attr.defer_output = 1;
	attr.disabled = 1;
	s->fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, s->fd) {
		TH_LOG("perf_event_open(dummy, defer_output): %s", strerror(errno));
	}
	s->size = RB_PAGES * page;
	p = mmap(NULL, s->size + page, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap of the ring buffer: %s", strerror(errno));
	s->pg = p;
	s->data = (char *)p + page;
	return s;
}

static void session_close(struct session *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nr; i++) {
		close(s->pt[i].fd[0]);
		close(s->pt[i].fd[1]);
	}
	if (s->pg)
		munmap(s->pg, s->size + getpagesize());
	close(s->fd);
	while (s->nrecs)
		free(s->recs[--s->nrecs]);
	free(s);
}

/*
 * A uprobe at @addr (@sym + @off) in this program, run @hits times by one
 * run of the chain; both events write into the session's ring buffer.
 */
static void session_add(struct __test_metadata *_metadata, struct session *s,
			unsigned long addr, const char *sym, unsigned long off,
			int hits)
{
	struct point *pt = &s->pt[s->nr];
	struct perf_event_attr attr = { };
	long foff = file_offset(addr);
	int k;

	ASSERT_GT(MAX_POINTS, s->nr);
	ASSERT_LE(0, foff) TH_LOG("%s+%#lx (%#lx) is in no file mapping", sym, off, addr);
	pt->addr = addr;
	pt->sym = sym;
	pt->off = off;
	pt->hits = hits;

	attr.size = sizeof(attr);
	attr.type = s->uprobe_type;
	attr.config1 = (unsigned long)"/proc/self/exe";
	attr.config2 = foff;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_CALLCHAIN;
	attr.exclude_callchain_kernel = 1;
	attr.disabled = 1;
	for (k = 0; k < 2; k++) {
		attr.defer_callchain = !k;
		pt->fd[k] = sys_perf_event_open(&attr, 0, -1, -1, 0);
		ASSERT_LE(0, pt->fd[k]) {
			TH_LOG("perf_event_open(uprobe at %s+%#lx, %s): %s",
			       sym, off, k ? "classic" : "deferred",
			       strerror(errno));
		}
		ASSERT_EQ(0, ioctl(pt->fd[k], PERF_EVENT_IOC_SET_OUTPUT, s->fd)) {
			TH_LOG("PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno));
		}
	}
	s->nr++;
}

/* Move every record out of the ring buffer. */
static void session_drain(struct __test_metadata *_metadata, struct session *s)
{
	__u64 head = __atomic_load_n(&s->pg->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = s->pg->data_tail;
	struct perf_event_header h;

	while (tail < head) {
		ring_copy(s->data, s->size, tail, &h, sizeof(h));
		ASSERT_LE(sizeof(h), h.size) TH_LOG("a record of size %u", h.size);
		ASSERT_GT(MAX_RECS, s->nrecs) TH_LOG("more than %d records", MAX_RECS);
		s->recs[s->nrecs] = malloc(h.size);
		ASSERT_NE(NULL, s->recs[s->nrecs]);
		ring_copy(s->data, s->size, tail, s->recs[s->nrecs], h.size);
		s->lost += h.type == PERF_RECORD_LOST;
		s->nrecs++;
		tail += h.size;
	}
	__atomic_store_n(&s->pg->data_tail, tail, __ATOMIC_RELEASE);
}

/*
 * The only caller of probe_top(), so that every run of the chain has the
 * same return addresses (a loop of calls of probe_top() may be unrolled
 * into several call sites).
 */
static __attribute__((noipa)) void chain_run(struct probe_chain *c)
{
	c->n = 0;
	probe_top(c);
}

/*
 * Run the chain @runs times with every event of the session enabled. The
 * first call of prctl() is bound (lazily, through the .plt) before the
 * events are on. The samples of all runs are checked against the return
 * addresses the last run recorded: every run must record the same.
 */
static void session_run(struct __test_metadata *_metadata, struct session *s,
			struct probe_chain *c, int runs)
{
	unsigned long first[MAX_RAS];
	int i, n = 0;

	s->sframe_frames = counter("sframe_frames");
	ASSERT_LE(0, s->sframe_frames) TH_LOG("no sframe_frames in %s", COUNTERS_PATH);
	ASSERT_EQ(0, prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0));
	for (i = 0; i < runs; i++) {
		chain_run(c);
		if (!i) {
			n = c->n;
			memcpy(first, c->ras, sizeof(first));
		}
	}
	ASSERT_EQ(0, prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0));
	ASSERT_EQ(n, c->n);
	ASSERT_EQ(0, memcmp(first, c->ras, n * sizeof(first[0]))) {
		TH_LOG("the runs of the chain recorded different return addresses");
	}
	session_drain(_metadata, s);
	ASSERT_EQ(0, s->lost) TH_LOG("the ring buffer lost records");
}

static bool parse_sample(const struct perf_event_header *h, struct sample *s)
{
	const __u64 *p = (const void *)(h + 1);

	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof(*h) + 24)
		return false;
	s->ip = p[0];
	s->tid = (__u32)(p[1] >> 32);
	s->nr = p[2];
	s->ips = &p[3];
	return h->size >= sizeof(*h) + 24 + 8 * s->nr;
}

static bool parse_deferred(const struct perf_event_header *h,
			   struct deferred *d)
{
	const __u64 *p = (const void *)(h + 1);

	if (h->type != PERF_RECORD_CALLCHAIN_DEFERRED ||
	    h->size < sizeof(*h) + 16)
		return false;
	d->cookie = p[0];
	d->nr = p[1];
	d->ips = &p[2];
	return h->size >= sizeof(*h) + 16 + 8 * d->nr;
}

/* The cookie of a deferred sample; 0 for a sample with a classic chain. */
static __u64 sample_cookie(const struct sample *s)
{
	if (s->nr < 2 || s->ips[s->nr - 2] != PERF_CONTEXT_USER_DEFERRED)
		return 0;
	return s->ips[s->nr - 1];
}

/* The records with @cookie: how many, and the first in *@d. */
static int find_deferred(const struct session *s, __u64 cookie,
			 struct deferred *d)
{
	struct deferred r;
	int i, n = 0;

	for (i = 0; i < s->nrecs; i++) {
		if (!parse_deferred(s->recs[i], &r) || r.cookie != cookie)
			continue;
		if (!n++)
			*d = r;
	}
	return n;
}

/* How many of the classic user chain's first frames are @want's. */
static int classic_right(const struct sample *smp, const unsigned long *want,
			 int nwant)
{
	__u64 j = 0;
	int k;

	while (j < smp->nr && smp->ips[j] != PERF_CONTEXT_USER)
		j++;
	for (k = 0; k < nwant && j + 1 + k < smp->nr; k++)
		if (smp->ips[j + 1 + k] != want[k])
			break;
	return k;
}

static void log_chains(struct __test_metadata *_metadata,
		       const struct deferred *d, const unsigned long *want,
		       int nwant)
{
	__u64 i;

	for (i = 0; i < d->nr || i < (__u64)nwant; i++) {
		if (i < d->nr && i < (__u64)nwant)
			TH_LOG("  frame %llu: got %#llx, the program recorded %#lx",
			       i, d->ips[i], want[i]);
		else if (i < d->nr)
			TH_LOG("  frame %llu: got %#llx", i, d->ips[i]);
		else
			TH_LOG("  frame %llu: missing, the program recorded %#lx",
			       i, want[i]);
	}
}

/*
 * The deferred chain of a sample at @pt: the probed address, then the
 * program's return addresses, all @nwant of them (and, with @exact,
 * nothing after them); no kernel-half address anywhere.
 */
static void check_deferred(struct __test_metadata *_metadata,
			   const struct point *pt, const struct deferred *d,
			   const unsigned long *want, int nwant, bool exact)
{
	__u64 i;

	for (i = 0; i < d->nr; i++) {
		ASSERT_GT(USER_END, d->ips[i]) {
			TH_LOG("%s+%#lx: deferred frame %llu is %#llx, a kernel address",
			       pt->sym, pt->off, i, d->ips[i]);
			log_chains(_metadata, d, want, nwant);
		}
	}
	if (exact) {
		ASSERT_EQ(nwant, d->nr) {
			TH_LOG("%s+%#lx: the walk should end after frame %d",
			       pt->sym, pt->off, nwant - 1);
			log_chains(_metadata, d, want, nwant);
		}
	}
	ASSERT_LE(nwant, d->nr) {
		TH_LOG("%s+%#lx: the deferred chain has %llu frames; the program has %d",
		       pt->sym, pt->off, d->nr, nwant);
		log_chains(_metadata, d, want, nwant);
	}
	for (i = 0; i < (__u64)nwant; i++) {
		ASSERT_EQ(want[i], d->ips[i]) {
			TH_LOG("%s+%#lx: deferred frame %llu is %#llx, the program's %#lx",
			       pt->sym, pt->off, i, d->ips[i], want[i]);
			log_chains(_metadata, d, want, nwant);
		}
	}
}

/*
 * Every point had exactly its hits, each with a deferred sample whose
 * record holds the chain the program recorded (the first @nwant frames of
 * it, all when 0; with @exact, nothing more), and a classic sample. Logs
 * how many frames the classic chains got right.
 */
static void session_check(struct __test_metadata *_metadata,
			  struct session *s, const struct probe_chain *c,
			  int nwant, bool exact)
{
	unsigned long want[MAX_FRAMES];
	char line[4 * MAX_POINTS + 1];
	int i, j, len = 0, all, complete = 0, samples = 0, frames = 0;
	__u32 tid = gettid();

	line[0] = '\0';
	for (i = 0; i < s->nr; i++) {
		const struct point *pt = &s->pt[i];
		int ndef = 0, ncl = 0, right = MAX_FRAMES;
		struct deferred d;
		struct sample smp;

		all = chain_want(c, pt->addr, want);
		if (!nwant)
			nwant = all;
		ASSERT_LE(nwant, all) TH_LOG("the program recorded %d frames", all);
		for (j = 0; j < s->nrecs; j++) {
			if (!parse_sample(s->recs[j], &smp) || smp.tid != tid ||
			    smp.ip != pt->addr)
				continue;
			if (!sample_cookie(&smp)) {
				int k = classic_right(&smp, want, nwant);

				ncl++;
				right = k < right ? k : right;
				continue;
			}
			ndef++;
			ASSERT_EQ(1, find_deferred(s, sample_cookie(&smp), &d)) {
				TH_LOG("%s+%#lx: %d records for the cookie %#llx",
				       pt->sym, pt->off,
				       find_deferred(s, sample_cookie(&smp), &d),
				       sample_cookie(&smp));
			}
			check_deferred(_metadata, pt, &d, want, nwant, exact);
		}
		ASSERT_EQ(pt->hits, ndef) {
			TH_LOG("%s+%#lx (%#lx) ran %d times, %d deferred samples",
			       pt->sym, pt->off, pt->addr, pt->hits, ndef);
		}
		ASSERT_EQ(pt->hits, ncl) {
			TH_LOG("%s+%#lx (%#lx) ran %d times, %d classic samples",
			       pt->sym, pt->off, pt->addr, pt->hits, ncl);
		}
		samples += ndef;
		frames += right;
		complete += right == nwant;
		len += snprintf(line + len, sizeof(line) - len, " %d", right);
	}
	TH_LOG("%d uprobes, %d samples: every deferred (SFrame) chain had the program's %d frames",
	       s->nr, samples, nwant);
	/* Each walk stepped to each caller by the SFrame table. */
	EXPECT_LE(s->sframe_frames + samples * (nwant - 1),
		  counter("sframe_frames")) {
		TH_LOG("sframe_frames grew by %lld for %d walks of %d callers",
		       counter("sframe_frames") - s->sframe_frames, samples,
		       nwant - 1);
		TH_LOG("some frames came from frame pointers, not SFrame");
	}
	TH_LOG("classic (frame pointer) chains: all %d frames right at %d of %d uprobes",
	       nwant, complete, s->nr);
	TH_LOG("classic chains: %.1f frames right on average; per uprobe:%s",
	       s->nr ? (double)frames / s->nr : 0.0, line);
}

/* Probe every instruction of sframe_probed() (with @step > 1: some). */
static void add_probed_insns(struct __test_metadata *_metadata,
			     struct session *s, unsigned int step)
{
	unsigned long base = (unsigned long)sframe_probed;
	unsigned long start = sframe_probed_sym[0], size = sframe_probed_sym[1];
	unsigned long off, last = 0;
	unsigned int i, n;

	ASSERT_LT(8, sframe_probed_nr_insns) {
		TH_LOG("the build listed %u instructions of sframe_probed()",
		       sframe_probed_nr_insns);
	}
	ASSERT_EQ(start, sframe_probed_insns[0]) {
		TH_LOG("the listing starts at +%#lx", sframe_probed_insns[0] - start);
	}
	/* Listed in order, and ending with the function's only "ret". */
	for (i = 0; i < sframe_probed_nr_insns; i++) {
		off = sframe_probed_insns[i] - start;
		if (off >= size)	/* padding after the function */
			break;
		ASSERT_TRUE(!i || off > last) TH_LOG("instruction %u at +%#lx", i, off);
		last = off;
	}
	ASSERT_EQ(size - 1, last) {
		TH_LOG("the last instruction listed is at +%#lx of %#lx bytes",
		       last, size);
	}
	/* Read before any uprobe puts its breakpoint there. */
	ASSERT_EQ(0xc3, *(unsigned char *)(base + last)) {
		TH_LOG("sframe_probed+%#lx is not a ret", last);
	}
	n = i;
	for (i = 0; i < n; i++) {
		off = sframe_probed_insns[i] - start;
		if (i % step && i + 1 < n)
			continue;
		session_add(_metadata, s, base + off, "sframe_probed", off, 1);
	}
}

#endif /* SELFTESTS_UNWIND_SFRAME_PROBE_SESSION_H */
