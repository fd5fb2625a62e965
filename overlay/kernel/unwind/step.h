/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One step of a user stack walk: the checks and reads every method's step
 * goes through, whether it reads its frame in a user access section of its
 * own (user.c, frame by frame) or in the caller's (section.c, many frames
 * in one section). Internal to kernel/unwind/.
 */
#ifndef _KERNEL_UNWIND_STEP_H
#define _KERNEL_UNWIND_STEP_H

#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>

#include "mm_cache.h"

/* The most signal frames one walk crosses (nested handlers). */
#define UNWIND_USER_MAX_SIGFRAMES	8

int unwind_user_read_words(unsigned long addr, unsigned int ws,
			   unsigned int n, unsigned long *words);
int unwind_user_apply_signal(struct unwind_user_state *state,
			     const struct unwind_user_frame *frame);
int unwind_user_table_stop(struct unwind_user_state *state, int ret);

/* Inline: the frame-pointer walk calls it inside a user access section. */
static __always_inline void unwind_user_stop(struct unwind_user_state *state,
					     enum unwind_user_stop why)
{
	state->done = true;
	state->stop = why;
}

/*
 * The frame-pointer rule of a frame stopped at @at (its function's entry,
 * a pushed frame pointer, or its body), for a stack of @ws-byte words.
 */
static __always_inline void unwind_user_fp_rule(struct unwind_user_frame *frame,
						enum arch_unwind_user_fp_at at,
						unsigned int ws)
{
	frame->cfa_deref = false;
	frame->cfa_add = 0;
	frame->fp_in_frame = false;
	frame->sigframe = false;
	frame->use_bx = false;
	frame->bx_off = 0;
	frame->bx_lost = false;
	frame->use_reg = false;
	frame->idx_scale = 0;
	frame->type = UNWIND_USER_TYPE_FP;
	arch_unwind_user_fp_frame(frame, at, ws);
}

/*
 * Whether the walk may reschedule: a walk that may use tables and fault
 * runs where it may sleep (unwind_tables_rule() checks with
 * might_fault()).
 */
static inline bool unwind_user_may_sleep(const struct unwind_user_state *state)
{
#ifdef CONFIG_UNWIND_USER_SFRAME
	return !state->nofault;
#else
	return false;
#endif
}

/*
 * The last checks of every step, with the caller's return address in
 * @state->ip: a zero one ends the walk, a kernel address is a bad frame;
 * else the caller's frame (@cfa, @fp) becomes the current one.
 */
static __always_inline int unwind_user_take(struct unwind_user_state *state,
					    unsigned long cfa, unsigned long fp)
{
	if (!state->ip) {
		unwind_user_stop(state, UNWIND_USER_END);
		return -ENOENT;
	}
	if (state->ip >= TASK_SIZE_MAX) {
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}
	state->sp = cfa;
	state->fp = fp;
	/* The caller's scratch registers are not saved anywhere. */
	state->regs_live = false;
	return 0;
}

/*
 * General register @regno of the interrupted frame into *@val, for a rule
 * that keeps its CFA there (a scratch register, which no frame saves). In
 * any other frame, or where the saved registers no longer hold that
 * frame's state, the walk ends here, counted, rather than guess.
 */
static __always_inline int unwind_user_reg(struct unwind_user_state *state,
					   u8 regno, unsigned int ws,
					   unsigned long *val)
{
	if (state->regs_live &&
	    arch_unwind_user_reg(task_pt_regs(current), regno, ws, val))
		return 0;
#ifdef CONFIG_UNWIND_USER_SFRAME
	sframe_stat_add(SFRAME_STAT_SCRATCH_STOPS, 1);
#endif
	unwind_user_stop(state, UNWIND_USER_END);
	return -ENOENT;
}

/*
 * After the step @frame described, to the frame whose stack pointer (this
 * frame's CFA) is now @state->sp: where that frame's base register is.
 * Only .eh_frame says where a frame saved it; after a frame any other
 * method walked, it is lost. A signal frame's step says it itself
 * (unwind_user_apply_signal()).
 */
static __always_inline void unwind_user_track_bx(struct unwind_user_state *state,
						 const struct unwind_user_frame *frame)
{
	if (frame->sigframe)
		return;
	if (frame->type != UNWIND_USER_TYPE_EH_FRAME || frame->bx_lost)
		state->bx_at = UNWIND_USER_BX_LOST;
	else if (frame->bx_off)
		state->bx_at = state->sp + frame->bx_off;
}

/*
 * Read @n (1 or 2) stack words at @addr: in their own user access section,
 * or (@insec, native words only) in the caller's, where the address is
 * checked as user_read_access_begin() checks it and then masked, so that
 * no load reaches kernel memory even speculatively. The same results
 * either way: 0, -EINVAL for a range outside user space, or -EFAULT.
 */
