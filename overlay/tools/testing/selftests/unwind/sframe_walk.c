// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user stack walks through code built without frame pointers,
 * found by the SFrame tables the program was assembled with
 * (-O2 -fomit-frame-pointer -Wa,--gsframe), with no help from libc: the
 * call chain of table_chain.h, across a library the program needs and one
 * it dlopens, and through libraries whose SFrame sections the tests
 * damaged, one kind of damage each.
 */
#define _GNU_SOURCE
#include "elf_file.h"
#include "table_chain.h"
#include "wide_table.h"

FIXTURE(sframe) {
	int fd;
	struct results *res;
	struct chain *c;
};

FIXTURE_VARIANT(sframe) {
	const char *ctx;
	int depth;
};

FIXTURE_VARIANT_ADD(sframe, task_depth_3) { "task", 3 };
FIXTURE_VARIANT_ADD(sframe, task_depth_16) { "task", 16 };
FIXTURE_VARIANT_ADD(sframe, task_depth_40) { "task", 40 };
FIXTURE_VARIANT_ADD(sframe, irq_depth_16) { "irq", 16 };
FIXTURE_VARIANT_ADD(sframe, nmi_depth_40) { "nmi", 40 };

FIXTURE_SETUP(sframe)
{
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
	if (counter("sframe_frames") < 0)
		SKIP(return, "the kernel has no SFrame unwinder (CONFIG_UNWIND_USER_SFRAME)");
}

FIXTURE_TEARDOWN(sframe)
{
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

/* The test's child @pid exited with 0: every check in it passed. */
static void child_passed(struct __test_metadata *_metadata, pid_t pid)
{
	int status;

	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("the child failed at its check %d", WEXITSTATUS(status));
	}
}

/* Every frame of the chain comes from the program's SFrame table. */
TEST_F(sframe, chain_without_frame_pointers)
{
	long long before = counter("sframe_frames");
	const struct cb *b;

	b = walk_once(_metadata, self->fd, self->res, self->c, variant->ctx,
		      variant->depth);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
	EXPECT_LE(before + variant->depth + 1, counter("sframe_frames")) {
		TH_LOG("sframe_frames grew by %lld for a chain of %d frames",
		       counter("sframe_frames") - before, variant->depth + 2);
	}
}

/*
 * A forked child has its own mm: it finds the program's table again
 * (once), then its next walks use what it found.
 */
TEST_F(sframe, child_finds_its_own_tables_once)
{
	pid_t pid;

	/* The parent's mm knows the program's file by now. */
	ASSERT_NE(NULL, walk_once(_metadata, self->fd, self->res, self->c,
				  variant->ctx, variant->depth));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		long long probed = counter("sframe_files_probed");
		long long found = counter("sframe_sections");
		long long hits;
		const struct cb *b;

		b = walk_once(_metadata, self->fd, self->res, self->c,
			      variant->ctx, variant->depth);
		if (!b)
			_exit(1);
		check_stack(_metadata, self->c, b);
		if (counter("sframe_sections") <= found) {
			TH_LOG("the child's first walk found no section");
			_exit(2);
		}
		probed = counter("sframe_files_probed");
		hits = counter("sframe_cache_hits");
		b = walk_once(_metadata, self->fd, self->res, self->c,
			      variant->ctx, variant->depth);
		if (!b)
			_exit(3);
		check_stack(_metadata, self->c, b);
		if (counter("sframe_files_probed") != probed) {
			TH_LOG("the second walk read files again (%lld more)",
			       counter("sframe_files_probed") - probed);
			_exit(4);
		}
		if (counter("sframe_cache_hits") <= hits) {
			TH_LOG("the second walk did not use the cache");
			_exit(5);
		}
		_exit(_metadata->exit_code ? 6 : 0);
	}
	child_passed(_metadata, pid);
}

/*
 * Threads that map and probe libraries write the mm's table of them
 * often. A walk that may fault waits for such a writer (another CPU
 * holds the table briefly, again and again) and gives the whole chain,
 * not one that ends where the writer was: a fresh child's first walk
 * meets the writer when it reads the program's tables.
 */
