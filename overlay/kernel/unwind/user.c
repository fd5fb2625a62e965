// SPDX-License-Identifier: GPL-2.0
/*
 * Walk the current task's user space stack from its saved user registers.
 *
 * Each frame is found by the IP's file's unwind tables where it has them
 * and the walk may fault (kernel/unwind/tables.c: SFrame, then .eh_frame),
 * else by frame pointers.
 * Every step is checked before it is taken: the caller's frame must lie
 * strictly above the current one (so the walk cannot loop), its words must be
 * aligned and in user space, and the walk ends at the caller's entry limit.
 * A corrupt or hostile stack ends the walk; it never warns.
 *
 * Beside it: step.h holds the checks and reads of a step, section.c the
 * walks that read many frames in one user access section, topmost.c reads
 * the interrupted frame's text (is it in a prologue?), methods.c holds what
 * walks may use.
 */
#include <linux/eh_frame.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/sframe.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>

#include "mm_cache.h"
#include "step.h"
#include "user.h"

/*
 * Read @n (1 or 2) consecutive stack words at @addr inside one user access
 * section. Returns 0, -EINVAL for a range outside user space, or -EFAULT.
 */
int unwind_user_read_words(unsigned long addr, unsigned int ws,
			   unsigned int n, unsigned long *words)
{
	void __user *p = (void __user *)addr;
	unsigned long w0, w1 = 0;

	if (!user_read_access_begin(p, n * ws))
		return -EINVAL;
	if (ws == sizeof(u32)) {
		u32 __user *p32 = p;
		u32 v0, v1 = 0;

		unsafe_get_user(v0, p32, efault);
		if (n > 1)
			unsafe_get_user(v1, p32 + 1, efault);
		w0 = v0;
		w1 = v1;
	} else {
		unsigned long __user *pl = p;

		unsafe_get_user(w0, pl, efault);
		if (n > 1)
			unsafe_get_user(w1, pl + 1, efault);
	}
	user_read_access_end();
	words[0] = w0;
	words[1] = w1;
	return 0;

efault:
	user_read_access_end();
	return -EFAULT;
}

/*
 * The step out of a signal handler's frame: the interrupted state is the
 * one the kernel saved in the signal frame on the stack, at the offsets
 * from the stack pointer that @frame holds. That state may be on another
 * stack (sigaltstack()), so the CFA need not grow here; the number of
 * signal frames a walk crosses is bounded instead. The next frame's IP is
 * the interrupted one, exact: the caller looks it up as it is.
 */
int unwind_user_apply_signal(struct unwind_user_state *state,
			     const struct unwind_user_frame *frame)
{
	unsigned long sp = state->sp, words[2], cfa, fp = state->fp;
	unsigned int ws = state->ws;
	int ret;

	if (state->sigframes == UNWIND_USER_MAX_SIGFRAMES ||
	    (sp & (ws - 1))) {
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}
	ret = unwind_user_read_words(sp + frame->cfa_off, ws, 1, words);
	if (ret)
		goto fail;
	cfa = words[0];
	ret = unwind_user_read_words(sp + frame->ra_off, ws, 1, words);
	if (ret)
		goto fail;
	state->ip = words[0];
	if (frame->fp_off) {
		ret = unwind_user_read_words(sp + frame->fp_off, ws, 1, words);
		if (ret)
			goto fail;
		fp = words[0];
	}
	if (!cfa || (cfa & (ws - 1)) || cfa >= TASK_SIZE_MAX) {
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}
	/* The interrupted base register, where the trampoline's rule has it. */
	state->bx_at = frame->bx_off ? sp + frame->bx_off : UNWIND_USER_BX_LOST;
	state->sigframes++;
	return unwind_user_take(state, cfa, fp);

fail:
	unwind_user_stop(state, ret == -EFAULT ? UNWIND_USER_FAULT :
					       UNWIND_USER_BAD_FRAME);
	return ret;
}

/*
 * Whether a walk with @state->cut_at_max ends here, its last entry
 * stored: it then stops as cut, without a look at the frame past it.
 */
static inline bool unwind_user_cut(struct unwind_user_state *state,
				   const struct unwind_stacktrace *trace,
				   unsigned int max_entries)
{
	if (!state->cut_at_max || trace->nr < max_entries)
		return false;
	unwind_user_stop(state, UNWIND_USER_TRUNCATED);
	return true;
}

