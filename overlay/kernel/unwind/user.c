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
 * Beside it: topmost.c reads the interrupted frame's text (is it in a
 * prologue?), methods.c holds what walks may use.
 */
#include <linux/eh_frame.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/sframe.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>

#include "mm_cache.h"
#include "user.h"

/* Inline: the frame-pointer walk calls it inside a user access section. */
static __always_inline void unwind_user_stop(struct unwind_user_state *state,
					     enum unwind_user_stop why)
{
	state->done = true;
	state->stop = why;
}

/*
 * Read @n (1 or 2) consecutive stack words at @addr inside one user access
 * section. Returns 0, -EINVAL for a range outside user space, or -EFAULT.
 */
static int unwind_user_read_words(unsigned long addr, unsigned int ws,
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
 * Whether the walk may reschedule: a walk that may use tables and fault
 * runs where it may sleep (unwind_tables_rule() checks with
 * might_fault()).
 */
static bool unwind_user_may_sleep(const struct unwind_user_state *state)
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
	return 0;
}

/* The most signal frames one walk crosses (nested handlers). */
#define UNWIND_USER_MAX_SIGFRAMES	8

/*
 * The step out of a signal handler's frame: the interrupted state is the
 * one the kernel saved in the signal frame on the stack, at the offsets
 * from the stack pointer that @frame holds. That state may be on another
 * stack (sigaltstack()), so the CFA need not grow here; the number of
 * signal frames a walk crosses is bounded instead. The next frame's IP is
 * the interrupted one, exact: the caller looks it up as it is.
 */
