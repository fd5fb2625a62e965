/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_X86_UNWIND_USER_H
#define _ASM_X86_UNWIND_USER_H

#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/unaligned.h>
#include <linux/unwind_user_types.h>
#include <asm/ptrace.h>

/*
 * The text arch_unwind_user_fp_prologue() looks at: one byte before the IP
 * (the "push %bp" that a "mov %sp,%bp" at the IP must follow) and, from the
 * IP on, the longest prologue start: endbr64, push %rbp, mov %rsp,%rbp.
 */
#define ARCH_UNWIND_USER_INSN_BEFORE	1
#define ARCH_UNWIND_USER_INSN_BYTES	8

enum arch_unwind_user_fp_at {
	ARCH_UNWIND_USER_FP_BODY,	/* bp points at the saved bp */
	ARCH_UNWIND_USER_FP_ENTRY,	/* the return address is on top */
	ARCH_UNWIND_USER_FP_PUSHED,	/* the saved bp is on top */
	ARCH_UNWIND_USER_FP_UNKNOWN,	/* too little text was read to tell */
};

/*
 * Compare the @len bytes at @insn with the @plen bytes of @pat: 1 when they
 * hold the pattern, 0 when they differ from it, -1 when they agree but are
 * too few to tell.
 */
static __always_inline int
arch_unwind_user_match(const u8 *insn, unsigned int len, const u8 *pat,
		       unsigned int plen)
{
	unsigned int i, n = min(len, plen);

	/* A few bytes: no out-of-line memcmp() on the walk's fixed path. */
	for (i = 0; i < n; i++)
		if (insn[i] != pat[i])
			return 0;
	return len >= plen ? 1 : -1;
}

/* mov %sp,%bp at @insn, in either encoding; 64-bit tasks need REX.W. */
static __always_inline int
arch_unwind_user_match_mov(const u8 *insn, unsigned int len, unsigned int ws)
{
	static const u8 mov[2][3] = {
		{ 0x48, 0x89, 0xe5 },	/* 89 /r */
		{ 0x48, 0x8b, 0xec },	/* 8b /r */
	};
	unsigned int rex = ws == 8 ? 0 : 1;	/* where to start in mov[] */
	int a, b;

	a = arch_unwind_user_match(insn, len, mov[0] + rex, 3 - rex);
	b = arch_unwind_user_match(insn, len, mov[1] + rex, 3 - rex);
	if (a > 0 || b > 0)
		return 1;
	return a < 0 || b < 0 ? -1 : 0;
}

/* mov %sp,%bp in the low bytes of @x, in either encoding (see below). */
static __always_inline bool arch_unwind_user_word_mov(u64 x, unsigned int ws)
{
	if (ws == 8)
		return (x & 0xffffff) == 0xe58948 || (x & 0xffffff) == 0xec8b48;
	return (x & 0xffff) == 0xe589 || (x & 0xffff) == 0xec8b;
}

/*
 * arch_unwind_user_fp_prologue() where all its text was read: the eight
 * bytes from the IP on as a little-endian word @w, the byte before it
 * @prev. The same answers, by a few compares of words.
 */
static __always_inline enum arch_unwind_user_fp_at
arch_unwind_user_fp_prologue_word(u64 w, u8 prev, unsigned int ws)
{
	bool endbr = false;

	if ((u8)w == 0xc3 || (u8)w == 0xc2)
		return ARCH_UNWIND_USER_FP_ENTRY;
	if ((u32)w == (ws == 8 ? 0xfa1e0ff3 : 0xfb1e0ff3)) {
		w >>= 32;
		endbr = true;
	}
	if ((u8)w == 0x55 || (u8)w == 0xcc)
		return arch_unwind_user_word_mov(w >> 8, ws) ?
		       ARCH_UNWIND_USER_FP_ENTRY : ARCH_UNWIND_USER_FP_BODY;
	if (endbr || !arch_unwind_user_word_mov(w, ws))
		return ARCH_UNWIND_USER_FP_BODY;
	return prev == 0x55 || prev == 0xcc ?
	       ARCH_UNWIND_USER_FP_PUSHED : ARCH_UNWIND_USER_FP_BODY;
}

