// SPDX-License-Identifier: GPL-2.0
/*
 * The frames of a walk read in one user access section, for the native
 * walks of most stacks: by frame pointers alone, or by the rules the mm
 * remembers where it has tables. Each frame takes the step
 * unwind_user_next() would take, with the same checks (step.h), without
 * opening a section per frame; the interrupted frame's text, where frame
 * pointers need it, is read in the same section. A frame that needs more
 * (a lookup that may fault, a signal frame, text off the IP's page) is
 * left to unwind_user_next().
 */
#include <linux/eh_frame.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sframe.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>
#include <linux/uprobes.h>

#include "mm_cache.h"
#include "step.h"
#include "user.h"

/*
 * Whether the interrupted frame is at its own text: no uprobe's
 * out-of-line copy stands in for the instruction at its IP, and no uprobe
 * handler runs (its breakpoint is in the text).
 */
static bool unwind_user_own_text(const struct unwind_user_state *state)
{
	unsigned long xol;

#ifdef CONFIG_UPROBES
	struct uprobe_task *utask = READ_ONCE(current->utask);

	/* A task that never hit a uprobe has no copy. */
	if (!utask)
		return true;
	/* In a uprobe's handler: the text holds its breakpoint. */
	if (READ_ONCE(utask->auprobe))
		return false;
#endif
	return unwind_user_text_ip(state->ip, &xol) == state->ip && !xol;
}

/*
 * Whether the interrupted frame's text can be read in a walk's user access
 * section: the window arch_unwind_user_fp_prologue() looks at lies in the
 * IP's page (the text just executed: only that page is certainly mapped).
 */
static bool unwind_user_fp_window(const struct unwind_user_state *state)
{
	unsigned long off = offset_in_page(state->ip);

	return off >= ARCH_UNWIND_USER_INSN_BEFORE &&
	       off + ARCH_UNWIND_USER_INSN_BYTES <= PAGE_SIZE;
}

/*
 * The frame-pointer rule of the interrupted frame, as unwind_user_next_fp()
 * finds it, from its text read in the caller's user access section, the
 * window lying in one page (unwind_user_fp_window()). Return: false when
 * the text could not be read (unwind_user_next() tells why).
 */
static __always_inline bool
unwind_user_fp_topmost_insec(const struct unwind_user_state *state,
			     struct unwind_user_frame *frame)
{
	u8 buf[ARCH_UNWIND_USER_INSN_BEFORE + ARCH_UNWIND_USER_INSN_BYTES];
	const u8 __user *p;
	enum arch_unwind_user_fp_at at;
	u64 word;
	unsigned int i;

	BUILD_BUG_ON(sizeof(buf) < sizeof(word));
	p = (const u8 __user *)(state->ip - ARCH_UNWIND_USER_INSN_BEFORE);
	p = mask_user_address(p);
	/* A word, then bytes: the window lies in one page. */
	unsafe_get_user(word, (const u64 __user *)p, efault);
	memcpy(buf, &word, sizeof(word));
	for (i = sizeof(word); i < sizeof(buf); i++)
		unsafe_get_user(buf[i], p + i, efault);
	at = arch_unwind_user_fp_prologue(buf + ARCH_UNWIND_USER_INSN_BEFORE,
					  ARCH_UNWIND_USER_INSN_BEFORE,
					  ARCH_UNWIND_USER_INSN_BYTES,
					  sizeof(long));
	if (at == ARCH_UNWIND_USER_FP_UNKNOWN)
		return false;
	unwind_user_fp_rule(frame, at, sizeof(long));
	return true;
efault:
	return false;
}

/*
 * The frames of a native walk by frame pointers alone, stored as they are
 * found: the steps unwind_user_next_fp() takes, in one user access section
 * instead of one per frame (two for the interrupted one). Each frame
 * passes the same checks first, and its address is then masked to user
 * space, so that no load reaches kernel memory even speculatively, without
 * a fence per frame. @state holds a frame whose IP is not stored yet; the
 * walk stops as unwind_user_walk() does.
 *
 * Return: true when the walk is over; false when the interrupted frame
 * (its IP not stored) needs unwind_user_next(): its text is not in one
 * page with its IP, or could not be read.
 */
