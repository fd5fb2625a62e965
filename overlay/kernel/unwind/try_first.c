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
 * A sample taken in the kernel is the first of its entry context when no
 * request was made in it yet. Its walk can be made at once the same way,
 * and then stands for the whole entry context: the sample takes it, and
 * requests that follow in the same entry context get it in their callback
 * with no walk of their own (unwind_deferred_walk_now()). An entry
 * context with one sample, a system call sampled once, then costs one
 * walk and no task work or record. But where more samples come, the first
 * carries the chain inline and the record the others point at carries it
 * again: there the first sample had better defer too, so that the entry
 * context's chain is written once. Whether more will come is told from
 * the task's last entry contexts (how many samples each got, which the
 * core learns on the way out): the first sample of a task whose recent
 * entry contexts had several samples each defers.
 *
 * kernel.unwind_deferred_try_first says which samples try: bit 0 those
 * that interrupted user space, bit 1 the first sample of an entry context
 * in the kernel, bit 2 with bit 1: only for tasks whose recent entry
 * contexts had one sample each (default 7, all; 3 walks every first sample
 * at once; 0 turns trying off). The core's debugfs counters (try_*, now_*
 * and entries_*) say how each try ended.
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

#include "deferred.h"
#include "stats.h"
#include "user.h"

#define UNWIND_TRY_USER		BIT(0)	/* samples of user space */
#define UNWIND_TRY_KERNEL	BIT(1)	/* an entry context's first sample */
#define UNWIND_TRY_PREDICT	BIT(2)	/* bit 1 where no second one comes */

#define UNWIND_TRY_ALL \
	(UNWIND_TRY_USER | UNWIND_TRY_KERNEL | UNWIND_TRY_PREDICT)

static int unwind_try_first __read_mostly = UNWIND_TRY_ALL;
static int unwind_try_first_max = UNWIND_TRY_ALL;

/*
 * Whether a walk made without faulting gives what the deferred walk would:
 * 0; -EFAULT when it needed a page that was not resident, a mapping or
 * rule the mm has not met, or more work than the budget; -EAGAIN when the
 * mappings it relied on changed meanwhile.
 */
static int unwind_try_result(const struct unwind_user_state *state)
{
	if (state->done && state->stop == UNWIND_USER_FAULT)
		return -EFAULT;
	if (!__unwind_user_end_nofault(state))
		return -EAGAIN;
	return 0;
}

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
 * off for samples of user space, the task has no user state to walk, its
 * page tables are not the ones loaded (an NMI during a switch of address
 * spaces), or its mm may
 * have unwind tables it has not met yet or its mappings are being changed
 * (see unwind_user_start_nofault()).
 */
bool unwind_deferred_try_start(struct unwind_user_state *state)
{
	bool refused = unwind_deferred_refusing();

	if (!(READ_ONCE(unwind_try_first) & UNWIND_TRY_USER) || in_task())
		return false;
	/*
	 * An NMI in the middle of a switch of address spaces may find
	 * another mm's page tables loaded: the walk would read its memory.
	 * Defer; the deferred walk runs in the task.
	 */
	if (!nmi_uaccess_okay())
		return false;
	if (__unwind_user_start(state, NULL))
		return false;
	/* Tables: what the mm remembers, as of its mappings now. */
	if (!__unwind_user_start_nofault(state)) {
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
	int ret = unwind_try_result(state);

	if (ret) {
		if (!refused)
			unwind_stat_inc(ret == -EFAULT ?
					UNWIND_STAT_TRY_NOT_RESIDENT :
					UNWIND_STAT_TRY_MAPS_CHANGED);
		return false;
	}
	unwind_stat_inc(refused ? UNWIND_STAT_BUSY_WALKED : UNWIND_STAT_TRY_USED);
	return true;
}
EXPORT_SYMBOL_GPL(unwind_deferred_try_end);

/**
 * unwind_deferred_walk_now - walk a sample's stack now, for its entry context
 * @max_entries: the most entries the sample needs
 *
 * For a sample taken in the kernel (a system call's tracepoint, a software
 * event, an interrupt of kernel code) before any request was made in its
 * entry context. When the user stack can be walked here as for a sample
 * of user space (no page fault; the mappings and rules the mm remembers,
 * the mappings unchanged meanwhile), the walk is kept as the entry
 * context's: the caller takes it with unwind_deferred_cached(). The walk
 * the deferred one would have made then is this one: the same user state,
 * which the task has not left since.
 *
 * Context: task or IRQ context of the current task, in the kernel; not NMI.
 * The walk runs with interrupts disabled; it takes no lock and allocates
 * nothing.
 *
 * Return: true when the walk is the entry context's; false when the caller
 * requests as usual: trying first is off for samples in the kernel, a
 * request was made in this entry context already, the task's recent entry
 * contexts had more than one sample each (with bit 2 of the switch), the
 * task has not been walked before (its first deferred walk sets up the
 * cache), or the walk needed a page, a mapping or a rule that was not at
 * hand.
 */
bool unwind_deferred_walk_now(unsigned int max_entries)
{
	/* unwind_user_start() fills it before any use. */
	struct unwind_user_state state __uninitialized;
	struct unwind_stacktrace trace = { };
	struct unwind_cache *cache;
	int try = READ_ONCE(unwind_try_first);
	unsigned long flags;
	bool ok = false;

	if (!(try & UNWIND_TRY_KERNEL) || in_nmi() || !max_entries)
		return false;
	/* As for a try from NMI: the loaded page tables must be the task's. */
	if (!nmi_uaccess_okay())
		return false;

	local_irq_save(flags);
	cache = unwind_deferred_claim(try & UNWIND_TRY_PREDICT);
	if (!cache)
		goto out;
	unwind_stat_inc(UNWIND_STAT_NOW_WALKS);
	pagefault_disable();
	if (!__unwind_user_start(&state, NULL) &&
	    __unwind_user_start_nofault(&state)) {
		trace.entries = cache->entries;
		unwind_user_walk(&state, &trace,
				 min_t(unsigned int, max_entries,
				       UNWIND_MAX_ENTRIES));
		ok = !unwind_try_result(&state);
	}
	pagefault_enable();
	unwind_deferred_claimed(cache, ok ? &trace : NULL,
				state.stop == UNWIND_USER_TRUNCATED);
	if (ok)
		unwind_stat_inc(UNWIND_STAT_NOW_USED);
out:
	local_irq_restore(flags);
	return ok;
}
EXPORT_SYMBOL_GPL(unwind_deferred_walk_now);

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
		.extra2		= &unwind_try_first_max,
	},
};

static int __init unwind_try_sysctl_init(void)
{
	register_sysctl_init("kernel", unwind_try_sysctls);
	return 0;
}
late_initcall(unwind_try_sysctl_init);
#endif
