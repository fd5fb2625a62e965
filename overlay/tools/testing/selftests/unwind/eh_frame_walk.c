// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user stack walks through code built as distributions build it:
 * -O2 -fomit-frame-pointer with gcc's default unwind tables, .eh_frame and
 * no SFrame, found by its PT_GNU_EH_FRAME header with no help from libc.
 * The call chain of table_chain.h, across a library the program needs and
 * one it dlopens; through a signal handler back to the interrupted chain
 * (on the signal's own stack and on an alternate one); with the method
 * turned off at run time; and through libraries whose .eh_frame the tests
 * damaged, one kind of damage each. Built twice: as a native program and
 * as an i386 one (eh_frame_walk_32), whose .eh_frame the walk reads too.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>

#ifndef __x86_64__
/* <sys/auxv.h> brings glibc's <elf.h>, which clashes with <linux/elf.h>. */
#include <linux/auxvec.h>
unsigned long getauxval(unsigned long type);
#endif

#include "table_chain.h"
#include "chain_signal.h"
#ifdef __x86_64__
#include "wide_table.h"
#endif

/* The libraries of this build: the i386 one has its own. */
#ifdef __x86_64__
#define LIB_B		"libeh_b.so"
#else
#define LIB_B		"libeh_b_32.so"
#endif

FIXTURE(eh_frame) {
	int fd;
	struct results *res;
	struct chain *c;
	char methods[128];
};

FIXTURE_VARIANT(eh_frame) {
	const char *ctx;
	int depth;
};

FIXTURE_VARIANT_ADD(eh_frame, task_depth_3) { "task", 3 };
FIXTURE_VARIANT_ADD(eh_frame, task_depth_16) { "task", 16 };
FIXTURE_VARIANT_ADD(eh_frame, task_depth_40) { "task", 40 };
FIXTURE_VARIANT_ADD(eh_frame, irq_depth_16) { "irq", 16 };
FIXTURE_VARIANT_ADD(eh_frame, nmi_depth_40) { "nmi", 40 };

#define NO_EH_FRAME "the kernel has no .eh_frame unwinder (CONFIG_UNWIND_USER_EH_FRAME)"

FIXTURE_SETUP(eh_frame)
{
	self->methods[0] = '\0';
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
	if (counter("eh_frame_frames") < 0)
		SKIP(return, NO_EH_FRAME);
	ASSERT_TRUE(knob_read(METHODS_PATH, self->methods,
			      sizeof(self->methods)));
}

FIXTURE_TEARDOWN(eh_frame)
{
	if (self->methods[0])
		knob_write(METHODS_PATH, self->methods);
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

/* Every frame of the chain comes from the program's .eh_frame. */
TEST_F(eh_frame, chain_without_frame_pointers)
{
	long long before = counter("eh_frame_frames");
	const struct cb *b;

	ASSERT_NE(NULL, strstr(self->methods, "eh_frame")) {
		TH_LOG("%s lists: %s", METHODS_PATH, self->methods);
	}
	b = walk_once(_metadata, self->fd, self->res, self->c, variant->ctx,
		      variant->depth);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
	EXPECT_LE(before + variant->depth + 1, counter("eh_frame_frames")) {
		TH_LOG("eh_frame_frames grew by %lld for a chain of %d frames",
		       counter("eh_frame_frames") - before, variant->depth + 2);
	}
}

/*
 * Turned off at run time, the method is not used: the walk falls back to
 * frame pointers, which the poisoned %rbp stops after the first frames;
 * turned on again, the chain is whole again.
 */
TEST_F(eh_frame, turned_off_and_on_at_run_time)
{
	long long before;
	const struct cb *b;
	char now[128];

	ASSERT_EQ(0, knob_write(METHODS_PATH, "fp sframe"));
	ASSERT_TRUE(knob_read(METHODS_PATH, now, sizeof(now)));
	EXPECT_EQ(NULL, strstr(now, "eh_frame")) TH_LOG("methods: %s", now);
	before = counter("eh_frame_frames");
	b = walk_once(_metadata, self->fd, self->res, self->c, variant->ctx,
		      variant->depth);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(before, counter("eh_frame_frames"));
	EXPECT_GT(variant->depth + 2, (int)b->nr) {
		TH_LOG("%u frames with .eh_frame turned off; frame pointers cannot find them",
		       b->nr);
	}

	EXPECT_EQ(-EINVAL, knob_write(METHODS_PATH, "sframe eh_frame"));
	EXPECT_EQ(-EINVAL, knob_write(METHODS_PATH, "fp dwarf"));
	ASSERT_EQ(0, knob_write(METHODS_PATH, self->methods));
	b = walk_once(_metadata, self->fd, self->res, self->c, variant->ctx,
		      variant->depth);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
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
	if (counter("eh_frame_frames") < 0)
		SKIP(return, NO_EH_FRAME);
	lib_path(path, sizeof(path), LIB_B);
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
	long long sections = counter("eh_frame_sections");
	const struct cb *b;

	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      LIB_DEPTH);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
	/* The dlopen'd library is met for the first time here. */
	EXPECT_LT(sections, counter("eh_frame_sections"));
}

#ifdef __x86_64__
/* Every step of a library with an .eh_frame of 1,000 functions. */
TEST_F(libs, every_function_of_a_wide_table_is_found)
{
	wide_every_step(_metadata, self->fd, self->res, self->c,
			"libeh_wide.so");
}

/*
 * A library linked above the user address space is mapped lower, at a
 * negative load bias: its .eh_frame is found all the same.
 */
TEST_F(libs, library_mapped_below_its_link_address)
{
	long long sections = counter("eh_frame_sections");
	sframe_step_t step;
	const struct cb *b;
	char path[4200];
	void *h;

	lib_path(path, sizeof(path), "libeh_high.so");
	h = open_step(path, &step);
	ASSERT_NE(NULL, step) TH_LOG("dlopen %s: %s", path, dlerror());
	self->c->lib_b = step;
	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      LIB_DEPTH);
	dlclose(h);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
	EXPECT_LT(sections, counter("eh_frame_sections")) {
		TH_LOG("the library's .eh_frame was not set up");
	}
}

