// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred perf callchains of code built without frame pointers
 * (-O2 -fomit-frame-pointer -Wa,--gsframe), sampled by uprobes at the
 * places where an SFrame walk is hardest to get right, and compared frame
 * by frame with the return addresses the program recorded itself:
 *
 * - every instruction of a function with a real frame (six registers
 *   pushed, %rbp among them, a stack frame, two calls), prologue and
 *   epilogue included; the instructions come from the toolchain's
 *   disassembly of the object at build time (sframe_insns.awk);
 * - every instruction of the .plt that a call into a DT_NEEDED library
 *   runs, lazily bound and then bound (the rows of a PC-mask FDE);
 * - a program that walked (its mm remembers its tables) execs itself, or
 *   its twin, at the same addresses: the new program's chain must be right
 *   and found from its own mm;
 * - a return address slot holding a kernel-half address: the walk ends
 *   there, counted as a bad frame.
 *
 * Every uprobe has two events: one with a deferred user callchain (the
 * SFrame walk, which must be complete) and one with the classic
 * frame-pointer callchain, of which the tests log how many frames were
 * right. Built twice: as a PIE (sframe_probe) and as a non-PIE program
 * (sframe_probe_nopie).
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/elf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "ctl.h"
#include "perf_helpers.h"
#include "sframe_lib.h"
#include "sframe_probe.h"

#define RB_PAGES	64
#define MAX_POINTS	128
#define MAX_RECS	4096
#define MAX_RAS		8
#define MAX_FRAMES	(MAX_RAS + 1)
/* The first address past the lower (user) half of the address space. */
#define USER_END	0x0000800000000000ULL

#ifdef __PIE__
#define SELF_KIND	"PIE"
#define TWIN		"sframe_probe_nopie"
#else
#define SELF_KIND	"non-PIE"
#define TWIN		"sframe_probe"
#endif

#define RA() ((unsigned long)__builtin_return_address(0))

/*
 * A call chain of known shape: probe_top() and probe_mid() call inner(),
 * and every function records its return address in ras[n++], outermost
 * first.
 */
struct probe_chain {
	long a, b;
	long (*inner)(struct probe_chain *c);
	/* for the kernel-half tests: call leaf with @bad_ra in a slot */
	long (*bad_fn)(long (*leaf)(struct probe_chain *c),
		       struct probe_chain *c, unsigned long bad_ra);
	unsigned long bad_ra;
	int n;
	unsigned long ras[MAX_RAS];
};

/* Called twice by sframe_probed(): a frame of its own, not probed. */
static __attribute__((noipa)) long probe_callee(struct probe_chain *c,
						char *buf, long x)
{
	buf[x & 63] = (char)x;
	return buf[(x >> 3) & 63] + c->a;
}

/*
 * Every instruction of this function is probed. It has no branch, so one
 * call runs each instruction exactly once; its four values live across
 * the calls, so the compiler saves six callee-saved registers (%rbp among
 * them), and its buffer makes a stack frame.
 */
static __attribute__((noipa)) long sframe_probed(struct probe_chain *c)
{
	long a = c->a, b = c->b;
	long x = a * 7 + b, y = b * 5 - a, z = a ^ b, w = a + b * 3;
	char buf[64];

	c->ras[c->n++] = RA();
	memset(buf, 0, sizeof(buf));
	x += probe_callee(c, buf, x);
	y += probe_callee(c, buf, y + z);
	return x * y + z * w + buf[w & 63];
}

/* A big frame, based on the stack pointer. */
static __attribute__((noipa)) long probe_mid(struct probe_chain *c)
{
	char buf[1024];

	memset(buf, c->a, sizeof(buf));
	asm volatile("" : : "r"(buf) : "memory");
	c->ras[c->n++] = RA();
	return c->inner(c) + buf[c->b & 1023];
}

/* alloca: the CFA is based on %rbp. */
static __attribute__((noipa)) long probe_top(struct probe_chain *c)
{
	size_t len = 64 + (c->a & 63);
	char *p = alloca(len);

	memset(p, c->b, len);
	asm volatile("" : : "r"(p) : "memory");
	c->ras[c->n++] = RA();
	return probe_mid(c) + p[c->a & 63];
}

static long plt_next(void *chain, int level)
{
	return level;
}

/*
 * A call through the .plt into libsframe_a.so, which records the return
 * address of that call (the PLT stub does not touch the stack).
 */
static __attribute__((noipa)) long plt_call(struct probe_chain *c)
{
	long ret;

	c->ras[c->n++] = RA();
	ret = sframe_lib_a_step(c, c->n, plt_next, c->ras);
	c->n++;
	return ret;
}