TEST_F(sframe, walk_waits_for_a_busy_table)
{
	pid_t pid;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "the table's writer needs a second CPU");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		long long faults = counter("stop_fault");
		const struct cb *b;
		int ret = ctl(self->fd, "busy-table 200");

		if (ret) {
			TH_LOG("busy-table: %s", strerror(-ret));
			_exit(1);
		}
		b = walk_once(_metadata, self->fd, self->res, self->c,
			      variant->ctx, variant->depth);
		if (!b)
			_exit(2);
		check_stack(_metadata, self->c, b);
		if (counter("stop_fault") != faults) {
			TH_LOG("a walk that may fault stopped at a fault");
			_exit(3);
		}
		_exit(_metadata->exit_code ? 4 : 0);
	}
	child_passed(_metadata, pid);
}

FIXTURE(libs) {
	int fd;
	struct results *res;
	struct chain *c;
	void *lib;
};

FIXTURE_SETUP(libs)
{
	char path[4200];

	self->lib = NULL;
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
	if (counter("sframe_frames") < 0)
		SKIP(return, "the kernel has no SFrame unwinder (CONFIG_UNWIND_USER_SFRAME)");
	lib_path(path, sizeof(path), "libsframe_b.so");
	self->lib = open_step(path, &self->c->lib_b);
	ASSERT_NE(NULL, self->c->lib_b) TH_LOG("dlopen %s: %s", path, dlerror());
	self->c->lib_a = sframe_lib_a_step;
}

FIXTURE_TEARDOWN(libs)
{
	if (self->lib)
		dlclose(self->lib);
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

/* The chain crosses the DT_NEEDED library twice and the dlopen'd one. */
TEST_F(libs, chain_crosses_needed_and_dlopened_libraries)
{
	const struct cb *b;

	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      LIB_DEPTH);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
}

/*
 * dlclose(), then another library (built with frame pointers, its own
 * table) where the first one was: its table is used, never the old one.
 */
TEST_F(libs, dlclose_then_another_library_at_the_same_place)
{
	unsigned long old_step, new_step;
	const struct cb *b;
	char path[4200];

	ASSERT_NE(NULL, walk_once(_metadata, self->fd, self->res, self->c,
				  "task", LIB_DEPTH));
	old_step = (unsigned long)self->c->lib_b;
	dlclose(self->lib);
	lib_path(path, sizeof(path), "libsframe_fp.so");
	self->lib = open_step(path, &self->c->lib_b);
	ASSERT_NE(NULL, self->c->lib_b) TH_LOG("dlopen %s: %s", path, dlerror());
	new_step = (unsigned long)self->c->lib_b;
	TH_LOG("the step function moved by %ld bytes",
	       (long)(new_step - old_step));

	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      LIB_DEPTH);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
}

#define NR_COPIES	100	/* more mappings than a process remembers */

/*
 * More libraries than the per-mm table holds: every one is found, the
 * oldest are evicted, and one walked again is found again, right.
 */
TEST_F(libs, more_libraries_than_the_cache_holds)
{
	static char paths[NR_COPIES][64];
	void *h[NR_COPIES] = { };
	long long ev = counter("sframe_cache_evictions");
	long long slots = counter("sframe_mm_entries");
	char from[4200];
	const struct cb *b;
	int i;

	ASSERT_LT(slots, NR_COPIES) TH_LOG("a process remembers %lld mappings", slots);

	lib_path(from, sizeof(from), "libsframe_fp.so");
	for (i = 0; i < NR_COPIES; i++) {
		ASSERT_TRUE(copy_lib(from, paths[i], sizeof(paths[i])));
		h[i] = open_step(paths[i], &self->c->lib_b);
		ASSERT_NE(NULL, h[i]) TH_LOG("dlopen %s: %s", paths[i], dlerror());
		b = walk_once(_metadata, self->fd, self->res, self->c, "task",
			      LIB_DEPTH);
		ASSERT_NE(NULL, b);
		check_stack(_metadata, self->c, b);
	}
	EXPECT_LE(ev + NR_COPIES - slots, counter("sframe_cache_evictions")) {
		TH_LOG("%lld evictions for %d libraries",
		       counter("sframe_cache_evictions") - ev, NR_COPIES);
	}
	/* The first copy was evicted long ago. */
	self->c->lib_b = (sframe_step_t)dlsym(h[0], "sframe_lib_b_step");
	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      LIB_DEPTH);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
	for (i = 0; i < NR_COPIES; i++) {
		dlclose(h[i]);
		unlink(paths[i]);
	}
}

