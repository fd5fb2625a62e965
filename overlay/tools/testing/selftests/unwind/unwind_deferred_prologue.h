/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The topmost frame (the prologue fixture): a task stopped at a
 * function's entry, in its prologue, at its "ret", or where a hardware
 * breakpoint or a uprobe asks for the stack, still yields its caller.
 *
 * Included once, by unwind_deferred.c.
 */
#include "unwind_deferred_common.h"

/*
 * Leaves whose system call returns into a mini function placed right after
 * it, having first pushed what a call (and a "push %bp", or a whole
 * "push %bp; mov %sp,%bp") would have pushed. The kernel thus finds the task
 * stopped at a function's first instruction, at its "ret", or in its body
 * at an instruction that a prologue also starts with.
 */
/* What the mini function left behind, as the walk should find it. */
static void prologue_done(struct chain *c, unsigned long leaf_ra, long ret)
{
	c->leaf_ra = leaf_ra;
	c->ret = ret;
	c->top[0] = asm_l1;
	c->top[1] = asm_l2;
	c->ntop = 2;
}

#ifdef __x86_64__
#define BP		"%%rbp"
#define SP		"%%rsp"
#define ENDBR		"endbr64\n\t"
#define MOV_SP_BP_ALT	".byte 0x48, 0x8b, 0xec\n\t"	/* mov %rsp,%rbp (8b /r) */
#define DEFINE_PROLOGUE_LEAF(name, pre, post)				\
static __attribute__((noipa)) void name(struct chain *c)		\
{									\
	long ret;							\
									\
	asm volatile("lea 1f(%%rip), %%rcx\n\t"				\
		     "mov %%rcx, %[l1]\n\t"				\
		     "lea 2f(%%rip), %%rcx\n\t"				\
		     "mov %%rcx, %[l2]\n\t"				\
		     "push %%rcx\n\t"					\
		     pre						\
		     "syscall\n"					\
		     "1:\t" post					\
		     "2:\n"						\
		     : "=a"(ret), [l1] "=m"(asm_l1), [l2] "=m"(asm_l2)	\
		     : "0"(c->nr), "D"(c->a), "S"(c->b), "d"(c->c)	\
		     : "rcx", "r11", "memory");				\
	prologue_done(c, (unsigned long)__builtin_return_address(0), ret); \
}
#else
#define BP		"%%ebp"
#define SP		"%%esp"
#define ENDBR		"endbr32\n\t"
#define MOV_SP_BP_ALT	".byte 0x8b, 0xec\n\t"		/* mov %esp,%ebp (8b /r) */
#define DEFINE_PROLOGUE_LEAF(name, pre, post)				\
static __attribute__((noipa)) void name(struct chain *c)		\
{									\
	long ret;							\
									\
	asm volatile("call 0f\n"					\
		     "0:\tpop %%esi\n\t"				\
		     "lea (1f-0b)(%%esi), %%edi\n\t"			\
		     "mov %%edi, %[l1]\n\t"				\
		     "lea (2f-0b)(%%esi), %%edi\n\t"			\
		     "mov %%edi, %[l2]\n\t"				\
		     "push %%edi\n\t"					\
		     pre						\
		     "int $0x80\n"					\
		     "1:\t" post					\
		     "2:\n"						\
		     : "=a"(ret), [l1] "=m"(asm_l1), [l2] "=m"(asm_l2)	\
		     : "0"(c->nr), "b"(c->a), "c"(c->b), "d"(c->c)	\
		     : "esi", "edi", "memory");				\
	prologue_done(c, (unsigned long)__builtin_return_address(0), ret); \
}
#endif

#define FRAME		"push " BP "\n\tmov " SP ", " BP "\n\t"

DEFINE_PROLOGUE_LEAF(leaf_at_push, "",
		     "push " BP "\n\tmov " SP ", " BP "\n\tpop " BP "\n\tret\n")
DEFINE_PROLOGUE_LEAF(leaf_at_endbr, "",
		     ENDBR "push " BP "\n\tmov " SP ", " BP "\n\tpop " BP "\n\tret\n")
DEFINE_PROLOGUE_LEAF(leaf_at_ret, "", "ret\n")
DEFINE_PROLOGUE_LEAF(leaf_at_ret_imm, "", "ret $0\n")
/* An indirect branch target in the body: endbr, then no push %bp. */
DEFINE_PROLOGUE_LEAF(leaf_endbr_in_body, FRAME,
		     ENDBR "nop\n\tpop " BP "\n\tret\n")
