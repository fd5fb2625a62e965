// SPDX-License-Identifier: GPL-2.0
/*
 * Try the user stack first: a sample that interrupted user space is its own
 * entry context, which ends right after the interrupt, so deferring its user
 * stack buys one walk for one sample and costs a task work, a trip through
 * the exit-to-user loop and a record. When the stack can be walked in the
 * interrupt without a page fault, and the walk is the one the deferred walk
 * would make (frame pointers, and the tables of the mappings and the rules
 * the mm remembers, with the mappings unchanged meanwhile),
 * its result is the deferred walk's result and the caller can store it at
 * once. When it needs a page that is not resident, the caller defers as
 * usual, so such stacks stay complete.
 *
 * kernel.unwind_deferred_try_first (default 1) turns this off; the core's
 * debugfs counters (try_*) say how each try ended.
 */
#include <linux/init.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sframe.h>
#include <linux/sysctl.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_user.h>

#include <asm/tlb.h>

#include "stats.h"

static int unwind_try_first __read_mostly = 1;

/**
 * unwind_deferred_try_start - start a walk that may stand in for a deferral
 * @state: the walk state to fill
 *
 * For a caller about to ask for the deferred user stack of a sample that
 * interrupted the current task in user mode. The caller walks @state with
 * unwind_user_walk() (or steps it with unwind_user_next(), storing the IPs
 * as it goes), and asks unwind_deferred_try_end() whether the result can
 * be used.
 *
 * Context: IRQ or NMI context, interrupts disabled; reads user memory
 * without faulting and takes no lock.
 *
 * Also for a sample taken in the kernel whose request was refused with
 * -EBUSY (the task is in execve()): the walk then stands in for a classic
 * one, and only its use is counted (busy_walked), so that the try_*
 * counters keep counting samples that made no request.
 *
 * Return: true when @state is started; false when trying first is turned
 * off, the task has no user state to walk, its page tables are not the
 * ones loaded (an NMI during a switch of address spaces), or its mm may
 * have unwind tables it has not met yet or its mappings are being changed
 * (see unwind_user_start_nofault()).
 */
bool unwind_deferred_try_start(struct unwind_user_state *state)
{
	bool refused = unwind_deferred_refusing();

	if (!READ_ONCE(unwind_try_first) || in_task())
		return false;
	/*
	 * An NMI in the middle of a switch of address spaces may find
	 * another mm's page tables loaded: the walk would read its memory.
	 * Defer; the deferred walk runs in the task.
	 */
	if (!nmi_uaccess_okay())
		return false;
	if (unwind_user_start(state, NULL))
		return false;
	/* Tables: what the mm remembers, as of its mappings now. */
	if (!unwind_user_start_nofault(state)) {
		if (!refused)
			unwind_stat_inc(UNWIND_STAT_TRY_SKIPPED_SFRAME);
		return false;
	}
	if (!refused)
		unwind_stat_inc(UNWIND_STAT_TRY_WALKS);
	return true;
}
EXPORT_SYMBOL_GPL(unwind_deferred_try_start);

/**
 * unwind_deferred_try_end - may a tried walk stand in for the deferred one?
 * @state: a walk started by unwind_deferred_try_start(), done or cut short
 *	   by the caller's entry limit
 *
 * Context: as unwind_deferred_try_start().
 *
 * Return: true when the walk ended without needing a page that was not
 * resident, a mapping or rule the mm has not met, or more work than an
 * interrupt may do, and the mappings it relied on did not change:
 * whatever ended it (the outermost frame, a bad frame, the
 * caller's limit), the deferred walk would end the same way. False when
 * the caller must defer.
 */
bool unwind_deferred_try_end(const struct unwind_user_state *state)
{
	bool refused = unwind_deferred_refusing();

	if (state->done && state->stop == UNWIND_USER_FAULT) {
		if (!refused)
			unwind_stat_inc(UNWIND_STAT_TRY_NOT_RESIDENT);
		return false;
	}
	if (!unwind_user_end_nofault(state)) {
		if (!refused)
			unwind_stat_inc(UNWIND_STAT_TRY_MAPS_CHANGED);
		return false;
	}
	unwind_stat_inc(refused ? UNWIND_STAT_BUSY_WALKED : UNWIND_STAT_TRY_USED);
	return true;
}
EXPORT_SYMBOL_GPL(unwind_deferred_try_end);

/**
 * unwind_try_first_show - print the try-first switch
 * @m: the seq_file of the unwinder's debugfs counters file
 *
 * Context: task context.
 */
void unwind_try_first_show(struct seq_file *m)
{
	seq_printf(m, "try_first %d\n", READ_ONCE(unwind_try_first));
}

#ifdef CONFIG_SYSCTL
static struct ctl_table unwind_try_sysctls[] = {
	{
		.procname	= "unwind_deferred_try_first",
		.data		= &unwind_try_first,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
};

static int __init unwind_try_sysctl_init(void)
{
	register_sysctl_init("kernel", unwind_try_sysctls);
	return 0;
}
late_initcall(unwind_try_sysctl_init);
#endif