/* Every step of a library with an SFrame table of 1,000 functions. */
TEST_F(libs, every_function_of_a_wide_table_is_found)
{
	wide_every_step(_metadata, self->fd, self->res, self->c,
			"libsframe_wide.so");
}

/* More copies of it than the mm's table holds, each walked by its own. */
TEST_F(libs, wide_tables_beyond_the_cache_are_each_their_own)
{
	wide_copies(_metadata, self->fd, self->res, self->c,
		    "libsframe_wide.so");
}

/* Threads that map and unmap libraries until told to stop. */
static atomic_int churn_stop;

static void *churn(void *arg)
{
	const char *path = arg;
	sframe_step_t step;
	void *h;

	while (!churn_stop) {
		h = open_step(path, &step);
		if (h)
			dlclose(h);
	}
	return NULL;
}

/*
 * Walks through the dlopen'd library stay right while other threads of
 * the process map and unmap libraries (the per-mm table and its users
 * race).
 */
TEST_F(libs, walks_while_threads_map_and_unmap_libraries)
{
	char paths[4][64], from[4200];
	pthread_t t[4];
	const struct cb *b;
	int i;

	lib_path(from, sizeof(from), "libsframe_fp.so");
	churn_stop = 0;
	for (i = 0; i < 4; i++) {
		ASSERT_TRUE(copy_lib(from, paths[i], sizeof(paths[i])));
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn, paths[i]));
	}
	for (i = 0; i < 30; i++) {
		b = walk_once(_metadata, self->fd, self->res, self->c, "task",
			      LIB_DEPTH);
		if (!b || _metadata->exit_code)
			break;
		check_stack(_metadata, self->c, b);
	}
	churn_stop = 1;
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		unlink(paths[i]);
	}
	EXPECT_NE(NULL, b);
}

#define MEET_THREADS	8
#define MEET_ROUNDS	20

/* One thread of threads_meet_the_libraries_at_once(). */
struct meeter {
	struct chain c;
	int fd, tid;
	pthread_barrier_t *go;
};

static void *meet(void *arg)
{
	struct meeter *m = arg;

	m->tid = gettid();
	pthread_barrier_wait(m->go);
	chain_write(&m->c, m->fd, "request task 0x1", LIB_DEPTH);
	return NULL;
}

/*
 * One round: MEET_THREADS threads of a fresh child walk at the same time,
 * each the first of the child's walks to meet the program and the two
 * libraries, each of which it reads slowly, so that the walks read each
 * file at the same time and add it to the mm's table one after the
 * other; every chain must be whole. Return: the child's exit code.
 */
static int meet_round(struct __test_metadata *_metadata, int fd,
		      struct results *res, const struct chain *proto)
{
	static struct meeter m[MEET_THREADS];
	pthread_t t[MEET_THREADS];
	pthread_barrier_t go;
	int i, k, ret, found = 0;