static int unwind_user_apply(struct unwind_user_state *state,
			     const struct unwind_user_frame *frame)
{
	return __unwind_user_apply(state, frame, false);
}

/*
 * The step of a native frame past the interrupted one, by frame pointers:
 * unwind_user_apply() with the body rule inlined, the same checks in the
 * same order and the same stop reasons, without the rule's struct and the
 * calls.
 */
static __always_inline int unwind_user_fp_body(struct unwind_user_state *state)
{
	unsigned long __user *p = (unsigned long __user *)state->fp;
	unsigned long cfa, nfp, nip;
	int why = unwind_user_fp_check(state, &cfa);

	if (why >= 0) {
		unwind_user_stop(state, why);
		return why == UNWIND_USER_END ? -ENOENT : -EINVAL;
	}
	/* The address passed the range check: mask it, or check again. */
	if (can_do_masked_user_access()) {
		p = masked_user_access_begin(p);
	} else if (!user_read_access_begin(p, 2 * sizeof(long))) {
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}
	unsafe_get_user(nfp, p, efault);
	unsafe_get_user(nip, p + 1, efault);
	user_read_access_end();

	state->ip = nip;
	return unwind_user_take(state, cfa, nfp);

efault:
	user_read_access_end();
	unwind_user_stop(state, UNWIND_USER_FAULT);
	return -EFAULT;
}

static int unwind_user_next_fp(struct unwind_user_state *state)
{
	struct unwind_user_frame frame;
	enum arch_unwind_user_fp_at at;

	at = state->topmost ? unwind_user_fp_topmost(state) :
			      ARCH_UNWIND_USER_FP_BODY;
	/*
	 * Text that cannot be read even with faults is not there and holds
	 * no prologue. Without faults it may only be out of the page tables:
	 * end the walk rather than guess, so that a caller in an interrupt
	 * can tell a walk that needs a fault from a real result.
	 */
	if (at == ARCH_UNWIND_USER_FP_UNKNOWN) {
		if (!unwind_user_may_fault()) {
			unwind_user_stop(state, UNWIND_USER_FAULT);
			return -EFAULT;
		}
		at = ARCH_UNWIND_USER_FP_BODY;
	}
	unwind_user_fp_rule(&frame, at, state->ws);
	return unwind_user_apply(state, &frame);
}

#ifdef CONFIG_UNWIND_USER_SFRAME
/*
 * End the walk where a table lookup failed with @ret (not -ENOENT, which
 * lets frame pointers try), for the reason it gives. Return: the error
 * unwind_user_next() returns for it.
 */
int unwind_user_table_stop(struct unwind_user_state *state, int ret)
{
	switch (ret) {
	case SFRAME_OUTERMOST:
	case -EOPNOTSUPP:
		unwind_user_stop(state, UNWIND_USER_END);
		return -ENOENT;
	case UNWIND_TABLES_NO_ROW:
		sframe_stat_add(SFRAME_STAT_NO_ROW_STOPS, 1);
		unwind_user_stop(state, UNWIND_USER_END);
		return -ENOENT;
	case -EAGAIN:
	case -EFAULT:
	case -ENOMEM:
		unwind_user_stop(state, UNWIND_USER_FAULT);
		return -EFAULT;
	case -E2BIG:
		/* In an interrupt: the deferred walk has a larger budget. */
		if (state->nofault) {
			sframe_stat_add(SFRAME_STAT_NOFAULT_BUDGET_STOPS, 1);
			unwind_user_stop(state, UNWIND_USER_FAULT);
			return -EFAULT;
		}
		sframe_stat_add(SFRAME_STAT_BUDGET_STOPS, 1);
		unwind_user_stop(state, UNWIND_USER_BUDGET);
		return -E2BIG;
	default:
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}
}
#endif

/*
 * The step the tables of the IP's file give (SFrame, .eh_frame), where it
 * has them. Return: 1 when they have no row for the IP (frame pointers may
 * have it); otherwise as unwind_user_next().
 */