/*
 * The functions of sframe_probe.h. While leaf() runs, the slot that holds
 * the return address into their caller holds @bad_ra instead: at 8(%rsp)
 * after "push %rbx", which the SFrame row of that call (CFA = SP + 16,
 * return address at CFA - 8) points to; or at 8(%rbp) in a function with
 * no CFI, so no SFrame row, which only frame pointers can walk.
 */
asm(".text\n"
	".globl sframe_bad_ra_sframe\n"
	".type sframe_bad_ra_sframe, @function\n"
	"sframe_bad_ra_sframe:\n\t"
	".cfi_startproc\n\t"
	"push %rbx\n\t"
	".cfi_adjust_cfa_offset 8\n\t"
	".cfi_offset %rbx, -16\n\t"
	"mov 8(%rsp), %rbx\n\t"
	"mov %rdx, 8(%rsp)\n\t"
	"mov %rdi, %rax\n\t"
	"mov %rsi, %rdi\n\t"
	"call *%rax\n\t"
	"mov %rbx, 8(%rsp)\n\t"
	"pop %rbx\n\t"
	".cfi_adjust_cfa_offset -8\n\t"
	".cfi_restore %rbx\n\t"
	"ret\n\t"
	".cfi_endproc\n"
	".size sframe_bad_ra_sframe, .-sframe_bad_ra_sframe\n"
	".globl sframe_bad_ra_fp\n"
	".type sframe_bad_ra_fp, @function\n"
	"sframe_bad_ra_fp:\n\t"
	"push %rbp\n\t"
	"mov %rsp, %rbp\n\t"
	"push %rbx\n\t"
	"sub $8, %rsp\n\t"
	"mov 8(%rbp), %rbx\n\t"
	"mov %rdx, 8(%rbp)\n\t"
	"mov %rdi, %rax\n\t"
	"mov %rsi, %rdi\n\t"
	"call *%rax\n\t"
	"mov %rbx, 8(%rbp)\n\t"
	"mov -8(%rbp), %rbx\n\t"
	"leave\n\t"
	"ret\n"
	".size sframe_bad_ra_fp, .-sframe_bad_ra_fp\n");

/* The leaf the kernel-half tests probe, at its first instruction. */
static __attribute__((noipa)) long bad_ra_leaf(struct probe_chain *c)
{
	c->ras[c->n++] = RA();
	return c->a;
}

static __attribute__((noipa)) long bad_ra_call(struct probe_chain *c)
{
	return c->bad_fn(bad_ra_leaf, c, c->bad_ra);
}

/* The chain a sample at @addr must have; returns its length. */
static int chain_want(const struct probe_chain *c, unsigned long addr,
		      unsigned long *want)
{
	int i, n = 0;

	want[n++] = addr;
	for (i = c->n - 1; i >= 0 && n < MAX_FRAMES; i--)
		want[n++] = c->ras[i];
	return n;
}

/* Why the kernel cannot run these tests, or NULL when it can. */
static const char *probe_missing(void)
{
	if (counter("sframe_frames") < 0)
		return "the kernel has no SFrame unwinder (CONFIG_UNWIND_USER_SFRAME)";
	if (pmu_type("uprobe") < 0)
		return "no uprobe PMU";
	return NULL;
}

/* The program's own path, and the path of @name next to it. */
static void self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	buf[n > 0 ? n : 0] = '\0';
}

static void sibling_path(char *buf, size_t size, const char *name)
{
	char exe[PATH_MAX];

	self_path(exe, sizeof(exe));
	snprintf(buf, size, "%s/%s", dirname(exe), name);
}

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

FIXTURE(probe) {
	struct session *s;
	struct probe_chain c;
};

FIXTURE_SETUP(probe)
{
	const char *missing = probe_missing();

	self->s = NULL;
	if (missing)
		SKIP(return, "%s", missing);
	self->s = session_open(_metadata);
	self->c.a = 11;
	self->c.b = 29;
	TH_LOG("%s program, sframe_probed() at %#lx", SELF_KIND,
	       (unsigned long)sframe_probed);
}

FIXTURE_TEARDOWN(probe)
{
	session_close(self->s);
}

/*
 * Closing a uprobe event waits for RCU grace periods (uprobe unregister):
 * about 0.2 s per event on the TCG guest, 0.7 to 1.1 s with PREEMPT_RT,
 * which does not expedite them. The tests with a probe per instruction
 * close about 40 events, so they get more than the harness's 30 seconds.
 */
