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
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/sframe.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>

#include "mm_cache.h"
#include "step.h"

/*
 * The table work a walk in an interrupt may do by default (in the units of
 * uread.h and UNWIND_LOOKUP_COST; /sys/kernel/unwind_user/interrupt_budget
 * sets it), whatever the tables hold: about two lookups of a row the mm
 * does not remember, so that with the worst tables a process can build the
 * walk costs at most about what a classic frame-pointer walk of 127 frames
 * does. It defers when it would need more (the deferred walk gets
 * unwind_user_work_budget()) and remembers what it found (NMI aside), so
 * that the next samples of the same code find their rules remembered.
 */
#define UNWIND_USER_BUDGET_NOFAULT	96

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

/*
 * unwind_user_start(), inlined for the walks made in an interrupt for
 * every sample or helper call (try_first.c, bpf.c), where the calls and
 * the copy of the registers cost as much as a few frames.
 */
static __always_inline int
__unwind_user_start(struct unwind_user_state *state,
		    const struct unwind_user_regs *from)
{
	struct pt_regs *regs = task_pt_regs(current);

	/*
	 * The fields a walk reads before it writes them. Those of the copy
	 * of a file's tables (and what a lookup in them remembers) are read
	 * only once unwind_tables_copy() has filled them for the tables_id
	 * it sets, and the ranges up to nr_maps: zero here, they say none
	 * is held.
	 */
	state->current_type = UNWIND_USER_TYPE_NONE;
	state->available_types = 0;
	state->done = false;
	state->cut_at_max = false;
	state->stop = UNWIND_USER_END;
	state->sigframes = 0;
#ifdef CONFIG_UNWIND_USER_SFRAME
	state->nofault = false;
	state->budget = 0;
	state->next_map = 0;
	state->nr_maps = 0;
	state->tables_id = 0;
#endif

	if ((current->flags & (PF_KTHREAD | PF_USER_WORKER)) || !current->mm ||
	    (!from && !user_mode(regs))) {
		state->ip = 0;
		state->sp = 0;
		state->fp = 0;
		state->ws = 0;
		state->topmost = false;
		state->regs_live = false;
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}

	if (from) {
		state->ip = from->ip;
		state->sp = from->sp;
		state->fp = from->fp;
		state->bx = from->bx;
		state->ws = from->ws;
	} else {
		state->ip = instruction_pointer(regs);
		state->sp = user_stack_pointer(regs);
		state->fp = frame_pointer(regs);
		state->bx = arch_unwind_user_bx(regs);
		state->ws = arch_unwind_user_word_size(regs);
	}
	state->bx_at = 0;
	state->topmost = true;
	/*
	 * A rule may read any register of the interrupted frame: from the
	 * saved user registers, when they still hold the state the walk
	 * starts from (a signal frame or a restarted system call since the
	 * request moved the IP or the stack pointer).
	 */
	state->regs_live = !from || (user_mode(regs) &&
				     from->ip == instruction_pointer(regs) &&
				     from->sp == user_stack_pointer(regs));

	if (IS_ENABLED(CONFIG_HAVE_UNWIND_USER_FP))
		state->available_types |= UNWIND_USER_TYPE_FP;
	/*
	 * Tables are found and read where page faults may be taken, and an
	 * mm known to have none has nothing to look up. SFrame has no ABI
	 * for compat tasks; their .eh_frame is read. Only lookups spend the
	 * work budget (unwind_user_start_nofault() sets an interrupt's).
	 */
#ifdef CONFIG_UNWIND_USER_SFRAME
	if (unwind_user_may_fault() && !sframe_mm_fp_only(current->mm)) {
		state->available_types |= unwind_user_methods() &
					  unwind_user_table_types(state->ws);
		state->budget = unwind_user_work_budget();
	}
#endif
	/* A task may jump anywhere; a kernel address is not a user frame. */
	if (state->ip >= TASK_SIZE_MAX)
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
	return 0;
}

/* unwind_user_start_nofault(), inlined for the same walks. */
static __always_inline bool
__unwind_user_start_nofault(struct unwind_user_state *state)
{
#ifdef CONFIG_UNWIND_USER_SFRAME
	unsigned int types = unwind_user_methods() &
			     unwind_user_table_types(state->ws);
	int ret;

	if (!types || state->done)
		return true;
	ret = unwind_tables_nofault_begin(&state->mm_seq);
	if (ret)
		return ret > 0;
	state->nofault = true;
	state->budget = unwind_user_interrupt_budget();
	state->available_types |= types;
#endif
	return true;
}

/* unwind_user_end_nofault(), inlined for the same walks. */
static __always_inline bool
__unwind_user_end_nofault(const struct unwind_user_state *state)
{
#ifdef CONFIG_UNWIND_USER_SFRAME
	if (state->nofault)
		return unwind_tables_seq_valid(state->mm_seq);
#endif
	return true;
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
