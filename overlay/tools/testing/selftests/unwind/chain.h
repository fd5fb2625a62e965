/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A user call chain of known shape for stack unwinding tests: every frame
 * keeps its frame pointer, and every return address the kernel should find
 * is recorded on the way down. Build with -fno-omit-frame-pointer.
 */
#ifndef SELFTESTS_UNWIND_CHAIN_H
#define SELFTESTS_UNWIND_CHAIN_H

#include <string.h>

#define MAX_DEPTH	256
#define MAX_TOP		3

/*
 * A call chain of known shape: the test calls descend(), which recurses
 * depth times and then calls leaf(), which makes one raw system call.
 * Everything the kernel should find on the stack is recorded on the way.
 */
struct chain {
	int depth;
	long nr, a, b, c;	/* the leaf's system call */
	long ret;
	void (*leaf)(struct chain *c);
	unsigned long ras[MAX_DEPTH];	/* return address of each descend() level */
	unsigned long leaf_ra;		/* return address of leaf() */
	unsigned long top[MAX_TOP];	/* the entries above leaf_ra, innermost first */
	int ntop;
};

/*
 * The leaf that makes the chain's system call. Its return address has a
 * global name, so it is known before entering the kernel (exit and execve
 * never come back). The instruction there is a nop: the function body, not
 * a prologue.
 */
static unsigned long leaf_syscall_ret_addr(void)
{
	unsigned long addr;

#ifdef __x86_64__
	asm("lea leaf_syscall_ret(%%rip), %0" : "=r"(addr));
#else
	asm("mov $leaf_syscall_ret, %0" : "=r"(addr));
#endif
	return addr;
}

static __attribute__((noipa)) void leaf_syscall(struct chain *c)
{
	long ret;

	c->leaf_ra = (unsigned long)__builtin_return_address(0);
	c->top[0] = leaf_syscall_ret_addr();
	c->ntop = 1;
#ifdef __x86_64__
	asm volatile("syscall\n"
		     ".globl leaf_syscall_ret\n"
		     "leaf_syscall_ret:\n\t"
		     "nop"
		     : "=a"(ret)
		     : "0"(c->nr), "D"(c->a), "S"(c->b), "d"(c->c)
		     : "rcx", "r11", "memory");
#else
	asm volatile("int $0x80\n"
		     ".globl leaf_syscall_ret\n"
		     "leaf_syscall_ret:\n\t"
		     "nop"
		     : "=a"(ret)
		     : "0"(c->nr), "b"(c->a), "c"(c->b), "d"(c->c)
		     : "memory");
#endif
	c->ret = ret;
}

static __attribute__((noipa)) void descend(struct chain *c, int level)
{
	c->ras[level] = (unsigned long)__builtin_return_address(0);
	if (level + 1 < c->depth)
		descend(c, level + 1);
	else
		c->leaf(c);
	asm volatile("" ::: "memory");	/* keep the calls real calls */
}

/* Run the chain: depth levels of descend(), then @leaf. */
static inline void chain_run(struct chain *c, int depth,
			     void (*leaf)(struct chain *c))
{
	memset(c->ras, 0, sizeof(c->ras));
	memset(c->top, 0, sizeof(c->top));
	c->ntop = 0;
	c->leaf_ra = 0;
	c->depth = depth;
	c->leaf = leaf;
	descend(c, 0);
}

/* Run the chain with a system call at the bottom. */
/* Set the system call that leaf_syscall() makes. */
static inline void chain_set_syscall(struct chain *c, long nr, long a, long b,
				     long arg_c)
{
	c->nr = nr;
	c->a = a;
	c->b = b;
	c->c = arg_c;
}

static inline void chain_syscall(struct chain *c, int depth, long nr, long a,
				 long b, long arg_c)
{
	chain_set_syscall(c, nr, a, b, arg_c);
	chain_run(c, depth, leaf_syscall);
}

/* The frames the kernel should find, innermost first; returns how many. */
static inline int chain_frames(const struct chain *c, unsigned long *want)
{
	int i, n = 0;

	for (i = 0; i < c->ntop; i++)
		want[n++] = c->top[i];
	want[n++] = c->leaf_ra;
	for (i = c->depth - 1; i >= 0; i--)
		want[n++] = c->ras[i];
	return n;
}

#endif /* SELFTESTS_UNWIND_CHAIN_H */
