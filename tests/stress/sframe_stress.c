// SPDX-License-Identifier: GPL-2.0
/*
 * Stress for deferred user callchains through code built without frame
 * pointers (-O2 -fomit-frame-pointer -Wa,--gsframe), which only the
 * kernel's SFrame walk can unwind, while the process's mappings and the
 * kernel's per-mm table of SFrame sections change under the walks.
 *
 * Walker threads descend call chains of random shape: 1 to 40 levels, each
 * one of four kinds of frame (no locals; 3 KiB of locals addressed from
 * %rsp; alloca, which bases the frame on %rbp; a realigned frame with a
 * variable-length array, which gcc builds with a DRAP and flexible SFrame
 * rows) or a step in a library: libsframe_a.so, which the program needs,
 * or the copy of libsframe_b.so or libsframe_fp.so the thread dlopen'd.
 * Every level records its own return address and does some work in user
 * space.  At the bottom, the leaf spins with %rbp holding garbage and makes
 * inline system calls: getppid(), or in a quarter of the chains, mmap() of
 * a few pages, a page fault in each, mremap() to twice the size, a fault in
 * each new page and munmap().  Frame pointers cannot get past one frame.
 *
 * Each walker samples itself into a ring of its own: cpu-clock every
 * PERIOD ns in user space (each sample a walk from wherever it interrupted),
 * every page fault and every context switch, all deferring their user
 * callchain.  Its events are enabled only while it runs that
 * code (prctl() by inline system calls from it); after each chain it
 * reads its ring (tests/stress/ledger.c) and checks every
 * PERF_RECORD_CALLCHAIN_DEFERRED against what it recorded:
 *
 *  - the record is of this thread, and its first frame (where the walk
 *    began) is inside one of the walker's functions or library steps
 *    (dladdr1() and the symbol's size);
 *  - the frames after it, up to and including the thread function's
 *    return address into libc, are exactly the return addresses of the
 *    frames that were live: the last N of (leaf, level depth - 1, ...,
 *    level 0, thread function), innermost first;
 *  - the one walk allowed to end before the thread function ends at its
 *    first frame, in the realigned function's prologue or epilogue, whose
 *    CFA is in %r10, a register the walk does not know (the kernel counts
 *    it in sframe_unsupported_rows).
 * Frames past the thread function's return address are libc's, which has
 * neither SFrame nor frame pointers: they are not checked.
 *
 * Meanwhile every other walker dlopens one of 80 copies of a library for
 * every chain and dlcloses it after (the others every 64 chains):
 * libraries come and go, often at the address of the one before, and the
 * kernel's per-mm table of sections (sframe_mm_entries mappings) fills,
 * evicts and misses under the walks.  One more thread maps, moves
 * (mremap) and unmaps anonymous memory and copies of the libraries.
 *
 * Also checked at the end: each walker's books (every deferred sample has
 * its record, see ledger.h), the deferral core's counters (counters.h),
 * that the kernel counted at least as many frames found by SFrame as the
 * checked chains have up to the thread function's return address, at
 * least as many unsupported rows as walks ended at a realigned frame, and
 * no bad row, bad section or refused version.
 *
 * usage: sframe_stress [-t SECONDS] [-s SEED] [-T WALKERS] [-p PERIOD_NS]
 * The run lasts SECONDS, or longer (up to four times) until every walker
 * had a record checked.  Prints TAP, one test.  Needs root; its libraries
 * are next to it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/elf.h>

#include "counters.h"
#include "ledger.h"
#include "sframe_lib.h"
#include "workload.h"

#define MAX_WALKERS	16
#define MAX_DEPTH	40
/* Copies of the libraries, to dlopen: more than the kernel keeps per mm. */
#define NR_COPIES	80
#define RING_PAGES	128
#define SWAP_CHAINS	64	/* a steady walker's library lasts this long */
#define PAGE		4096
#define SHOW_MAX	3	/* wrong records printed per walker */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define RA()		((unsigned long)__builtin_return_address(0))
/* A walker function: a frame of its own, found by dladdr1(). */
#define WALKER		__attribute__((noipa, visibility("default")))

enum kind { K_SMALL, K_BIG, K_ALLOCA, K_DRAP, K_LIB_A, K_LIB_B, NR_KINDS };

