// SPDX-License-Identifier: GPL-2.0
/*
 * The rule of a user frame by the unwind tables of the file its IP is
 * mapped from: SFrame where the file's table covers the IP, else its
 * .eh_frame, else frame pointers; and the rules each mm remembers.
 *
 * A rule found in a table is remembered by its address and tagged with
 * the file mapping it came from (tables.c names each with an id never
 * reused) and the methods the walk could use, so it is only ever applied
 * to the same file's code at the same place, with the same methods. The
 * rules are read with no lock, by any walk (NMI included), and written
 * slot by slot with no lock by any walk but one in NMI: nothing on a hit
 * writes to memory the threads of a process share.
 */
#include <linux/eh_frame.h>
#include <linux/hardirq.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <linux/sframe.h>
#include <linux/unwind_user.h>

#include "mm_cache.h"
#include "step.h"
#include "uread.h"

/*
 * Fill the slot @r, unless another writer has it: the next lookup then
 * writes it again. Any context but NMI.
 */
static void unwind_rule_fill(struct unwind_mm_rule *r, unsigned long start,
			     u16 len, u64 tag,
			     const struct unwind_user_frame *frame, u8 flags)
{
	u32 seq = READ_ONCE(r->seq);

	if ((seq & 1) || !try_cmpxchg(&r->seq, &seq, seq + 1))
		return;
	WRITE_ONCE(r->start, start);
	WRITE_ONCE(r->len, len);
	WRITE_ONCE(r->tag, tag);
	WRITE_ONCE(r->cfa_off, frame->cfa_off);
	WRITE_ONCE(r->bx_off, frame->bx_off);
	WRITE_ONCE(r->ra_off, frame->ra_off);
	WRITE_ONCE(r->fp_off, frame->fp_off);
	WRITE_ONCE(r->flags, flags);
	WRITE_ONCE(r->type, frame->type);
	/* Readers that see the new count see the rule it covers. */
	smp_store_release(&r->seq, seq + 2);
}

/* The step is that of a native frame; compat rules are never stepped so. */
static u8 unwind_rule_flags(const struct unwind_user_frame *frame)
{
	BUILD_BUG_ON(UNWIND_USER_STEP_SP >
		     UNWIND_RULE_STEP_MASK >> UNWIND_RULE_STEP_SHIFT);
	return (frame->use_fp ? UNWIND_RULE_USE_FP : 0) |
	       (frame->cfa_deref ? UNWIND_RULE_CFA_DEREF : 0) |
	       (frame->fp_in_frame ? UNWIND_RULE_FP_IN_FRAME : 0) |
	       (frame->sigframe ? UNWIND_RULE_SIGFRAME : 0) |
	       (frame->use_bx ? UNWIND_RULE_USE_BX : 0) |
	       (frame->bx_lost ? UNWIND_RULE_BX_LOST : 0) |
	       unwind_user_step_of(frame) << UNWIND_RULE_STEP_SHIFT;
}

/*
 * The way of @set a rule of @ip takes without evicting another: the one
 * holding @ip's rule already, else one never used; else none
 * (UNWIND_MM_RULE_WAYS).
 */
static unsigned int unwind_rule_way(struct unwind_mm_rule *set,
				    unsigned long ip, u64 tag)
{
	unsigned int w, free = UNWIND_MM_RULE_WAYS;

	for (w = 0; w < UNWIND_MM_RULE_WAYS; w++) {
		if (unwind_rule_covers(&set[w], ip) &&
		    READ_ONCE(set[w].tag) == tag)
			return w;
		if (!READ_ONCE(set[w].len) && free == UNWIND_MM_RULE_WAYS)
			free = w;
	}
	return free;
}

/* Which way of a full set the next new rule takes, per CPU: in turn. */
static DEFINE_PER_CPU(unsigned int, unwind_rule_victim);

/**
 * unwind_rule_put - remember the rule of an address and of its row
 * @c: the mm's table
 * @ip: the address looked up
 * @span: the addresses that share its rule (its table row); one that does
 *	  not hold @ip stands for @ip alone
 * @tag: unwind_rule_tag() of the file mapping @ip is in
 * @frame: its rule
 *
 * The slot remembers the part of @span in @ip's largest block, in the set
 * of the smallest of @ip's blocks that holds that part (struct
 * unwind_mm_rule): the next IP of a loop, or a return address near this
 * one, hits. A slot of the set holding @ip already is rewritten in place;
 * else the rule takes a slot never used: in that set, else (its block's
 * neighbours fill it) the part in @ip's 64-byte block in that block's
 * set. Else it takes the slot this CPU's turn names in the first set,
 * whose rule falls out: one slot written, not a set moved down.
 * Rules whose offsets do not fit a slot, or that add to a CFA read from
 * the stack or read a scratch register (rare: hand-written assembly), are
 * not remembered.
 *
 * Context: any but NMI; takes no lock.
 */