/*
 * Classify the instruction the interrupted frame stopped at, from the text
 * around it: @len bytes from the IP on at @insn and @before bytes before it
 * (@insn[-1] when @before is 1). Only a real prologue start counts as a
 * function's entry: "[endbr] push %bp; mov %sp,%bp" with the IP at the endbr
 * or the push. There, and at "ret" and "ret $imm16", the return address is
 * on top of the stack. At a "mov %sp,%bp" that directly follows a
 * "push %bp", the saved bp is on top of it; so it is when an int3 stands in
 * place of the push (a uprobe on the push, which it emulated, or a debugger
 * breakpoint). At such an int3 itself (the state a uprobe handler saw) the
 * push has not run: the return address is on top, as at the push.
 * Anything else is the function body, including an endbr that
 * is an indirect branch target in the body and a push %bp that saves bp as
 * a callee-saved register.
 *
 * Always inlined, as what it calls: the walk classifies the text inside
 * its user access section, where no call may be made.
 *
 * Return: where the frame stopped, or ARCH_UNWIND_USER_FP_UNKNOWN when the
 * bytes given are too few to tell (the text could not all be read).
 */
static __always_inline enum arch_unwind_user_fp_at
arch_unwind_user_fp_prologue(const u8 *insn, unsigned int before,
			     unsigned int len, unsigned int ws)
{
	static const u8 endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const u8 endbr32[] = { 0xf3, 0x0f, 0x1e, 0xfb };
	int endbr, mov;

	/* The whole window, as the walk's user access section reads it. */
	if (before >= 1 && len >= sizeof(u64))
		return arch_unwind_user_fp_prologue_word(get_unaligned_le64(insn),
							 insn[-1], ws);
	if (!len)
		return ARCH_UNWIND_USER_FP_UNKNOWN;
	/* ret; ret $imm16 */
	if (insn[0] == 0xc3 || insn[0] == 0xc2)
		return ARCH_UNWIND_USER_FP_ENTRY;

	endbr = arch_unwind_user_match(insn, len, ws == 8 ? endbr64 : endbr32,
				       sizeof(endbr64));
	if (endbr < 0)
		return ARCH_UNWIND_USER_FP_UNKNOWN;
	if (endbr) {
		insn += sizeof(endbr64);
		len -= sizeof(endbr64);
		if (!len)
			return ARCH_UNWIND_USER_FP_UNKNOWN;
	}

	/* push %bp (or an int3 in its place); mov %sp,%bp */
	if (insn[0] == 0x55 || insn[0] == 0xcc) {
		mov = arch_unwind_user_match_mov(insn + 1, len - 1, ws);
		if (mov < 0)
			return ARCH_UNWIND_USER_FP_UNKNOWN;
		return mov ? ARCH_UNWIND_USER_FP_ENTRY : ARCH_UNWIND_USER_FP_BODY;
	}
	if (endbr)
		return ARCH_UNWIND_USER_FP_BODY;

	/* mov %sp,%bp right after push %bp (or an int3 in its place) */
	mov = arch_unwind_user_match_mov(insn, len, ws);
	if (mov <= 0)
		return mov ? ARCH_UNWIND_USER_FP_UNKNOWN : ARCH_UNWIND_USER_FP_BODY;
	if (!before)
		return ARCH_UNWIND_USER_FP_UNKNOWN;
	return insn[-1] == 0x55 || insn[-1] == 0xcc ?
	       ARCH_UNWIND_USER_FP_PUSHED : ARCH_UNWIND_USER_FP_BODY;
}

/*
 * The frame layout for each position, as offsets from the canonical frame
 * address (CFA, the stack pointer before the call pushed the return
 * address); @ws is the word size of the task's stack. In the body,
 * "push %bp; mov %sp,%bp" has run and bp points at the saved bp.
 */
static __always_inline void
arch_unwind_user_fp_frame(struct unwind_user_frame *frame,
			  enum arch_unwind_user_fp_at at, int ws)
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

/*
 * SFrame on x86_64: the ABI/arch identifier of its sections and the DWARF
 * numbers of the two registers a walk knows in every frame, which flexible
 * rows name.
 */
#define ARCH_SFRAME_ABI			3	/* AMD64, little endian */
#define ARCH_SFRAME_REG_FP		6	/* %rbp */
#define ARCH_SFRAME_REG_SP		7	/* %rsp */

/*
 * .eh_frame: the DWARF numbers of the frame and stack pointers and of the
 * return address column, for native code and, on x86_64, for the i386
 * code of compat tasks (ELF machine EM_386).
 */