struct chain {
	int depth;
	unsigned char kind[MAX_DEPTH];
	unsigned short size[MAX_DEPTH];	/* alloca and array bytes */
	sframe_step_t lib_a, lib_b;
	long pages;			/* the leaf maps this many, then twice */
	long spin;			/* and loops this often in user space */
	unsigned long ras[MAX_DEPTH];	/* the return address of each level */
	unsigned long leaf_ra;
};

/* What a walker did, in memory shared with the controller. */
struct walker_stats {
	unsigned long long chains, lib_chains, swaps;
	unsigned long long samples, deferred, classic, kernel_only;
	unsigned long long lost, throttles, unmatched;
	unsigned long long records, complete, frames, drap_ends, wrong;
	bool failed;
	char why[256];
	char first_wrong[2048];	/* the first wrong record, frame by frame */
};

struct vma_stats {
	unsigned long long mmaps, mremaps, moved, munmaps;
};

struct shared {
	struct walker_stats w[MAX_WALKERS];
	struct vma_stats vma;
};

struct walker {
	int id;
	bool churn;		/* a library of its own for every chain */
	pid_t tid;
	unsigned long long rng;
	unsigned long root_ra;	/* the thread function's, into libc */
	char name[48];
	struct chain c;
	long sum;
	void *lib;		/* the copy it dlopen'd */
	sframe_step_t lib_step;
	struct ledger l;
	struct walker_stats *st;
	int shown;
};

static int seconds = 30, nr_walkers = 4;
static unsigned long long period_ns = 100000, seed;
static struct wl_shared *sh;
static struct shared *out;
static char copies[NR_COPIES][64];

