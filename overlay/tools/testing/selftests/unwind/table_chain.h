/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The call chain that sframe_walk and eh_frame_walk walk: a program built
 * without frame pointers descends a chain of functions of four kinds (no
 * locals, a big SP-based frame, an alloca frame whose CFA is based on
 * %rbp, a realigned frame), records every return address itself with
 * __builtin_return_address(), and ends in an inline system call with %rbp
 * holding garbage, so that a frame-pointer walk cannot get past the first
 * frame. The test module's callback must receive exactly the recorded
 * frames. Chains may cross a library the program needs and one it dlopens.
 */
#ifndef SELFTESTS_UNWIND_TABLE_CHAIN_H
#define SELFTESTS_UNWIND_TABLE_CHAIN_H

#include <alloca.h>
#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <linux/elf.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sframe_lib.h"

#define MAX_DEPTH	64

struct chain {
	int depth;
	long nr, a0, a1, a2;		/* the leaf's system call */
	sframe_step_t lib_a;		/* levels 3, 9, ... when set */
	sframe_step_t lib_b;		/* levels 5, 11, ... when set */
	long ret;
	unsigned long ras[MAX_DEPTH];	/* return address of each level */
	unsigned long leaf_ra;		/* return address of the leaf */
	/*
	 * When set, the leaf makes its system call in this assembly
	 * function, which stores its own return address in *ra; the
	 * interrupted IP is then @leaf_asm_ret, the address after the call.
	 */
	long (*leaf_asm)(long nr, long a0, long a1, long a2, unsigned long *ra);
	unsigned long leaf_asm_ret;
	unsigned long leaf_asm_ra;
};

#include "ctl.h"

#define RA() ((unsigned long)__builtin_return_address(0))

static long descend(struct chain *c, int level);

/* The system call's own return address, known before the call is made. */
static unsigned long leaf_ret_addr(void)
{
	unsigned long addr;

#ifdef __x86_64__
	asm("lea chain_leaf_ret(%%rip), %0" : "=r"(addr));
#else
	asm("mov $chain_leaf_ret, %0" : "=r"(addr));	/* not a PIE */
#endif
	return addr;
}

/*
 * The leaf: the chain's system call (write(2) of the command to the
 * control file, unless a test asks for another) with %rbp poisoned.
 * Clobbering %rbp makes the compiler save and restore it, which the unwind
 * tables describe; frame pointers would read the poison. The i386 build
 * (eh_frame_walk_32) does the same with %ebp and int $0x80.
 */
static __attribute__((noipa)) long leaf(struct chain *c)
{
	long ret;

	c->leaf_ra = RA();
	if (c->leaf_asm) {
		c->ret = c->leaf_asm(c->nr, c->a0, c->a1, c->a2,
				     &c->leaf_asm_ra);
		return c->ret;
	}
#ifdef __x86_64__
	asm volatile("movabs $0x5a5a5a5a5a5a5a58, %%rbp\n\t"
		     "syscall\n"
		     ".globl chain_leaf_ret\n"
		     "chain_leaf_ret:\n\t"
		     "nop"
		     : "=a"(ret)
		     : "0"(c->nr), "D"(c->a0), "S"(c->a1), "d"(c->a2)
		     : "rcx", "r11", "rbp", "memory");
#else
	asm volatile("mov $0x5a5a5a58, %%ebp\n\t"
		     "int $0x80\n"
		     ".globl chain_leaf_ret\n"
		     "chain_leaf_ret:\n\t"
		     "nop"
		     : "=a"(ret)
		     : "0"(c->nr), "b"(c->a0), "c"(c->a1), "d"(c->a2)
		     : "ebp", "memory");
#endif
	c->ret = ret;
	return ret;
}

/* No locals: the CFA is the stack pointer plus 8 or 16. */
static __attribute__((noipa)) long step_small(void *chain, int level)
{
	struct chain *c = chain;

	c->ras[level] = RA();
	return descend(c, level + 1) + 1;
}