#define ARCH_EH_FRAME_REG_FP		6	/* %rbp */
#define ARCH_EH_FRAME_REG_SP		7	/* %rsp */
#define ARCH_EH_FRAME_REG_RA		16	/* %rip */
/*
 * The base register, which ld.so's lazy-binding trampoline keeps its CFA
 * in while it realigns the stack (glibc's dl-trampoline.h): callee-saved,
 * so a walk can follow it through the frames that save it.
 */
#define ARCH_EH_FRAME_REG_BX		3	/* %rbx */

#define arch_unwind_user_bx arch_unwind_user_bx
static inline unsigned long arch_unwind_user_bx(struct pt_regs *regs)
{
	return regs->bx;
}

/*
 * The general registers, DWARF 0 to 15 (%rax, %rdx, %rcx, %rbx, %rsi,
 * %rdi, %rbp, %rsp, %r8 to %r15), and 0 to 7 of i386 code (%eax, %ecx,
 * %edx, %ebx, %esp, %ebp, %esi, %edi): an .eh_frame rule may keep the
 * interrupted frame's CFA in any of them.
 */
#define ARCH_EH_FRAME_GPRS		16
#define ARCH_EH_FRAME_GPRS32		8

/*
 * The value of general register @regno (DWARF numbering of @ws-byte code)
 * in the user registers @regs into *@val; false for a number that is not
 * one. Where @regs were saved at a system call, %rax (%eax) holds its
 * result and %rcx and %r11 what the syscall instruction left: what the
 * code sees after it, which is where the interrupted IP is.
 */
#define arch_unwind_user_reg arch_unwind_user_reg
static __always_inline bool arch_unwind_user_reg(const struct pt_regs *regs,
						 unsigned int regno,
						 unsigned int ws,
						 unsigned long *val)
{
#define ARCH_UNWIND_USER_REG(r)	offsetof(struct pt_regs, r)
	static const u8 regs64[] = {
		ARCH_UNWIND_USER_REG(ax), ARCH_UNWIND_USER_REG(dx),
		ARCH_UNWIND_USER_REG(cx), ARCH_UNWIND_USER_REG(bx),
		ARCH_UNWIND_USER_REG(si), ARCH_UNWIND_USER_REG(di),
		ARCH_UNWIND_USER_REG(bp), ARCH_UNWIND_USER_REG(sp),
#ifdef CONFIG_X86_64
		ARCH_UNWIND_USER_REG(r8), ARCH_UNWIND_USER_REG(r9),
		ARCH_UNWIND_USER_REG(r10), ARCH_UNWIND_USER_REG(r11),
		ARCH_UNWIND_USER_REG(r12), ARCH_UNWIND_USER_REG(r13),
		ARCH_UNWIND_USER_REG(r14), ARCH_UNWIND_USER_REG(r15),
#endif
	};
	static const u8 regs32[] = {
		ARCH_UNWIND_USER_REG(ax), ARCH_UNWIND_USER_REG(cx),
		ARCH_UNWIND_USER_REG(dx), ARCH_UNWIND_USER_REG(bx),
		ARCH_UNWIND_USER_REG(sp), ARCH_UNWIND_USER_REG(bp),
		ARCH_UNWIND_USER_REG(si), ARCH_UNWIND_USER_REG(di),
	};
#undef ARCH_UNWIND_USER_REG
	const void *base = regs;
	/*
	 * Read through pointers, bounded here: an index of the arrays would
	 * leave UBSAN a check to call, and the walk may run this in a user
	 * access section.
	 */
	const u8 *off32 = regs32, *off64 = regs64;

	if (ws == 4) {
		if (regno >= ARRAY_SIZE(regs32))
			return false;
		*val = *(const u32 *)(base + off32[regno]);
		return true;
	}
	if (regno >= ARRAY_SIZE(regs64))
		return false;
	*val = *(const unsigned long *)(base + off64[regno]);
	return true;
}

/* Where @mm's vDSO image is mapped: its tables are read there. */
#define arch_unwind_user_vdso(mm)	((unsigned long)(mm)->context.vdso)

#ifdef CONFIG_X86_64
#define ARCH_EH_FRAME_COMPAT_MACHINE	EM_386
#define ARCH_EH_FRAME_REG32_FP		5	/* %ebp */
#define ARCH_EH_FRAME_REG32_SP		4	/* %esp */
#define ARCH_EH_FRAME_REG32_RA		8	/* %eip */
#define ARCH_EH_FRAME_REG32_BX		3	/* %ebx */
#endif

#endif /* _ASM_X86_UNWIND_USER_H */