static unsigned long long rnd(unsigned long long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The walker code.  No call into libc or ld.so (no SFrame and no frame
 * pointers there): system calls are inline, with %rbp holding garbage, so
 * that frame pointers cannot walk past the frame that makes them.
 */

static __always_inline long sys6(long nr, long a, long b, long c, long d,
				 long e, long f)
{
	register long r10 asm("r10") = d;
	register long r8 asm("r8") = e;
	register long r9 asm("r9") = f;
	long ret;

	asm volatile("movabs $0x5a5a5a5a5a5a5a58, %%rbp\n\t"
		     "syscall"
		     : "=a"(ret)
		     : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
		       "r"(r9)
		     : "rcx", "r11", "rbp", "memory");
	return ret;
}

/* A byte in each of @pages pages, each a page fault, with %rbp garbage. */
static __always_inline void touch(long addr, long pages)
{
	asm volatile("movabs $0x5a5a5a5a5a5a5a58, %%rbp\n"
		     "1:\tmovb $1, (%0)\n\t"
		     "add $4096, %0\n\t"
		     "dec %1\n\t"
		     "jnz 1b"
		     : "+r"(addr), "+r"(pages)
		     :
		     : "rbp", "memory", "cc");
}

/* User time with %rbp garbage, for cpu-clock to interrupt. */
static __always_inline void spin(long n)
{
	asm volatile("movabs $0x5a5a5a5a5a5a5a58, %%rbp\n"
		     "1:\tdec %0\n\t"
		     "jg 1b"
		     : "+r"(n)
		     :
		     : "rbp", "cc");
}

/* Every 8th byte, through a barrier: gcc would call memset() instead. */
static __always_inline void scribble(char *p, long len, int v)
{
	long i;

	for (i = 0; i < len; i += 8) {
		p[i] = v;
		asm volatile("" : : "r"(p + i) : "memory");
	}
}

static __always_inline long descend(struct chain *c, int level);

WALKER long sfw_leaf(struct chain *c)
{
	long len = c->pages * PAGE, p, q;

	c->leaf_ra = RA();
	spin(c->spin);
	if (!len)
		return sys6(__NR_getppid, 0, 0, 0, 0, 0, 0);
	p = sys6(__NR_mmap, 0, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p < 0)
		return p;
	touch(p, c->pages);
	q = sys6(__NR_mremap, p, len, 2 * len, MREMAP_MAYMOVE, 0, 0);
	if (q < 0) {
		sys6(__NR_munmap, p, len, 0, 0, 0, 0);
		return q;
	}
	touch(q + len, c->pages);
	return sys6(__NR_munmap, q, 2 * len, 0, 0, 0, 0) +
	       sys6(__NR_getppid, 0, 0, 0, 0, 0, 0);
}

/* No locals: the CFA is %rsp plus 8 or 16.  The libraries call it. */
WALKER long sfw_step_small(void *chain, int level)
{
	struct chain *c = chain;

	c->ras[level] = RA();
	return descend(c, level + 1) + 1;
}

WALKER long sfw_step_big(struct chain *c, int level)
{
	char buf[3072];

	scribble(buf, sizeof(buf), level);
	c->ras[level] = RA();
	return descend(c, level + 1) + 2;
}

WALKER long sfw_step_alloca(struct chain *c, int level)
{
	char *p = alloca(c->size[level]);

	scribble(p, c->size[level], level);
	c->ras[level] = RA();
	return descend(c, level + 1) + 3;
}

WALKER long sfw_step_drap(struct chain *c, int level)
{
	alignas(64) char a[64];
	char v[c->size[level]];

	scribble(a, sizeof(a), level);
	scribble(v, sizeof(v), level);
	c->ras[level] = RA();
	return descend(c, level + 1) + 4;
}

/* Inlined into each step: a call to it would be a frame of its own. */
static __always_inline long descend(struct chain *c, int level)
{
	if (level >= c->depth)
		return sfw_leaf(c);
	switch (c->kind[level]) {
	case K_BIG:
		return sfw_step_big(c, level);
	case K_ALLOCA:
		return sfw_step_alloca(c, level);
	case K_DRAP:
		return sfw_step_drap(c, level);
	case K_LIB_A:
		return c->lib_a(c, level, sfw_step_small, c->ras);
	case K_LIB_B:
		return c->lib_b(c, level, sfw_step_small, c->ras);
	default:
		return sfw_step_small(c, level);
	}
}

/* The walker code ends here; what follows runs with its events disabled. */

static void fail(struct walker *w, const char *fmt, const char *what)
{
	w->st->failed = true;
	if (!w->st->why[0])
		snprintf(w->st->why, sizeof(w->st->why), fmt, what);
}

/* Is @ip inside the walker function or library step @name? */
static bool ip_in(unsigned long ip, const char * const *names, int n)
{
	const struct elf64_sym *sym = NULL;
	Dl_info info;
	int i;

	if (!dladdr1((void *)ip, &info, (void **)&sym, RTLD_DL_SYMENT) ||
	    !info.dli_sname || !sym ||
	    ip - (unsigned long)info.dli_saddr >= sym->st_size)
		return false;
	for (i = 0; i < n; i++) {
		if (!strcmp(info.dli_sname, names[i]))
			return true;
	}
	return false;
}

static bool in_walker_code(unsigned long ip)
{
	static const char * const names[] = {
		"walker_main", "sfw_step_small", "sfw_step_big",
		"sfw_step_alloca", "sfw_step_drap", "sfw_leaf",
		"sframe_lib_a_step", "sframe_lib_b_step",
	};

	return ip_in(ip, names, ARRAY_SIZE(names));
}

static bool in_drap(unsigned long ip)
{
	static const char * const names[] = { "sfw_step_drap" };

	return ip_in(ip, names, ARRAY_SIZE(names));
}

/*
 * The frames a record may have after its first, innermost first: the
 * leaf's return address, each level's, the thread function's.
 */
static int chain_frames(const struct walker *w, unsigned long *want)
{
	const struct chain *c = &w->c;
	int i, n = 0;

	want[n++] = c->leaf_ra;
	for (i = c->depth - 1; i >= 0; i--)
		want[n++] = c->ras[i];
	want[n++] = w->root_ra;
	return n;
}

/* "ip" and, where dladdr() knows it, "(symbol+offset)" at @p. */
static int frame_name(char *p, size_t len, unsigned long ip)
{
	Dl_info info;

	if (dladdr((void *)ip, &info) && info.dli_sname)
		return snprintf(p, len, " %lx(%s+%#lx)", ip, info.dli_sname,
				ip - (unsigned long)info.dli_saddr);
	return snprintf(p, len, " %lx", ip);
}

/*
 * Keep the walker's first wrong record, named frame by frame, with the
 * frames the thread had: the controller prints it again next to the
 * verdict, where a log's tail still shows it.
 */
static void keep_first_wrong(struct walker *w, const char *why,
			     const unsigned long *ips, unsigned long nr,
			     const unsigned long *want, int n)
{
	char *p = w->st->first_wrong;
	size_t left = sizeof(w->st->first_wrong);
	int i, k;

#define PUT(...)						\
	do {							\
		k = snprintf(p, left, __VA_ARGS__);		\
		if (k < 0 || (size_t)k >= left)			\
			return;					\
		p += k;						\
		left -= k;					\
	} while (0)

	if (*p)
		return;
	PUT("# first wrong record of %s, chain %llu (depth %d): %s\n# record:",
	    w->name, w->st->chains, w->c.depth, why);
	for (i = 0; i < (int)nr && i < MAX_DEPTH + 8; i++) {
		k = frame_name(p, left, ips[i]);
		if (k < 0 || (size_t)k >= left)
			return;
		p += k;
		left -= k;
	}
	PUT("\n# thread's frames after the first:");
	for (i = 0; i < n; i++)
		PUT(" %lx", want[i]);
	PUT("\n");
#undef PUT
}

static void chain_wrong(struct walker *w, const char *why,
			const unsigned long *ips, unsigned long nr)
{
	unsigned long want[MAX_DEPTH + 2];
	int i, n = chain_frames(w, want);

	w->st->wrong++;
	fail(w, "a record has a wrong chain: %s", why);
	keep_first_wrong(w, why, ips, nr, want, n);
	if (w->shown++ >= SHOW_MAX)
		return;
	flockfile(stdout);	/* other walkers print too */
	printf("# %s, chain %llu (depth %d): %s\n# the record:",
	       w->name, w->st->chains, w->c.depth, why);
	for (i = 0; i < (int)nr && i < MAX_DEPTH + 8; i++)
		printf(" %lx", ips[i]);
	printf("\n# the thread's frames after the first:");
	for (i = 0; i < n; i++)
		printf(" %lx", want[i]);
	printf("\n");
	funlockfile(stdout);
}

/*
 * What is wrong with one record of the walker's ring, or NULL; see the top
 * of the file.
 */
static const char *record_wrong(struct walker *w, unsigned int tid,
				const unsigned long *ips, unsigned long nr)
{
	unsigned long want[MAX_DEPTH + 2];
	unsigned long e, i;
	int n = chain_frames(w, want);

	if (tid != (unsigned int)w->tid)
		return "a record of another thread";
	if (!nr || !in_walker_code(ips[0]))
		return "its first frame is not in the walker's code";
	for (e = 1; e < nr && ips[e] != w->root_ra; e++)
		;
	if (e == nr) {
		if (nr == 1 && in_drap(ips[0])) {
			w->st->drap_ends++;
			return NULL;
		}
		return "it ends before the thread function";
	}
	if (e > (unsigned long)n)
		return "more frames than the thread had";
	for (i = 1; i <= e; i++) {
		if (ips[i] != want[n - e + i - 1])
			return "a frame is not the thread's";
	}
	w->st->complete++;
	w->st->frames += e;
	return NULL;
}

static void walker_record(struct ledger *l, unsigned int tid,
			  const unsigned long *ips, unsigned long nr)
{
	struct walker *w = l->priv;
	const char *why = record_wrong(w, tid, ips, nr);

	w->st->records++;
	if (why)
		chain_wrong(w, why, ips, nr);
}

/* Replace the thread's library with a copy picked at random. */
static int lib_steps_open(struct walker *w)
{
	const char *path = copies[rnd(&w->rng) % NR_COPIES];

	if (w->lib)
		dlclose(w->lib);
	w->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	w->lib_step = w->lib ? dlsym(w->lib, "sframe_lib_b_step") : NULL;
	if (!w->lib_step) {
		fail(w, "dlopen: %s", dlerror());
		return -1;
	}
	w->st->swaps++;
	return 0;
}

/* The shape of the next chain, and the library it goes through. */
static int walker_plan(struct walker *w)
{
	struct chain *c = &w->c;
	int i, k;

	if ((w->churn || !(w->st->chains % SWAP_CHAINS)) && lib_steps_open(w))
		return -1;
	c->depth = 1 + rnd(&w->rng) % MAX_DEPTH;
	c->lib_a = rnd(&w->rng) & 1 ? sframe_lib_a_step : NULL;
	c->lib_b = w->churn || rnd(&w->rng) & 1 ? w->lib_step : NULL;
	for (i = 0; i < c->depth; i++) {
		k = rnd(&w->rng) % NR_KINDS;
		/* A library step calls sfw_step_small() for the next level. */
		if (i && c->kind[i - 1] >= K_LIB_A)
			k = K_SMALL;
		if (k >= K_LIB_A &&
		    (i == c->depth - 1 || !(k == K_LIB_A ? c->lib_a : c->lib_b)))
			k = K_BIG;
		c->kind[i] = k;
		c->size[i] = 16 + rnd(&w->rng) % 2048;
	}
	/* The mapping calls cost a millisecond: a quarter of the chains. */
	c->pages = rnd(&w->rng) % 4 ? 0 : 1 + rnd(&w->rng) % 4;
	c->spin = rnd(&w->rng) % 20000;
	memset(c->ras, 0, sizeof(c->ras));
	c->leaf_ra = 0;
	w->st->lib_chains += !!c->lib_b;
	return 0;
}

static int walker_setup(struct walker *w)
{
	static const unsigned long long more[] = {
		PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES,
	};
	int fd, err, i;

	w->tid = gettid();
	snprintf(w->name, sizeof(w->name), "walker %d%s", w->id,
		 w->churn ? " (a library each chain)" : "");
	ledger_init(&w->l, w->name);
	w->l.on_record = walker_record;
	w->l.priv = w;
	/* This thread only (pid 0, no CPU), off until the chain runs. */
	fd = event_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, period_ns,
			EV_DISABLED | EV_DEFER_CALLCHAIN | EV_DEFER_OUTPUT |
			EV_EXCLUDE_KERNEL, 0, -1, -1);
	if (fd < 0) {
		fail(w, "perf_event_open: %s", strerror(-fd));
		return -1;
	}
	err = ledger_add_ring(&w->l, fd, -1, RING_PAGES);
	for (i = 0; !err && i < 2; i++) {
		fd = event_open(PERF_TYPE_SOFTWARE, more[i], 1,
				EV_DISABLED | EV_DEFER_CALLCHAIN, 0, -1, -1);
		err = fd < 0 ? fd : ledger_redirect(&w->l, fd, w->l.rings[0].fd);
	}
	if (err) {
		fail(w, "opening its events: %s", strerror(-err));
		return -1;
	}
	return 0;
}

