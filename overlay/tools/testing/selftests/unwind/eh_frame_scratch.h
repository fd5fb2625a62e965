/* SPDX-License-Identifier: GPL-2.0 */
/*
 * eh_frame_walk: CFAs that hand-written assembly keeps in a scratch
 * register, as OpenSSL's perlasm does (libcrypto: %rax, %rsi, %r9, %r11,
 * and bn_mul_mont's "breg7 8; breg9 0; lit8; mul; plus; deref;
 * plus_uconst 8"). No frame saves a scratch register, so only the
 * interrupted frame's is known, from the registers the kernel saved: the
 * walk follows such a CFA there, and ends, counted, at one in any other
 * frame rather than read a value a callee left. The leaves are
 * scratch_leaf.h's.
 */
#ifndef SELFTESTS_UNWIND_EH_FRAME_SCRATCH_H
#define SELFTESTS_UNWIND_EH_FRAME_SCRATCH_H

#include "scratch_leaf.h"

/*
 * A step of the chain (struct chain's lib_a) whose CFA stays in a scratch
 * register while it calls the next level: known to no walk past it.
 */
long scratch_cfa_step(void *chain, int level, sframe_next_t next,
		      unsigned long *ras);

#ifdef __x86_64__
/* CFA = %rax + 8 while it calls on. */
asm(".pushsection .text\n"
	".globl scratch_cfa_step\n"
	".type scratch_cfa_step, @function\n"
	"scratch_cfa_step:\n"
	".cfi_startproc\n"
	"	mov (%rsp), %rax\n"
	STEP_STORE_RA
	"	mov %rsp, %rax\n"
	".cfi_def_cfa_register %rax\n"
	"	sub $64, %rsp\n"
	"	and $-32, %rsp\n"
	"	mov %rax, 16(%rsp)\n"
	"	add $1, %esi\n"
	"	call *%rdx\n"
	"	mov 16(%rsp), %rsp\n"
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size scratch_cfa_step, . - scratch_cfa_step\n"
	".popsection\n");
#else
/* CFA = %eax + 4 while it calls on. */
asm(".pushsection .text\n"
	".globl scratch_cfa_step\n"
	".type scratch_cfa_step, @function\n"
	"scratch_cfa_step:\n"
	".cfi_startproc\n"
	"	mov (%esp), %eax\n"
	STEP_STORE_RA
	"	mov %esp, %eax\n"
	".cfi_def_cfa_register %eax\n"
	"	sub $64, %esp\n"
	"	and $-32, %esp\n"
	"	mov %eax, 16(%esp)\n"
	"	mov 8(%eax), %ecx\n"
	"	add $1, %ecx\n"
	"	mov %ecx, 4(%esp)\n"
	"	mov 4(%eax), %ecx\n"
	"	mov %ecx, (%esp)\n"
	"	call *12(%eax)\n"
	"	mov 16(%esp), %esp\n"
	".cfi_def_cfa %esp, 4\n"
	"	ret\n"
	".cfi_endproc\n"
	".size scratch_cfa_step, . - scratch_cfa_step\n"
	".popsection\n");
#endif

/* The walks of the interrupted frame: from the task and from an NMI. */
static void scratch_leaf_walks(struct __test_metadata *_metadata, int fd,
			       struct results *res, struct chain *c)
{
	static const char * const ctxs[] = { "task", "nmi" };
	long long unsup_reg = counter("eh_frame_unsupported_registers");
	long long unsup_expr = counter("eh_frame_unsupported_expressions");
	long long stops = counter("stop_scratch_register");
	const struct cb *b;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ctxs); i++) {
		b = walk_once(_metadata, fd, res, c, ctxs[i], LIB_DEPTH);
		ASSERT_NE(NULL, b) TH_LOG("request from %s", ctxs[i]);
		check_stack(_metadata, c, b);
	}
	EXPECT_EQ(stops, counter("stop_scratch_register")) {
		TH_LOG("the walk did not read the interrupted register");
	}
	EXPECT_EQ(unsup_reg, counter("eh_frame_unsupported_registers"));
	EXPECT_EQ(unsup_expr, counter("eh_frame_unsupported_expressions"));
}

/*
 * The interrupted frame keeps its CFA in a scratch register (%r10, %edi):
 * the walk reads it from the saved registers and goes on to the root.
 */
TEST_F(libs, cfa_in_a_scratch_register_of_the_interrupted_frame)
{
	self->c->leaf_asm = scratch_cfa_leaf;
	self->c->leaf_asm_ret = (unsigned long)scratch_cfa_ret;
	scratch_leaf_walks(_metadata, self->fd, self->res, self->c);
}

/*
 * The interrupted frame describes its CFA as bn_mul_mont does: the word
 * at SP + 8 + %r9 * 8, plus 8 (SP + 4 + %esi * 4, plus 4).
 */
TEST_F(libs, openssl_indexed_cfa_in_the_interrupted_frame)
{
	self->c->leaf_asm = scratch_idx_leaf;
	self->c->leaf_asm_ret = (unsigned long)scratch_idx_ret;
	scratch_leaf_walks(_metadata, self->fd, self->res, self->c);
}

/* From the leaf to the step at level 9: its frame is the third. */
#define SCRATCH_FRAMES_TO_STEP	(2 + (LIB_DEPTH - 1) - 10 + 1)

/*
 * A frame that called on with its CFA in a scratch register: the callee
 * may have changed it, and no frame says where it saved it. The walk ends
 * at that frame, exactly, and counts it.
 */
TEST_F(libs, cfa_in_a_scratch_register_of_a_caller_ends_there)
{
	long long stops = counter("stop_scratch_register");
	const struct cb *b;

	self->c->lib_a = scratch_cfa_step;
	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      LIB_DEPTH);
	ASSERT_NE(NULL, b);
	check_frames(_metadata, self->c, b, SCRATCH_FRAMES_TO_STEP, true);
	EXPECT_LT(stops, counter("stop_scratch_register")) {
		TH_LOG("stop_scratch_register did not count the end");
	}
}

#endif /* SELFTESTS_UNWIND_EH_FRAME_SCRATCH_H */