/* A frame of about 3 KiB, SP-based. */
static __attribute__((noipa)) long step_big(struct chain *c, int level)
{
	char buf[3000];

	buf[level] = level;
	asm volatile("" : : "r"(buf) : "memory");
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

/*
 * A realigned stack with a variable-length array: gcc sets up a DRAP
 * (%r10) and its SFrame rows are flexible ones, the CFA kept in a stack
 * slot below %rbp and the caller's %rbp saved at %rbp.
 */
static __attribute__((noipa)) long step_drap(struct chain *c, int level)
{
	alignas(64) long a[8];
	long v[level + 1];

	memset(a, level, sizeof(a));
	memset(v, level, sizeof(v));
	asm volatile("" : : "r"(a), "r"(v) : "memory");
	c->ras[level] = RA();
	return descend(c, level + 1) + a[level % 8] + v[level];
}

/* Inlined into each step: a call to it would be a frame of its own. */
static inline long descend(struct chain *c, int level)
{
	if (level >= c->depth)
		return leaf(c);
	/* The libraries call back into step_small(). */
	switch (level % 6) {
	case 1:
		return step_big(c, level);
	case 2:
		return step_alloca(c, level);
	case 3:
		if (c->lib_a)
			return c->lib_a(c, level, step_small, c->ras);
		return step_big(c, level);
	case 4:
		return step_drap(c, level);
	case 5:
		if (c->lib_b)
			return c->lib_b(c, level, step_small, c->ras);
		return step_alloca(c, level);
	default:
		return step_small(c, level);
	}
}

/* Set @c up for a @depth chain whose leaf makes system call @nr. */
static inline void chain_prepare(struct chain *c, int depth, long nr,
				 long a0, long a1, long a2)
{
	sframe_step_t a = c->lib_a, b = c->lib_b;
	long (*leaf_asm)(long, long, long, long, unsigned long *) = c->leaf_asm;
	unsigned long leaf_asm_ret = c->leaf_asm_ret;

	memset(c, 0, sizeof(*c));
	c->lib_a = a;
	c->lib_b = b;
	c->leaf_asm = leaf_asm;
	c->leaf_asm_ret = leaf_asm_ret;
	c->depth = depth;
	c->nr = nr;
	c->a0 = a0;
	c->a1 = a1;
	c->a2 = a2;
}

/* Make system call @nr from the bottom of a @depth chain. */
static void chain_syscall(struct chain *c, int depth, long nr, long a0,
			  long a1, long a2)
{
	chain_prepare(c, depth, nr, a0, a1, a2);
	descend(c, 0);
}

/* The frames a chain recorded, innermost first, into @want; how many. */
static inline int chain_frames(const struct chain *c, unsigned long *want)
{
	int i, n = 0;

	if (c->leaf_asm) {
		want[n++] = c->leaf_asm_ret;
		want[n++] = c->leaf_asm_ra;
	} else {
		want[n++] = leaf_ret_addr();
	}
	want[n++] = c->leaf_ra;
	for (i = c->depth - 1; i >= 0; i--)
		want[n++] = c->ras[i];
	return n;
}

/* Send @cmd to the control file from the bottom of a @depth chain. */
static void chain_write(struct chain *c, int fd, const char *cmd, int depth)
{
	chain_syscall(c, depth, __NR_write, fd, (long)cmd, strlen(cmd));
}

/*
 * The callback's stack must start with the first @n (all when @n is 0)
 * frames the chain has; with @exact, and nothing after them.
 */
static void check_frames(struct __test_metadata *_metadata,
			 const struct chain *c, const struct cb *b, int n,
			 bool exact)
{
	unsigned long want[MAX_DEPTH + 3];
	int i, all = chain_frames(c, want);

	if (!n || n > all)
		n = all;

	if (exact) {
		EXPECT_EQ(n, (int)b->nr) {
			TH_LOG("the walk should end after frame %d", n - 1);
			for (i = 0; i < (int)b->nr; i++)
				TH_LOG("  got %#llx", b->ips[i]);
		}
	}

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

static void check_stack(struct __test_metadata *_metadata,
			const struct chain *c, const struct cb *b)
{
	check_frames(_metadata, c, b, 0, false);
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

/* A library next to the program. */
static void lib_path(char *buf, size_t size, const char *name)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	snprintf(buf, size, "%s/%s", dirname(exe), name);
}

/* Copy the library at @from to a new file in /tmp, named in @path. */
static bool copy_lib(const char *from, char *path, size_t size)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	snprintf(path, size, "/tmp/sframe_copy_XXXXXX");
	in = open(from, O_RDONLY);
	out = mkstemp(path);
	if (in < 0 || out < 0)
		return false;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			n = -1;
	close(in);
	close(out);
	return n == 0;
}

static void *open_step(const char *path, sframe_step_t *step)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	*step = h ? (sframe_step_t)dlsym(h, "sframe_lib_b_step") : NULL;
	return h;
}

/* 11 levels: library A at levels 3 and 9, the dlopen'd one at level 5. */
#define LIB_DEPTH	11
/* Frames from the leaf's syscall up to the one in the dlopen'd library. */
#define FRAMES_TO_LIB_B	(2 + (LIB_DEPTH - 1) - 6 + 1)

/*
 * The hostile tests: write the @len bytes of a damaged copy of library B
 * to a new file in /tmp (its name into @path, which holds 64 bytes) and
 * dlopen it as the chain's library B, the needed library A at its levels.
 */
static void open_damaged_copy(struct __test_metadata *_metadata,
			      const void *data, size_t len, char *path,
			      void **lib, struct chain *c)
{
	int fd;

	snprintf(path, 64, "/tmp/unwind_hostile_XXXXXX");
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, write(fd, data, len));
	close(fd);
	*lib = open_step(path, &c->lib_b);
	ASSERT_NE(NULL, c->lib_b) TH_LOG("dlopen %s: %s", path, dlerror());
	c->lib_a = sframe_lib_a_step;
}

/*
 * A walk through a damaged library ends cleanly where the damage is, with
 * the first @frames frames right (and no more with @exact), and the damage
 * is counted in @name.
 */
static void walk_through_damage(struct __test_metadata *_metadata, int fd,
				struct results *r, struct chain *c,
				const char *name, int frames, bool exact)
{
	long long before = counter(name);
	const struct cb *b;

	b = walk_once(_metadata, fd, r, c, "task", LIB_DEPTH);
	ASSERT_NE(NULL, b);
	check_frames(_metadata, c, b, frames, exact);
	EXPECT_LT(before, counter(name)) {
		TH_LOG("%s did not grow", name);
	}
}

#endif /* SELFTESTS_UNWIND_TABLE_CHAIN_H */