	/*
	 * Files read slowly, as from a slow disk: the reads overlap. The
	 * last round's slowing (of its own child) may not be over yet.
	 */
	for (i = 0; i < 100; i++) {
		ret = ctl(fd, "clear") ?: ctl(fd, "slow-probes 3000 300");
		if (ret != -EBUSY)
			break;
		usleep(20000);
	}
	if (ret) {
		TH_LOG("slow-probes: %s", strerror(-ret));
		return 1;
	}
	pthread_barrier_init(&go, NULL, MEET_THREADS);
	for (i = 0; i < MEET_THREADS; i++) {
		m[i] = (struct meeter){ .fd = fd, .go = &go };
		m[i].c.lib_a = proto->lib_a;
		m[i].c.lib_b = proto->lib_b;
		if (pthread_create(&t[i], NULL, meet, &m[i]))
			return 1;
	}
	for (i = 0; i < MEET_THREADS; i++)
		pthread_join(t[i], NULL);
	if (read_results(fd, res) || res->ncb != MEET_THREADS) {
		TH_LOG("expected %d callbacks, got %d", MEET_THREADS, res->ncb);
		return 2;
	}
	for (i = 0; i < MEET_THREADS; i++) {
		for (k = 0; k < res->ncb; k++) {
			if (res->cb[k].pid != m[i].tid)
				continue;
			check_stack(_metadata, &m[i].c, &res->cb[k]);
			found++;
		}
	}
	if (found != MEET_THREADS) {
		TH_LOG("%d of %d threads got their callback", found,
		       MEET_THREADS);
		return 3;
	}
	return _metadata->exit_code ? 4 : 0;
}

/*
 * Threads of a process that meet a file at the same time each read its
 * tables, and each adds what it found to the mm's table: the walks that
 * hold the entry already keep using it, so none ends short. Each round
 * is a fresh child, which has met no file yet.
 */
TEST_F(libs, threads_meet_the_libraries_at_once)
{
	int round;
	pid_t pid;

	for (round = 0; round < MEET_ROUNDS && !_metadata->exit_code; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(meet_round(_metadata, self->fd, self->res,
					 self->c));
		child_passed(_metadata, pid);
	}
}

/* SFrame v3, as the hostile tests take it apart. */
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

struct sf_header {
	uint16_t magic;
	uint8_t version, flags, abi;
	int8_t fixed_fp, fixed_ra;
	uint8_t auxlen;
	uint32_t nfdes, nfres, frelen, fdeoff, freoff;
};	/* 28 bytes, no padding */

struct sf_fde {
	int64_t start;
	uint32_t size, freoff;
};	/* 16 bytes */

static_assert(sizeof(struct sf_header) == 28, "SFrame header layout");
static_assert(sizeof(struct sf_fde) == 16, "SFrame index entry layout");

/* 5 bytes in the section; the struct has a byte of padding after them. */
#define SF_ATTR_SIZE	5
struct sf_attr {
	uint16_t nfres;
	uint8_t info, info2, rep;
};

/* A library file in memory, and where its section's parts are. */
struct sf_lib {
	unsigned char *data;
	size_t len;
	struct sf_header *h;
	struct sf_fde *fdes;
	unsigned char *fres;
	uint64_t sec_vaddr, fdes_vaddr;
	int step;		/* index of sframe_lib_b_step's entry */
};

static uint64_t sf_func(const struct sf_lib *l, int i)
{
	return l->fdes_vaddr + i * sizeof(struct sf_fde) + l->fdes[i].start;
}

static struct sf_attr *sf_attr(const struct sf_lib *l, int i)
{
	return (struct sf_attr *)(l->fres + l->fdes[i].freoff);
}

/* Call @fn on every FRE of entry @i: its info byte and first data word. */
static void sf_each_fre(struct sf_lib *l, int i,
			void (*fn)(uint8_t *info, unsigned char *word))
{
	struct sf_attr *a = sf_attr(l, i);
	unsigned char *p = (unsigned char *)a + SF_ATTR_SIZE;
	int k, asize = 1 << (a->info & 0xf);

	for (k = 0; k < a->nfres; k++) {
		uint8_t *info = p + asize;
		int n = (*info >> 1) & 0xf, wsize = 1 << ((*info >> 5) & 3);

		p = info + 1;
		fn(info, p);
		p += n * wsize;
	}
}

/*
 * Read @path and find sframe_lib_b_step in its function index: the biggest
 * function of sframe_lib.c, between sframe_lib_before and sframe_lib_after
 * (the rest are the .plt's entries).
 */
