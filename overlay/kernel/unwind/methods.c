// SPDX-License-Identifier: GPL-2.0
/*
 * What user stack walks may use: the methods turned on (frame pointers,
 * SFrame, .eh_frame), and the table work one walk may do. Both are read
 * once when a walk starts, so a change takes effect from the next walk;
 * kernel/unwind/sysfs.c is their user interface.
 */
#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/unwind_user.h>

#include "user.h"

/* The methods built in, and those turned on (all, unless a user said). */
#define UNWIND_USER_TYPES_BUILT						\
	((IS_ENABLED(CONFIG_HAVE_UNWIND_USER_FP) ? UNWIND_USER_TYPE_FP : 0) |	\
	 (IS_ENABLED(CONFIG_UNWIND_USER_SFRAME) ? UNWIND_USER_TYPE_SFRAME : 0) | \
	 (IS_ENABLED(CONFIG_UNWIND_USER_EH_FRAME) ? UNWIND_USER_TYPE_EH_FRAME : 0))

/* Read by unwind_user_methods(), inline: every walk starts with it. */
unsigned int unwind_user_enabled __read_mostly = UNWIND_USER_TYPES_BUILT;

/*
 * The table work one walk may do (rows and instructions decoded, reads of
 * tables made): a process's tables cannot make one walk run for long. A
 * walk in an interrupt gets less (UNWIND_USER_BUDGET_NOFAULT), and defers
 * when it would need more.
 */
#define UNWIND_USER_BUDGET_DEFAULT	BIT(20)

static unsigned int unwind_user_budget __read_mostly = UNWIND_USER_BUDGET_DEFAULT;
static unsigned int unwind_user_budget_nofault __read_mostly =
	UNWIND_USER_BUDGET_NOFAULT;

/**
 * unwind_user_methods_built - the methods this kernel was built with
 *
 * Context: any.
 *
 * Return: enum unwind_user_type bits.
 */
unsigned int unwind_user_methods_built(void)
{
	return UNWIND_USER_TYPES_BUILT;
}

/**
 * unwind_user_set_methods - turn walk methods on and off
 * @methods: the enum unwind_user_type bits of the methods to use from now
 *	     on; walks that have started keep theirs
 *
 * Frame pointers stay on where they are built in: the other methods fall
 * back to them for code their tables do not cover.
 *
 * Context: any.
 *
 * Return: 0, or -EINVAL for a method not built in or without frame
 * pointers.
 */
int unwind_user_set_methods(unsigned int methods)
{
	unsigned int built = UNWIND_USER_TYPES_BUILT;

	if (methods & ~built)
		return -EINVAL;
	if ((built & UNWIND_USER_TYPE_FP) && !(methods & UNWIND_USER_TYPE_FP))
		return -EINVAL;
	WRITE_ONCE(unwind_user_enabled, methods);
	return 0;
}

/**
 * unwind_user_work_budget - the table work one walk may do
 *
 * Context: any.
 *
 * Return: the budget, in rows and instructions decoded and reads made.
 */
unsigned int unwind_user_work_budget(void)
{
	return READ_ONCE(unwind_user_budget);
}

/**
 * unwind_user_set_work_budget - set the table work one walk may do
 * @budget: the new budget, from the next walk on; at least 1
 *
 * Context: any.
 *
 * Return: 0, or -EINVAL for 0.
 */
int unwind_user_set_work_budget(unsigned int budget)
{
	if (!budget)
		return -EINVAL;
	WRITE_ONCE(unwind_user_budget, budget);
	return 0;
}

/**
 * unwind_user_interrupt_budget - the table work a walk in an interrupt may do
 *
 * The walk that a sample or a BPF program makes where it cannot take a page
 * fault (NMI, IRQ, scheduler locks held) looks rules up until it has done
 * this much work, then defers (or ends, for BPF).
 *
 * Context: any.
 *
 * Return: the budget, in the units of unwind_user_work_budget().
 */
unsigned int unwind_user_interrupt_budget(void)
{
	return READ_ONCE(unwind_user_budget_nofault);
}

/**
 * unwind_user_set_interrupt_budget - set the table work of a walk in an interrupt
 * @budget: the new budget, from the next walk on; 0: such a walk uses only
 *	    the rules the mm remembers
 *
 * Context: any.
 *
 * Return: 0.
 */
int unwind_user_set_interrupt_budget(unsigned int budget)
{
	WRITE_ONCE(unwind_user_budget_nofault, budget);
	return 0;
}