bool unwind_user_fp_walk(struct unwind_user_state *state,
			 struct unwind_stacktrace *trace,
			 unsigned int max_entries)
{
	/* In locals while the loop runs; stored back when it ends. */
	unsigned long *entries = trace->entries;
	unsigned int nr = trace->nr;
	/* With cut_at_max, no frame is looked for past the last entry. */
	unsigned int cut = state->cut_at_max ? max_entries : UINT_MAX;
	struct unwind_user_frame top;
	bool full;

	if (state->topmost &&
	    (!unwind_user_own_text(state) || !unwind_user_fp_window(state)))
		return false;
	masked_user_access_begin((void __user *)state->fp);
	if (state->topmost) {
		if (!unwind_user_fp_topmost_insec(state, &top)) {
			user_read_access_end();
			return false;
		}
		state->topmost = false;
		/* Before the prologue or at a "ret": no frame of its own. */
		if (!top.use_fp) {
			full = nr == max_entries;
			if (!full)
				entries[nr++] = state->ip;
			if (nr >= cut) {
				unwind_user_stop(state, UNWIND_USER_TRUNCATED);
				goto out;
			}
			if (__unwind_user_apply(state, &top, true))
				goto out;
			if (full) {
				unwind_user_stop(state, UNWIND_USER_TRUNCATED);
				goto out;
			}
		}
	}
	for (;;) {
		full = nr == max_entries;
		if (!full)
			entries[nr++] = state->ip;
		if (nr >= cut) {
			unwind_user_stop(state, UNWIND_USER_TRUNCATED);
			break;
		}
		if (unwind_user_fp_step_insec(state))
			break;
		/* Only a frame that really exists makes this a cut. */
		if (full) {
			unwind_user_stop(state, UNWIND_USER_TRUNCATED);
			break;
		}
	}
out:
	user_read_access_end();
	trace->nr = nr;
	return true;
}

#ifdef CONFIG_UNWIND_USER_SFRAME
/* How unwind_user_table_topmost() found the interrupted frame's rule. */
enum unwind_user_top {
	UNWIND_USER_TOP_NEXT,	/* it did not: unwind_user_next() steps it */
	UNWIND_USER_TOP_RULE,	/* the rule the mm remembers */
	UNWIND_USER_TOP_TEXT,	/* frame pointers, by the text in the section */
};

/*
 * The interrupted frame's rule for unwind_user_table_walk(), found before
 * its user access section opens, as unwind_user_next() would find it: the
 * rule the mm remembers for the IP's file, or where the file has no tables
 * the frame-pointer rule of the IP's position in its function, which the
 * caller reads in its section. Fills @map with the IP's checked range and
 * @tag with its rules' tag.
 *
 * Return: how; UNWIND_USER_TOP_NEXT for a uprobe's out-of-line copy, a
 * range that cannot be checked now, a rule the mm does not remember, a
 * signal frame, a frame-pointer rule in a file with tables (the prologue
 * is checked after the lookup), text not in the IP's page.
 */
static enum unwind_user_top
unwind_user_table_topmost(struct unwind_user_state *state,
			  struct sframe_mm *c, struct unwind_user_map **map,
			  u64 *tag, struct unwind_user_frame *frame, u8 *step)
{
	unsigned long ip = state->ip;
	struct unwind_user_map *m;

	if (!unwind_user_own_text(state))
		return UNWIND_USER_TOP_NEXT;
	m = unwind_user_map_of(state, ip);
	if (!m && unwind_tables_map(state, ip, &m))
		return UNWIND_USER_TOP_NEXT;
	*map = m;
	*tag = unwind_rule_tag(m->id, state->available_types, sizeof(long));
	if (!m->id)
		return (state->available_types & UNWIND_USER_TYPE_FP) &&
		       unwind_user_fp_window(state) ?
		       UNWIND_USER_TOP_TEXT : UNWIND_USER_TOP_NEXT;
	if (unwind_rule_get(c, ip, *tag, frame, step) &&
	    frame->type != UNWIND_USER_TYPE_FP && !frame->sigframe)
		return UNWIND_USER_TOP_RULE;
	return UNWIND_USER_TOP_NEXT;
}