/* More copies of it than the mm's table holds, each walked by its own. */
TEST_F(libs, wide_tables_beyond_the_cache_are_each_their_own)
{
	wide_copies(_metadata, self->fd, self->res, self->c, "libeh_wide.so");
}
#endif

/*
 * The asm steps below share their ends: store the return address (loaded
 * into the accumulator) in ras[level], and call next(chain, level + 1,
 * next, ras) with the stack aligned as the ABI wants, then return.
 */
#ifdef __x86_64__
#define STEP_STORE_RA \
	"	movslq %esi, %r8\n" \
	"	mov %rax, (%rcx,%r8,8)\n"
#define STEP_CALL_NEXT \
	"	sub $8, %rsp\n" \
	"	.cfi_adjust_cfa_offset 8\n" \
	"	add $1, %esi\n" \
	"	call *%rdx\n" \
	"	add $8, %rsp\n" \
	"	.cfi_adjust_cfa_offset -8\n" \
	"	ret\n"
#else
#define STEP_STORE_RA \
	"	mov 8(%esp), %ecx\n" \
	"	mov 16(%esp), %edx\n" \
	"	mov %eax, (%edx,%ecx,4)\n"
#define STEP_CALL_NEXT \
	"	mov 8(%esp), %ecx\n" \
	"	add $1, %ecx\n" \
	"	mov 4(%esp), %eax\n" \
	"	mov 12(%esp), %edx\n" \
	"	sub $4, %esp\n" \
	"	.cfi_adjust_cfa_offset 4\n" \
	"	push %ecx\n" \
	"	.cfi_adjust_cfa_offset 4\n" \
	"	push %eax\n" \
	"	.cfi_adjust_cfa_offset 4\n" \
	"	call *%edx\n" \
	"	add $12, %esp\n" \
	"	.cfi_adjust_cfa_offset -12\n" \
	"	ret\n"
#endif

