/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the user stack walker's files share (user.c the walk, section.c its
 * frames read in one user access section, topmost.c the interrupted
 * frame's text, methods.c what walks may use).
 */
#ifndef _KERNEL_UNWIND_USER_H
#define _KERNEL_UNWIND_USER_H

#include <linux/bits.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>

/*
 * The table work a walk in an interrupt may do: it defers when it would
 * need more (the deferred walk gets unwind_user_work_budget()).
 */
#define UNWIND_USER_BUDGET_NOFAULT	BIT(12)

/*
 * Whether the walk may take page faults: in task context with page faults
 * and interrupts enabled (the deferred walk runs there). In IRQ or NMI
 * context, or with page faults disabled, user memory that is not in the page
 * tables cannot be read.
 */
static inline bool unwind_user_may_fault(void)
{
	return in_task() && !faulthandler_disabled() && !irqs_disabled();
}

unsigned long unwind_user_text_ip(unsigned long ip, unsigned long *xol);
enum arch_unwind_user_fp_at
unwind_user_fp_topmost(struct unwind_user_state *state);

bool unwind_user_fp_walk(struct unwind_user_state *state,
			 struct unwind_stacktrace *trace,
			 unsigned int max_entries);
#ifdef CONFIG_UNWIND_USER_SFRAME
bool unwind_user_table_walk(struct unwind_user_state *state,
			    struct unwind_stacktrace *trace,
			    unsigned int max_entries);
#endif

#endif /* _KERNEL_UNWIND_USER_H */