void unwind_rule_put(struct sframe_mm *c, unsigned long ip,
		     const struct unwind_row_span *span, u64 tag,
		     const struct unwind_user_frame *frame)
{
	unsigned long widest = ip & ~(UNWIND_RULE_WIDEST - 1), block;
	unsigned long start = span->start, end = span->end;
	unsigned int w, level, victim = UNWIND_MM_RULE_WAYS;
	struct unwind_mm_rule *set, *small;

	BUILD_BUG_ON(UNWIND_RULE_WIDEST > U16_MAX);
	BUILD_BUG_ON(UNWIND_RULE_STEP_MASK &
		     (UNWIND_RULE_USE_BX | UNWIND_RULE_BX_LOST));
	if (frame->cfa_off != (s16)frame->cfa_off ||
	    frame->bx_off != (s16)frame->bx_off ||
	    frame->ra_off != (s16)frame->ra_off ||
	    frame->fp_off != (s16)frame->fp_off || frame->cfa_add ||
	    frame->use_reg || frame->idx_scale)
		return;
	if (start > ip || end <= ip) {
		start = ip;
		end = ip + 1;
	}
	start = max(start, widest);
	if (end - widest > UNWIND_RULE_WIDEST)
		end = widest + UNWIND_RULE_WIDEST;
	for (level = 0; level < UNWIND_RULE_LEVELS - 1; level++) {
		block = ip & ~(BIT(unwind_rule_shift(level)) - 1);
		if (start >= block && end - block <= BIT(unwind_rule_shift(level)))
			break;
	}
	set = unwind_rule_set(c, ip, level);
	victim = unwind_rule_way(set, ip, tag);
	/*
	 * Neighbouring functions share the sets of the wider blocks: rather
	 * than evict one of theirs (a walk may need them all) while the set
	 * of @ip's smallest block has a slot never used, remember the part
	 * in that block there.
	 */
	if (victim == UNWIND_MM_RULE_WAYS && level) {
		small = unwind_rule_set(c, ip, 0);
		w = unwind_rule_way(small, ip, tag);
		if (w != UNWIND_MM_RULE_WAYS) {
			block = ip & ~(BIT(unwind_rule_shift(0)) - 1);
			start = max(start, block);
			end = min(end, block + BIT(unwind_rule_shift(0)));
			set = small;
			victim = w;
		}
	}
	if (victim == UNWIND_MM_RULE_WAYS)
		victim = this_cpu_inc_return(unwind_rule_victim) %
			 UNWIND_MM_RULE_WAYS;
	unwind_rule_fill(&set[victim], start, end - start, tag, frame,
			 unwind_rule_flags(frame));
}

/**
 * unwind_tables_count_frame - count a frame a walk that may use tables took
 * @frame: the rule it took, or NULL for a frame-pointer step made without
 *	   one
 *
 * Context: any; called by the walker of a task that may use tables.
 */
void unwind_tables_count_frame(const struct unwind_user_frame *frame)
{
	switch (frame ? frame->type : UNWIND_USER_TYPE_FP) {
	case UNWIND_USER_TYPE_SFRAME:
		sframe_stat_add(SFRAME_STAT_FRAMES, 1);
		break;
#ifdef CONFIG_UNWIND_USER_EH_FRAME
	case UNWIND_USER_TYPE_EH_FRAME:
		eh_frame_count_frame(frame->sigframe);
		break;
#endif
	default:
		sframe_stat_add(SFRAME_STAT_FP_FRAMES, 1);
		break;
	}
}

