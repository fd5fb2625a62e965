// SPDX-License-Identifier: GPL-2.0
/*
 * Decode the call frame instructions of a CIE and an FDE of .eh_frame into
 * the rule of the frame at one IP.
 *
 * What is decoded is a row table, not a program: the instructions are read
 * in one forward pass (advance the location, set a rule, remember, restore)
 * that stops at the IP. Their number is bounded by the entry's length
 * (each takes a byte or more) and charged to the walk's budget; the
 * remember stack is capped.
 * Only the rules a walk can follow are kept: the CFA (a register plus an
 * offset), the return address and the caller's frame pointer and base
 * register. DWARF expressions are never evaluated: fixed forms are
 * recognised byte for byte (the .plt's CFA, a realigned frame's CFA and
 * frame pointer, the entry stack pointer hand-written assembly saved at an
 * offset or an index, the signal trampoline's saved registers); a row that
 * needs anything else ends the walk, and the reason is counted.
 *
 * Context: task context of the process that maps the section, where page
 * faults may be taken; no lock may be held that a page fault takes.
 */
#include <linux/eh_frame.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/unwind_user.h>

#include "eh_frame_decode.h"

/* Call frame instructions (DWARF 4, 6.4.2), and the GNU ones in use. */
#define DW_CFA_advance_loc		0x40
#define DW_CFA_offset			0x80
#define DW_CFA_restore			0xc0
#define DW_CFA_nop			0x00
#define DW_CFA_set_loc			0x01
#define DW_CFA_advance_loc1		0x02
#define DW_CFA_advance_loc2		0x03
#define DW_CFA_advance_loc4		0x04
#define DW_CFA_offset_extended		0x05
#define DW_CFA_restore_extended		0x06
#define DW_CFA_undefined		0x07
#define DW_CFA_same_value		0x08
#define DW_CFA_register			0x09
#define DW_CFA_remember_state		0x0a
#define DW_CFA_restore_state		0x0b
#define DW_CFA_def_cfa			0x0c
#define DW_CFA_def_cfa_register		0x0d
#define DW_CFA_def_cfa_offset		0x0e
#define DW_CFA_def_cfa_expression	0x0f
#define DW_CFA_expression		0x10
#define DW_CFA_offset_extended_sf	0x11
#define DW_CFA_def_cfa_sf		0x12
#define DW_CFA_def_cfa_offset_sf	0x13
#define DW_CFA_val_offset		0x14
#define DW_CFA_val_offset_sf		0x15
#define DW_CFA_val_expression		0x16
#define DW_CFA_GNU_args_size		0x2e
#define DW_CFA_GNU_negative_offset_extended 0x2f

/* The expression opcodes of the recognised forms. */
#define DW_OP_deref		0x06
#define DW_OP_breg(r)		(0x70 + (r))

/* Where a register of the caller is, in the row of an IP. */
enum eh_rule_kind {
	EH_SAME,		/* unchanged (the initial rule) */
	EH_UNDEFINED,		/* not recoverable: the outermost frame */
	EH_AT_CFA,		/* saved at CFA + off */
	EH_AT_FP,		/* saved at FP + off (a realigned frame) */
	EH_AT_SP,		/* saved at SP + off (a signal frame) */
	EH_UNSUP_REG,		/* in another register, or CFA-relative value */
	EH_UNSUP_EXPR,		/* an expression of another form */
};

enum eh_cfa_kind {
	EH_CFA_REG,		/* reg + off */
	EH_CFA_DEREF,		/* the word at reg + off */
	EH_CFA_PLT,		/* the .plt's: SP + 8, + 8 from @plt_lit on */
	EH_CFA_UNSUP_EXPR,
};

/* Decoding state of one lookup. */
struct eh_exec {
	struct eh_row	row;
	struct eh_row	initial;	/* after the CIE: DW_CFA_restore */
	struct eh_row	saved[EH_FRAME_MAX_STATES];
	unsigned int	nr_saved;
	unsigned long	loc;		/* where the row being built starts */
	unsigned long	end;		/* where the next row starts, or the FDE ends */
	unsigned long	ip;
	const struct eh_cie *cie;
};