static bool sf_load(struct sf_lib *l, const char *path)
{
	struct elf64_phdr *ph;
	int i;

	ph = elf_file_read(path, &l->data, &l->len, PT_GNU_SFRAME);
	if (!ph)
		return false;
	l->h = (struct sf_header *)(l->data + ph->p_offset);
	l->sec_vaddr = ph->p_vaddr;
	l->fdes = (struct sf_fde *)((unsigned char *)(l->h + 1) + l->h->auxlen +
				    l->h->fdeoff);
	l->fres = (unsigned char *)(l->h + 1) + l->h->auxlen + l->h->freoff;
	l->fdes_vaddr = l->sec_vaddr + ((unsigned char *)l->fdes -
					(unsigned char *)l->h);
	l->step = 0;
	for (i = 1; i < (int)l->h->nfdes; i++)
		if (l->fdes[i].size > l->fdes[l->step].size)
			l->step = i;
	return l->step > 0 && l->step + 1 < (int)l->h->nfdes;
}

static void fre_word_size_3(uint8_t *info, unsigned char *word)
{
	*info |= 3 << 5;
}

static void fre_cfa_zero(uint8_t *info, unsigned char *word)
{
	memset(word, 0, 1 << ((*info >> 5) & 3));
}

/* Each kind of damage, done to the library's section in memory. */
static void damage_truncated(struct sf_lib *l)
{
	l->h->frelen += 4096;	/* the FRE area runs past the section */
}

static void damage_unsorted(struct sf_lib *l)
{
	struct sf_fde *f = l->fdes + l->step - 1, t = f[0];

	/* Swap the entry before the step's with it; starts stay right. */
	f[0] = f[1];
	f[0].start += sizeof(*f);
	f[1] = t;
	f[1].start -= sizeof(*f);
}

static void damage_overlapping(struct sf_lib *l)
{
	/* The function before runs into the step function. */
	l->fdes[l->step - 1].size = sf_func(l, l->step) -
				    sf_func(l, l->step - 1) + 8;
}

static void damage_fres_past_end(struct sf_lib *l)
{
	l->fdes[l->step].freoff = l->h->frelen - 2;
}

static void damage_fre_type(struct sf_lib *l)
{
	struct sf_attr *a = sf_attr(l, l->step);

	a->info = (a->info & ~0xf) | 3;
}

static void damage_word_size(struct sf_lib *l)
{
	sf_each_fre(l, l->step, fre_word_size_3);
}

static void damage_cfa_not_growing(struct sf_lib *l)
{
	sf_each_fre(l, l->step, fre_cfa_zero);
}

static void damage_version_2(struct sf_lib *l)
{
	l->h->version = 2;
}

/* A CFA offset 8 more: a valid rule, and the wrong one. */
static void fre_cfa_plus_8(uint8_t *info, unsigned char *word)
{
	word[0] += 8;
}

/*
 * Library A walked, then B (A's code, other rules) where A was, then A
 * again, whose entry the mm still has: the rules B's walk left at the
 * same addresses are never applied to A's frames.
 */
TEST_F(libs, a_then_b_then_a_again_uses_a_rules)
{
	struct sf_lib l = { };
	unsigned long a_step;
	char path[4200], copy[64];
	const struct cb *b;
	void *lib_b;

	ASSERT_NE(NULL, walk_once(_metadata, self->fd, self->res, self->c,
				  "task", LIB_DEPTH));
	a_step = (unsigned long)self->c->lib_b;
	dlclose(self->lib);
	self->lib = NULL;

	lib_path(path, sizeof(path), "libsframe_b.so");
	ASSERT_TRUE(sf_load(&l, path));
	sf_each_fre(&l, l.step, fre_cfa_plus_8);
	open_damaged_copy(_metadata, l.data, l.len, copy, &lib_b, self->c);
	free(l.data);
	if ((unsigned long)self->c->lib_b != a_step) {
		dlclose(lib_b);
		unlink(copy);
		SKIP(return, "B was not mapped where A was");
	}
	/* B's chain is wrong past its frame, by its own rules: not checked. */
	walk_once(_metadata, self->fd, self->res, self->c, "task", LIB_DEPTH);
	dlclose(lib_b);
	unlink(copy);

	self->lib = open_step(path, &self->c->lib_b);
	ASSERT_NE(NULL, self->c->lib_b) TH_LOG("dlopen %s: %s", path, dlerror());
	if ((unsigned long)self->c->lib_b != a_step)
		SKIP(return, "A was not mapped again where it was");
	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      LIB_DEPTH);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
}