static int unwind_user_next_table(struct unwind_user_state *state)
{
#ifdef CONFIG_UNWIND_USER_SFRAME
	struct unwind_user_frame frame = { };
	unsigned long ip, xol;
	int ret;

	/*
	 * A caller's row is the one of its call instruction, which may be
	 * the function's last; the interrupted frame's is that of the
	 * instruction it stopped at (the probed one for a uprobe), and so is
	 * that of a frame a signal interrupted.
	 */
	ip = state->topmost ? unwind_user_text_ip(state->ip, &xol) :
			      state->ip - 1;
	ret = unwind_tables_rule(state, ip, &frame);
	switch (ret) {
	case 0:
		state->current_type = frame.type;
		ret = unwind_user_apply(state, &frame);
		if (!ret) {
			unwind_user_track_bx(state, &frame);
			unwind_tables_count_frame(&frame);
		}
		return ret;
	case -ENOENT:
		return 1;
	default:
		return unwind_user_table_stop(state, ret);
	}
#else
	return 1;
#endif
}

/**
 * unwind_user_next - step to the caller of the current user frame
 * @state: a walk started with unwind_user_start()
 *
 * Tries the available methods in order of preference: the tables of the
 * IP's file (SFrame, then .eh_frame) where it has them and page faults may
 * be taken, then frame pointers. A signal frame that .eh_frame describes
 * is crossed: the walk goes on with the state the signal interrupted.
 * Context: task, IRQ or NMI context of the task being walked; where page
 * faults are disabled, a frame (or the interrupted frame's text) that is
 * not resident ends the walk with %UNWIND_USER_FAULT. In task context the
 * task must not hold its mmap lock (tables are found under it).
 *
 * Return: 0 when @state holds the caller's frame; a negative errno when the
 * walk is over, with @state->done set and @state->stop saying why.
 */
int unwind_user_next(struct unwind_user_state *state)
{
	unsigned int sigframes = state->sigframes;
	int ret = -ENOENT;

	if (state->done)
		return -ENOENT;

	if (!state->topmost && state->ws == sizeof(long) &&
	    state->available_types == UNWIND_USER_TYPE_FP) {
		state->current_type = UNWIND_USER_TYPE_FP;
		return unwind_user_fp_body(state);
	}

	if (state->available_types & UNWIND_USER_TYPES_TABLES) {
		ret = unwind_user_next_table(state);
		if (ret <= 0)
			goto out;
	}
	if (state->available_types & UNWIND_USER_TYPE_FP) {
		state->current_type = UNWIND_USER_TYPE_FP;
		ret = unwind_user_next_fp(state);
#ifdef CONFIG_UNWIND_USER_SFRAME
		if (!ret && (state->available_types & UNWIND_USER_TYPES_TABLES)) {
			/* The frame may have saved the base register anywhere. */
			state->bx_at = UNWIND_USER_BX_LOST;
			unwind_tables_count_frame(NULL);
		}
#endif
	} else {
		unwind_user_stop(state, UNWIND_USER_END);
		ret = -ENOENT;
	}
out:
	/* A frame a signal interrupted is looked up as the first one is. */
	state->topmost = !ret && state->sigframes != sigframes;
	return ret;
}

/**
 * unwind_user_save_regs - note where a walk of the current task would start
 * @regs: filled from the current task's saved user registers
 *
 * Context: task, IRQ or NMI context of the current task, whose saved
 * registers are user mode.
 */
void unwind_user_save_regs(struct unwind_user_regs *regs)
{
	struct pt_regs *uregs = task_pt_regs(current);

	regs->ip = instruction_pointer(uregs);
	regs->sp = user_stack_pointer(uregs);
	regs->fp = frame_pointer(uregs);
	regs->bx = arch_unwind_user_bx(uregs);
	regs->ws = arch_unwind_user_word_size(uregs);
}

/**
 * unwind_user_start - begin a walk of the current task's user stack
 * @state: the walk state to fill
 * @from: the user state to start from, saved earlier by
 *	  unwind_user_save_regs(); NULL: the task's saved user registers now
 *
 * Context: task, IRQ or NMI context of the current task.
 *
 * Return: 0 with @state at the interrupted user frame (already done, with
 * %UNWIND_USER_BAD_FRAME, when the IP is not a user address), or -EINVAL
 * (with @state->done set) when the task has no user registers: a kernel
 * thread, or registers that are not user mode.
 */
int unwind_user_start(struct unwind_user_state *state,
		      const struct unwind_user_regs *from)
{
	return __unwind_user_start(state, from);
}