#define MANY_PROBES_TIMEOUT	180

/*
 * A uprobe on every instruction of sframe_probed(): each sample's deferred
 * chain is the probed address, then the return addresses into probe_mid(),
 * probe_top() and the test.
 */
TEST_F_TIMEOUT(probe, every_instruction_of_a_function_with_a_frame,
	       MANY_PROBES_TIMEOUT)
{
	add_probed_insns(_metadata, self->s, 1);
	self->c.inner = sframe_probed;
	session_run(_metadata, self->s, &self->c, 1);
	session_check(_metadata, self->s, &self->c, 0, false);
}

/* Lazy x86-64 PLT entries are 16 bytes: jmp *GOT; push $index; jmp PLT0. */
#define PLT_ENTRY	16

struct plt_stub {
	unsigned long plt0;	/* run-time addresses */
	unsigned long entry;
};

static bool read_file(const char *path, unsigned char **data, size_t *len)
{
	struct stat st;
	bool ok;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return false;
	ok = !fstat(fd, &st) && (*data = malloc(st.st_size)) &&
	     read(fd, *data, st.st_size) == st.st_size;
	*len = st.st_size;
	close(fd);
	return ok;
}

static const struct elf64_shdr *find_section(const unsigned char *elf,
					     const char *name)
{
	const struct elf64_hdr *eh = (const void *)elf;
	const struct elf64_shdr *sh = (const void *)(elf + eh->e_shoff);
	const char *names = (const char *)elf + sh[eh->e_shstrndx].sh_offset;
	int i;

	for (i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, name))
			return &sh[i];
	return NULL;
}

/* The symbol @name of the symbol table @tab (.symtab or .dynsym), or NULL. */
static const struct elf64_sym *find_symbol(const unsigned char *elf,
					   const struct elf64_shdr *tab,
					   const char *name)
{
	const struct elf64_hdr *eh = (const void *)elf;
	const struct elf64_shdr *sh = (const void *)(elf + eh->e_shoff);
	const struct elf64_sym *sym = (const void *)(elf + tab->sh_offset);
	const char *names = (const char *)elf + sh[tab->sh_link].sh_offset;
	size_t i;

	for (i = 0; i < tab->sh_size / sizeof(*sym); i++)
		if (!strcmp(names + sym[i].st_name, name))
			return &sym[i];
	return NULL;
}

static int32_t rel32(unsigned long at)
{
	int32_t v;

	memcpy(&v, (const void *)at, sizeof(v));
	return v;
}

#define R_X86_64_JUMP_SLOT	7

/*
 * The .plt entry through which this program calls @func, from its
 * .rela.plt, checked against the code: a lazy entry whose jmp reads the
 * GOT slot of that relocation, pushes its index and jumps to PLT0.
 */
static void find_plt_stub(struct __test_metadata *_metadata, const char *func,
			  struct plt_stub *stub)
{
	const struct elf64_shdr *rela, *plt, *symtab, *dynsym, *sh;
	const struct elf64_sym *me, *sym;
	const struct elf64_rela *r;
	unsigned long bias, got = 0, plt0, e;
	unsigned char *elf;
	char path[PATH_MAX];
	size_t len, i;
	long idx = -1;

	self_path(path, sizeof(path));
	ASSERT_TRUE(read_file(path, &elf, &len)) TH_LOG("cannot read %s", path);
	rela = find_section(elf, ".rela.plt");
	plt = find_section(elf, ".plt");
	symtab = find_section(elf, ".symtab");
	ASSERT_TRUE(rela && plt && symtab) {
		TH_LOG("%s has no .rela.plt, .plt or .symtab", path);
	}
	/* Where the program is loaded, from a function's address. */
	me = find_symbol(elf, symtab, "sframe_probed");
	ASSERT_NE(NULL, me) TH_LOG("%s has no symbol sframe_probed", path);
	bias = (unsigned long)sframe_probed - me->st_value;

	sh = (const void *)(elf + ((struct elf64_hdr *)elf)->e_shoff);
	dynsym = &sh[rela->sh_link];
	r = (const void *)(elf + rela->sh_offset);
	for (i = 0; i < rela->sh_size / sizeof(*r); i++) {
		sym = (const struct elf64_sym *)(elf + dynsym->sh_offset) +
		      ELF64_R_SYM(r[i].r_info);
		if (ELF64_R_TYPE(r[i].r_info) == R_X86_64_JUMP_SLOT &&
		    sym == find_symbol(elf, dynsym, func)) {
			idx = i;
			got = r[i].r_offset + bias;
		}
	}
	plt0 = plt->sh_addr + bias;
	free(elf);
	ASSERT_LE(0, idx) TH_LOG("no .plt relocation for %s", func);

