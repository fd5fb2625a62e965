/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzz shim: the task's saved user registers, which step.h reads for a
 * rule in a scratch register. The harness walks no stack: none are read.
 */
#ifndef _FUZZ_LINUX_SCHED_TASK_STACK_H
#define _FUZZ_LINUX_SCHED_TASK_STACK_H

#include <linux/sched.h>
#include <asm/ptrace.h>

extern struct pt_regs fuzz_regs;
#define task_pt_regs(task)	(&fuzz_regs)

#endif /* _FUZZ_LINUX_SCHED_TASK_STACK_H */