/* The rule of DWARF register @reg in @row, or NULL for one not tracked. */
static struct eh_rule *eh_reg(const struct eh_cie *cie, struct eh_row *row,
			      u64 reg)
{
	if (reg == cie->reg_ra)
		return &row->ra;
	if (reg == cie->reg_fp)
		return &row->fp;
	if (reg == cie->reg_bx)
		return &row->bx;
	return NULL;
}

/*
 * The general registers of @cie's code, DWARF 0 to n - 1: a CFA may be
 * kept in any of them in the interrupted frame, whose registers a walk
 * has.
 */
static unsigned int eh_nr_gprs(const struct eh_cie *cie)
{
#ifdef ARCH_EH_FRAME_COMPAT_MACHINE
	if (cie->ws == 4)
		return ARCH_EH_FRAME_GPRS32;
#endif
#ifdef ARCH_EH_FRAME_GPRS
	return ARCH_EH_FRAME_GPRS;
#else
	return 0;
#endif
}

/* What an expression may be: the only forms a walk follows. */
enum eh_expr_form {
	EH_EXPR_OTHER,
	EH_EXPR_BREG,		/* breg(SP or FP) N: an address */
	EH_EXPR_BREG_DEREF,	/* ... deref: the word at that address */
	EH_EXPR_BREG_DEREF_ADD,	/* ... plus_uconst M: that word plus M */
	EH_EXPR_PLT,		/* the .plt's CFA, below */
};

/* What a recognised expression holds; see eh_expr(). */
struct eh_expr_val {
	u8	reg;		/* breg's register */
	s32	off;		/* and offset */
	s32	add;		/* what plus_uconst adds */
	u8	lit;		/* the .plt's literal */
	u8	idx_reg;	/* the index form's register */
	u8	idx_scale;	/* and literal; 0: not that form */
};

#define DW_OP_lit(n)		(0x30 + (n))
#define DW_OP_mul		0x1e
#define DW_OP_plus		0x22
#define DW_OP_plus_uconst	0x23

/* The most a CFA expression adds to the word it reads (a few words). */
#define EH_EXPR_MAX_ADD		4096

/*
 * The .plt's CFA, as binutils writes it for every 16-byte entry, for a
 * word of W bytes: breg(SP) W; breg(RA) 0; lit15; and; lit11 (or lit10);
 * ge; lit(log2 W); shl; plus. That is, SP + W, plus W from byte 11 (10) of
 * the entry on, where the entry has pushed its argument. Byte 6 is the
 * literal, which @b's bytes but those must match.
 */
#define EH_PLT_LEN		11
#define EH_PLT_LIT		6

static bool eh_expr_plt(const struct eh_cie *cie, const u8 *b, u8 *lit)
{
	const u8 plt[EH_PLT_LEN] = {
		DW_OP_breg(cie->reg_sp), cie->ws, DW_OP_breg(cie->reg_ra), 0x00,
		DW_OP_lit(15), 0x1a /* and */, 0, 0x2a /* ge */,
		DW_OP_lit(ilog2(cie->ws)), 0x24 /* shl */, DW_OP_plus
	};

	if (b[EH_PLT_LIT] != DW_OP_lit(10) && b[EH_PLT_LIT] != DW_OP_lit(11))
		return false;
	if (memcmp(b, plt, EH_PLT_LIT) ||
	    memcmp(b + EH_PLT_LIT + 1, plt + EH_PLT_LIT + 1,
		   EH_PLT_LEN - EH_PLT_LIT - 1))
		return false;
	*lit = b[EH_PLT_LIT] - DW_OP_lit(0);
	return true;
}

/*
 * After breg(SP or FP) N, the index term of OpenSSL's Montgomery
 * multiplication (perlasm's "%rsp+8,%r9,8,mul,plus"): breg(X) K; lit(S);
 * mul; plus, an address of SP + N + (X + K) * S, X a general register.
 * @op is the term's first opcode, read already. Folds K * S into @v->off.
 * Return: whether the cursor held the term.
 */