/* bp saved again in the body (as a callee-saved register), no mov after. */
DEFINE_PROLOGUE_LEAF(leaf_push_bp_in_body, FRAME,
		     "push " BP "\n\tpop " BP "\n\tpop " BP "\n\tret\n")

/*
 * Leaves whose mini function is reached by a jump, not a system call return:
 * the chain's system call arms a hardware breakpoint ("request-at") or a
 * uprobe ("request-uprobe") on LEAF_probe (at LEAF_at()), which asks for the
 * stack there. @pre runs before it, @post from there on and holds label 1,
 * where the IP is expected.
 */
#ifdef __x86_64__
#define DEFINE_ARMED_LEAF(name, pre, post)				\
static unsigned long name##_at(void)					\
{									\
	unsigned long addr;						\
									\
	asm("lea " #name "_probe(%%rip), %0" : "=r"(addr));		\
	return addr;							\
}									\
static __attribute__((noipa)) void name(struct chain *c)		\
{									\
	long ret = syscall(c->nr, c->a, c->b, c->c);			\
									\
	asm volatile("lea 1f(%%rip), %%rcx\n\t"				\
		     "mov %%rcx, %[l1]\n\t"				\
		     "lea 2f(%%rip), %%rcx\n\t"				\
		     "mov %%rcx, %[l2]\n\t"				\
		     "push %%rcx\n\t"					\
		     pre						\
		     #name "_probe:\n"					\
		     post						\
		     "2:\n"						\
		     : [l1] "=m"(asm_l1), [l2] "=m"(asm_l2)		\
		     :							\
		     : "rcx", "memory");				\
	prologue_done(c, (unsigned long)__builtin_return_address(0),	\
		      ret < 0 ? -errno : ret);				\
}
#else
#define DEFINE_ARMED_LEAF(name, pre, post)				\
static unsigned long name##_at(void)					\
{									\
	unsigned long addr;						\
									\
	asm("mov $" #name "_probe, %0" : "=r"(addr));			\
	return addr;							\
}									\
static __attribute__((noipa)) void name(struct chain *c)		\
{									\
	long ret = syscall(c->nr, c->a, c->b, c->c);			\
									\
	asm volatile("call 0f\n"					\
		     "0:\tpop %%esi\n\t"				\
		     "lea (1f-0b)(%%esi), %%edi\n\t"			\
		     "mov %%edi, %[l1]\n\t"				\
		     "lea (2f-0b)(%%esi), %%edi\n\t"			\
		     "mov %%edi, %[l2]\n\t"				\
		     "push %%edi\n\t"					\
		     pre						\
		     #name "_probe:\n"					\
		     post						\
		     "2:\n"						\
		     : [l1] "=m"(asm_l1), [l2] "=m"(asm_l2)		\
		     :							\
		     : "esi", "edi", "memory");				\
	prologue_done(c, (unsigned long)__builtin_return_address(0),	\
		      ret < 0 ? -errno : ret);				\
}
#endif

/* Stopped right after "push %bp", at the mov after it. */
DEFINE_ARMED_LEAF(leaf_after_push, "push " BP "\n",
		  "1:\tmov " SP ", " BP "\n\tpop " BP "\n\tret\n")
DEFINE_ARMED_LEAF(leaf_after_push_alt, "push " BP "\n",
		  "1:\t" MOV_SP_BP_ALT "pop " BP "\n\tret\n")
/*
 * A uprobe on "push %bp": the request is made in its handler, before the
 * push runs, so the walk starts at the push, which has an int3 in its
 * place in the text (the uprobe then emulates it).
 */
DEFINE_ARMED_LEAF(leaf_uprobe_push, "",
		  "1:\tpush " BP "\n\tmov " SP ", " BP "\n\tpop " BP "\n\tret\n")
/* A uprobe on an endbr: the task is left at a copy of it, out of line. */
DEFINE_ARMED_LEAF(leaf_uprobe_endbr, "",
		  "1:\t" ENDBR "push " BP "\n\tmov " SP ", " BP "\n\tpop " BP "\n\tret\n")

/* A task stopped in a prologue or at "ret" still yields its caller. */
FIXTURE(prologue) {
	int fd;
	struct results *res;
	struct chain *c;
};

FIXTURE_SETUP(prologue)
{
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
}

FIXTURE_TEARDOWN(prologue)
{
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

FIXTURE_VARIANT(prologue) {
	void (*leaf)(struct chain *c);
	/*
	 * What asks at at(): "request-at", "request-uprobe" or
	 * "request-uprobe-now"; NULL: the write
	 */
	const char *ask;
	unsigned long (*at)(void);
};

FIXTURE_VARIANT_ADD(prologue, body) {
	.leaf = leaf_syscall,
};

FIXTURE_VARIANT_ADD(prologue, at_push_bp) {
	.leaf = leaf_at_push,
};

FIXTURE_VARIANT_ADD(prologue, at_endbr) {
	.leaf = leaf_at_endbr,
};

FIXTURE_VARIANT_ADD(prologue, after_push_bp) {
	.leaf = leaf_after_push,
	.ask = "request-at",
	.at = leaf_after_push_at,
};

FIXTURE_VARIANT_ADD(prologue, after_push_bp_other_encoding) {
	.leaf = leaf_after_push_alt,
	.ask = "request-at",
	.at = leaf_after_push_alt_at,
};

FIXTURE_VARIANT_ADD(prologue, at_ret) {
	.leaf = leaf_at_ret,
};

FIXTURE_VARIANT_ADD(prologue, at_ret_imm16) {
	.leaf = leaf_at_ret_imm,
};

FIXTURE_VARIANT_ADD(prologue, endbr_in_body) {
	.leaf = leaf_endbr_in_body,
};

FIXTURE_VARIANT_ADD(prologue, push_bp_in_body) {
	.leaf = leaf_push_bp_in_body,
};

/* The push, emulated by the uprobe, has an int3 in its place in the text. */
FIXTURE_VARIANT_ADD(prologue, uprobe_at_push_bp) {
	.leaf = leaf_uprobe_push,
	.ask = "request-uprobe",
	.at = leaf_uprobe_push_at,
};

/*
 * A uprobe single-steps these out of line, but the walk starts where its
 * handler made the request: at the probed instruction, whose first byte
 * is the uprobe's int3 in the text (the walker takes it from the copy in
 * the uprobes area): at the endbr, and after push %bp.
 */
FIXTURE_VARIANT_ADD(prologue, uprobe_at_endbr) {
	.leaf = leaf_uprobe_endbr,
	.ask = "request-uprobe",
	.at = leaf_uprobe_endbr_at,
};

FIXTURE_VARIANT_ADD(prologue, uprobe_after_push_bp) {
	.leaf = leaf_after_push,
	.ask = "request-uprobe",
	.at = leaf_after_push_at,
};

/*
 * The same three, the stack walked at once in the uprobe's handler (as a
 * perf sample or a BPF program there walks it), where the task is at the
 * probed address and its text holds the breakpoint: the walker takes the
 * probed instruction from the uprobe.
 */
FIXTURE_VARIANT_ADD(prologue, uprobe_handler_at_push_bp) {
	.leaf = leaf_uprobe_push,
	.ask = "request-uprobe-now",
	.at = leaf_uprobe_push_at,
};

FIXTURE_VARIANT_ADD(prologue, uprobe_handler_at_endbr) {
	.leaf = leaf_uprobe_endbr,
	.ask = "request-uprobe-now",
	.at = leaf_uprobe_endbr_at,
};

FIXTURE_VARIANT_ADD(prologue, uprobe_handler_after_push_bp) {
	.leaf = leaf_after_push,
	.ask = "request-uprobe-now",
	.at = leaf_after_push_at,
};

TEST_F(prologue, topmost_frame)
{
	bool now = variant->ask && strstr(variant->ask, "-now");
	struct results *r = self->res;
	char cmd[64] = "request task 0x1";
	long long used = 0;

	if (now) {
		/* A task walks at once only once its first walk set it up. */
		chain_write(self->c, self->fd, cmd, 6, NULL);
		ASSERT_EQ(0, ctl(self->fd, "clear"));
		used = counter("now_used");
	}
	if (variant->ask)
		snprintf(cmd, sizeof(cmd), "%s %lx 0x1", variant->ask,
			 variant->at());
	chain_write(self->c, self->fd, cmd, 6, variant->leaf);
	if (variant->ask && self->c->ret == -EOPNOTSUPP)
		SKIP(return, "'%s': not supported by this kernel", cmd);
	ASSERT_LT(0, self->c->ret) {
		TH_LOG("'%s': %s", cmd, strerror(-self->c->ret));
	}
	ASSERT_EQ(0, read_results(self->fd, r));
	ASSERT_EQ(1, r->ncb) {
		TH_LOG("%d callbacks for one request%s", r->ncb,
		       variant->ask && !r->nreq ? " (nothing asked)" : "");
	}
	check_stack(_metadata, self->c, &r->cb[0]);
	if (now) {
		/* The chain checked is the one walked in the handler. */
		EXPECT_EQ(used + 1, counter("now_used")) {
			TH_LOG("the handler's walk at once was not used");
		}
	}
}
