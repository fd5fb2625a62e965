// SPDX-License-Identifier: GPL-2.0
/*
 * Read a file's .eh_frame where the process maps it, to find where a frame
 * at a given IP keeps its caller's state: the .eh_frame_hdr search table
 * gives the function's FDE, and its CIE's and its own call frame
 * instructions give the row of the IP.
 *
 * What is read is a row table, not a program: the instructions are decoded
 * in one forward pass (advance the location, set a rule, remember, restore)
 * that stops at the IP, with their number, the entry's length and the
 * remember stack capped. Only the rules a walk can follow are kept: the CFA
 * (stack or frame pointer plus an offset), the return address and the
 * caller's frame pointer. DWARF expressions are never evaluated: three
 * fixed forms are recognised byte for byte (the .plt's CFA, a realigned
 * frame's CFA and frame pointer, the signal trampoline's saved registers);
 * a row that needs anything else ends the walk, and the reason is counted.
 *
 * The section belongs to the process, as its stack does. Every length,
 * offset and encoding is checked before use, every read tolerates faults,
 * every address read stays inside the segment that holds the section. Bad
 * data gives -EINVAL; it never warns.
 *
 * Context: task context of the process that maps the section, where page
 * faults may be taken; no lock may be held that a page fault takes.
 */
#include <linux/eh_frame.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/unwind_user.h>

#include "stats.h"
#include "uread.h"

/* Pointer encodings (LSB, "DWARF Exception Header Encoding"). */
#define DW_EH_PE_absptr		0x00
#define DW_EH_PE_uleb128	0x01
#define DW_EH_PE_udata2		0x02
#define DW_EH_PE_udata4		0x03
#define DW_EH_PE_udata8		0x04
#define DW_EH_PE_sleb128	0x09
#define DW_EH_PE_sdata2		0x0a
#define DW_EH_PE_sdata4		0x0b
#define DW_EH_PE_sdata8		0x0c
#define DW_EH_PE_pcrel		0x10
#define DW_EH_PE_datarel	0x30
#define DW_EH_PE_omit		0xff

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

/* Bounds on what one lookup decodes. */
#define EH_FRAME_MAX_ENTRY	SZ_64K	/* bytes of one CIE or FDE */
#define EH_FRAME_MAX_INSNS	4096	/* instructions of CIE and FDE */
#define EH_FRAME_MAX_STATES	8	/* depth of remember_state */
#define EH_FRAME_MAX_AUG	8	/* augmentation string letters */
#define EH_FRAME_MAX_EXPR	16	/* bytes of a recognised expression */

enum eh_frame_stat {
	EH_STAT_FRAMES,			/* frames found by .eh_frame */
	EH_STAT_SECTIONS,		/* files with a usable header */
	EH_STAT_BAD_HEADERS,		/* ... with a header breaking a rule */
	EH_STAT_LOOKUPS,		/* rows looked up in the tables */
	EH_STAT_MISSES,			/* IPs no FDE covers */
	EH_STAT_UNSUP_EXPR,		/* rows ended by an expression */
	EH_STAT_UNSUP_REG,		/* ... by a register a walk lacks */
	EH_STAT_UNSUP_OP,		/* ... by an unknown instruction */
	EH_STAT_BAD_DATA,		/* ... by data breaking a rule */
	EH_STAT_SIGNAL_FRAMES,		/* signal frames crossed */
	EH_STAT_OUTERMOST,		/* rows marking the outermost frame */
	NR_EH_STATS,
};

static const char * const eh_stat_names[NR_EH_STATS] = {
	[EH_STAT_FRAMES]	= "eh_frame_frames",
	[EH_STAT_SECTIONS]	= "eh_frame_sections",
	[EH_STAT_BAD_HEADERS]	= "eh_frame_bad_headers",
	[EH_STAT_LOOKUPS]	= "eh_frame_lookups",
	[EH_STAT_MISSES]	= "eh_frame_misses",
	[EH_STAT_UNSUP_EXPR]	= "eh_frame_unsupported_expressions",
	[EH_STAT_UNSUP_REG]	= "eh_frame_unsupported_registers",
	[EH_STAT_UNSUP_OP]	= "eh_frame_unsupported_opcodes",
	[EH_STAT_BAD_DATA]	= "eh_frame_bad_data",
	[EH_STAT_SIGNAL_FRAMES]	= "eh_frame_signal_frames",
	[EH_STAT_OUTERMOST]	= "eh_frame_outermost",
};

