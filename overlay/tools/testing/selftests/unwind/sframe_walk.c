// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user stack walks through code built without frame pointers,
 * found by the SFrame tables the program was assembled with
 * (-O2 -fomit-frame-pointer -Wa,--gsframe), with no help from libc.
 *
 * The program descends a chain of functions of three kinds (no locals, a
 * big SP-based frame, an alloca frame whose CFA is based on %rbp), records
 * every return address itself with __builtin_return_address(), and ends in
 * an inline "syscall" with %rbp holding garbage, so that a frame-pointer
 * walk cannot get past the first frame. The test module's callback must
 * receive exactly the recorded frames.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define MAX_DEPTH	64

struct chain {
	int depth;
	int fd;
	const char *cmd;
	long ret;
	unsigned long ras[MAX_DEPTH];	/* return address of each level */
	unsigned long leaf_ra;		/* return address of the leaf */
};

#include "ctl.h"

#define RA() ((unsigned long)__builtin_return_address(0))

static long descend(struct chain *c, int level);

/* The system call's own return address, known before the call is made. */
static unsigned long leaf_ret_addr(void)
{
	unsigned long addr;

	asm("lea sframe_leaf_ret(%%rip), %0" : "=r"(addr));
	return addr;
}

/*
 * The leaf: write(2) the command to the control file with %rbp poisoned.
 * Clobbering %rbp makes the compiler save and restore it, which the SFrame
 * table describes; frame pointers would read the poison.
 */
static __attribute__((noipa)) long leaf(struct chain *c)
{
	long ret;

	c->leaf_ra = RA();
	asm volatile("movabs $0x5a5a5a5a5a5a5a58, %%rbp\n\t"
		     "syscall\n"
		     ".globl sframe_leaf_ret\n"
		     "sframe_leaf_ret:\n\t"
		     "nop"
		     : "=a"(ret)
		     : "0"((long)__NR_write), "D"((long)c->fd), "S"(c->cmd),
		       "d"(strlen(c->cmd))
		     : "rcx", "r11", "rbp", "memory");
	c->ret = ret;
	return ret;
}

/* No locals: the CFA is the stack pointer plus 8 or 16. */
static __attribute__((noipa)) long step_small(struct chain *c, int level)
{
	c->ras[level] = RA();
	return descend(c, level + 1) + 1;
}

/* A frame of about 3 KiB, SP-based. */
static __attribute__((noipa)) long step_big(struct chain *c, int level)
{
	volatile char buf[3000];

	buf[level] = level;
	c->ras[level] = RA();
	return descend(c, level + 1) + buf[level];
}

/* alloca: the compiler keeps %rbp as the frame's base, the CFA is %rbp+16. */
static __attribute__((noipa)) long step_alloca(struct chain *c, int level)
{
	char *p = alloca(64 + level * 16);

	memset(p, level, 64 + level * 16);
	asm volatile("" : : "r"(p) : "memory");
	c->ras[level] = RA();
	return descend(c, level + 1) + p[level];
}

static inline __attribute__((always_inline)) long descend(struct chain *c,
							   int level)
{
	if (level == c->depth)
		return leaf(c);
	switch (level % 3) {
	case 0:
		return step_small(c, level);
	case 1:
		return step_big(c, level);
	default:
		return step_alloca(c, level);
	}
}

/* Send @cmd to the control file from the bottom of a @depth chain. */
static void chain_write(struct chain *c, int fd, const char *cmd, int depth)
{
	memset(c, 0, sizeof(*c));
	c->depth = depth;
	c->fd = fd;
	c->cmd = cmd;
	descend(c, 0);
}

/* The callback's stack must start with exactly the frames the chain has. */
static void check_stack(struct __test_metadata *_metadata,
			const struct chain *c, const struct cb *b)
{
	unsigned long want[MAX_DEPTH + 2];
	int i, n = 0;

	want[n++] = leaf_ret_addr();
	want[n++] = c->leaf_ra;
	for (i = c->depth - 1; i >= 0; i--)
		want[n++] = c->ras[i];

	ASSERT_GE(b->nr, n) {
		TH_LOG("the callback got %u frames; the program has at least %d",
		       b->nr, n);
		for (i = 0; i < (int)b->nr; i++)
			TH_LOG("  got %#llx", b->ips[i]);
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(b->ips[i], (unsigned long long)want[i]) {
			TH_LOG("frame %d: the callback has %#llx, the program recorded %#lx",
			       i, b->ips[i], want[i]);
		}
	}
}

/* Ask for slot 0 from @ctx at the bottom of a @depth chain; one callback. */
static const struct cb *walk_once(struct __test_metadata *_metadata, int fd,
				  struct results *r, struct chain *c,
				  const char *ctx, int depth)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "request %s 0x1", ctx);
	if (ctl(fd, "clear"))
		return NULL;
	chain_write(c, fd, cmd, depth);
	if (c->ret != (long)strlen(cmd)) {
		TH_LOG("'%s' failed: %s", cmd, strerror(-c->ret));
		return NULL;
	}
	if (read_results(fd, r) || r->ncb != 1) {
		TH_LOG("expected exactly one callback, got %d", r->ncb);
		return NULL;
	}
	return &r->cb[0];
}

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
	if (!ctl_setup(_metadata, self))
		SKIP(return, NO_MODULE);
	if (counter("sframe_frames") < 0)
		SKIP(return, "the kernel has no SFrame unwinder (CONFIG_UNWIND_USER_SFRAME)");
}

FIXTURE_TEARDOWN(sframe)
{
	ctl_teardown(self);
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
	int status;
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
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