static void walker_finish(struct walker *w)
{
	struct walker_stats *st = w->st;
	const char *why;
	char buf[256];

	ledger_drain(&w->l);
	ledger_close(&w->l);
	why = ledger_check(&w->l, false, buf, sizeof(buf));
	if (why)
		fail(w, "%s", why);
	ledger_print(&w->l);
	st->samples = w->l.samples;
	st->deferred = w->l.deferred;
	st->classic = w->l.classic_user;
	st->kernel_only = w->l.no_user;
	st->lost = w->l.lost;
	st->throttles = w->l.throttles;
	st->unmatched = w->l.unmatched;
	ledger_free(&w->l);
	if (w->lib)
		dlclose(w->lib);
}

/*
 * The thread function, walker code itself: its return address into libc
 * is the last frame checked.  Its events are on only around the chain.
 */
WALKER void *walker_main(void *arg)
{
	struct walker *w = arg;

	w->root_ra = RA();
	if (!walker_setup(w)) {
		while (!sh->stop && !walker_plan(w)) {
			sys6(__NR_prctl, PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0, 0);
			w->sum += descend(&w->c, 0);
			sys6(__NR_prctl, PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0, 0);
			w->st->chains++;
			ledger_drain(&w->l);
		}
	}
	walker_finish(w);
	return NULL;
}