/*
 * A step of the chain whose FDE holds 12,000 call frame instructions
 * before its call: 3000 pushes and pops, each with its CFA offset.
 * Generated code has such functions: gcc's own cc1 (Debian 12) has an FDE
 * of 13,361 instructions. It records its return address in ras[level] and
 * calls next(chain, level + 1), as the library steps do.
 */
long long_fde_step(void *chain, int level, sframe_next_t next,
		   unsigned long *ras);
#define LONG_FDE_PAIRS	"3000"
#ifdef __x86_64__
asm(".pushsection .text\n"
	".globl long_fde_step\n"
	".type long_fde_step, @function\n"
	"long_fde_step:\n"
	".cfi_startproc\n"
	"	mov (%rsp), %rax\n"
	STEP_STORE_RA
	"	.rept " LONG_FDE_PAIRS "\n"
	"	push %rbx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pop %rbx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.endr\n"
	STEP_CALL_NEXT
	".cfi_endproc\n"
	".size long_fde_step, . - long_fde_step\n"
	".popsection\n");
#else
asm(".pushsection .text\n"
	".globl long_fde_step\n"
	".type long_fde_step, @function\n"
	"long_fde_step:\n"
	".cfi_startproc\n"
	"	mov (%esp), %eax\n"
	STEP_STORE_RA
	"	.rept " LONG_FDE_PAIRS "\n"
	"	push %ebx\n"
	"	.cfi_adjust_cfa_offset 4\n"
	"	pop %ebx\n"
	"	.cfi_adjust_cfa_offset -4\n"
	"	.endr\n"
	STEP_CALL_NEXT
	".cfi_endproc\n"
	".size long_fde_step, . - long_fde_step\n"
	".popsection\n");
#endif

/*
 * A function whose FDE is long is walked through like any other: its
 * instructions are not data that breaks a rule, however many there are
 * within the entry's 64 KiB.
 */
TEST_F(libs, function_with_12000_cfa_instructions)
{
	long long bad = counter("eh_frame_bad_data");
	const struct cb *b;

	self->c->lib_a = long_fde_step;
	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      LIB_DEPTH);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
	EXPECT_EQ(bad, counter("eh_frame_bad_data")) {
		TH_LOG("the long FDE was counted as bad data");
	}
}

/*
 * A step whose FDE has a CIE of its own (the assembler gives it one, as
 * its first rules match no other CIE's), whose initial rules leave the
 * return address undefined: the FDE saves it past the first instruction,
 * the call is further on. Its callers' FDEs share the program's other CIE.
 */
long own_cie_step(void *chain, int level, sframe_next_t next,
		  unsigned long *ras);
#ifdef __x86_64__
asm(".pushsection .text\n"
	".globl own_cie_step\n"
	".type own_cie_step, @function\n"
	"own_cie_step:\n"
	".cfi_startproc simple\n"
	".cfi_def_cfa %rsp, 8\n"
	".cfi_undefined %rip\n"
	"	mov (%rsp), %rax\n"
	".cfi_offset %rip, -8\n"
	STEP_STORE_RA
	STEP_CALL_NEXT
	".cfi_endproc\n"
	".size own_cie_step, . - own_cie_step\n"
	".popsection\n");
#else
asm(".pushsection .text\n"
	".globl own_cie_step\n"
	".type own_cie_step, @function\n"
	"own_cie_step:\n"
	".cfi_startproc simple\n"
	".cfi_def_cfa %esp, 4\n"
	".cfi_undefined %eip\n"
	"	mov (%esp), %eax\n"
	".cfi_offset %eip, -4\n"
	STEP_STORE_RA
	STEP_CALL_NEXT
	".cfi_endproc\n"
	".size own_cie_step, . - own_cie_step\n"
	".popsection\n");
#endif

/*
 * A step of hand-written assembly that realigns its stack: it keeps the
 * stack pointer it was entered with in a slot of its frame and describes
 * its CFA as that word plus the return address's size
 * (DW_CFA_def_cfa_expression: breg SP 16; deref; plus_uconst W), as
 * OpenSSL's perlasm does for its crypto functions. It records its return
 * address in ras[level] and calls next(chain, level + 1).
 */
long saved_sp_step(void *chain, int level, sframe_next_t next,
		   unsigned long *ras);