	stub->plt0 = plt0;
	stub->entry = plt0 + PLT_ENTRY * (idx + 1);
	e = stub->entry;
	TH_LOG("%s@plt at %#lx (entry %ld), PLT0 at %#lx", func, e, idx, plt0);
	/* ff 25: jmp *rel32(%rip), 68: push imm32, e9: jmp rel32 */
	ASSERT_TRUE(!memcmp((void *)e, "\xff\x25", 2) &&
		    e + 6 + rel32(e + 2) == got &&
		    *(unsigned char *)(e + 6) == 0x68 && rel32(e + 7) == idx &&
		    *(unsigned char *)(e + 11) == 0xe9 &&
		    e + 16 + rel32(e + 12) == plt0) {
		TH_LOG("%s@plt is not a lazy x86-64 PLT entry", func);
	}
	/* ff 35: push rel32(%rip), ff 25: jmp *rel32(%rip) */
	ASSERT_TRUE(!memcmp((void *)plt0, "\xff\x35", 2) &&
		    !memcmp((void *)(plt0 + 6), "\xff\x25", 2)) {
		TH_LOG("PLT0 is not the lazy x86-64 one");
	}
}

/*
 * A call into libsframe_a.so through the .plt, made twice: the first time
 * lazily bound, through every instruction of the library's PLT entry and of
 * PLT0 on its way to the dynamic linker; the second time bound, through
 * the entry's first jmp alone. Whatever instruction of the stub the sample
 * is at, the next frame is the caller's, at the return address the library
 * recorded.
 */
TEST_F(probe, plt_stub_of_a_call_into_a_needed_library)
{
	struct plt_stub stub;

	find_plt_stub(_metadata, "sframe_lib_a_step", &stub);
	session_add(_metadata, self->s, stub.entry, "sframe_lib_a_step@plt",
		    0, 2);
	session_add(_metadata, self->s, stub.entry + 6,
		    "sframe_lib_a_step@plt", 6, 1);
	session_add(_metadata, self->s, stub.entry + 11,
		    "sframe_lib_a_step@plt", 11, 1);
	session_add(_metadata, self->s, stub.plt0, "PLT0", 0, 1);
	session_add(_metadata, self->s, stub.plt0 + 6, "PLT0", 6, 1);
	self->c.inner = plt_call;
	session_run(_metadata, self->s, &self->c, 2);
	if (getenv("LD_BIND_NOW"))
		TH_LOG("LD_BIND_NOW is set: the lazy path is not run");
	session_check(_metadata, self->s, &self->c, 0, false);
}

/*
 * One program of the exec test: probe some instructions of sframe_probed()
 * (its mm's first walks, which must read the program's file themselves),
 * check the chains, and exec @next with the rest of the arguments.
 */
static void exec_stage(struct __test_metadata *_metadata, int argc,
		       char **argv)
{
	long long probed = counter("sframe_files_probed");
	long long found = counter("sframe_sections");
	unsigned long here = (unsigned long)sframe_probed;
	struct probe_chain c = { .a = 5, .b = 17, .inner = sframe_probed };
	char path[PATH_MAX], addr[32];
	struct session *s;

	self_path(path, sizeof(path));
	TH_LOG("after exec: %s (%s), sframe_probed() at %#lx", path, SELF_KIND,
	       here);
	/* argv: the previous program and its sframe_probed(), then next. */
	ASSERT_LE(2, argc);
	if (!strcmp(argv[0], path)) {
		ASSERT_EQ(strtoul(argv[1], NULL, 0), here) {
			TH_LOG("the program moved from %s: address space randomization is on",
			       argv[1]);
		}
	}
	ASSERT_LE(0, probed) TH_LOG("no %s", COUNTERS_PATH);

	s = session_open(_metadata);
	add_probed_insns(_metadata, s, 8);
	session_run(_metadata, s, &c, 1);
	session_check(_metadata, s, &c, 0, false);
	session_close(s);

	EXPECT_LT(probed, counter("sframe_files_probed")) {
		TH_LOG("this mm's first walks read no file: they used what another mm found");
	}
	EXPECT_LT(found, counter("sframe_sections")) {
		TH_LOG("this mm's first walks found no SFrame section");
	}
	if (argc < 3 || _metadata->exit_code)
		return;
	snprintf(addr, sizeof(addr), "%#lx", here);
	fflush(stdout);
	fflush(stderr);
	execl(argv[2], argv[2], "--exec-stage", path, addr, (char *)NULL);
	ASSERT_TRUE(false) TH_LOG("exec %s: %s", argv[2], strerror(errno));
}