struct eh_frame_stats {
	u64 val[NR_EH_STATS];
};

static DEFINE_PER_CPU(struct eh_frame_stats, eh_frame_stats);

static void eh_stat_inc(enum eh_frame_stat stat)
{
	this_cpu_inc(eh_frame_stats.val[stat]);
}

/**
 * eh_frame_count_frame - count a frame the walk took by an .eh_frame rule
 * @signal: the frame was a signal frame
 *
 * Context: any.
 */
void eh_frame_count_frame(bool signal)
{
	eh_stat_inc(EH_STAT_FRAMES);
	if (signal)
		eh_stat_inc(EH_STAT_SIGNAL_FRAMES);
}

/**
 * eh_frame_counters_show - print the .eh_frame counters
 * @m: the seq_file of the unwinder's debugfs counters file
 *
 * Context: task context.
 */
void eh_frame_counters_show(struct seq_file *m)
{
	unwind_stats_show(m, eh_stat_names, eh_frame_stats.val, NR_EH_STATS);
}

/* Decodes bytes of the section in order, reading user memory in chunks. */
struct eh_cursor {
	unsigned long	pos;		/* the next byte to decode */
	unsigned long	end;		/* no byte at or past it is read */
	unsigned long	buf_addr;	/* user address of buf[0] */
	unsigned int	buf_len;
	int		err;		/* the first error; reads give 0 after */
	u8		buf[128];
};

static void eh_cursor_init(struct eh_cursor *cur, unsigned long pos,
			   unsigned long end)
{
	cur->pos = pos;
	cur->end = end;
	cur->buf_addr = 0;
	cur->buf_len = 0;
	cur->err = 0;
}

/*
 * The next @len bytes (at most 8), or NULL with cur->err set: -EINVAL past
 * the end, -EFAULT when they cannot be read.
 */
static const u8 *eh_take(struct eh_cursor *cur, unsigned int len)
{
	unsigned long off = cur->pos - cur->buf_addr;
	const u8 *p;

	if (cur->err)
		return NULL;
	if (cur->pos > cur->end || len > cur->end - cur->pos) {
		cur->err = -EINVAL;
		return NULL;
	}
	if (cur->pos < cur->buf_addr || off + len > cur->buf_len) {
		cur->buf_len = min_t(unsigned long, cur->end - cur->pos,
				     sizeof(cur->buf));
		if (unwind_read_user(cur->buf, cur->pos, cur->buf_len)) {
			cur->err = -EFAULT;
			return NULL;
		}
		cur->buf_addr = cur->pos;
		off = 0;
	}
	p = cur->buf + off;
	cur->pos += len;
	return p;
}

static u64 eh_u(struct eh_cursor *cur, unsigned int len)
{
	const u8 *p = eh_take(cur, len);

	if (!p)
		return 0;
	switch (len) {
	case 1:
		return *p;
	case 2:
		return get_unaligned_le16(p);
	case 4:
		return get_unaligned_le32(p);
	default:
		return get_unaligned_le64(p);
	}
}

/* LEB128 numbers; a walk needs none wider than 32 bits. */
static u64 eh_uleb(struct eh_cursor *cur)
{
	unsigned int shift = 0;
	u64 val = 0;
	u8 b;

	do {
		b = eh_u(cur, 1);
		if (shift < 64)
			val |= (u64)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !cur->err && shift < 70);
	if ((b & 0x80) || val > U32_MAX)
		cur->err = cur->err ?: -EINVAL;
	return val;
}

static s64 eh_sleb(struct eh_cursor *cur)
{
	unsigned int shift = 0;
	s64 val = 0;
	u8 b;

	do {
		b = eh_u(cur, 1);
		if (shift < 64)
			val |= (u64)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !cur->err && shift < 70);
	if (shift < 64 && (b & 0x40))
		val |= -1LL << shift;
	if ((b & 0x80) || val > S32_MAX || val < S32_MIN)
		cur->err = cur->err ?: -EINVAL;
	return val;
}