#ifdef __x86_64__
asm(".pushsection .text\n"
	".globl saved_sp_step\n"
	".type saved_sp_step, @function\n"
	"saved_sp_step:\n"
	".cfi_startproc\n"
	"	mov (%rsp), %rax\n"
	STEP_STORE_RA
	"	mov %rsp, %rax\n"
	".cfi_def_cfa_register %rax\n"
	"	sub $64, %rsp\n"
	"	and $-32, %rsp\n"
	"	mov %rax, 16(%rsp)\n"
	".cfi_escape 0x0f, 0x05, 0x77, 0x10, 0x06, 0x23, 0x08\n"
	"	add $1, %esi\n"
	"	call *%rdx\n"
	"	mov 16(%rsp), %rsp\n"
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size saved_sp_step, . - saved_sp_step\n"
	".popsection\n");
#else
asm(".pushsection .text\n"
	".globl saved_sp_step\n"
	".type saved_sp_step, @function\n"
	"saved_sp_step:\n"
	".cfi_startproc\n"
	"	mov (%esp), %eax\n"
	STEP_STORE_RA
	"	mov %esp, %eax\n"
	".cfi_def_cfa_register %eax\n"
	"	sub $64, %esp\n"
	"	and $-32, %esp\n"
	"	mov %eax, 16(%esp)\n"
	".cfi_escape 0x0f, 0x05, 0x74, 0x10, 0x06, 0x23, 0x04\n"
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
	".size saved_sp_step, . - saved_sp_step\n"
	".popsection\n");
#endif

/*
 * The walk goes through the step: its CFA is the saved stack pointer
 * plus the return address's size, not an expression it gives up on.
 */
TEST_F(libs, assembly_that_saved_its_stack_pointer)
{
	long long unsup = counter("eh_frame_unsupported_expressions");
	const struct cb *b;

	self->c->lib_a = saved_sp_step;
	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      LIB_DEPTH);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
	EXPECT_EQ(unsup, counter("eh_frame_unsupported_expressions")) {
		TH_LOG("the step's CFA expression was counted unsupported");
	}
}

/*
 * A walk keeps the CIE its last lookup decoded, for the next FDEs that
 * point to it: each FDE must still be read with its own. The walk looks
 * up the step (its own CIE) and then its caller in the same file (the
 * other CIE): read with the step's CIE, the caller's return address
 * would be undefined and the walk would end there, as outermost.
 */
TEST_F(libs, each_fde_is_read_with_its_own_cie)
{
	const struct cb *b;

	self->c->lib_a = own_cie_step;
	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      LIB_DEPTH);
	ASSERT_NE(NULL, b);
	check_stack(_metadata, self->c, b);
}

/*
 * Steps that keep their CFA in %rbx (%ebx) while they realign the stack,
 * as ld.so's lazy-binding trampoline does (glibc's dl-trampoline.h), and
 * call an inner step (level + 1) that calls next(chain, level + 2). The
 * inner step of bx_cfa_step saves %rbx and puts another value in it: the
 * walk finds the outer step's CFA in that save. That of bx_cfa_lost_step
 * keeps it in another register, which the walk does not follow.
 */
long bx_cfa_step(void *chain, int level, sframe_next_t next,
		 unsigned long *ras);
#ifdef __x86_64__
#define BX_OUTER(inner) \
	".cfi_startproc\n" \
	"	mov (%rsp), %rax\n" \
	STEP_STORE_RA \
	"	push %rbx\n" \
	".cfi_adjust_cfa_offset 8\n" \
	".cfi_rel_offset %rbx, 0\n" \
	"	mov %rsp, %rbx\n" \
	".cfi_def_cfa_register %rbx\n" \
	"	and $-64, %rsp\n" \
	"	add $1, %esi\n" \
	"	call " inner "\n" \
	"	mov %rbx, %rsp\n" \
	".cfi_def_cfa_register %rsp\n" \
	"	pop %rbx\n" \
	".cfi_adjust_cfa_offset -8\n" \
	".cfi_restore %rbx\n" \
	"	ret\n" \
	".cfi_endproc\n"