/* The SFrame rule, counted as SFrame's; -ENOENT lets .eh_frame try. */
static int unwind_tables_sframe(const struct unwind_user_tables *t,
				unsigned long ip,
				struct unwind_user_frame *frame,
				struct unwind_row_span *span,
				unsigned int *budget)
{
	int ret = sframe_find(&t->sframe, ip, frame, span, budget);

	switch (ret) {
	case 0:
		frame->type = UNWIND_USER_TYPE_SFRAME;
		break;
	case -ENOENT:
		sframe_stat_add(SFRAME_STAT_LOOKUP_MISSES, 1);
		break;
	case -EOPNOTSUPP:
		sframe_stat_add(SFRAME_STAT_UNSUPPORTED, 1);
		break;
	case -EINVAL:
		sframe_stat_add(SFRAME_STAT_BAD_ROWS, 1);
		break;
	}
	return ret;
}

/*
 * The rule the walk's tables have for @ip: SFrame first, .eh_frame for
 * what it does not cover, each where the walk's methods allow it and its
 * code has the walk's word size (a 64-bit process may map an i386 file).
 */
static int unwind_tables_find(struct unwind_user_state *state,
			      unsigned long ip, struct unwind_user_frame *frame,
			      struct unwind_row_span *span)
{
	const struct unwind_user_tables *t = &state->tables;
	unsigned int methods = state->available_types;
	unsigned int *budget = &state->budget;
	int ret = -ENOENT;

	if ((methods & UNWIND_USER_TYPE_SFRAME) && t->sframe.text_end) {
		ret = unwind_tables_sframe(t, ip, frame, span, budget);
		/*
		 * A row SFrame cannot give (a signal frame, a rule it has no
		 * words for) or a bad one: .eh_frame may have a good one.
		 */
		if (ret != -ENOENT && ret != -EOPNOTSUPP && ret != -EINVAL)
			return ret;
	}
#ifdef CONFIG_UNWIND_USER_EH_FRAME
	if ((methods & UNWIND_USER_TYPE_EH_FRAME) && t->eh.table &&
	    t->eh.ws == state->ws) {
		int sf = ret;

		ret = eh_frame_find(&t->eh, &state->eh_memo, ip, frame, span,
				    budget);
		/*
		 * SFrame comes first where it covers an address: the row's
		 * other addresses may be SFrame's. Remember the IP alone.
		 */
		if ((methods & UNWIND_USER_TYPE_SFRAME) && t->sframe.text_end) {
			span->start = ip;
			span->end = ip + 1;
		}
		switch (ret) {
		case 0:
			frame->type = UNWIND_USER_TYPE_EH_FRAME;
			break;
		case EH_FRAME_OUTERMOST:
			ret = SFRAME_OUTERMOST;
			break;
		case EH_FRAME_NO_ROW:
			ret = UNWIND_TABLES_NO_ROW;
			break;
		case -ENOENT:
			/* SFrame's own error where .eh_frame has nothing. */
			ret = sf;
			break;
		}
	}
#endif
	return ret;
}

/* What a remembered rule says, as unwind_tables_rule() returns it. */
static int unwind_rule_result(const struct unwind_user_frame *frame)
{
	switch (frame->type) {
	case UNWIND_USER_TYPE_NONE:
		return SFRAME_OUTERMOST;
	case UNWIND_USER_TYPE_FP:
		return -ENOENT;
	default:
		return 0;
	}
}

/*
 * Remember what a lookup found: a row's rule or the outermost frame, for
 * the addresses of the row (@span); no table for the IP (frame pointers
 * then), for the IP alone. Not an IP amid code its tables describe
 * (UNWIND_TABLES_NO_ROW): the walk ends there, once a walk.
 */
static void unwind_rule_remember(struct sframe_mm *c, unsigned long ip,
				 u64 tag, unsigned int ws, int ret,
				 const struct unwind_user_frame *frame,
				 const struct unwind_row_span *span)
{
	struct unwind_row_span one = { ip, ip + 1 };
	struct unwind_user_frame f = { };

	switch (ret) {
	case 0:
		unwind_rule_put(c, ip, span, tag, frame);
		break;
	case SFRAME_OUTERMOST:
		f.type = UNWIND_USER_TYPE_NONE;
		unwind_rule_put(c, ip, span, tag, &f);
		break;
	case -ENOENT:
		unwind_user_fp_rule(&f, ARCH_UNWIND_USER_FP_BODY, ws);
		unwind_rule_put(c, ip, &one, tag, &f);
		break;
	}
}