static int exec_stage_main(int argc, char **argv)
{
	static struct __test_metadata m = { .name = "exec_stage" };

	if (!setjmp(m.env))
		exec_stage(&m, argc, argv);
	return m.exit_code == KSFT_PASS && !m.aborted ? 0 : 1;
}

FIXTURE(exec) {
};

FIXTURE_VARIANT(exec) {
	bool twin;		/* exec the other build, else this program */
};

FIXTURE_VARIANT_ADD(exec, self) { false };
FIXTURE_VARIANT_ADD(exec, twin) { true };

FIXTURE_SETUP(exec)
{
	const char *missing = probe_missing();

	if (missing)
		SKIP(return, "%s", missing);
}

FIXTURE_TEARDOWN(exec)
{
}

/*
 * With address space randomization off, this program execs itself, which
 * walks its chain (so its mm remembers the tables of the program and its
 * libraries), then execs this program again or its twin: the last
 * program's chains must be right, found by its own mm's walks.
 */
TEST_F_TIMEOUT(exec, chain_right_after_exec, MANY_PROBES_TIMEOUT)
{
	char path[PATH_MAX], next[PATH_MAX + 32];
	int status;
	pid_t pid;

	self_path(path, sizeof(path));
	if (variant->twin)
		sibling_path(next, sizeof(next), TWIN);
	else
		snprintf(next, sizeof(next), "%s", path);
	ASSERT_EQ(0, access(next, X_OK)) TH_LOG("%s: %s", next, strerror(errno));

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		personality(ADDR_NO_RANDOMIZE);
		execl(path, path, "--exec-stage", "-", "0", next, (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) {
		TH_LOG("the exec'd program died by signal %d", WTERMSIG(status));
	}
	ASSERT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("a program after exec failed (its log is above)");
	}
}

FIXTURE(kernel_half_ra) {
	struct session *s;
	struct probe_chain c;
};

FIXTURE_VARIANT(kernel_half_ra) {
	long (*fn)(long (*leaf)(struct probe_chain *c), struct probe_chain *c,
		   unsigned long bad_ra);
	unsigned long bad_ra;
};

/* By the SFrame row of the function whose slot it is. */
FIXTURE_VARIANT_ADD(kernel_half_ra, sframe_row_first_kernel_address) {
	sframe_bad_ra_sframe, 0xffff800000000000UL };
FIXTURE_VARIANT_ADD(kernel_half_ra, sframe_row_vsyscall_page) {
	sframe_bad_ra_sframe, 0xffffffffff600000UL };
/* By frame pointers, in a function the table does not cover. */
FIXTURE_VARIANT_ADD(kernel_half_ra, frame_pointer_kernel_text) {
	sframe_bad_ra_fp, 0xffffffff81000000UL };

FIXTURE_SETUP(kernel_half_ra)
{
	const char *missing = probe_missing();

	self->s = NULL;
	if (missing)
		SKIP(return, "%s", missing);
	self->s = session_open(_metadata);
	self->c.inner = bad_ra_call;
	self->c.bad_fn = variant->fn;
	self->c.bad_ra = variant->bad_ra;
}

FIXTURE_TEARDOWN(kernel_half_ra)
{
	session_close(self->s);
}

/*
 * A sample in the leaf the function calls: its own frame is right, the
 * next return address is the kernel-half value, and the walk ends there
 * as a bad frame (stop_bad_frame), with nothing after it.
 */
TEST_F(kernel_half_ra, walk_ends_at_the_slot)
{
	long long bad = counter("stop_bad_frame");

	ASSERT_LE(0, bad) TH_LOG("no stop_bad_frame in %s", COUNTERS_PATH);
	session_add(_metadata, self->s, (unsigned long)bad_ra_leaf,
		    "bad_ra_leaf", 0, 1);
	session_run(_metadata, self->s, &self->c, 1);
	/* The leaf, and its return address into the function. */
	session_check(_metadata, self->s, &self->c, 2, true);
	EXPECT_LT(bad, counter("stop_bad_frame")) {
		TH_LOG("stop_bad_frame did not grow");
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--exec-stage"))
		return exec_stage_main(argc - 2, argv + 2);
	return test_harness_run(argc, argv);
}