/* The inner steps: with %rsi the level, %rcx ras and %rdx next. */
#define BX_INNER(save, restore) \
	".cfi_startproc\n" \
	"	mov (%rsp), %rax\n" \
	STEP_STORE_RA \
	save \
	"	mov $0x5a5a5a5b, %ebx\n" \
	"	add $1, %esi\n" \
	"	call *%rdx\n" \
	restore \
	"	ret\n" \
	".cfi_endproc\n"
#define BX_SAVE \
	"	push %rbx\n" \
	".cfi_adjust_cfa_offset 8\n" \
	".cfi_rel_offset %rbx, 0\n"
#define BX_RESTORE \
	"	pop %rbx\n" \
	".cfi_adjust_cfa_offset -8\n" \
	".cfi_restore %rbx\n"
#define BX_MOVE \
	"	push %r12\n" \
	".cfi_adjust_cfa_offset 8\n" \
	".cfi_rel_offset %r12, 0\n" \
	"	mov %rbx, %r12\n" \
	".cfi_register %rbx, %r12\n"
#define BX_MOVE_BACK \
	"	mov %r12, %rbx\n" \
	".cfi_restore %rbx\n" \
	"	pop %r12\n" \
	".cfi_adjust_cfa_offset -8\n" \
	".cfi_restore %r12\n"
#else
#define BX_OUTER(inner) \
	".cfi_startproc\n" \
	"	mov (%esp), %eax\n" \
	STEP_STORE_RA \
	"	push %ebx\n" \
	".cfi_adjust_cfa_offset 4\n" \
	".cfi_rel_offset %ebx, 0\n" \
	"	mov %esp, %ebx\n" \
	".cfi_def_cfa_register %ebx\n" \
	"	and $-64, %esp\n" \
	"	sub $16, %esp\n" \
	"	mov 8(%ebx), %eax\n" \
	"	mov %eax, (%esp)\n" \
	"	mov 12(%ebx), %eax\n" \
	"	add $1, %eax\n" \
	"	mov %eax, 4(%esp)\n" \
	"	mov 16(%ebx), %eax\n" \
	"	mov %eax, 8(%esp)\n" \
	"	mov 20(%ebx), %eax\n" \
	"	mov %eax, 12(%esp)\n" \
	"	call " inner "\n" \
	"	mov %ebx, %esp\n" \
	".cfi_def_cfa_register %esp\n" \
	"	pop %ebx\n" \
	".cfi_adjust_cfa_offset -4\n" \
	".cfi_restore %ebx\n" \
	"	ret\n" \
	".cfi_endproc\n"
/* One register saved, 24 bytes more: the arguments at 32(%esp) on. */
#define BX_INNER(save, restore) \
	".cfi_startproc\n" \
	"	mov (%esp), %eax\n" \
	STEP_STORE_RA \
	save \
	"	mov $0x5a5a5a5b, %ebx\n" \
	"	sub $24, %esp\n" \
	".cfi_adjust_cfa_offset 24\n" \
	"	mov 32(%esp), %eax\n" \
	"	mov %eax, (%esp)\n" \
	"	mov 36(%esp), %eax\n" \
	"	add $1, %eax\n" \
	"	mov %eax, 4(%esp)\n" \
	"	mov 40(%esp), %ecx\n" \
	"	mov %ecx, 8(%esp)\n" \
	"	mov 44(%esp), %eax\n" \
	"	mov %eax, 12(%esp)\n" \
	"	call *%ecx\n" \
	"	add $24, %esp\n" \
	".cfi_adjust_cfa_offset -24\n" \
	restore \
	"	ret\n" \
	".cfi_endproc\n"
#define BX_SAVE \
	"	push %ebx\n" \
	".cfi_adjust_cfa_offset 4\n" \
	".cfi_rel_offset %ebx, 0\n"
#define BX_RESTORE \
	"	pop %ebx\n" \
	".cfi_adjust_cfa_offset -4\n" \
	".cfi_restore %ebx\n"