/* The mapping churn: anonymous memory and copies of the libraries. */

static void vma_anon(struct vma_stats *v, unsigned long long r)
{
	size_t len = (1 + r % 16) * PAGE;
	char *p, *q;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	v->mmaps++;
	p[0] = 1;
	q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
	if (q != MAP_FAILED) {
		v->mremaps++;
		v->moved += q != p;
		q[len] = 1;
		p = q;
		len *= 2;
	}
	munmap(p, len);
	v->munmaps++;
}

/* A library mapped executable, moved into a hole, unmapped with it. */
static void vma_file(struct vma_stats *v, unsigned long long r)
{
	int fd = open(copies[r % NR_COPIES], O_RDONLY | O_CLOEXEC);
	char *p, *hole, *q = MAP_FAILED;
	struct stat st;
	size_t len;

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	len = (st.st_size + PAGE - 1) & ~(size_t)(PAGE - 1);
	p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return;
	v->mmaps++;
	hole = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (hole != MAP_FAILED) {
		q = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   hole + ((r >> 8) % 2) * PAGE);
		munmap(hole, 2 * len);
		v->munmaps++;
	}
	if (q != MAP_FAILED) {
		v->mremaps++;
		v->moved++;
		return;
	}
	munmap(p, len);
	v->munmaps++;
}

