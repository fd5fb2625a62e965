// SPDX-License-Identifier: GPL-2.0
/*
 * The user stack for BPF's stack helpers: bpf_get_stack(), bpf_get_stackid()
 * and bpf_get_task_stack() on the current task, with BPF_F_USER_STACK.
 *
 * A BPF program wants the stack now, from whatever context it runs in (a
 * perf event's NMI, an IRQ, a tracepoint under the runqueue lock), and has
 * no record to wait for. Walked by frame pointers alone, as 6.12 and
 * mainline walk it, code built without them gives a right frame or two and
 * then garbage. Here the helpers get the walk the interrupt makes before
 * it defers (try_first.c): frame pointers, and the tables of the mappings
 * and the rules the mm remembers, read from resident pages, with no lock,
 * allocation or fault, the rule cache never written from NMI. Where it
 * would need more (a mapping or rule the process has not met, a page not
 * resident) it ends there: the program gets the right frames up to that
 * frame, never a frame-pointer guess over code that tables describe.
 *
 * The task then gets one warm-up walk on its way back to user space: the
 * deferral core's walk, which may fault and so finds the mappings and
 * rules and leaves them in the mm's cache, so that the next samples are
 * complete. It writes no record and runs at most once per entry context,
 * shared with any other user's request there.
 *
 * A sleepable program (the _sleepable helpers) gets that faultable walk
 * itself, complete where pages are not resident, unless the mmap lock is
 * held (an LSM hook under mprotect()): then it gets the interrupt's walk.
 *
 * /sys/kernel/unwind_user/bpf_tables turns this off at run time: the
 * helpers then walk frame pointers in the interrupt, as 6.12 does. The
 * core's debugfs counters bpf_* say how the walks ended.
 */
#include <linux/init.h>
#include <linux/mm_types.h>
#include <linux/mmap_lock.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_user.h>

#include <asm/tlb.h>

#include "deferred.h"
#include "stats.h"
#include "user.h"

static bool unwind_bpf_tables __read_mostly = true;

/* The warm-up's user of the deferral core; set up at boot. */
static struct unwind_work unwind_bpf_warmup;
static bool unwind_bpf_warmup_ready;

/**
 * unwind_user_bpf_enabled - do BPF's stack helpers walk by the tables?
 *
 * Context: any.
 *
 * Return: true when the helpers take the user stack with unwind_user_bpf();
 * false when they walk frame pointers as the classic perf walk does.
 */
bool unwind_user_bpf_enabled(void)
{
	return READ_ONCE(unwind_bpf_tables);
}

/**
 * unwind_user_bpf_set - turn the table walk for BPF's helpers on or off
 * @on: walk by the tables (true) or by frame pointers alone (false)
 *
 * Takes effect from the next call of a helper.
 *
 * Context: any.
 */
void unwind_user_bpf_set(bool on)
{
	WRITE_ONCE(unwind_bpf_tables, on);
}

/* The warm-up's callback: the walk before it did the work. */
static void unwind_bpf_warmed(struct unwind_work *work,
			      struct unwind_stacktrace *trace, u64 cookie)
{
	unwind_stat_inc(UNWIND_STAT_BPF_WARMUPS);
}

/*
 * Ask for the deferral core's walk before the task returns to user space,
 * as deep as this walk wanted to go, so that the mappings and rules it
 * could not use are found and remembered. One per entry context.
 */
static void unwind_bpf_warm_up(unsigned int max_entries)
{
	u64 cookie;

	/* Pairs with the smp_store_release() in unwind_bpf_init(). */
	if (!smp_load_acquire(&unwind_bpf_warmup_ready))
		return;
	/* Not a sample: how many an entry context gets is not its business. */
	if (!__unwind_deferred_request(&unwind_bpf_warmup, &cookie,
				       max_entries, false))
		unwind_stat_inc(UNWIND_STAT_BPF_WARMUPS_QUEUED);
}

/* Count how a walk ended, and ask for a warm-up where it fell short. */
static void unwind_bpf_account(int stop, bool nofault, unsigned int max_entries)
{
	switch (stop) {
	case UNWIND_USER_END:
	case UNWIND_USER_TRUNCATED:
		unwind_stat_inc(UNWIND_STAT_BPF_COMPLETE);
		break;
	case UNWIND_USER_FAULT:
		if (nofault) {
			unwind_stat_inc(UNWIND_STAT_BPF_UNMET);
			unwind_bpf_warm_up(max_entries);
			break;
		}
		/* An unmapped stack or text page: as far as the stack goes. */
		unwind_stat_inc(UNWIND_STAT_BPF_COMPLETE);
		break;
	default:
		unwind_stat_inc(UNWIND_STAT_BPF_BAD);
		break;
	}
}

/*
 * Whether the caller's walk may take page faults: a sleepable program, in
 * task context with faults and interrupts enabled, and no one holding the
 * mmap lock, which the walk takes to find tables and a fault takes to map
 * a page: the task itself may hold it (an LSM hook under mprotect()).
 */
static bool unwind_bpf_may_fault(void)
{
	return in_task() && !faulthandler_disabled() && !irqs_disabled() &&
	       current->mm && !rwsem_is_locked(&current->mm->mmap_lock);
}

/*
 * Walk @state, storing the frames past the first @skip into @trace. The
 * skipped frames are stepped one by one; the rest go through
 * unwind_user_walk(), which takes several frames per user access section.
 */
