/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two halves of the .eh_frame reader share: eh_frame.c finds a
 * frame's FDE and CIE, eh_frame_row.c decodes their call frame
 * instructions into the frame's rule. The decoding primitives, the bounds,
 * the CIE facts and the counters. Internal to kernel/unwind/.
 */
#ifndef _KERNEL_UNWIND_EH_FRAME_DECODE_H
#define _KERNEL_UNWIND_EH_FRAME_DECODE_H

#include <linux/percpu.h>
#include <linux/sframe.h>
#include <linux/types.h>
#include <linux/unwind_user_types.h>

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

/* Bounds on what one lookup decodes. */
#define EH_FRAME_MAX_ENTRY	SZ_64K	/* bytes of one CIE or FDE */
#define EH_FRAME_MAX_STATES	8	/* depth of remember_state */
#define EH_FRAME_MAX_AUG	8	/* augmentation string letters */

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
	EH_STAT_GAPS,			/* ... misses amid described code */
	NR_EH_STATS,
};

struct eh_frame_stats {
	u64 val[NR_EH_STATS];
};

DECLARE_PER_CPU(struct eh_frame_stats, eh_frame_stats);

/* this_cpu_inc() is a single instruction on x86. */
static inline void eh_stat_inc(enum eh_frame_stat stat)
{
	this_cpu_inc(eh_frame_stats.val[stat]);
}

static inline u64 eh_u(struct unwind_cursor *cur, unsigned int len)
{
	const u8 *p = unwind_cursor_take(cur, len);

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

/*
 * A LEB128 number, unsigned or (@sign) signed; a walk needs none wider
 * than 32 bits, and a longer one is bad data.
 */
static inline s64 eh_leb_long(struct unwind_cursor *cur, bool sign)
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
	if (sign && shift < 64 && (b & 0x40))
		val |= -1ULL << shift;
	if ((b & 0x80) ||
	    (sign ? (s64)val > S32_MAX || (s64)val < S32_MIN : val > U32_MAX))
		cur->err = cur->err ?: -EINVAL;
	return val;
}

/* Most numbers are one byte, in the cursor's buffer already. */
static __always_inline s64 eh_leb(struct unwind_cursor *cur, bool sign)
{
	unsigned long off = cur->pos - cur->buf_addr;
	u8 b;

	if (!cur->err && cur->pos >= cur->buf_addr && off < cur->buf_len &&
	    cur->pos < cur->end) {
		b = cur->buf[off];
		if (!(b & 0x80)) {
			cur->pos++;
			return sign && (b & 0x40) ? (s64)b - 0x80 : b;
		}
	}
	return eh_leb_long(cur, sign);
}

static inline u64 eh_uleb(struct unwind_cursor *cur)
{
	return eh_leb(cur, false);
}

static inline s64 eh_sleb(struct unwind_cursor *cur)
{
	return eh_leb(cur, true);
}

/*
 * A pointer in encoding @enc: absolute, relative to its own address, or
 * relative to @data (.eh_frame_hdr); an absolute one is a word of @ws
 * bytes. Indirect and other bases are refused.
 */
static inline unsigned long eh_pointer(struct unwind_cursor *cur, u8 enc,
				       unsigned long data, unsigned int ws)
{
	unsigned long at = cur->pos, val;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		val = eh_u(cur, ws);
		break;
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

/* The CIE facts an FDE's instructions need. */
struct eh_cie {
	unsigned long	insns;		/* initial instructions */
	unsigned long	end;
	u32		code_align;
	s32		data_align;
	u8		fde_enc;
	bool		aug_z;
	bool		signal;		/* "S": a signal trampoline */
	u8		ws;		/* the code's word size */
	u8		reg_sp;		/* DWARF numbers of its SP, FP */
	u8		reg_fp;
	u8		reg_ra;		/* and return address column, */
	u8		reg_bx;		/* and base register */
};

/* Where a register of the caller is in a row: enum eh_rule_kind's. */
struct eh_rule {
	u8	kind;
	s32	off;
};

/* The rules of one row that a walk can follow (eh_frame_row.c). */
struct eh_row {
	u8		cfa_kind;
	u8		cfa_reg;	/* DWARF number */
	u8		plt_lit;
	u8		idx_reg;	/* EH_CFA_DEREF: an index register */
	s32		cfa_off;
	s32		cfa_add;	/* EH_CFA_DEREF: added to the word read */
	struct eh_rule	ra;
	struct eh_rule	fp;
	struct eh_rule	bx;
	u8		idx_scale;	/* @idx_reg's scale; 0: no index */
};

/*
 * A CIE read and its initial instructions run: what every FDE that
 * points to it starts from. A walk keeps the last one in its
 * struct eh_frame_memo, as FDEs share a few CIEs.
 */
struct eh_cie_rules {
	struct eh_cie	cie;
	struct eh_row	initial;
};

int eh_frame_cie_rules(struct eh_cie_rules *cr, unsigned int *budget);
int eh_frame_row(const struct eh_cie_rules *cr, struct unwind_cursor *insns,
		 unsigned long begin, unsigned long end, unsigned long ip,
		 struct unwind_user_frame *frame, struct unwind_row_span *span);

#endif /* _KERNEL_UNWIND_EH_FRAME_DECODE_H */
