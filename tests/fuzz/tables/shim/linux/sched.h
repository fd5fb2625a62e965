/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: one task, whose mm the harness sets up. */
#ifndef _FUZZ_LINUX_SCHED_H
#define _FUZZ_LINUX_SCHED_H

#include <linux/mm_types.h>

struct task_struct {
	struct mm_struct	*mm;
};

extern struct task_struct *fuzz_current;
#define current			fuzz_current

#endif /* _FUZZ_LINUX_SCHED_H */