/*
 * A pointer in encoding @enc: absolute, relative to its own address, or
 * relative to @data (.eh_frame_hdr). Indirect and other bases are refused.
 */
static unsigned long eh_pointer(struct eh_cursor *cur, u8 enc,
				unsigned long data)
{
	unsigned long at = cur->pos, val;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		val = eh_u(cur, 8);
		break;
	case DW_EH_PE_udata2:
		val = eh_u(cur, 2);
		break;
	case DW_EH_PE_sdata2:
		val = (s16)eh_u(cur, 2);
		break;
	case DW_EH_PE_udata4:
		val = eh_u(cur, 4);
		break;
	case DW_EH_PE_sdata4:
		val = (s32)eh_u(cur, 4);
		break;
	case DW_EH_PE_uleb128:
		val = eh_uleb(cur);
		break;
	case DW_EH_PE_sleb128:
		val = eh_sleb(cur);
		break;
	default:
		cur->err = cur->err ?: -EINVAL;
		return 0;
	}
	switch (enc & 0xf0) {
	case 0:
		return val;
	case DW_EH_PE_pcrel:
		return at + val;
	case DW_EH_PE_datarel:
		if (data)
			return data + val;
		fallthrough;
	default:
		cur->err = cur->err ?: -EINVAL;
		return 0;
	}
}

/**
 * eh_frame_section_init - check an .eh_frame_hdr and note its search table
 * @sec: filled on success
 * @hdr: user address of .eh_frame_hdr (PT_GNU_EH_FRAME, relocated)
 * @size: its segment's size
 * @seg_start: start of the loaded segment that holds it
 * @seg_end: end of that segment
 *
 * Context: task context of the process mapping the section; may fault.
 *
 * Return: 0; -EFAULT when the header cannot be read; -EINVAL when it
 * breaks a rule or has no sorted search table (its FDEs cannot be found
 * without a scan of the whole section).
 */