static void *vma_main(void *arg)
{
	unsigned long long r = seed ^ 0x9e3779b97f4a7c15ULL;

	(void)arg;
	while (!sh->stop) {
		if (rnd(&r) % 4)
			vma_anon(&out->vma, r >> 16);
		else
			vma_file(&out->vma, r >> 16);
		/* A pause: the walkers share two CPUs with it. */
		wl_usleep(500);
	}
	return NULL;
}

/* The workload's main thread: start the threads, wait for the stop. */
static void workload(struct wl_shared *wsh)
{
	struct walker *w = calloc(nr_walkers, sizeof(*w));
	pthread_t t[MAX_WALKERS], vma;
	int i, n;

	if (!w)
		_exit(2);
	for (n = 0; n < nr_walkers; n++) {
		w[n].id = n;
		w[n].churn = n % 2;
		w[n].rng = (seed + n + 1) * 0x2545f4914f6cdd1dULL | 1;
		w[n].st = &out->w[n];
		if (pthread_create(&t[n], NULL, walker_main, &w[n]))
			break;
	}
	if (pthread_create(&vma, NULL, vma_main, NULL))
		_exit(2);
	while (!wsh->stop)
		wl_usleep(20000);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_join(vma, NULL);
	if (n < nr_walkers)
		_exit(3);
}

/* The controller. */

enum {
	SF_FRAMES, SF_FP_FRAMES, SF_PROBED, SF_SECTIONS, SF_REFUSED,
	SF_BAD_SECTIONS, SF_HITS, SF_EVICTIONS, SF_MISSES, SF_BAD_ROWS,
	SF_UNSUPPORTED, SF_STOP_FAULT, SF_STOP_BAD_FRAME, SF_TRUNCATED,
	SF_STOP_BUDGET, SF_STOP_BUDGET_NOFAULT, SF_STOP_NO_ROW,
	SF_STOP_BX_LOST, SF_STOP_SCRATCH, NR_SF
};

static const char * const sf_names[NR_SF] = {
	"sframe_frames", "sframe_fp_frames", "sframe_files_probed",
	"sframe_sections", "sframe_refused_version", "sframe_bad_sections",
	"sframe_cache_hits", "sframe_cache_evictions", "sframe_lookup_misses",
	"sframe_bad_rows", "sframe_unsupported_rows", "stop_fault",
	"stop_bad_frame", "truncated", "stop_budget", "stop_budget_nofault",
	"stop_no_row", "stop_base_register_lost", "stop_scratch_register",
};

static void bail(const char *what, const char *why)
{
	printf("Bail out! %s: %s\n", what, why);
	exit(2);
}