/**
 * unwind_user_start_nofault - let a walk in an interrupt use the tables
 * @state: a walk started by unwind_user_start() in IRQ or NMI context
 *
 * The walk then uses the tables of the mappings and the rules the mm
 * remembers, and looks rules up in table pages that are resident; where
 * it would need more (a mapping not checked yet, a page not resident, more
 * work than an interrupt may do) it ends with %UNWIND_USER_FAULT, so that
 * its caller defers. It relies on the mm's mappings as they are now:
 * unwind_user_end_nofault() says whether they stayed so.
 *
 * Context: IRQ or NMI context of the current task; takes no lock.
 *
 * Return: true when the walk gives what a deferred walk would (it may use
 * every method that is on, or the mm has no tables); false when it
 * cannot: the mm's mappings are being changed, or it has not met its
 * tables yet.
 */
bool unwind_user_start_nofault(struct unwind_user_state *state)
{
	return __unwind_user_start_nofault(state);
}

/**
 * unwind_user_end_nofault - did a walk in an interrupt rely on what held?
 * @state: a walk started with unwind_user_start_nofault()
 *
 * Context: as unwind_user_start_nofault().
 *
 * Return: false when the mm's mappings changed since the walk started (its
 * ranges may be stale); true otherwise.
 */
bool unwind_user_end_nofault(const struct unwind_user_state *state)
{
	return __unwind_user_end_nofault(state);
}

/**
 * unwind_user_walk - store the frames of a started walk
 * @state: a walk started with unwind_user_start(), not stepped yet
 * @trace: where to store the chain; @trace->nr entries are kept and the
 *	   chain is stored after them, up to @max_entries in all
 * @max_entries: the most entries @trace->entries holds, at least 1
 *
 * Stores the interrupted user IP followed by the return address of every
 * frame found, innermost first. Context: as unwind_user_next().
 *
 * Return: why the walk ended (an enum unwind_user_stop value): the entry
 * limit is %UNWIND_USER_TRUNCATED only when one more frame was found.
 */
int unwind_user_walk(struct unwind_user_state *state,
		     struct unwind_stacktrace *trace, unsigned int max_entries)
{
	while (!state->done) {
		/* Most walks: every frame by frame pointers. */
		if (can_do_masked_user_access() && state->ws == sizeof(long) &&
		    state->available_types == UNWIND_USER_TYPE_FP) {
			state->current_type = UNWIND_USER_TYPE_FP;
			if (unwind_user_fp_walk(state, trace, max_entries))
				break;
		}
#ifdef CONFIG_UNWIND_USER_SFRAME
		/* Frames whose rules the mm remembers, in one section. */
		if (can_do_masked_user_access() && state->ws == sizeof(long) &&
		    (state->available_types & UNWIND_USER_TYPES_TABLES) &&
		    unwind_user_table_walk(state, trace, max_entries))
			break;
#endif
		if (trace->nr == max_entries) {
			/* Only a frame that really exists makes this a cut. */
			if (!unwind_user_next(state))
				unwind_user_stop(state, UNWIND_USER_TRUNCATED);
			break;
		}
		trace->entries[trace->nr++] = state->ip;
		if (unwind_user_cut(state, trace, max_entries) ||
		    unwind_user_next(state))
			break;
		/* A lookup may have read a lot: let others run meanwhile. */
		if ((state->available_types & UNWIND_USER_TYPES_TABLES) &&
		    unwind_user_may_sleep(state))
			cond_resched();
	}
	return state->stop;
}

/**
 * unwind_user - walk the current task's user stack
 * @trace: where to store the chain; @trace->entries must hold @max_entries
 * @max_entries: the most entries to store, at least 1
 * @from: the user state to start from (see unwind_user_start()), or NULL
 *
 * Stores the interrupted user IP followed by the return address of every
 * frame found, innermost first. Context: task, IRQ or NMI context of the
 * current task; only where page faults may be taken are non-resident stack
 * and text pages read.
 *
 * Return: why the walk ended (an enum unwind_user_stop value, >= 0), or
 * -EINVAL when the task has no user registers or @max_entries is 0; then
 * @trace->nr is 0.
 */
int unwind_user(struct unwind_stacktrace *trace, unsigned int max_entries,
		const struct unwind_user_regs *from)
{
	/* unwind_user_start() clears it: no automatic zeroing before that. */
	struct unwind_user_state state __uninitialized;

	trace->nr = 0;
	if (!max_entries || unwind_user_start(&state, from))
		return -EINVAL;
	return unwind_user_walk(&state, trace, max_entries);
}