static int unwind_bpf_store(struct unwind_user_state *state,
			    struct unwind_stacktrace *trace,
			    unsigned int max_entries, unsigned int skip)
{
	/* As the classic walk: nothing looked up past the last entry. */
	state->cut_at_max = true;
	for (; skip && !state->done; skip--)
		unwind_user_next(state);
	if (state->done)
		return state->stop;
	return unwind_user_walk(state, trace, max_entries);
}

/*
 * The walk in a context that may not fault: what the mm remembers. Inline,
 * as the starts it makes: a call costs as much as a frame, and a helper
 * call on code with frame pointers and no table should cost what the
 * classic walk costs.
 */
static __always_inline int
unwind_bpf_nofault(struct unwind_stacktrace *trace, unsigned int max_entries,
		   unsigned int skip)
{
	/* unwind_user_start() fills it before any use. */
	struct unwind_user_state state __uninitialized;
	int stop;

	/* The walk reads no user memory that is not in the page tables. */
	pagefault_disable();
	if (__unwind_user_start(&state, NULL)) {
		stop = -EINVAL;
		goto out;
	}
	/*
	 * An NMI during a switch of address spaces may find another mm's
	 * page tables loaded: only the interrupted IP is known.
	 */
	if (!nmi_uaccess_okay() || !__unwind_user_start_nofault(&state)) {
		/*
		 * Or the mm has not met its tables yet, or its mappings are
		 * being changed: every frame past the first would need them.
		 */
		if (!skip && !state.done)
			trace->entries[trace->nr++] = state.ip;
		stop = UNWIND_USER_FAULT;
		goto out;
	}
	stop = unwind_bpf_store(&state, trace, max_entries, skip);
	/* The ranges it used went stale meanwhile: keep what is certain. */
	if (!__unwind_user_end_nofault(&state)) {
		trace->nr = min_t(unsigned int, trace->nr, skip ? 0 : 1);
		stop = UNWIND_USER_FAULT;
	}
out:
	pagefault_enable();
	return stop;
}

/* The walk of a sleepable program: the deferred walk's own, faults and all. */
static int unwind_bpf_faultable(struct unwind_stacktrace *trace,
				unsigned int max_entries, unsigned int skip)
{
	/* unwind_user_start() fills it before any use. */
	struct unwind_user_state state __uninitialized;

	might_fault();
	if (unwind_user_start(&state, NULL))
		return -EINVAL;
	return unwind_bpf_store(&state, trace, max_entries, skip);
}

/**
 * unwind_user_bpf - walk the current task's user stack now, for BPF
 * @trace: where to store the chain: @trace->entries holds @max_entries;
 *	   @trace->nr is set
 * @max_entries: the most entries to store, at least 1
 * @skip: the number of innermost frames to walk past without storing
 * @may_fault: the caller is a sleepable program: the walk may take page
 *	       faults and sleep where the task's state allows
 *
 * Stores the interrupted user IP followed by the return address of every
 * frame found, innermost first, with the methods the deferred walk uses
 * (unwind_user_methods()). Where the walk cannot fault, it uses only the
 * mappings and rules the mm remembers and resident pages, and ends at the
 * first frame that would need more; the task then gets one warm-up walk
 * before it returns to user space, so that later calls are complete.
 * Return addresses replaced by a pending uretprobe are put back.
 *
 * Context: any context of the current task: task, IRQ or NMI (a perf
 * event, kprobe, tracepoint, uprobe or fentry program). Without
 * @may_fault, or where the task cannot fault: takes no lock, allocates
 * nothing and does not fault. With @may_fault in task context that may
 * sleep: may fault and sleep.
 *
 * Return: why the walk ended (an enum unwind_user_stop value), or -EINVAL
 * with @trace->nr 0 when the task has no user stack to walk: a kernel
 * thread, a task past exit_mm(), or one in execve() between the new mm and
 * the new image's registers.
 */
int unwind_user_bpf(struct unwind_stacktrace *trace, unsigned int max_entries,
		    unsigned int skip, bool may_fault)
{
	bool nofault = !may_fault || !unwind_bpf_may_fault();
	int stop;

	trace->nr = 0;
	if (!max_entries || unwind_deferred_regs_stale())
		stop = -EINVAL;
	else if (nofault)
		stop = unwind_bpf_nofault(trace, max_entries, skip);
	else
		stop = unwind_bpf_faultable(trace, max_entries, skip);
	if (stop < 0) {
		unwind_stat_inc(UNWIND_STAT_BPF_NO_USER);
		return -EINVAL;
	}
	unwind_stat_inc(UNWIND_STAT_BPF_WALKS);
	if (!nofault)
		unwind_stat_inc(UNWIND_STAT_BPF_FAULTABLE);
	unwind_fixup_uretprobes(trace);
	unwind_bpf_account(stop, nofault, max_entries + skip);
	return stop;
}

static int __init unwind_bpf_init(void)
{
	if (unwind_deferred_init(&unwind_bpf_warmup, unwind_bpf_warmed))
		return 0;
	/* Pairs with the smp_load_acquire() in unwind_bpf_warm_up(). */
	smp_store_release(&unwind_bpf_warmup_ready, true);
	return 0;
}
late_initcall(unwind_bpf_init);