static __always_inline int unwind_user_get(unsigned long addr,
					   unsigned int ws, unsigned int n,
					   unsigned long *words,
					   const bool insec)
{
	unsigned long __user *p = (unsigned long __user *)addr;

	if (!insec)
		return unwind_user_read_words(addr, ws, n, words);
	if (!access_ok(p, n * sizeof(long)))
		return -EINVAL;
	p = mask_user_address(p);
	unsafe_get_user(words[0], p, efault);
	if (n > 1)
		unsafe_get_user(words[1], p + 1, efault);
	return 0;
efault:
	return -EFAULT;
}

/*
 * Take the step @frame describes: find the CFA, check it, and read the
 * return address and, where the frame saved it, the caller's frame pointer.
 * Every rule, whichever method found it, goes through the same checks,
 * inside the table walk's user access section (@insec) or not.
 */
static __always_inline int __unwind_user_apply(struct unwind_user_state *state,
					       const struct unwind_user_frame *frame,
					       const bool insec)
{
	bool fp_saved = frame->fp_off || frame->fp_in_frame;
	unsigned long base, idx = 0, cfa, ra_addr, fp_addr = 0, fp = state->fp;
	unsigned long words[2];
	unsigned int ws = insec ? sizeof(long) : state->ws;
	int ret;

	if (!insec && frame->sigframe)
		return unwind_user_apply_signal(state, frame);
	if (frame->use_bx) {
		/*
		 * The base register, as the frames walked so far left it:
		 * where one of them may have changed it without saying where
		 * it saved it, the walk ends here rather than guess.
		 */
		if (state->bx_at == UNWIND_USER_BX_LOST) {
#ifdef CONFIG_UNWIND_USER_SFRAME
			sframe_stat_add(SFRAME_STAT_BX_LOST_STOPS, 1);
#endif
			unwind_user_stop(state, UNWIND_USER_END);
			return -ENOENT;
		}
		base = state->bx;
		if (state->bx_at) {
			ret = unwind_user_get(state->bx_at, ws, 1, words, insec);
			if (ret)
				goto fail;
			base = words[0];
		}
	} else if (frame->use_reg) {
		ret = unwind_user_reg(state, frame->reg, ws, &base);
		if (ret)
			return ret;
	} else if (frame->use_fp) {
		/* The outermost frame clears the frame pointer. */
		if (!state->fp) {
			unwind_user_stop(state, UNWIND_USER_END);
			return -ENOENT;
		}
		/*
		 * A frame pointer below the stack pointer is stale: it points
		 * into frames already popped, even when the CFA it gives lies
		 * above the stack pointer.
		 */
		if (state->fp < state->sp) {
			unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
			return -EINVAL;
		}
		base = state->fp;
	} else {
		base = state->sp;
	}
	if (base & (ws - 1)) {
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}

	if (frame->idx_scale) {
		ret = unwind_user_reg(state, frame->idx_reg, ws, &idx);
		if (ret)
			return ret;
	}

	cfa = base + frame->cfa_off + idx * frame->idx_scale;
	/* A realigned frame keeps the CFA in a stack slot. */
	if (frame->cfa_deref) {
		ret = unwind_user_get(cfa, ws, 1, words, insec);
		if (ret)
			goto fail;
		cfa = words[0] + frame->cfa_add;
	}
	/* The caller's frame lies strictly above this one, word aligned. */
	if (cfa <= state->sp || (cfa & (ws - 1)) ||
	    (ws == sizeof(u32) && cfa > U32_MAX)) {
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}

	ra_addr = cfa + frame->ra_off;
	if (fp_saved)
		fp_addr = (frame->fp_in_frame ? state->fp : cfa) + frame->fp_off;
	if (fp_saved && fp_addr + ws == ra_addr) {
		/* The usual layout: saved FP right below the return address. */
		ret = unwind_user_get(fp_addr, ws, 2, words, insec);
		if (ret)
			goto fail;
		fp = words[0];
		state->ip = words[1];
	} else {
		ret = unwind_user_get(ra_addr, ws, 1, words, insec);
		if (ret)
			goto fail;
		state->ip = words[0];
		if (fp_saved) {
			ret = unwind_user_get(fp_addr, ws, 1, words, insec);
			if (ret)
				goto fail;
			fp = words[0];
		}
	}

	return unwind_user_take(state, cfa, fp);

fail:
	unwind_user_stop(state, ret == -EFAULT ? UNWIND_USER_FAULT :
					       UNWIND_USER_BAD_FRAME);
	return ret;
}