/*
 * The frames of a native walk that may use tables, stored as they are
 * found, in one user access section: each frame's rule is the one the mm
 * remembers (or its file has no tables), and the step is the one
 * unwind_user_next() would take, with the same checks. The interrupted
 * frame's rule is found first (unwind_user_table_topmost()); a range this
 * walk has not checked and a rule the mm does not remember are looked up
 * out of the section, which is then opened again. Stops at the first frame
 * that needs more: a range that cannot be checked now, a signal frame,
 * frame pointers where the walk may not use them. @state holds a frame
 * whose IP is not stored yet.
 *
 * Return: true when the walk is over; false when the current frame (its
 * IP not stored) needs unwind_user_next().
 */
bool unwind_user_table_walk(struct unwind_user_state *state,
			    struct unwind_stacktrace *trace,
			    unsigned int max_entries)
{
	/* Pairs with the cmpxchg_release() that set the table up. */
	struct sframe_mm *c = smp_load_acquire(&current->mm->sframe_cache);
	struct unwind_user_frame frame;
	struct unwind_user_map *m = NULL;
	bool fp_ok = state->available_types & UNWIND_USER_TYPE_FP;
	/* The step of the current frame's rule (enum unwind_user_step). */
	u8 step = UNWIND_USER_STEP_RULE;
	enum unwind_user_top top = UNWIND_USER_TOP_NEXT;
	bool topmost = state->topmost, over = false, full;
	/* In locals while the loop runs; stored back when it ends. */
	unsigned long *entries = trace->entries;
	unsigned int nr = trace->nr;
	/* With cut_at_max, the entry whose rule is not needed: the last. */
	unsigned int last = state->cut_at_max ? max_entries - 1 : UINT_MAX;
	/*
	 * Frames stepped, by method: frame pointers, SFrame, .eh_frame; the
	 * fourth slot keeps the index provably in bounds inside the section.
	 */
	unsigned int steps[4] = { }, hits = 0;
	/* No IP looked up yet: a caller's (a return address - 1) never is. */
	unsigned long ip, last_ip = ULONG_MAX;
	u8 type = UNWIND_USER_TYPE_NONE;
	u64 tag = 0;
	int ret, err = 0;

	BUILD_BUG_ON(UNWIND_USER_TYPE_FP >> 1 != 0 ||
		     UNWIND_USER_TYPE_SFRAME >> 1 != 1 ||
		     UNWIND_USER_TYPE_EH_FRAME >> 1 != 2);
	if (!c)
		return false;
	if (topmost) {
		top = unwind_user_table_topmost(state, c, &m, &tag, &frame,
						&step);
		if (top == UNWIND_USER_TOP_NEXT)
			return false;
	}
	/* Opens the section; each read masks its own address. */
	masked_user_access_begin((void __user *)state->sp);
	if (top == UNWIND_USER_TOP_TEXT &&
	    !unwind_user_fp_topmost_insec(state, &frame)) {
		user_read_access_end();
		return false;
	}
	/* The interrupted frame's rule is found; it is no caller to reuse. */
	if (topmost && nr < last) {
		/* Frame pointers by the text: the step of the rule. */
		if (frame.type != UNWIND_USER_TYPE_FP)
			hits++;
		else
			step = unwind_user_step_of(&frame);
		goto rule;
	}
	for (;;) {
		/* The last entry needs no rule: store it and stop, cut. */
		if (nr >= last) {
			if (nr < max_entries)
				entries[nr++] = state->ip;
			unwind_user_stop(state, UNWIND_USER_TRUNCATED);
			over = true;
			break;
		}
		ip = state->ip - 1;
		/* Recursion: the frame below had the same rule. */
		if (ip == last_ip) {
			hits++;
			goto step;
		}
		/* Most callers are in the file of the frame below. */
		if (!m || ip < m->start || ip >= m->end) {
			m = unwind_user_map_of(state, ip);
			if (!m) {
				/* Not checked by this walk: out of the section. */
				user_read_access_end();
				ret = unwind_tables_map(state, ip, &m);
				masked_user_access_begin((void __user *)state->sp);
				if (ret)
					break;
			}
			tag = unwind_rule_tag(m->id, state->available_types,
					      sizeof(long));
		}
		if (!m->id) {
			/* No table: the body's frame-pointer rule. */
			unwind_user_fp_rule(&frame, ARCH_UNWIND_USER_FP_BODY,
					    sizeof(long));
			step = UNWIND_USER_STEP_FP;
		} else if (unwind_rule_get(c, ip, tag, &frame, &step)) {
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
				unwind_user_fp_rule(&frame,
						    ARCH_UNWIND_USER_FP_BODY,
						    sizeof(long));
				step = UNWIND_USER_STEP_FP;
			} else if (ret == SFRAME_OUTERMOST) {
				frame.type = UNWIND_USER_TYPE_NONE;
			} else if (ret == -ESTALE || (!ret && frame.sigframe)) {
				/* The range checked again; a signal frame. */
				break;
			} else if (ret) {
				err = ret;
				break;
			}
			if (!ret)
				step = unwind_user_step_of(&frame);
		}
		/* Without frame pointers, the walk ends there. */
		if (frame.type == UNWIND_USER_TYPE_FP && !fp_ok)
			break;
		last_ip = ip;
rule:
		/* The outermost frame: stored, and nothing past it. */
		if (frame.type == UNWIND_USER_TYPE_NONE) {
			if (nr < max_entries)
				entries[nr++] = state->ip;
			unwind_user_stop(state, UNWIND_USER_END);
			over = true;
			break;
		}
step:
		full = nr == max_entries;
		if (!full)
			entries[nr++] = state->ip;
		over = true;
		/* Most frames take a short step: frame pointers, or from sp. */
		if (step == UNWIND_USER_STEP_FP)
			ret = unwind_user_fp_step_insec(state);
		else if (step == UNWIND_USER_STEP_SP)
			ret = unwind_user_sp_step_insec(state, &frame);
		else
			ret = __unwind_user_apply(state, &frame, true);
		if (ret)
			break;
		unwind_user_track_bx(state, &frame);
		type = frame.type;
		steps[(type >> 1) & 3]++;
		/* Only a frame that really exists makes this a cut. */
		if (full) {
			unwind_user_stop(state, UNWIND_USER_TRUNCATED);
			break;
		}
		over = false;
	}
	user_read_access_end();
	trace->nr = nr;
	/* The current frame is a caller, found by the last step's method. */
	if (type) {
		state->topmost = false;
		state->current_type = type;
	}

	/* A failed lookup ends the walk at this frame, for its reason. */
	if (err) {
		if (trace->nr < max_entries)
			trace->entries[trace->nr++] = state->ip;
		unwind_user_table_stop(state, err);
		over = true;
	}

	sframe_stat_add(SFRAME_STAT_ROW_HITS, hits);
	sframe_stat_add(SFRAME_STAT_FRAMES, steps[UNWIND_USER_TYPE_SFRAME >> 1]);
	sframe_stat_add(SFRAME_STAT_FP_FRAMES, steps[UNWIND_USER_TYPE_FP >> 1]);
#ifdef CONFIG_UNWIND_USER_EH_FRAME
	if (steps[UNWIND_USER_TYPE_EH_FRAME >> 1])
		eh_frame_count_frames(steps[UNWIND_USER_TYPE_EH_FRAME >> 1]);
#endif
	return over;
}
#endif