static int unwind_user_apply_signal(struct unwind_user_state *state,
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
	state->sigframes++;
	return unwind_user_take(state, cfa, fp);

fail:
	unwind_user_stop(state, ret == -EFAULT ? UNWIND_USER_FAULT :
					       UNWIND_USER_BAD_FRAME);
	return ret;
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
	unsigned long base, cfa, ra_addr, fp_addr = 0, fp = state->fp;
	unsigned long words[2];
	unsigned int ws = insec ? sizeof(long) : state->ws;
	int ret;

	if (!insec && frame->sigframe)
		return unwind_user_apply_signal(state, frame);
	if (frame->use_fp) {
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

	cfa = base + frame->cfa_off;
	/* A realigned frame keeps the CFA in a stack slot. */
	if (frame->cfa_deref) {
		ret = unwind_user_get(cfa, ws, 1, words, insec);
		if (ret)
			goto fail;
		cfa = words[0];
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

static int unwind_user_apply(struct unwind_user_state *state,
			     const struct unwind_user_frame *frame)
{
	return __unwind_user_apply(state, frame, false);
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
	unsigned long fp = state->fp, size = 2 * sizeof(long);

	if (!fp)
		return UNWIND_USER_END;
	if (fp < state->sp || (fp & (sizeof(long) - 1)))
		return UNWIND_USER_BAD_FRAME;
	*cfa = fp + size;
	/* The range check unwind_user_read_words() makes, size unknown. */
	OPTIMIZER_HIDE_VAR(size);
	if (*cfa <= state->sp || !access_ok((void __user *)fp, size))
		return UNWIND_USER_BAD_FRAME;
	return -1;
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

/*
 * The frames past the interrupted one of a native walk by frame pointers
 * alone, stored as they are found: the steps unwind_user_fp_body() takes,
 * in one user access section instead of one per frame. Each frame passes
 * the same checks first, and its address is then masked to user space, so
 * that no load reaches kernel memory even speculatively, without a fence
 * per frame. @state holds a frame whose IP is not stored yet; the walk
 * stops as unwind_user_walk() does.
 */
static void unwind_user_fp_walk(struct unwind_user_state *state,
				struct unwind_stacktrace *trace,
				unsigned int max_entries)
{
	unsigned long __user *p = (unsigned long __user *)state->fp;
	unsigned long cfa, nfp, nip;
	bool full;
	int why;

	p = masked_user_access_begin(p);
	for (;;) {
		full = trace->nr == max_entries;
		if (!full)
			trace->entries[trace->nr++] = state->ip;
		why = unwind_user_fp_check(state, &cfa);
		if (why >= 0) {
			unwind_user_stop(state, why);
			break;
		}
		p = mask_user_address((unsigned long __user *)state->fp);
		unsafe_get_user(nfp, p, efault);
		unsafe_get_user(nip, p + 1, efault);
		state->ip = nip;
		if (unwind_user_take(state, cfa, nfp))
			break;
		/* Only a frame that really exists makes this a cut. */
		if (full) {
			unwind_user_stop(state, UNWIND_USER_TRUNCATED);
			break;
		}
	}
	user_read_access_end();
	return;

efault:
	user_read_access_end();
	unwind_user_stop(state, UNWIND_USER_FAULT);
}

static int unwind_user_next_fp(struct unwind_user_state *state)
{
	struct unwind_user_frame frame = { };
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
	arch_unwind_user_fp_frame(&frame, at, state->ws);
	return unwind_user_apply(state, &frame);
}

#ifdef CONFIG_UNWIND_USER_SFRAME
/*
 * End the walk where a table lookup failed with @ret (not -ENOENT, which
 * lets frame pointers try), for the reason it gives. Return: the error
 * unwind_user_next() returns for it.
 */
static int unwind_user_table_stop(struct unwind_user_state *state, int ret)
{
	switch (ret) {
	case SFRAME_OUTERMOST:
	case -EOPNOTSUPP:
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
		if (!ret)
			unwind_tables_count_frame(&frame);
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
		if (!ret && (state->available_types & UNWIND_USER_TYPES_TABLES))
			unwind_tables_count_frame(NULL);
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
	struct pt_regs *regs = task_pt_regs(current);
	struct unwind_user_regs now;

	memset(state, 0, sizeof(*state));

	if ((current->flags & (PF_KTHREAD | PF_USER_WORKER)) || !current->mm ||
	    (!from && !user_mode(regs))) {
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
		return -EINVAL;
	}

	if (!from) {
		unwind_user_save_regs(&now);
		from = &now;
	}

	if (IS_ENABLED(CONFIG_HAVE_UNWIND_USER_FP))
		state->available_types |= UNWIND_USER_TYPE_FP;
	/*
	 * Tables are found and read where page faults may be taken, and an
	 * mm known to have none has nothing to look up. SFrame has no ABI
	 * for compat tasks; their .eh_frame is read.
	 */
	if (IS_ENABLED(CONFIG_UNWIND_USER_SFRAME) && unwind_user_may_fault() &&
	    !sframe_mm_fp_only(current->mm))
		state->available_types |= unwind_user_methods() &
					  unwind_user_table_types(from->ws);
#ifdef CONFIG_UNWIND_USER_SFRAME
	state->budget = unwind_user_work_budget();
#endif
	state->ip = from->ip;
	state->sp = from->sp;
	state->fp = from->fp;
	state->ws = from->ws;
	state->topmost = true;
	/* A task may jump anywhere; a kernel address is not a user frame. */
	if (state->ip >= TASK_SIZE_MAX)
		unwind_user_stop(state, UNWIND_USER_BAD_FRAME);
	return 0;
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
#ifdef CONFIG_UNWIND_USER_SFRAME
	unsigned int types = unwind_user_methods() &
			     unwind_user_table_types(state->ws);

	if (!types || state->done || sframe_mm_fp_only(current->mm))
		return true;
	if (!unwind_tables_seq_begin(&state->mm_seq))
		return false;
	state->nofault = true;
	state->budget = UNWIND_USER_BUDGET_NOFAULT;
	state->available_types |= types;
#endif
	return true;
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
#ifdef CONFIG_UNWIND_USER_SFRAME
	if (state->nofault)
		return unwind_tables_seq_valid(state->mm_seq);
#endif
	return true;
}

#ifdef CONFIG_UNWIND_USER_SFRAME
/*
 * The frames past the interrupted one of a native walk that may use
 * tables, stored as they are found, in one user access section: each
 * frame's range was checked by this walk, its rule is the one the mm
 * remembers (or its file has no tables), and the step is the one
 * unwind_user_next() would take, with the same checks. A rule the mm does
 * not remember is looked up out of the section, which is then opened
 * again. Stops at the first frame that needs more: a range not checked
 * yet, a signal frame, frame pointers where the walk may not use them.
 * @state holds a frame whose IP is not stored yet.
 *
 * Return: true when the walk is over; false when the current frame (its
 * IP not stored) needs unwind_user_next().
 */
static bool unwind_user_table_walk(struct unwind_user_state *state,
				   struct unwind_stacktrace *trace,
				   unsigned int max_entries)
{
	/* Pairs with the cmpxchg_release() that set the table up. */
	struct sframe_mm *c = smp_load_acquire(&current->mm->sframe_cache);
	unsigned int nr_sframe = 0, nr_eh = 0, nr_fp = 0, hits = 0;
	struct unwind_user_frame frame, fp_body = { };
	struct unwind_user_map *m = NULL;
	bool fp_ok = state->available_types & UNWIND_USER_TYPE_FP;
	bool over = false, full, have_last = false;
	unsigned long ip, last_ip = 0;
	u64 tag = 0;
	int ret, err = 0;

	if (!c)
		return false;
	arch_unwind_user_fp_frame(&fp_body, ARCH_UNWIND_USER_FP_BODY,
				  sizeof(long));
	fp_body.type = UNWIND_USER_TYPE_FP;
	/* Opens the section; each read masks its own address. */
	masked_user_access_begin((void __user *)state->sp);
	for (;;) {
		ip = state->ip - 1;
		/* Recursion: the frame below had the same rule. */
		if (have_last && ip == last_ip) {
			hits++;
			goto step;
		}
		/* Most callers are in the file of the frame below. */
		if (!m || ip < m->start || ip >= m->end) {
			m = unwind_user_map_of(state, ip);
			if (!m)
				break;
			tag = unwind_rule_tag(m->id, state->available_types,
					      sizeof(long));
		}
		if (!m->id) {
			frame = fp_body;
		} else if (unwind_rule_get(c, ip, tag, &frame)) {
			if (frame.sigframe)
				break;
			hits++;
		} else {
			/* A miss: look it up out of the section, go on. */
			user_read_access_end();
			ret = unwind_tables_lookup(state, m, ip, &frame);
			if (unwind_user_may_sleep(state))
				cond_resched();
			masked_user_access_begin((void __user *)state->sp);
			if (ret == -ENOENT) {
				frame = fp_body;
			} else if (ret == SFRAME_OUTERMOST) {
				frame.type = UNWIND_USER_TYPE_NONE;
			} else if (ret == -ESTALE || (!ret && frame.sigframe)) {
				/* The range checked again; a signal frame. */
				break;
			} else if (ret) {
				err = ret;
				break;
			}
		}
		/* Without frame pointers, the walk ends there. */
		if (frame.type == UNWIND_USER_TYPE_FP && !fp_ok)
			break;
		last_ip = ip;
		have_last = true;
step:
		full = trace->nr == max_entries;
		if (!full)
			trace->entries[trace->nr++] = state->ip;
		over = true;
		if (frame.type == UNWIND_USER_TYPE_NONE) {
			unwind_user_stop(state, UNWIND_USER_END);
			break;
		}
		state->current_type = frame.type;
		if (__unwind_user_apply(state, &frame, true))
			break;
		if (frame.type == UNWIND_USER_TYPE_SFRAME)
			nr_sframe++;
		else if (frame.type == UNWIND_USER_TYPE_EH_FRAME)
			nr_eh++;
		else
			nr_fp++;
		/* Only a frame that really exists makes this a cut. */
		if (full) {
			unwind_user_stop(state, UNWIND_USER_TRUNCATED);
			break;
		}
		over = false;
	}
	user_read_access_end();

	/* A failed lookup ends the walk at this frame, for its reason. */
	if (err) {
		if (trace->nr < max_entries)
			trace->entries[trace->nr++] = state->ip;
		unwind_user_table_stop(state, err);
		over = true;
	}

	sframe_stat_add(SFRAME_STAT_ROW_HITS, hits);
	sframe_stat_add(SFRAME_STAT_FRAMES, nr_sframe);
	sframe_stat_add(SFRAME_STAT_FP_FRAMES, nr_fp);
#ifdef CONFIG_UNWIND_USER_EH_FRAME
	if (nr_eh)
		eh_frame_count_frames(nr_eh);
#endif
	return over;
}
#endif

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
		/* Most walks: every frame past the first by frame pointers. */
		if (can_do_masked_user_access() && !state->topmost &&
		    state->ws == sizeof(long) &&
		    state->available_types == UNWIND_USER_TYPE_FP) {
			state->current_type = UNWIND_USER_TYPE_FP;
			unwind_user_fp_walk(state, trace, max_entries);
			break;
		}
#ifdef CONFIG_UNWIND_USER_SFRAME
		/* Frames whose rules the mm remembers, in one section. */
		if (can_do_masked_user_access() && !state->topmost &&
		    state->ws == sizeof(long) &&
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
		if (unwind_user_next(state))
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
