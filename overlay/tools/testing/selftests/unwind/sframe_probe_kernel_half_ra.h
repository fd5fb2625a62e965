/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FIXTURE(kernel_half_ra): a return address slot holding a kernel-half
 * address; the walk ends there, counted as a bad frame.
 *
 * Included once, by sframe_probe.c.
 */
#include "sframe_probe_session.h"

/*
 * The functions of sframe_probe.h. While leaf() runs, the slot that holds
 * the return address into their caller holds @bad_ra instead: at 8(%rsp)
 * after "push %rbx", which the SFrame row of that call (CFA = SP + 16,
 * return address at CFA - 8) points to; or at 8(%rbp) in a function with
 * no CFI, so no SFrame row, which only frame pointers can walk. That one
 * is in a section of its own, which the linker places after .text: past
 * every function the tables describe, where the walk takes frame pointers
 * (amid them, code without CFI ends the walk).
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
	".pushsection .text_nocfi, \"ax\", @progbits\n"
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
	".size sframe_bad_ra_fp, .-sframe_bad_ra_fp\n"
	".popsection\n");

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

FIXTURE(kernel_half_ra) {
	struct session *s;
	struct probe_chain c;
	int try_first;
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
	self->try_first = -1;
	if (missing)
		SKIP(return, "%s", missing);
	try_first_kernel_off(&self->try_first);
	self->s = session_open(_metadata);
	self->c.inner = bad_ra_call;
	self->c.bad_fn = variant->fn;
	self->c.bad_ra = variant->bad_ra;
}

FIXTURE_TEARDOWN(kernel_half_ra)
{
	session_close(self->s);
	try_first_restore(self->try_first);
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
