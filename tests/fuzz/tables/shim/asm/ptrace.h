/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: the registers asm/unwind_user.h names (not used here). */
#ifndef _FUZZ_ASM_PTRACE_H
#define _FUZZ_ASM_PTRACE_H

#include <linux/types.h>

struct pt_regs {
	unsigned long	bx;
	unsigned long	cs;
};

static inline bool user_64bit_mode(struct pt_regs *regs)
{
	return true;
}

#endif /* _FUZZ_ASM_PTRACE_H */