#define BX_MOVE \
	"	push %esi\n" \
	".cfi_adjust_cfa_offset 4\n" \
	".cfi_rel_offset %esi, 0\n" \
	"	mov %ebx, %esi\n" \
	".cfi_register %ebx, %esi\n"
#define BX_MOVE_BACK \
	"	mov %esi, %ebx\n" \
	".cfi_restore %ebx\n" \
	"	pop %esi\n" \
	".cfi_adjust_cfa_offset -4\n" \
	".cfi_restore %esi\n"
#endif
asm(".pushsection .text\n"
	".globl bx_cfa_step\n"
	".type bx_cfa_step, @function\n"
	"bx_cfa_step:\n"
	BX_OUTER("bx_saved_inner")
	".size bx_cfa_step, . - bx_cfa_step\n"
	".type bx_saved_inner, @function\n"
	"bx_saved_inner:\n"
	BX_INNER(BX_SAVE, BX_RESTORE)
	".size bx_saved_inner, . - bx_saved_inner\n"
	".globl bx_cfa_lost_step\n"
	".type bx_cfa_lost_step, @function\n"
	"bx_cfa_lost_step:\n"
	BX_OUTER("bx_moved_inner")
	".size bx_cfa_lost_step, . - bx_cfa_lost_step\n"
	".type bx_moved_inner, @function\n"
	"bx_moved_inner:\n"
	BX_INNER(BX_MOVE, BX_MOVE_BACK)
	".size bx_moved_inner, . - bx_moved_inner\n"
	".popsection\n");

/*
 * A chain whose steps at levels 3 and 9 take two levels: the last, 9,
 * leaves levels 11 and 12 to the chain's own steps.
 */
#define BX_DEPTH	13
/* From the leaf to the outer step at level 9: its frame is the fifth. */
#define BX_FRAMES_TO_STEP	(2 + (BX_DEPTH - 1) - 10 + 1)

/*
 * The walk follows %rbx through the inner frame's save to the outer
 * step's CFA, and goes on to the root; a second walk, by the rules the
 * process remembers, does the same.
 */
TEST_F(libs, cfa_in_the_base_register_saved_by_a_callee)
{
	long long lost = counter("stop_base_register_lost");
	const struct cb *b;
	int i;

	self->c->lib_a = bx_cfa_step;
	for (i = 0; i < 2; i++) {
		b = walk_once(_metadata, self->fd, self->res, self->c, "task",
			      BX_DEPTH);
		ASSERT_NE(NULL, b);
		check_stack(_metadata, self->c, b);
	}
	EXPECT_EQ(lost, counter("stop_base_register_lost")) {
		TH_LOG("the walk lost %%rbx, which the inner frame saved");
	}
}

/*
 * The same, its inner step keeping %rbx in %r12 (%ebx in %esi) rather than
 * on the stack.
 */
long bx_cfa_lost_step(void *chain, int level, sframe_next_t next,
		      unsigned long *ras);

/*
 * Where the inner frame keeps %rbx in another register, the outer step's
 * CFA cannot be found: the walk ends at the outer step, counted, and never
 * takes its CFA from the value the inner step left in %rbx.
 */
TEST_F(libs, cfa_in_a_base_register_the_walk_lost_ends_there)
{
	long long lost = counter("stop_base_register_lost");
	const struct cb *b;

	self->c->lib_a = bx_cfa_lost_step;
	b = walk_once(_metadata, self->fd, self->res, self->c, "task",
		      BX_DEPTH);
	ASSERT_NE(NULL, b);
	check_frames(_metadata, self->c, b, BX_FRAMES_TO_STEP, true);
	EXPECT_LT(lost, counter("stop_base_register_lost")) {
		TH_LOG("stop_base_register_lost did not count the end");
	}
}

#define BUDGET_PATH	"/sys/kernel/unwind_user/work_budget"