int eh_frame_section_init(struct eh_frame_section *sec, unsigned long hdr,
			  unsigned long size, unsigned long seg_start,
			  unsigned long seg_end)
{
	struct eh_cursor cur;
	unsigned long start, table;
	const u8 *h;
	u64 count;
	int ret = -EINVAL;

	if (hdr < seg_start || seg_end > TASK_SIZE_MAX || seg_start >= seg_end ||
	    size < 4 || size > seg_end - hdr)
		goto bad;
	eh_cursor_init(&cur, hdr, hdr + size);
	h = eh_take(&cur, 4);
	if (!h) {
		ret = cur.err;
		goto bad;
	}
	/* Version 1; the table must be there, sorted, 4-byte entries. */
	if (h[0] != 1 || h[1] == DW_EH_PE_omit || h[2] == DW_EH_PE_omit ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		goto bad;
	start = eh_pointer(&cur, h[1], hdr);
	count = eh_pointer(&cur, h[2], 0);
	table = cur.pos;
	if (cur.err) {
		ret = cur.err;
		goto bad;
	}
	if (start < seg_start || start >= seg_end || !count ||
	    count > (hdr + size - table) / 8)
		goto bad;

	sec->table = table;
	sec->hdr = hdr;
	sec->start = start;
	sec->end = seg_end;
	sec->nr_fdes = count;
	eh_stat_inc(EH_STAT_SECTIONS);
	return 0;
bad:
	eh_stat_inc(EH_STAT_BAD_HEADERS);
	return ret;
}

/*
 * The FDE for @ip by the search table: the last entry whose location is at
 * or below @ip. One user access section for the whole search.
 */
static int eh_frame_find_fde(const struct eh_frame_section *sec,
			     unsigned long ip, unsigned long *fde)
{
	const s32 __user *t = (const s32 __user *)sec->table;
	u32 lo = 0, hi = sec->nr_fdes;
	s32 loc, off;

	if (!user_read_access_begin(t, (unsigned long)hi * 8))
		return -EFAULT;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		unsafe_get_user(loc, t + 2 * mid, efault);
		if (sec->hdr + loc <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo) {
		user_read_access_end();
		return -ENOENT;
	}
	unsafe_get_user(off, t + 2 * (lo - 1) + 1, efault);
	user_read_access_end();
	*fde = sec->hdr + off;
	return 0;

efault:
	user_read_access_end();
	return -EFAULT;
}

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

struct eh_rule {
	u8	kind;
	s32	off;
};

struct eh_row {
	u8		cfa_kind;
	u8		cfa_reg;	/* DWARF number */
	u8		plt_lit;
	s32		cfa_off;
	struct eh_rule	ra;
	struct eh_rule	fp;
};

/* The CIE facts an FDE's instructions need. */
struct eh_cie {
	unsigned long	insns;		/* initial instructions */
	unsigned long	end;
	u32		code_align;
	s32		data_align;
	u8		fde_enc;
	bool		aug_z;
	bool		signal;		/* "S": a signal trampoline */
};

/*
 * The CIE at @addr, which must lie in [@sec->start, @before).
 * -EINVAL when it breaks a rule or has an augmentation a walk cannot skip.
 */
static int eh_frame_read_cie(const struct eh_frame_section *sec,
			     unsigned long addr, unsigned long before,
			     struct eh_cie *cie)
{
	char aug[EH_FRAME_MAX_AUG + 1];
	struct eh_cursor cur;
	unsigned long aug_end;
	unsigned int i;
	u64 len, ra;
	u8 version;

	if (addr < sec->start || addr >= before)
		return -EINVAL;
	eh_cursor_init(&cur, addr, before);
	len = eh_u(&cur, 4);
	if (cur.err)
		return cur.err;
	if (!len || len > EH_FRAME_MAX_ENTRY || len > before - cur.pos)
		return -EINVAL;
	cie->end = cur.pos + len;
	cur.end = cie->end;
	if (eh_u(&cur, 4) != 0)		/* a CIE's id */
		return cur.err ?: -EINVAL;
	version = eh_u(&cur, 1);
	if (version != 1 && version != 3)
		return cur.err ?: -EINVAL;
	for (i = 0; i <= EH_FRAME_MAX_AUG; i++) {
		aug[i] = eh_u(&cur, 1);
		if (!aug[i] || cur.err)
			break;
	}
	if (cur.err || i > EH_FRAME_MAX_AUG || (i && aug[0] != 'z'))
		return cur.err ?: -EINVAL;
	cie->aug_z = i;
	cie->code_align = eh_uleb(&cur);
	cie->data_align = eh_sleb(&cur);
	ra = version == 1 ? eh_u(&cur, 1) : eh_uleb(&cur);
	if (cur.err)
		return cur.err;
	if (!cie->code_align || ra != ARCH_EH_FRAME_REG_RA)
		return -EINVAL;

	cie->fde_enc = DW_EH_PE_absptr;
	cie->signal = false;
	if (cie->aug_z) {
		len = eh_uleb(&cur);
		if (cur.err || len > cur.end - cur.pos)
			return cur.err ?: -EINVAL;
		aug_end = cur.pos + len;
		/* Parse what is needed; the length skips the rest. */
		for (i = 1; aug[i]; i++) {
			switch (aug[i]) {
			case 'R':
				cie->fde_enc = eh_u(&cur, 1);
				break;
			case 'P':
				eh_pointer(&cur, eh_u(&cur, 1) & 0x7f, 0);
				break;
			case 'L':
				eh_u(&cur, 1);
				break;
			case 'S':
				cie->signal = true;
				break;
			default:
				return -EINVAL;
			}
		}
		if (cur.err || cur.pos > aug_end)
			return cur.err ?: -EINVAL;
		cur.pos = aug_end;
	}
	cie->insns = cur.pos;
	return 0;
}

/* Decoding state of one lookup. */
struct eh_exec {
	struct eh_row	row;
	struct eh_row	initial;	/* after the CIE: DW_CFA_restore */
	struct eh_row	saved[EH_FRAME_MAX_STATES];
	unsigned int	nr_saved;
	unsigned int	insns;		/* instructions decoded so far */
	unsigned long	loc;
	unsigned long	ip;
	const struct eh_cie *cie;
};

/* The rule of DWARF register @reg in @row, or NULL for one not tracked. */
static struct eh_rule *eh_reg(struct eh_row *row, u64 reg)
{
	if (reg == ARCH_EH_FRAME_REG_RA)
		return &row->ra;
	if (reg == ARCH_EH_FRAME_REG_FP)
		return &row->fp;
	return NULL;
}

/*
 * Read an expression of @len bytes and recognise it: "breg(SP or FP) N"
 * (an address: *@reg, *@off) optionally followed by "deref" (*@deref).
 * Return: true for that form.
 */
static bool eh_expr_breg(struct eh_cursor *cur, u64 len, u8 *bytes,
			 unsigned int *n, u8 *reg, s32 *off, bool *deref)
{
	struct eh_cursor sub;
	unsigned int i;

	*n = 0;
	if (len > EH_FRAME_MAX_EXPR || len > cur->end - cur->pos) {
		/* Skip it; a row that uses it ends the walk. */
		if (len > cur->end - cur->pos)
			cur->err = cur->err ?: -EINVAL;
		else
			cur->pos += len;
		return false;
	}
	for (i = 0; i < len; i++)
		bytes[i] = eh_u(cur, 1);
	if (cur->err)
		return false;
	*n = len;
	if (!len || (bytes[0] != DW_OP_breg(ARCH_EH_FRAME_REG_SP) &&
		     bytes[0] != DW_OP_breg(ARCH_EH_FRAME_REG_FP)))
		return false;
	*reg = bytes[0] - DW_OP_breg(0);
	/* The operand, decoded from the copy. */
	sub.buf_addr = 0;
	sub.buf_len = len;
	sub.pos = 1;
	sub.end = len;
	sub.err = 0;
	memcpy(sub.buf, bytes, len);
	*off = eh_sleb(&sub);
	if (sub.err)
		return false;
	*deref = false;
	if (sub.pos == len)
		return true;
	if (sub.pos + 1 == len && bytes[sub.pos] == DW_OP_deref) {
		*deref = true;
		return true;
	}
	return false;
}

/*
 * The .plt's CFA, as binutils writes it for every 16-byte entry:
 * breg7 (rsp) 8; breg16 (rip) 0; lit15; and; lit11 (or lit10); ge;
 * lit3; shl; plus. That is, SP + 8, plus 8 from byte 11 (10) of the entry
 * on, where the entry has pushed its argument.
 */
static bool eh_expr_plt(const u8 *b, unsigned int n, u8 *lit)
{
	static const u8 head[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a };
	static const u8 tail[] = { 0x2a, 0x33, 0x24, 0x22 };

	if (n != sizeof(head) + 1 + sizeof(tail) ||
	    memcmp(b, head, sizeof(head)) ||
	    memcmp(b + sizeof(head) + 1, tail, sizeof(tail)))
		return false;
	/* DW_OP_lit0 is 0x30. */
	if (b[sizeof(head)] != 0x3a && b[sizeof(head)] != 0x3b)
		return false;
	*lit = b[sizeof(head)] - 0x30;
	return true;
}

static void eh_def_cfa_expr(struct eh_cursor *cur, struct eh_row *row)
{
	u8 bytes[EH_FRAME_MAX_EXPR], reg;
	unsigned int n;
	bool deref;
	s32 off;
	u64 len = eh_uleb(cur);

	row->cfa_kind = EH_CFA_UNSUP_EXPR;
	if (cur->err)
		return;
	if (eh_expr_breg(cur, len, bytes, &n, &reg, &off, &deref)) {
		if (deref) {
			row->cfa_kind = EH_CFA_DEREF;
			row->cfa_reg = reg;
			row->cfa_off = off;
		}
	} else if (eh_expr_plt(bytes, n, &row->plt_lit)) {
		row->cfa_kind = EH_CFA_PLT;
	}
}

static void eh_reg_expr(struct eh_cursor *cur, struct eh_row *row, u64 regno)
{
	struct eh_rule *rule = eh_reg(row, regno);
	u8 bytes[EH_FRAME_MAX_EXPR], reg;
	unsigned int n;
	bool deref;
	s32 off;
	u64 len = eh_uleb(cur);

	if (cur->err)
		return;
	if (!eh_expr_breg(cur, len, bytes, &n, &reg, &off, &deref) || !rule) {
		if (rule)
			rule->kind = EH_UNSUP_EXPR;
		return;
	}
	/* The register is saved at the address the expression computes. */
	rule->off = off;
	if (deref)
		rule->kind = EH_UNSUP_EXPR;
	else if (reg == ARCH_EH_FRAME_REG_SP)
		rule->kind = EH_AT_SP;
	else
		rule->kind = EH_AT_FP;
}

static void eh_set_offset(struct eh_exec *x, u64 reg, s64 factored)
{
	struct eh_rule *rule = eh_reg(&x->row, reg);
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

static void eh_set_rule(struct eh_row *row, u64 reg, u8 kind)
{
	struct eh_rule *rule = eh_reg(row, reg);

	if (rule) {
		rule->kind = kind;
		rule->off = 0;
	}
}

static void eh_restore(struct eh_exec *x, u64 reg)
{
	struct eh_rule *rule = eh_reg(&x->row, reg);

	if (rule)
		*rule = *eh_reg(&x->initial, reg);
}

static void eh_def_cfa(struct eh_row *row, u64 reg, s64 off)
{
	row->cfa_kind = EH_CFA_REG;
	row->cfa_reg = reg > U8_MAX ? U8_MAX : reg;
	row->cfa_off = off;
}

/*
 * Decode instructions from @cur until the location passes the IP or they
 * end. Return: 0, -EINVAL for bad data or a bound reached, -EOPNOTSUPP for
 * an instruction not known here (counted by the caller), -EFAULT.
 */
static int eh_exec_run(struct eh_exec *x, struct eh_cursor *cur,
		       u8 fde_enc)
{
	struct eh_row *row = &x->row;
	u64 delta, reg, off;
	s64 soff;
	u8 op;

	while (cur->pos < cur->end && !cur->err) {
		if (++x->insns > EH_FRAME_MAX_INSNS)
			return -EINVAL;
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
			off = eh_pointer(cur, fde_enc, 0);
			if (cur->err || off < x->loc)
				return cur->err ?: -EINVAL;
			if (off > x->ip)
				return 0;
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
			eh_set_rule(row, eh_uleb(cur), EH_UNDEFINED);
			break;
		case DW_CFA_same_value:
			eh_set_rule(row, eh_uleb(cur), EH_SAME);
			break;
		case DW_CFA_register:
			reg = eh_uleb(cur);
			eh_uleb(cur);
			eh_set_rule(row, reg, EH_UNSUP_REG);
			break;
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
			reg = eh_uleb(cur);
			if (op == DW_CFA_val_offset)
				eh_uleb(cur);
			else
				eh_sleb(cur);
			eh_set_rule(row, reg, EH_UNSUP_REG);
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
			eh_def_cfa(row, reg, eh_uleb(cur));
			break;
		case DW_CFA_def_cfa_sf:
			reg = eh_uleb(cur);
			eh_def_cfa(row, reg, eh_sleb(cur) * x->cie->data_align);
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
			if (row->cfa_kind != EH_CFA_REG)
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
			eh_def_cfa_expr(cur, row);
			break;
		case DW_CFA_expression:
			reg = eh_uleb(cur);
			eh_reg_expr(cur, row, reg);
			break;
		case DW_CFA_val_expression:
			reg = eh_uleb(cur);
			off = eh_uleb(cur);
			if (cur->err || off > cur->end - cur->pos)
				return cur->err ?: -EINVAL;
			cur->pos += off;
			eh_set_rule(row, reg, EH_UNSUP_EXPR);
			break;
		default:
			return -EOPNOTSUPP;
		}
		continue;
advance:
		delta *= x->cie->code_align;
		if (delta > x->ip - x->loc)
			return cur->err;
		x->loc += delta;
	}
	return cur->err;
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
		if (row->cfa_reg == ARCH_EH_FRAME_REG_FP) {
			frame->use_fp = true;
		} else if (row->cfa_reg != ARCH_EH_FRAME_REG_SP) {
			eh_stat_inc(EH_STAT_UNSUP_REG);
			return -EOPNOTSUPP;
		}
		frame->cfa_off = row->cfa_off;
		frame->cfa_deref = row->cfa_kind == EH_CFA_DEREF;
		break;
	case EH_CFA_PLT:
		frame->cfa_off = (ip & 15) >= row->plt_lit ? 16 : 8;
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
		if (!frame->cfa_deref || frame->use_fp) {
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
	return 0;
bad:
	eh_stat_inc(EH_STAT_BAD_DATA);
	return -EINVAL;
}

/**
 * eh_frame_find - how the frame at @ip keeps its caller's state
 * @sec: a section set up by eh_frame_section_init()
 * @ip: the address to look up: the interrupted IP, or a return address
 *	minus one for a caller's frame
 * @frame: filled with the rule on success
 *
 * Context: task context of the process mapping @sec; may fault.
 *
 * Return: 0 with @frame filled; %EH_FRAME_OUTERMOST when the row marks the
 * outermost frame; -ENOENT when no FDE covers @ip; -EOPNOTSUPP when the row
 * needs state a walk does not have (another register, an expression of
 * another form, an unknown instruction); -EFAULT when the section cannot be
 * read; -EINVAL when it breaks a rule. Every result but 0 and -ENOENT is
 * counted by its reason.
 */
int eh_frame_find(const struct eh_frame_section *sec, unsigned long ip,
		  struct unwind_user_frame *frame)
{
	struct eh_cursor cur;
	struct eh_exec x;
	struct eh_cie cie;
	unsigned long fde, cie_ptr, begin, range;
	u64 len, id;
	int ret;

	eh_stat_inc(EH_STAT_LOOKUPS);
	ret = eh_frame_find_fde(sec, ip, &fde);
	if (ret)
		goto out;

	/* The FDE: length, CIE pointer, location, range, augmentation. */
	ret = -EINVAL;
	if (fde < sec->start || fde >= sec->end)
		goto out;
	eh_cursor_init(&cur, fde, sec->end);
	len = eh_u(&cur, 4);
	if (cur.err)
		goto fail;
	if (!len || len > EH_FRAME_MAX_ENTRY || len > sec->end - cur.pos)
		goto out;
	cur.end = cur.pos + len;
	cie_ptr = cur.pos;
	id = eh_u(&cur, 4);
	if (cur.err)
		goto fail;
	if (!id || id > cie_ptr)
		goto out;
	ret = eh_frame_read_cie(sec, cie_ptr - id, fde, &cie);
	if (ret)
		goto out;
	begin = eh_pointer(&cur, cie.fde_enc, 0);
	range = eh_pointer(&cur, cie.fde_enc & 0x0f, 0);
	if (cie.aug_z) {
		len = eh_uleb(&cur);
		if (!cur.err && len > cur.end - cur.pos)
			goto out;
		cur.pos += len;
	}
	if (cur.err)
		goto fail;
	if (ip < begin || ip - begin >= range) {
		ret = -ENOENT;
		goto out;
	}

	/* The CIE's initial rules, then the FDE's up to @ip. */
	memset(&x, 0, sizeof(x));
	x.cie = &cie;
	x.loc = begin;
	x.ip = ip;
	x.row.cfa_reg = U8_MAX;
	{
		struct eh_cursor ccur;

		eh_cursor_init(&ccur, cie.insns, cie.end);
		ret = eh_exec_run(&x, &ccur, cie.fde_enc);
		if (ret)
			goto out;
		/* Rows belong to FDEs: the CIE sets rules only. */
		x.loc = begin;
	}
	x.initial = x.row;
	x.nr_saved = 0;
	ret = eh_exec_run(&x, &cur, cie.fde_enc);
	if (ret)
		goto out;
	return eh_row_frame(&x.row, &cie, ip, frame);

fail:
	ret = cur.err;
out:
	switch (ret) {
	case -ENOENT:
		eh_stat_inc(EH_STAT_MISSES);
		break;
	case -EOPNOTSUPP:
		eh_stat_inc(EH_STAT_UNSUP_OP);
		break;
	case -EINVAL:
		eh_stat_inc(EH_STAT_BAD_DATA);
		break;
	}
	return ret;
}
