/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Walks through libraries of WIDE_STEPS functions (wide_lib.awk), tables the
 * size of a real library's: each step's return address is looked up in
 * the table (no rule remembered yet), at its own place in the index, so
 * that every position of the binary search is met, the first and the last
 * entry among them. Included by sframe_walk.c and eh_frame_walk.c, each
 * with its build of the library.
 */
#ifndef SELFTESTS_UNWIND_WIDE_TABLE_H
#define SELFTESTS_UNWIND_WIDE_TABLE_H

/* The library's step at level 5 (chain.h's lib_b), step_small() below. */
#define WIDE_DEPTH	7

typedef sframe_step_t (*wide_step_at_t)(unsigned int i);

static void *wide_open(const char *path, wide_step_at_t *at)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	*at = h ? (wide_step_at_t)dlsym(h, "wide_step_at") : NULL;
	return h;
}

/*
 * Walk steps @first, @first + @stride, ... of a wide library; each walk
 * must give exactly the frames the program recorded, and look its step's
 * rule up in the table.
 */
static void wide_walk(struct __test_metadata *_metadata, int fd,
		      struct results *r, struct chain *c, wide_step_at_t at,
		      unsigned int first, unsigned int stride)
{
	long long lookups = counter("rule_lookups");
	unsigned int i, n = 0;
	const struct cb *b;

	for (i = first; i < WIDE_STEPS; i += stride, n++) {
		c->lib_b = at(i);
		b = walk_once(_metadata, fd, r, c, "task", WIDE_DEPTH);
		ASSERT_NE(NULL, b) TH_LOG("step %u", i);
		/* Frame 3, the step's caller, comes from the step's rule. */
		if (b->nr < 4 || b->ips[3] != c->ras[5])
			TH_LOG("step %u (at %p) was walked wrong", i,
			       (void *)c->lib_b);
		check_stack(_metadata, c, b);
	}
	c->lib_b = NULL;
	EXPECT_LE(lookups + n, counter("rule_lookups")) {
		TH_LOG("%lld rules looked up in the tables for %u new steps",
		       counter("rule_lookups") - lookups, n);
	}
}

/* Every step of the library @name. */
static void wide_every_step(struct __test_metadata *_metadata, int fd,
			    struct results *r, struct chain *c,
			    const char *name)
{
	wide_step_at_t at;
	char path[4200];
	void *h;

	lib_path(path, sizeof(path), name);
	h = wide_open(path, &at);
	ASSERT_NE(NULL, at) TH_LOG("dlopen %s: %s", path, dlerror());
	wide_walk(_metadata, fd, r, c, at, 0, 1);
	dlclose(h);
}

/*
 * Copies of the wide library @name, each mapped at its own place and kept
 * mapped, more of them than the mm's table holds: newer copies take the
 * slots of evicted ones. A rule or a table of another copy applied to a
 * frame would point at the other copy's code; every walk must be exact.
 */
static void wide_copies(struct __test_metadata *_metadata, int fd,
			struct results *r, struct chain *c, const char *name)
{
	long long slots = counter("sframe_mm_entries");
	long long ev = counter("sframe_cache_evictions");
	int n = slots + 8, i, stride = 25;
	char (*paths)[64] = calloc(n, sizeof(*paths));
	void **h = calloc(n, sizeof(*h));
	wide_step_at_t at;
	char from[4200];

	ASSERT_LT(0, slots);
	ASSERT_TRUE(paths && h);
	lib_path(from, sizeof(from), name);
	for (i = 0; i < n; i++) {
		ASSERT_TRUE(copy_lib(from, paths[i], sizeof(paths[i])));
		h[i] = wide_open(paths[i], &at);
		ASSERT_NE(NULL, at) TH_LOG("dlopen %s: %s", paths[i], dlerror());
		wide_walk(_metadata, fd, r, c, at, i % stride, stride);
	}
	EXPECT_LT(ev, counter("sframe_cache_evictions"));
	for (i = 0; i < n; i++) {
		dlclose(h[i]);
		unlink(paths[i]);
	}
	free(paths);
	free(h);
}

#endif /* SELFTESTS_UNWIND_WIDE_TABLE_H */