static bool eh_expr_idx(const struct eh_cie *cie, u8 op,
			struct unwind_cursor *cur, unsigned long end,
			struct eh_expr_val *v)
{
	u8 reg = op - DW_OP_breg(0), scale;
	s64 k, off;

	if (op < DW_OP_breg(0) || reg >= eh_nr_gprs(cie) || cur->pos >= end)
		return false;
	k = eh_sleb(cur);
	if (cur->pos + 3 > end)
		return false;
	op = eh_u(cur, 1);
	if (op <= DW_OP_lit(0) || op > DW_OP_lit(31) ||
	    eh_u(cur, 1) != DW_OP_mul || eh_u(cur, 1) != DW_OP_plus)
		return false;
	scale = op - DW_OP_lit(0);
	if (k < S32_MIN || k > S32_MAX)
		return false;
	off = v->off + k * scale;
	if (off < S32_MIN || off > S32_MAX)
		return false;
	v->off = off;
	v->idx_reg = reg;
	v->idx_scale = scale;
	return true;
}

/*
 * Recognise the expression of @len bytes at the cursor, which moves past
 * it, into *@v. Nothing is evaluated; an expression of any other form is
 * skipped. The forms with plus_uconst are the ones hand-written assembly
 * (OpenSSL's perlasm, for one) gives a function that realigns its stack
 * after saving the stack pointer it was entered with, at SP + N or at an
 * index from there: the CFA is that word plus the return address's size.
 */
static enum eh_expr_form eh_expr(const struct eh_cie *cie,
				 struct unwind_cursor *cur, u64 len,
				 struct eh_expr_val *v)
{
	enum eh_expr_form form = EH_EXPR_OTHER;
	unsigned long start = cur->pos, end;
	const u8 *b;
	u8 op;

	memset(v, 0, sizeof(*v));
	if (cur->err || len > cur->end - cur->pos) {
		cur->err = cur->err ?: -EINVAL;
		return form;
	}
	end = start + len;
	op = len ? eh_u(cur, 1) : 0;
	if (op == DW_OP_breg(cie->reg_sp) || op == DW_OP_breg(cie->reg_fp)) {
		v->reg = op - DW_OP_breg(0);
		v->off = eh_sleb(cur);
		if (cur->pos == end) {
			form = EH_EXPR_BREG;
		} else if (cur->pos < end) {
			op = eh_u(cur, 1);
			if (op == DW_OP_deref ||
			    (eh_expr_idx(cie, op, cur, end, v) &&
			     cur->pos < end && eh_u(cur, 1) == DW_OP_deref))
				form = EH_EXPR_BREG_DEREF;
		}
		if (form == EH_EXPR_BREG_DEREF && cur->pos < end) {
			u64 m = 0;

			form = EH_EXPR_OTHER;
			if (eh_u(cur, 1) == DW_OP_plus_uconst)
				m = eh_uleb(cur);
			if (cur->pos == end && m && m <= EH_EXPR_MAX_ADD) {
				v->add = m;
				form = EH_EXPR_BREG_DEREF_ADD;
			}
		}
		/* The index form is followed with its addend only. */
		if (v->idx_scale && form != EH_EXPR_BREG_DEREF_ADD)
			form = EH_EXPR_OTHER;
	}
	if (form == EH_EXPR_OTHER && len == EH_PLT_LEN) {
		cur->pos = start;
		b = unwind_cursor_take(cur, len);
		if (b && eh_expr_plt(cie, b, &v->lit))
			form = EH_EXPR_PLT;
	}
	cur->pos = end;
	return form;
}