/**
 * unwind_tables_lookup - look a rule up in the tables of a checked range
 * @state: the walk
 * @m: the range of @state->maps that @ip is in, whose file has tables
 *     (@m->id not 0)
 * @ip: the address to look up, as for unwind_tables_rule()
 * @frame: filled with the rule on success
 *
 * Looks @ip up in the tables of @m's file, not in the rules the mm
 * remembers, and remembers what it found (but in NMI). For a caller that
 * missed in those rules already: the walker's table loop.
 *
 * Context: as unwind_tables_rule(); outside any user access section.
 *
 * Return: as unwind_tables_rule(); -ESTALE when @m's entry was replaced
 * meanwhile (the range must be checked again), with nothing counted.
 */
int unwind_tables_lookup(struct unwind_user_state *state,
			 const struct unwind_user_map *m, unsigned long ip,
			 struct unwind_user_frame *frame)
{
	/* A range with an entry: the mm's table is set up. */
	struct sframe_mm *c = smp_load_acquire(&current->mm->sframe_cache);
	u64 tag = unwind_rule_tag(m->id, state->available_types, state->ws);
	struct unwind_row_span span = { ip, ip + 1 };
	int ret;

	if (!unwind_tables_copy(state, m))
		return -ESTALE;
	/* What a lookup costs beyond its probes, reads and rows. */
	if (!unwind_charge(&state->budget, UNWIND_LOOKUP_COST))
		return -E2BIG;
	sframe_stat_add(SFRAME_STAT_RULE_LOOKUPS, 1);
	ret = unwind_tables_find(state, ip, frame, &span);
	if (!in_nmi())
		unwind_rule_remember(c, ip, tag, state->ws, ret, frame, &span);
	return ret;
}

/**
 * unwind_tables_rule - the rule of a user frame by its file's tables
 * @state: the walk, which remembers the mappings it met; its
 *	   @available_types says which tables may be used
 * @ip: the address to look up: the interrupted IP (or one a signal frame
 *	saved), or a return address minus one
 * @frame: filled with the rule on success, its @type saying which table
 *	   gave it
 *
 * Finds the tables of the file @ip is mapped from (reading the file's
 * program headers the first time the mm meets it) and looks @ip up: in the
 * rules the mm remembers, else in the tables, SFrame where it covers @ip,
 * else .eh_frame.
 *
 * Context: as unwind_tables_map(): any for a walk with @state->nofault,
 * which may also look rules up in resident table pages; else task context
 * of the walked task, which may fault and sleep.
 *
 * Return: 0; %SFRAME_OUTERMOST when the row marks the outermost frame;
 * -ENOENT when no table covers @ip (frame pointers may);
 * %UNWIND_TABLES_NO_ROW when none does but the file's .eh_frame covers code
 * before and after it (code without CFI, where frame pointers would be a
 * guess: the walk ends); -EOPNOTSUPP when the row needs what a walk does
 * not have; -EINVAL for bad data; -EFAULT;
 * -ENOMEM; -EAGAIN when it cannot be told now; -E2BIG when the walk's
 * budget is spent.
 */
int unwind_tables_rule(struct unwind_user_state *state, unsigned long ip,
		       struct unwind_user_frame *frame)
{
	struct unwind_user_map *m = unwind_user_map_of(state, ip);
	struct sframe_mm *c;
	unsigned int tries;
	u64 tag;
	int ret;

	for (tries = 0; ; tries++) {
		if (!m) {
			ret = unwind_tables_map(state, ip, &m);
			if (ret)
				return ret;
		}
		if (!m->id)
			return -ENOENT;
		/*
		 * A range with an entry: the mm's table is set up. Pairs
		 * with the cmpxchg_release() that set it up.
		 */
		c = smp_load_acquire(&current->mm->sframe_cache);
		tag = unwind_rule_tag(m->id, state->available_types, state->ws);
		/* Frame pointers at the interrupted IP start with a prologue. */
		if (unwind_rule_get(c, ip, tag, frame, NULL) &&
		    !(state->topmost && frame->type == UNWIND_USER_TYPE_FP)) {
			sframe_stat_add(SFRAME_STAT_ROW_HITS, 1);
			return unwind_rule_result(frame);
		}
		ret = unwind_tables_lookup(state, m, ip, frame);
		if (ret != -ESTALE)
			return ret;
		/* The entry was replaced meanwhile: check the mapping again. */
		m->start = 0;
		m->end = 0;
		m = NULL;
		if (state->nofault || tries)
			return -EAGAIN;
	}
}
