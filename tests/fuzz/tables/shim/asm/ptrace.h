/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: the registers asm/unwind_user.h names (not used here). */
#ifndef _FUZZ_ASM_PTRACE_H
#define _FUZZ_ASM_PTRACE_H

#include <linux/types.h>

struct pt_regs {
	unsigned long	r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long	ax, cx, dx, si, di, ip, cs, flags, sp;
};

static inline bool user_64bit_mode(struct pt_regs *regs)
{
	return true;
}

#endif /* _FUZZ_ASM_PTRACE_H */