static void eh_def_cfa_expr(struct eh_exec *x, struct unwind_cursor *cur)
{
	struct eh_row *row = &x->row;
	u64 len = eh_uleb(cur);
	struct eh_expr_val v;

	switch (eh_expr(x->cie, cur, len, &v)) {
	case EH_EXPR_BREG_DEREF:
	case EH_EXPR_BREG_DEREF_ADD:
		row->cfa_kind = EH_CFA_DEREF;
		row->cfa_reg = v.reg;
		row->cfa_off = v.off;
		row->cfa_add = v.add;
		row->idx_reg = v.idx_reg;
		row->idx_scale = v.idx_scale;
		break;
	case EH_EXPR_PLT:
		row->cfa_kind = EH_CFA_PLT;
		row->plt_lit = v.lit;
		break;
	default:
		row->cfa_kind = EH_CFA_UNSUP_EXPR;
		break;
	}
}

/* The register is saved at the address the expression computes. */
static void eh_reg_expr(struct eh_exec *x, struct unwind_cursor *cur,
			u64 regno)
{
	struct eh_rule *rule = eh_reg(x->cie, &x->row, regno);
	u64 len = eh_uleb(cur);
	struct eh_expr_val v;

	if (eh_expr(x->cie, cur, len, &v) != EH_EXPR_BREG) {
		if (rule)
			rule->kind = EH_UNSUP_EXPR;
		return;
	}
	if (!rule)
		return;
	rule->off = v.off;
	rule->kind = v.reg == x->cie->reg_sp ? EH_AT_SP : EH_AT_FP;
}

static void eh_set_offset(struct eh_exec *x, u64 reg, s64 factored)
{
	struct eh_rule *rule = eh_reg(x->cie, &x->row, reg);
	s64 off = factored * x->cie->data_align;

	if (!rule)
		return;
	if (off < S32_MIN || off > S32_MAX) {
		rule->kind = EH_UNSUP_REG;
		return;
	}
	rule->kind = EH_AT_CFA;
	rule->off = off;
}

static void eh_set_rule(struct eh_exec *x, u64 reg, u8 kind)
{
	struct eh_rule *rule = eh_reg(x->cie, &x->row, reg);

	if (rule) {
		rule->kind = kind;
		rule->off = 0;
	}
}

static void eh_restore(struct eh_exec *x, u64 reg)
{
	struct eh_rule *rule = eh_reg(x->cie, &x->row, reg);

	if (rule)
		*rule = *eh_reg(x->cie, &x->initial, reg);
}

/* Return: 0, or -EINVAL for an offset a frame's s32 cannot hold. */
static int eh_def_cfa(struct eh_row *row, u64 reg, s64 off)
{
	if (off < S32_MIN || off > S32_MAX)
		return -EINVAL;
	row->cfa_kind = EH_CFA_REG;
	row->cfa_reg = reg > U8_MAX ? U8_MAX : reg;
	row->cfa_off = off;
	return 0;
}

/*
 * Decode instructions from @cur until the location passes the IP or they
 * end. Return: 0, -EINVAL for bad data, -EOPNOTSUPP for an instruction
 * not known here, -E2BIG when the walk's budget ran out, -EFAULT.
 */