FIXTURE(hostile_sframe) {
	int fd;
	struct results *res;
	struct chain *c;
	void *lib;
	char path[64];
};

FIXTURE_VARIANT(hostile_sframe) {
	void (*damage)(struct sf_lib *l);
	const char *counter;	/* must grow */
	const char *lib;	/* the library damaged */
	int frames;		/* right frames the walk must find; 0: all */
	bool exact;		/* and no more */
};

FIXTURE_VARIANT_ADD(hostile_sframe, truncated) {
	damage_truncated, "sframe_bad_sections", "libsframe_b.so",
	FRAMES_TO_LIB_B, false };
/*
 * Rows that break a rule: the file's .eh_frame (gas writes both) gives the
 * frame instead, and the whole chain is found.
 */
FIXTURE_VARIANT_ADD(hostile_sframe, unsorted_fdes) {
	damage_unsorted, "sframe_bad_rows", "libsframe_b.so",
	0, false };
FIXTURE_VARIANT_ADD(hostile_sframe, overlapping_fdes) {
	damage_overlapping, "sframe_bad_rows", "libsframe_b.so",
	0, false };
FIXTURE_VARIANT_ADD(hostile_sframe, fres_past_the_end) {
	damage_fres_past_end, "sframe_bad_rows", "libsframe_b.so",
	0, false };
FIXTURE_VARIANT_ADD(hostile_sframe, bad_fre_type) {
	damage_fre_type, "sframe_bad_rows", "libsframe_b.so",
	0, false };
FIXTURE_VARIANT_ADD(hostile_sframe, bad_data_word_size) {
	damage_word_size, "sframe_bad_rows", "libsframe_b.so",
	0, false };
FIXTURE_VARIANT_ADD(hostile_sframe, cfa_does_not_grow) {
	damage_cfa_not_growing, "stop_bad_frame", "libsframe_b.so",
	FRAMES_TO_LIB_B, true };
/* Refused cleanly; the library keeps frame pointers, which are used. */
FIXTURE_VARIANT_ADD(hostile_sframe, version_2_refused) {
	damage_version_2, "sframe_refused_version", "libsframe_fp.so",
	0, false };

FIXTURE_SETUP(hostile_sframe)
{
	struct sf_lib l = { };
	char path[4200];

	self->lib = NULL;
	self->path[0] = '\0';
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
	if (counter("sframe_frames") < 0)
		SKIP(return, "the kernel has no SFrame unwinder (CONFIG_UNWIND_USER_SFRAME)");

	lib_path(path, sizeof(path), variant->lib);
	ASSERT_TRUE(sf_load(&l, path)) {
		TH_LOG("%s: no SFrame entry for sframe_lib_b_step with neighbours", path);
	}

	variant->damage(&l);
	open_damaged_copy(_metadata, l.data, l.len, self->path, &self->lib,
			  self->c);
	free(l.data);
}

FIXTURE_TEARDOWN(hostile_sframe)
{
	if (self->lib)
		dlclose(self->lib);
	if (self->path[0])
		unlink(self->path);
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

/* The walk ends cleanly where the damage is, and the damage is counted. */
TEST_F(hostile_sframe, walk_ends_cleanly)
{
	walk_through_damage(_metadata, self->fd, self->res, self->c,
			    variant->counter, variant->frames, variant->exact);
}

TEST_HARNESS_MAIN