/* NR_COPIES copies of libsframe_b.so and libsframe_fp.so in @dir. */
static void make_copies(const char *dir)
{
	char exe[4096], from[4200], buf[65536];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *here;
	int i, in, to;

	if (len < 0)
		bail("readlink /proc/self/exe", strerror(errno));
	exe[len] = '\0';
	here = dirname(exe);
	for (i = 0; i < NR_COPIES; i++) {
		snprintf(from, sizeof(from), "%s/%s", here,
			 i % 2 ? "libsframe_fp.so" : "libsframe_b.so");
		snprintf(copies[i], sizeof(copies[i]), "%s/lib%d.so", dir, i);
		in = open(from, O_RDONLY | O_CLOEXEC);
		to = open(copies[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			  0755);
		if (in < 0 || to < 0)
			bail(in < 0 ? from : copies[i], strerror(errno));
		while ((len = read(in, buf, sizeof(buf))) > 0) {
			if (write(to, buf, len) != len)
				bail(copies[i], "short write");
		}
		close(in);
		close(to);
	}
}

static void remove_copies(const char *dir)
{
	int i;

	for (i = 0; i < NR_COPIES; i++)
		unlink(copies[i]);
	rmdir(dir);
}

struct totals {
	unsigned long long chains, lib_chains, swaps, samples, deferred;
	unsigned long long classic, kernel_only, lost, throttles, unmatched;
	unsigned long long records, complete, frames, drap_ends, wrong;
};

static void add_up(struct totals *t, const char **why)
{
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < nr_walkers; i++) {
		const struct walker_stats *s = &out->w[i];

		t->chains += s->chains;
		t->lib_chains += s->lib_chains;
		t->swaps += s->swaps;
		t->samples += s->samples;
		t->deferred += s->deferred;
		t->classic += s->classic;
		t->kernel_only += s->kernel_only;
		t->lost += s->lost;
		t->throttles += s->throttles;
		t->unmatched += s->unmatched;
		t->records += s->records;
		t->complete += s->complete;
		t->frames += s->frames;
		t->drap_ends += s->drap_ends;
		t->wrong += s->wrong;
		if (s->failed && !*why)
			*why = s->why;
	}
}

static void bad_usage(void)
{
	fprintf(stderr, "%s",
		"usage: sframe_stress [-t SECONDS] [-s SEED] [-T WALKERS] [-p PERIOD_NS]\n");
	exit(2);
}

/*
 * Has every walker had a record checked? On a loaded machine a walker may
 * get no chain done in a short run: the run then goes on, up to four times
 * its length, rather than fail for want of samples.
 */
static bool all_walked(void)
{
	int i;

	for (i = 0; i < nr_walkers; i++) {
		if (!__atomic_load_n(&out->w[i].records, __ATOMIC_RELAXED))
			return false;
	}
	return true;
}

/* The ledger of the run: what the walkers, the churner and the kernel did. */
static void report(const struct totals *t, const unsigned long long *sf)
{
	printf("# %llu chains (%llu through a dlopen'd copy); ",
	       t->chains, t->lib_chains);
	printf("%llu copies dlopen'd, each dlclosed\n", t->swaps);
	printf("# samples: %llu (%llu deferred, %llu classic, %llu kernel only); ",
	       t->samples, t->deferred, t->classic, t->kernel_only);
	printf("%llu records lost, %llu throttle\n", t->lost, t->throttles);
	printf("# records: %llu, every one checked: ", t->records);
	printf("%llu complete up to the thread function (%llu frames), ",
	       t->complete, t->frames);
	printf("%llu ended in a realigned prologue or epilogue, %llu wrong\n",
	       t->drap_ends, t->wrong);
	printf("# mappings: %llu mmaps, %llu mremaps (%llu moved), %llu munmaps\n",
	       out->vma.mmaps, out->vma.mremaps, out->vma.moved,
	       out->vma.munmaps);
	printf("# SFrame walker: %llu frames by SFrame, %llu by frame pointers; ",
	       sf[SF_FRAMES], sf[SF_FP_FRAMES]);
	printf("%llu files probed (%llu sections); cache hits %llu, evictions %llu; ",
	       sf[SF_PROBED], sf[SF_SECTIONS], sf[SF_HITS], sf[SF_EVICTIONS]);
	printf("lookup misses %llu, unsupported rows %llu, ",
	       sf[SF_MISSES], sf[SF_UNSUPPORTED]);
	printf("bad rows %llu, bad sections %llu, refused %llu\n",
	       sf[SF_BAD_ROWS], sf[SF_BAD_SECTIONS], sf[SF_REFUSED]);
	printf("# walks stopped: %llu at a fault, %llu at a bad frame, %llu truncated, ",
	       sf[SF_STOP_FAULT], sf[SF_STOP_BAD_FRAME], sf[SF_TRUNCATED]);
	printf("%llu by the budget (%llu no-fault), %llu with no row, ",
	       sf[SF_STOP_BUDGET], sf[SF_STOP_BUDGET_NOFAULT],
	       sf[SF_STOP_NO_ROW]);
	printf("%llu base register lost, %llu in a scratch register\n",
	       sf[SF_STOP_BX_LOST], sf[SF_STOP_SCRATCH]);
}