static int eh_exec_run(struct eh_exec *x, struct unwind_cursor *cur,
		       u8 fde_enc)
{
	struct eh_row *row = &x->row;
	u64 delta, reg, off;
	s64 soff;
	u8 op;

	while (cur->pos < cur->end && !cur->err) {
		if (!unwind_cursor_charge(cur, 1))
			return cur->err;
		op = eh_u(cur, 1);
		delta = 0;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			delta = op & 0x3f;
			goto advance;
		case DW_CFA_offset:
			eh_set_offset(x, op & 0x3f, eh_uleb(cur));
			continue;
		case DW_CFA_restore:
			eh_restore(x, op & 0x3f);
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_GNU_args_size:
			if (op == DW_CFA_GNU_args_size)
				eh_uleb(cur);
			break;
		case DW_CFA_set_loc:
			off = eh_pointer(cur, fde_enc, 0, x->cie->ws);
			if (cur->err || off < x->loc)
				return cur->err ?: -EINVAL;
			if (off > x->ip) {
				x->end = min(x->end, off);
				return 0;
			}
			x->loc = off;
			break;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			delta = eh_u(cur, 1 << (op - DW_CFA_advance_loc1));
			goto advance;
		case DW_CFA_offset_extended:
			reg = eh_uleb(cur);
			eh_set_offset(x, reg, eh_uleb(cur));
			break;
		case DW_CFA_offset_extended_sf:
			reg = eh_uleb(cur);
			eh_set_offset(x, reg, eh_sleb(cur));
			break;
		case DW_CFA_GNU_negative_offset_extended:
			reg = eh_uleb(cur);
			eh_set_offset(x, reg, -(s64)eh_uleb(cur));
			break;
		case DW_CFA_restore_extended:
			eh_restore(x, eh_uleb(cur));
			break;
		case DW_CFA_undefined:
			eh_set_rule(x, eh_uleb(cur), EH_UNDEFINED);
			break;
		case DW_CFA_same_value:
			eh_set_rule(x, eh_uleb(cur), EH_SAME);
			break;
		case DW_CFA_register:
			reg = eh_uleb(cur);
			eh_uleb(cur);
			eh_set_rule(x, reg, EH_UNSUP_REG);
			break;
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
			reg = eh_uleb(cur);
			if (op == DW_CFA_val_offset)
				eh_uleb(cur);
			else
				eh_sleb(cur);
			eh_set_rule(x, reg, EH_UNSUP_REG);
			break;
		case DW_CFA_remember_state:
			if (x->nr_saved == EH_FRAME_MAX_STATES)
				return -EINVAL;
			x->saved[x->nr_saved++] = *row;
			break;
		case DW_CFA_restore_state:
			if (!x->nr_saved)
				return -EINVAL;
			*row = x->saved[--x->nr_saved];
			break;
		case DW_CFA_def_cfa:
			reg = eh_uleb(cur);
			off = eh_uleb(cur);
			if (off > S32_MAX || eh_def_cfa(row, reg, off))
				return -EINVAL;
			break;
		case DW_CFA_def_cfa_sf:
			reg = eh_uleb(cur);
			if (eh_def_cfa(row, reg, eh_sleb(cur) * x->cie->data_align))
				return -EINVAL;
			break;
		case DW_CFA_def_cfa_register:
			reg = eh_uleb(cur);
			/* Keeps the offset; an expression has none. */
			if (row->cfa_kind != EH_CFA_REG)
				return -EINVAL;
			row->cfa_reg = reg > U8_MAX ? U8_MAX : reg;
			break;
		case DW_CFA_def_cfa_offset:
			off = eh_uleb(cur);
			if (row->cfa_kind != EH_CFA_REG || off > S32_MAX)
				return -EINVAL;
			row->cfa_off = off;
			break;
		case DW_CFA_def_cfa_offset_sf:
			soff = eh_sleb(cur) * x->cie->data_align;
			if (row->cfa_kind != EH_CFA_REG)
				return -EINVAL;
			if (soff < S32_MIN || soff > S32_MAX)
				return -EINVAL;
			row->cfa_off = soff;
			break;
		case DW_CFA_def_cfa_expression:
			eh_def_cfa_expr(x, cur);
			break;
		case DW_CFA_expression:
			reg = eh_uleb(cur);
			eh_reg_expr(x, cur, reg);
			break;
		case DW_CFA_val_expression:
			reg = eh_uleb(cur);
			off = eh_uleb(cur);
			if (cur->err || off > cur->end - cur->pos)
				return cur->err ?: -EINVAL;
			cur->pos += off;
			eh_set_rule(x, reg, EH_UNSUP_EXPR);
			break;
		default:
			return -EOPNOTSUPP;
		}
		continue;
advance:
		delta *= x->cie->code_align;
		if (delta > x->ip - x->loc) {
			/* The row of @ip ends where this one starts. */
			if (delta < x->end - x->loc)
				x->end = x->loc + delta;
			return cur->err;
		}
		x->loc += delta;
	}
	return cur->err;
}