static long budget_read(void)
{
	FILE *f = fopen(BUDGET_PATH, "r");
	long v = -1;

	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

static int budget_write(long v)
{
	char buf[32];
	int fd = open(BUDGET_PATH, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	snprintf(buf, sizeof(buf), "%ld", v);
	if (write(fd, buf, strlen(buf)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Walk the chain once in a new process, which has not met its tables
 * yet: every rule is looked up. The child's exit status: 0 when its walk
 * found @want_frames frames or more (less with @fewer), 1 otherwise.
 */
static int cold_walk(struct __test_metadata *_metadata, int fd,
		     struct results *r, struct chain *c, unsigned int want,
		     bool fewer)
{
	const struct cb *b;
	int status;
	pid_t pid = fork();

	if (!pid) {
		b = walk_once(_metadata, fd, r, c, "task", LIB_DEPTH);
		if (!b)
			_exit(2);
		if (fewer ? b->nr >= want : b->nr < want) {
			fprintf(stderr, "# the cold walk found %u frames\n",
				b->nr);
			_exit(1);
		}
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * A walk does a bounded amount of table work: with a budget too small for
 * the chain's first lookups, the walk ends early and says why
 * (stop_budget); the default budget walks the whole chain cold.
 */
TEST_F(libs, table_work_is_bounded_by_the_budget)
{
	long saved = budget_read();
	long long stops = counter("stop_budget");
	int ret;

	ASSERT_LT(0, saved) TH_LOG("%s cannot be read", BUDGET_PATH);
	EXPECT_EQ(-EINVAL, budget_write(0));
	ASSERT_EQ(0, budget_write(20));
	ret = cold_walk(_metadata, self->fd, self->res, self->c,
			LIB_DEPTH + 2, true);
	budget_write(saved);
	EXPECT_EQ(0, ret) TH_LOG("a budget of 20 did not cut the cold walk");
	EXPECT_LT(stops, counter("stop_budget"));

	stops = counter("stop_budget");
	EXPECT_EQ(0, cold_walk(_metadata, self->fd, self->res, self->c,
			       LIB_DEPTH + 2, false)) {
		TH_LOG("the default budget (%ld) cut a cold walk", saved);
	}
	EXPECT_EQ(stops, counter("stop_budget"));
}

/*
 * A task that dies in the kernel holding its mmap lock (an oops in a page
 * fault) walks its stack in do_exit() for a pending request: the walk
 * must not wait for the lock it holds. It falls back to frame pointers
 * for mappings it cannot look up, and the callback runs.
 */
TEST_F(libs, exit_holding_the_mmap_lock_still_walks)
{
	struct results *r = self->res;
	int status, ret, i, found = 0;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		ret = ctl(self->fd, "arm-exit-locked 0x1");
		_exit(ret == -EOPNOTSUPP ? 4 : ret ? 5 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 4)
		SKIP(return, "the test module has no kprobes");
	ASSERT_EQ(0, WEXITSTATUS(status));

	ASSERT_EQ(0, read_results(self->fd, r));
	for (i = 0; i < r->nreq; i++) {
		if (r->req[i].pid == pid && !strcmp(r->req[i].at, "exit"))
			SKIP(return, "the exit probe could not take the mmap lock (an int3 probe)");
		if (r->req[i].pid == pid && !strcmp(r->req[i].at, "exit-locked")) {
			EXPECT_EQ(0, r->req[i].ret);
			found++;
		}
	}
	ASSERT_EQ(1, found) TH_LOG("no request was made in do_exit() with the lock held");
	found = 0;
	for (i = 0; i < r->ncb; i++) {
		if (r->cb[i].pid != pid)
			continue;
		found++;
		EXPECT_EQ(1, r->cb[i].exiting);
		EXPECT_LE(1, (int)r->cb[i].nr);
	}
	EXPECT_EQ(1, found) TH_LOG("the exiting task's callback ran %d times", found);
}

/*
 * A signal taken at the bottom of one chain runs a handler that asks for
 * the stack from the bottom of another (chain_signal.h). The walk must go
 * through the handler's chain, the handler, the signal trampoline (the
 * handler's return address: libc's __restore_rt, or the vDSO's on i386),
 * then the interrupted chain from the exact instruction the signal
 * interrupted, to its end.
 */
FIXTURE(signal) {
	int fd;
	struct results *res;
	struct chain *c;
	struct chain inner;
	stack_t alt;
};

FIXTURE_VARIANT(signal) {
	bool altstack;
	int outer, inner;
};

FIXTURE_VARIANT_ADD(signal, same_stack) { false, 12, 5 };
FIXTURE_VARIANT_ADD(signal, alternate_stack) { true, 12, 5 };
FIXTURE_VARIANT_ADD(signal, deep_handler) { false, 3, 30 };

FIXTURE_SETUP(signal)
{
	struct sigaction sa = { .sa_handler = chain_on_signal };

	self->alt.ss_sp = NULL;
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
	if (counter("eh_frame_frames") < 0)
		SKIP(return, NO_EH_FRAME);
	if (variant->altstack) {
		self->alt.ss_size = 1 << 20;
		self->alt.ss_sp = malloc(self->alt.ss_size);
		ASSERT_NE(NULL, self->alt.ss_sp);
		ASSERT_EQ(0, sigaltstack(&self->alt, NULL));
		sa.sa_flags |= SA_ONSTACK;
	}
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
}

FIXTURE_TEARDOWN(signal)
{
	stack_t off = { .ss_flags = SS_DISABLE };

	signal(SIGUSR1, SIG_DFL);
	if (self->alt.ss_sp) {
		sigaltstack(&off, NULL);
		free(self->alt.ss_sp);
	}
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

TEST_F(signal, handler_stack_reaches_the_interrupted_chain)
{
	static const char cmd[] = "request task 0x1";
	unsigned long want[2 * MAX_DEPTH + 8];
	long long crossed = counter("eh_frame_signal_frames");
#ifdef __x86_64__
	struct sigaction now;
#endif
	const struct cb *b;
	int n, i;

	chain_prepare(&self->inner, variant->inner, __NR_write, self->fd,
		      (long)cmd, sizeof(cmd) - 1);
	sig_chain = &self->inner;
	ASSERT_EQ(0, ctl(self->fd, "clear"));
	/* The signal is taken on the return from tgkill(), at the leaf. */
	chain_syscall(self->c, variant->outer, __NR_tgkill, getpid(),
		      gettid(), SIGUSR1);
	ASSERT_EQ(0, self->c->ret);
	ASSERT_EQ(sizeof(cmd) - 1, self->inner.ret);
	ASSERT_EQ(0, read_results(self->fd, self->res));
	ASSERT_EQ(1, self->res->ncb);
	b = &self->res->cb[0];

	/* The handler's chain, the handler, then the interrupted chain. */
	n = chain_frames(&self->inner, want);
	want[n++] = sig_handler_ra;
	n += chain_frames(self->c, want + n);
#ifdef __x86_64__
	/* libc's restorer (__restore_rt), which the kernel returns to */
	ASSERT_EQ(0, sigaction(SIGUSR1, NULL, &now));
	EXPECT_EQ((unsigned long)now.sa_restorer, sig_handler_ra) {
		TH_LOG("the handler returns to %#lx, not to the restorer %#lx",
		       sig_handler_ra, (unsigned long)now.sa_restorer);
	}
#else
	/* i386: the vDSO's __kernel_rt_sigreturn, read by its own table */
	EXPECT_GT(4 * 4096UL, sig_handler_ra - getauxval(AT_SYSINFO_EHDR)) {
		TH_LOG("the handler returns to %#lx, not into the vDSO at %#lx",
		       sig_handler_ra, getauxval(AT_SYSINFO_EHDR));
	}
#endif
	ASSERT_GE((int)b->nr, n) {
		TH_LOG("%u frames; the handler's and the interrupted chains have %d",
		       b->nr, n);
		for (i = 0; i < (int)b->nr; i++)
			TH_LOG("  got %#llx", b->ips[i]);
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ((unsigned long long)want[i], b->ips[i]) {
			TH_LOG("frame %d: want %#lx, got %#llx", i, want[i],
			       b->ips[i]);
		}
	}
	EXPECT_LT(crossed, counter("eh_frame_signal_frames"));
}

#include "eh_frame_scratch.h"

/* The damaged copies are made by an ELF64 parser. */
#ifdef __x86_64__
#include "eh_frame_hostile.h"
#endif

TEST_HARNESS_MAIN