/*
 * The checks of a native frame-pointer step before it reads the frame, as
 * unwind_user_apply() makes them for the body rule (CFA two words above
 * the frame pointer, which points at the saved frame pointer, the return
 * address above it): the outermost frame clears the frame pointer; a
 * stale, misaligned or non-user one is a bad frame.
 *
 * Return: why the walk ends, or -1 with *@cfa set when the frame may be
 * read at @state->fp.
 */
static __always_inline int unwind_user_fp_check(const struct unwind_user_state *state,
						unsigned long *cfa)
{
	unsigned long fp = state->fp;

	if (!fp)
		return UNWIND_USER_END;
	if (fp < state->sp || (fp & (sizeof(long) - 1)))
		return UNWIND_USER_BAD_FRAME;
	/*
	 * The range check unwind_user_read_words() makes for the frame's two
	 * words (access_ok() of a size it does not know): their end neither
	 * wraps nor passes the user address limit. With the frame pointer
	 * at or above the stack pointer, that end, the CFA, lies above it.
	 */
	*cfa = fp + 2 * sizeof(long);
	if (*cfa < fp || !access_ok((void __user *)*cfa, 0))
		return UNWIND_USER_BAD_FRAME;
	return -1;
}

/*
 * The step of a native frame by frame pointers, the body rule, inside the
 * caller's user access section: unwind_user_fp_check(), then the frame's
 * two words at the frame pointer, masked to user space; the same stops as
 * __unwind_user_apply() with that rule.
 *
 * Return: 0 when @state holds the caller's frame; else a negative errno,
 * the walk over.
 */
static __always_inline int unwind_user_fp_step_insec(struct unwind_user_state *state)
{
	unsigned long __user *p;
	unsigned long cfa, nfp, nip;
	int why = unwind_user_fp_check(state, &cfa);

	if (why >= 0) {
		unwind_user_stop(state, why);
		return why == UNWIND_USER_END ? -ENOENT : -EINVAL;
	}
	p = mask_user_address((unsigned long __user *)state->fp);
	unsafe_get_user(nfp, p, efault);
	unsafe_get_user(nip, p + 1, efault);
	state->ip = nip;
	return unwind_user_take(state, cfa, nfp);

efault:
	unwind_user_stop(state, UNWIND_USER_FAULT);
	return -EFAULT;
}

/*
 * The step of a native frame by a rule from the stack pointer whose return
 * address is the word below the CFA and whose caller's frame pointer is
 * the word below that or not saved (UNWIND_USER_STEP_SP), inside the
 * caller's user access section: __unwind_user_apply()'s checks and reads
 * for such a rule, without the tests for what it does not have.
 *
 * Return: as unwind_user_fp_step_insec().
 */
static __always_inline int unwind_user_sp_step_insec(struct unwind_user_state *state,
						     const struct unwind_user_frame *frame)
{
	unsigned long sp = state->sp, cfa = sp + frame->cfa_off, fp = state->fp;
	unsigned long __user *p;
	unsigned long ra;

	/* Aligned, and the caller's frame strictly above this one. */
	if (((sp | cfa) & (sizeof(long) - 1)) || cfa <= sp) {
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}
	p = (unsigned long __user *)cfa - (frame->fp_off ? 2 : 1);
	if (!access_ok(p, (unsigned long)cfa - (unsigned long)p)) {
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}
	p = mask_user_address(p);
	if (frame->fp_off) {
		unsafe_get_user(fp, p, efault);
		p++;
	}
	unsafe_get_user(ra, p, efault);
	state->ip = ra;
	return unwind_user_take(state, cfa, fp);

efault:
	unwind_user_stop(state, UNWIND_USER_FAULT);
	return -EFAULT;
}

/* Which step a native frame's rule takes in a user access section. */
enum unwind_user_step {
	UNWIND_USER_STEP_RULE,	/* __unwind_user_apply() */
	UNWIND_USER_STEP_FP,	/* unwind_user_fp_step_insec(): the body rule */
	UNWIND_USER_STEP_SP,	/* unwind_user_sp_step_insec() */
};

static __always_inline enum unwind_user_step
unwind_user_step_of(const struct unwind_user_frame *frame)
{
	const int w = sizeof(long);

	if (frame->cfa_deref || frame->fp_in_frame || frame->sigframe ||
	    frame->use_bx || frame->use_reg || frame->ra_off != -w)
		return UNWIND_USER_STEP_RULE;
	if (frame->use_fp)
		return frame->cfa_off == 2 * w && frame->fp_off == -2 * w ?
		       UNWIND_USER_STEP_FP : UNWIND_USER_STEP_RULE;
	return !frame->fp_off || frame->fp_off == -2 * w ?
	       UNWIND_USER_STEP_SP : UNWIND_USER_STEP_RULE;
}

#endif /* _KERNEL_UNWIND_STEP_H */