/*
 * Where the frame keeps its caller's base register, which a later frame's
 * CFA may need (use_bx): saved at CFA + off (at the stack pointer + off in
 * a signal frame), or unchanged. A rule the walk cannot follow does not
 * end this walk; only a frame whose CFA needs the register does.
 */
static void eh_row_bx(const struct eh_row *row,
		      struct unwind_user_frame *frame)
{
	u8 at = frame->sigframe ? EH_AT_SP : EH_AT_CFA;

	if (row->bx.kind == EH_SAME)
		return;
	if (row->bx.kind == at && row->bx.off)
		frame->bx_off = row->bx.off;
	else
		frame->bx_lost = true;
}

/*
 * Turn the row into the walk's rule. @ip is the address looked up, which
 * the .plt's CFA depends on.
 */
static int eh_row_frame(const struct eh_row *row, const struct eh_cie *cie,
			unsigned long ip, struct unwind_user_frame *frame)
{
	memset(frame, 0, sizeof(*frame));

	switch (row->ra.kind) {
	case EH_UNDEFINED:
		eh_stat_inc(EH_STAT_OUTERMOST);
		return EH_FRAME_OUTERMOST;
	case EH_AT_CFA:
		break;
	case EH_AT_SP:
		if (cie->signal)
			break;
		fallthrough;
	case EH_UNSUP_EXPR:
		eh_stat_inc(EH_STAT_UNSUP_EXPR);
		return -EOPNOTSUPP;
	default:
		eh_stat_inc(EH_STAT_UNSUP_REG);
		return -EOPNOTSUPP;
	}

	switch (row->cfa_kind) {
	case EH_CFA_REG:
	case EH_CFA_DEREF:
		if (row->cfa_reg == cie->reg_fp) {
			frame->use_fp = true;
		} else if (row->cfa_reg == cie->reg_bx &&
			   cie->reg_bx != U8_MAX) {
			frame->use_bx = true;
		} else if (row->cfa_reg < eh_nr_gprs(cie) &&
			   row->cfa_reg != cie->reg_sp) {
			/* Read from the interrupted frame's registers. */
			frame->use_reg = true;
			frame->reg = row->cfa_reg;
		} else if (row->cfa_reg != cie->reg_sp) {
			eh_stat_inc(EH_STAT_UNSUP_REG);
			return -EOPNOTSUPP;
		}
		frame->cfa_off = row->cfa_off;
		frame->cfa_deref = row->cfa_kind == EH_CFA_DEREF;
		frame->cfa_add = frame->cfa_deref ? row->cfa_add : 0;
		if (frame->cfa_deref && row->idx_scale) {
			frame->idx_reg = row->idx_reg;
			frame->idx_scale = row->idx_scale;
		}
		break;
	case EH_CFA_PLT:
		frame->cfa_off = ((ip & 15) >= row->plt_lit ? 2 : 1) * cie->ws;
		break;
	default:
		eh_stat_inc(EH_STAT_UNSUP_EXPR);
		return -EOPNOTSUPP;
	}

	/*
	 * A signal frame: the interrupted state is the one the kernel saved
	 * on the stack, its stack pointer the CFA (the word the CFA's
	 * expression reads), its IP and frame pointer at fixed offsets from
	 * the trampoline's stack pointer.
	 */
	if (row->ra.kind == EH_AT_SP) {
		if (!frame->cfa_deref || frame->use_fp || frame->use_bx ||
		    frame->use_reg || frame->idx_scale || frame->cfa_add) {
			eh_stat_inc(EH_STAT_UNSUP_EXPR);
			return -EOPNOTSUPP;
		}
		frame->sigframe = true;
	}
	frame->ra_off = row->ra.off;

	switch (row->fp.kind) {
	case EH_SAME:
	case EH_UNDEFINED:
		break;
	case EH_AT_CFA:
		if (!row->fp.off || frame->sigframe)
			goto bad;
		frame->fp_off = row->fp.off;
		break;
	case EH_AT_FP:
		if (frame->sigframe)
			goto bad;
		frame->fp_in_frame = true;
		frame->fp_off = row->fp.off;
		break;
	case EH_AT_SP:
		if (!frame->sigframe)
			goto bad;
		frame->fp_off = row->fp.off;
		break;
	case EH_UNSUP_EXPR:
		eh_stat_inc(EH_STAT_UNSUP_EXPR);
		return -EOPNOTSUPP;
	default:
		eh_stat_inc(EH_STAT_UNSUP_REG);
		return -EOPNOTSUPP;
	}
	eh_row_bx(row, frame);
	return 0;
bad:
	eh_stat_inc(EH_STAT_BAD_DATA);
	return -EINVAL;
}