/* What the kernel's SFrame counters must say of the checked chains. */
static const char *sframe_books(const struct totals *t,
				const unsigned long long *sf)
{
	if (!t->complete)
		return "no complete chain was checked";
	if (sf[SF_FRAMES] < t->frames)
		return "the kernel counted fewer SFrame frames than the chains have";
	if (sf[SF_UNSUPPORTED] < t->drap_ends)
		return "more walks ended in a realigned frame than unsupported rows";
	if (sf[SF_BAD_ROWS] || sf[SF_BAD_SECTIONS] || sf[SF_REFUSED])
		return "the kernel found bad rows or sections in well-formed tables";
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long long sf0[NR_SF], sf1[NR_SF], sf[NR_SF];
	struct wl_options o = {
		.seconds = seconds, .threads = nr_walkers, .period_ns = period_ns,
	};
	struct counters before, after;
	char dir[] = "/tmp/sframe_stress.XXXXXX", buf[256];
	const char *why = NULL, *books;
	struct totals t;
	double t0, end;
	int status, i;
	pid_t pid;

	if (wl_options(argc, argv, &o) != argc)
		bad_usage();
	seconds = o.seconds;
	nr_walkers = o.threads;
	seed = o.seed;
	period_ns = o.period_ns;
	if (seconds < 1 || nr_walkers < 2 ||
	    nr_walkers > MAX_WALKERS || period_ns < 10000)
		bad_usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	printf("1..1\n");
	if (counters_read(&before))
		bail(COUNTERS, "needs root, debugfs and CONFIG_UNWIND_DEFERRED");
	if (counters_read_names(sf_names, NR_SF, sf0) != NR_SF) {
		printf("ok 1 # SKIP the kernel has no SFrame unwinder (no sframe_* counters)\n");
		return 0;
	}
	if (!mkdtemp(dir))
		bail("mkdtemp", strerror(errno));
	make_copies(dir);
	printf("# seed %llu, %d s, %d walkers (%d with a library each chain), ",
	       seed, seconds, nr_walkers, nr_walkers / 2);
	printf("a mapping churner, cpu-clock every %llu ns\n", period_ns);

	out = wl_shared_alloc(sizeof(*out));
	sh = wl_shared_new();
	t0 = now();
	pid = wl_spawn(sh, 0, WL_BUSY, 8, NULL, workload);
	wl_start(sh);
	end = t0 + seconds;
	while (now() < end || (!all_walked() && now() < t0 + 4 * seconds))
		wl_usleep(20000);
	status = wl_stop(sh, pid);
	remove_copies(dir);

	add_up(&t, &why);
	if (!why && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		snprintf(buf, sizeof(buf), "the workload did not exit cleanly: status 0x%x",
			 status);
		why = buf;
	}
	counters_read_names(sf_names, NR_SF, sf1);
	for (i = 0; i < NR_SF; i++)
		sf[i] = sf1[i] - sf0[i];
	report(&t, sf);
	books = counters_check(&before, &after, buf + 128, sizeof(buf) - 128);
	why = why ?: books ?: sframe_books(&t, sf);
	if (why) {
		for (i = 0; i < nr_walkers; i++)
			fputs(out->w[i].first_wrong, stdout);
		printf("# replay: sframe_stress -s %llu -t %d -T %d -p %llu\n",
		       seed, seconds, nr_walkers, period_ns);
		printf("not ok 1 sframe: %s\n", why);
		return 1;
	}
	printf("ok 1 sframe: %llu deferred chains without frame pointers right frame by frame, ",
	       t.records);
	printf("under library and mapping churn (%.0f s)\n", now() - t0);
	return 0;
}
