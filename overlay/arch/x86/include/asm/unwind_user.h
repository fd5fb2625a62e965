/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_X86_UNWIND_USER_H
#define _ASM_X86_UNWIND_USER_H

#include <linux/string.h>
#include <linux/types.h>
#include <linux/unwind_user_types.h>
#include <asm/ptrace.h>

/* How many instruction bytes arch_unwind_user_fp_prologue() looks at. */
#define ARCH_UNWIND_USER_INSN_BYTES	4

enum arch_unwind_user_fp_at {
	ARCH_UNWIND_USER_FP_BODY,
	ARCH_UNWIND_USER_FP_ENTRY,
	ARCH_UNWIND_USER_FP_PUSHED,
};

/*
 * Classify the instruction the interrupted frame stopped at: a function's
 * first instruction (push %bp, or the endbr before it) and "ret" leave the
 * return address on top of the stack; "mov %sp,%bp" right after the push
 * leaves the saved bp on top of it. Anything else is the function body.
 */
static inline enum arch_unwind_user_fp_at
arch_unwind_user_fp_prologue(const u8 *insn, unsigned int len, unsigned int ws)
{
	static const u8 endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const u8 endbr32[] = { 0xf3, 0x0f, 0x1e, 0xfb };
	const u8 *endbr = ws == 8 ? endbr64 : endbr32;
	const u8 *mov = insn;

	if (len < 1)
		return ARCH_UNWIND_USER_FP_BODY;
	/* push %bp; ret; ret $imm16 */
	if (insn[0] == 0x55 || insn[0] == 0xc3 || insn[0] == 0xc2)
		return ARCH_UNWIND_USER_FP_ENTRY;
	if (len >= sizeof(endbr64) && !memcmp(insn, endbr, sizeof(endbr64)))
		return ARCH_UNWIND_USER_FP_ENTRY;
	/* mov %sp,%bp in either encoding (89 e5, 8b ec), REX.W on 64-bit */
	if (ws == 8) {
		if (len < 3 || mov[0] != 0x48)
			return ARCH_UNWIND_USER_FP_BODY;
		mov++;
		len--;
	}
	if (len >= 2 && ((mov[0] == 0x89 && mov[1] == 0xe5) ||
			 (mov[0] == 0x8b && mov[1] == 0xec)))
		return ARCH_UNWIND_USER_FP_PUSHED;
	return ARCH_UNWIND_USER_FP_BODY;
}

/*
 * The frame layout for each position, as offsets from the canonical frame
 * address (CFA, the stack pointer before the call pushed the return
 * address); @ws is the word size of the task's stack. In the body,
 * "push %bp; mov %sp,%bp" has run and bp points at the saved bp.
 */
static inline void arch_unwind_user_fp_frame(struct unwind_user_frame *frame,
					     enum arch_unwind_user_fp_at at,
					     int ws)
{
	frame->ra_off = -ws;
	switch (at) {
	case ARCH_UNWIND_USER_FP_ENTRY:
		frame->cfa_off = ws;
		frame->fp_off = 0;
		frame->use_fp = false;
		break;
	case ARCH_UNWIND_USER_FP_PUSHED:
		frame->cfa_off = 2 * ws;
		frame->fp_off = -2 * ws;
		frame->use_fp = false;
		break;
	default:
		frame->cfa_off = 2 * ws;
		frame->fp_off = -2 * ws;
		frame->use_fp = true;
		break;
	}
}

/* The word size of the user stack: 4 for ia32 compat tasks. */
static inline unsigned int arch_unwind_user_word_size(struct pt_regs *regs)
{
#ifdef CONFIG_X86_64
	if (!user_64bit_mode(regs))
		return sizeof(u32);
#endif
	return sizeof(long);
}

#endif /* _ASM_X86_UNWIND_USER_H */