/* Count a failed decode by its reason, as eh_frame_find() documents. */
static int eh_exec_result(int ret)
{
	switch (ret) {
	case -EOPNOTSUPP:
		eh_stat_inc(EH_STAT_UNSUP_OP);
		break;
	case -EINVAL:
		eh_stat_inc(EH_STAT_BAD_DATA);
		break;
	}
	return ret;
}

/**
 * eh_frame_cie_rules - run the initial instructions of a CIE
 * @cr: @cr->cie read by eh_frame.c; @cr->initial is set on success
 * @budget: the work the walk has left; charged here
 *
 * The CIE's instructions set rules only: every one of them applies to
 * each row of the FDEs that point to it.
 *
 * Context: as eh_frame_find().
 *
 * Return: 0; else as eh_frame_row(), and counted the same way.
 */
int eh_frame_cie_rules(struct eh_cie_rules *cr, unsigned int *budget)
{
	struct unwind_cursor ccur;
	struct eh_exec x;
	int ret;

	memset(&x.row, 0, sizeof(x.row));
	memset(&x.initial, 0, sizeof(x.initial));
	x.row.cfa_reg = U8_MAX;
	x.nr_saved = 0;
	x.cie = &cr->cie;
	x.loc = 0;
	x.end = ULONG_MAX;
	x.ip = ULONG_MAX;
	unwind_cursor_init(&ccur, cr->cie.insns, cr->cie.end);
	ccur.budget = budget;
	ret = eh_exec_run(&x, &ccur, cr->cie.fde_enc);
	if (!ret)
		cr->initial = x.row;
	return eh_exec_result(ret);
}

/**
 * eh_frame_row - the rule of the frame at @ip, by its CIE and FDE
 * @cr: the FDE's CIE, read by eh_frame.c, and its initial rules
 *	(eh_frame_cie_rules())
 * @insns: a cursor on the FDE's instructions
 * @begin: the first address the FDE covers
 * @end: the address after the last one it covers
 * @ip: the address looked up, which the FDE covers
 * @frame: filled with the rule on success
 * @span: filled on success with the addresses the row covers
 *
 * Context: as eh_frame_find().
 *
 * Return: as eh_frame_find(), but -ENOENT; every failure is counted here.
 */
int eh_frame_row(const struct eh_cie_rules *cr, struct unwind_cursor *insns,
		 unsigned long begin, unsigned long end, unsigned long ip,
		 struct unwind_user_frame *frame, struct unwind_row_span *span)
{
	struct eh_exec x;
	int ret;

	/* The CIE's rules, then the FDE's up to @ip; no state remembered. */
	x.row = cr->initial;
	x.initial = cr->initial;
	x.nr_saved = 0;
	x.cie = &cr->cie;
	x.loc = begin;
	x.end = end;
	x.ip = ip;
	ret = eh_exec_run(&x, insns, cr->cie.fde_enc);
	if (ret)
		return eh_exec_result(ret);
	span->start = x.loc;
	span->end = x.end;
	/* The .plt's CFA depends on the IP itself, not just on its row. */
	if (x.row.cfa_kind == EH_CFA_PLT) {
		span->start = ip;
		span->end = ip + 1;
	}
	return eh_row_frame(&x.row, &cr->cie, ip, frame);
}
