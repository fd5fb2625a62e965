// SPDX-License-Identifier: GPL-2.0
/*
 * Read SFrame v3 sections where the process has them mapped: the header,
 * the function descriptor index and a function's frame row entries (FREs),
 * to find where a frame at a given IP keeps its caller's state.
 *
 * The section belongs to the process, as its stack does. Every count,
 * offset and size is checked in 64-bit arithmetic before it is used, every
 * read tolerates faults, and every loop is bounded by the section's size.
 * A section that breaks a rule gives -EINVAL; it never warns.
 *
 * Context: task context of the process that maps the section, where page
 * faults may be taken; no lock may be held that a page fault takes.
 */
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/sframe.h>
#include <linux/sizes.h>
#include <linux/unwind_user.h>

#include "uread.h"

#define SFRAME_MAGIC			0xdee2
#define SFRAME_VERSION_3		3
#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_F_FRAME_POINTER		0x2
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4
#define SFRAME_F_ALL			(SFRAME_F_FDE_SORTED | \
					 SFRAME_F_FRAME_POINTER | \
					 SFRAME_F_FDE_FUNC_START_PCREL)

/* The attribute record's info byte: FRE start size, PC type, signal. */
#define SFRAME_FDE_FRE_TYPE(info)	((info) & 0xf)
#define SFRAME_FDE_PC_MASK(info)	(((info) >> 4) & 0x1)
#define SFRAME_FDE_SIGNAL(info)		(((info) >> 7) & 0x1)
#define SFRAME_FRE_TYPE_ADDR4		2
/* ... and its info2 byte: the FDE type. */
#define SFRAME_FDE_TYPE(info2)		((info2) & 0x1f)
#define SFRAME_FDE_TYPE_DEFAULT		0
#define SFRAME_FDE_TYPE_FLEX		1

/* An FRE's info byte: CFA base, number and size of its data words. */
#define SFRAME_FRE_BASE_SP(info)	((info) & 0x1)
#define SFRAME_FRE_NR_WORDS(info)	(((info) >> 1) & 0xf)
#define SFRAME_FRE_WORD_SIZE(info)	(((info) >> 5) & 0x3)
#define SFRAME_FRE_WORD_SIZE_4B		2
#define SFRAME_FRE_MAX_WORDS		15

/* A flexible row's control word: register, dereference, register based. */
#define SFRAME_CTL_REG_P(ctl)		((ctl) & 0x1)
#define SFRAME_CTL_DEREF(ctl)		(((ctl) >> 1) & 0x1)
#define SFRAME_CTL_REG(ctl)		((ctl) >> 3)

struct sframe_header {
	__le16	magic;
	u8	version;
	u8	flags;
	u8	abi_arch;
	s8	cfa_fixed_fp_offset;
	s8	cfa_fixed_ra_offset;
	u8	auxhdr_len;
	__le32	num_fdes;
	__le32	num_fres;
	__le32	fre_len;
	__le32	fdes_off;
	__le32	fres_off;
} __packed;

/* One entry of the function descriptor index. */
struct sframe_fde {
	__le64	func_start;	/* from this field's own address */
	__le32	func_size;
	__le32	fres_off;	/* of the attribute record, in the FRE area */
} __packed;

/* The record in front of a function's FREs. */
struct sframe_fde_attr {
	__le16	nr_fres;
	u8	info;
	u8	info2;
	u8	rep_size;
} __packed;

/* The most bytes of SFrame data a lookup will walk through. */
#define SFRAME_MAX_SIZE		SZ_1G

/**
 * sframe_section_init - check an SFrame section's header and note its parts
 * @sec: filled on success
 * @addr: user address of the section
 * @size: the most bytes the section may span (its segment's size)
 * @text_start: start of the executable mapping the section describes
 * @text_end: end of that mapping
 *
 * Context: task context of the process mapping the section; may fault.
 *
 * Return: 0; -EFAULT when the header cannot be read; -EPROTONOSUPPORT for
 * an SFrame version other than 3; -EINVAL when the header breaks a rule.
 */
int sframe_section_init(struct sframe_section *sec, unsigned long addr,
			unsigned long size, unsigned long text_start,
			unsigned long text_end)
{
	struct sframe_header h;
	u64 base, fdes, fdes_end, fres, fres_end;

	if (size < sizeof(h) || size > SFRAME_MAX_SIZE ||
	    addr >= TASK_SIZE_MAX || size > TASK_SIZE_MAX - addr ||
	    text_start >= text_end)
		return -EINVAL;
	if (unwind_read_user(&h, addr, sizeof(h)))
		return -EFAULT;

	if (le16_to_cpu(h.magic) != SFRAME_MAGIC)
		return -EINVAL;
	if (h.version != SFRAME_VERSION_3)
		return -EPROTONOSUPPORT;
	if (h.abi_arch != ARCH_SFRAME_ABI || (h.flags & ~SFRAME_F_ALL) ||
	    !(h.flags & SFRAME_F_FDE_SORTED) ||
	    !(h.flags & SFRAME_F_FDE_FUNC_START_PCREL) ||
	    h.cfa_fixed_ra_offset != -(s8)sizeof(long))
		return -EINVAL;

	base = sizeof(h) + h.auxhdr_len;
	fdes = base + le32_to_cpu(h.fdes_off);
	fdes_end = fdes + (u64)le32_to_cpu(h.num_fdes) * sizeof(struct sframe_fde);
	fres = base + le32_to_cpu(h.fres_off);
	fres_end = fres + le32_to_cpu(h.fre_len);
	if (fdes_end > size || fres_end > size)
		return -EINVAL;
	/* The index and the FRE area must not share bytes. */
	if (fdes < fdes_end && fres < fres_end &&
	    fdes < fres_end && fres < fdes_end)
		return -EINVAL;

	sec->text_start = text_start;
	sec->text_end = text_end;
	sec->fdes = addr + fdes;
	sec->fres = addr + fres;
	sec->fres_end = addr + fres_end;
	sec->nr_fdes = le32_to_cpu(h.num_fdes);
	sec->ra_off = h.cfa_fixed_ra_offset;
	return 0;
}

static u32 sframe_uval(const u8 *p, unsigned int size)
{
	switch (size) {
	case 1:
		return *p;
	case 2:
		return get_unaligned_le16(p);
	default:
		return get_unaligned_le32(p);
	}
}

/*
 * The row that applies: its info byte and data words as stored (a word is
 * signed, except a flexible row's control words).
 */
struct sframe_row {
	u8	info;
	u8	nr;
	u8	size;
	u32	raw[SFRAME_FRE_MAX_WORDS];
};

static s32 sframe_word(const struct sframe_row *row, unsigned int i)
{
	return sign_extend32(row->raw[i], row->size * BITS_PER_BYTE - 1);
}

static u32 sframe_ctl(const struct sframe_row *row, unsigned int i)
{
	return row->raw[i];
}

/*
 * A default row on x86_64: CFA = (SP or FP) + word 0; the caller's FP, when
 * saved, at CFA + word 1; the return address at the header's fixed offset.
 */
static int sframe_default_row(const struct sframe_section *sec,
			      const struct sframe_row *row,
			      struct unwind_user_frame *frame)
{
	if (row->nr > 2)
		return -EINVAL;
	frame->use_fp = !SFRAME_FRE_BASE_SP(row->info);
	frame->cfa_off = sframe_word(row, 0);
	frame->ra_off = sec->ra_off;
	frame->fp_off = row->nr == 2 ? sframe_word(row, 1) : 0;
	if (row->nr == 2 && !frame->fp_off)
		return -EINVAL;
	return 0;
}

/*
 * A flexible row: (control, offset) pairs for the CFA, the return address
 * and the caller's FP, in that order; a control word of 0 stands alone and
 * means the default rule. A walk knows SP and FP only, so a row that bases
 * the CFA on another register (a DRAP prologue or epilogue) cannot be
 * followed: -EOPNOTSUPP.
 */
static int sframe_flex_row(const struct sframe_section *sec,
			   const struct sframe_row *row,
			   struct unwind_user_frame *frame)
{
	unsigned int i = 2;
	u32 ctl;

	if (row->nr < 2)
		return -EINVAL;
	ctl = sframe_ctl(row, 0);
	if (!SFRAME_CTL_REG_P(ctl))
		return -EINVAL;
	if (SFRAME_CTL_REG(ctl) == ARCH_SFRAME_REG_SP)
		frame->use_fp = false;
	else if (SFRAME_CTL_REG(ctl) == ARCH_SFRAME_REG_FP)
		frame->use_fp = true;
	else
		return -EOPNOTSUPP;
	frame->cfa_deref = SFRAME_CTL_DEREF(ctl);
	frame->cfa_off = sframe_word(row, 1);

	/* The return address: saved on the stack, relative to the CFA. */
	frame->ra_off = sec->ra_off;
	if (i < row->nr) {
		ctl = sframe_ctl(row, i++);
		if (ctl) {
			if (i >= row->nr)
				return -EINVAL;
			if (SFRAME_CTL_REG_P(ctl) || !SFRAME_CTL_DEREF(ctl))
				return -EOPNOTSUPP;
			frame->ra_off = sframe_word(row, i++);
		}
	}

	/* The caller's FP: saved relative to the CFA or to FP itself. */
	frame->fp_off = 0;
	if (i < row->nr) {
		ctl = sframe_ctl(row, i++);
		if (ctl) {
			if (i >= row->nr)
				return -EINVAL;
			if (!SFRAME_CTL_DEREF(ctl))
				return -EOPNOTSUPP;
			if (SFRAME_CTL_REG_P(ctl)) {
				if (SFRAME_CTL_REG(ctl) != ARCH_SFRAME_REG_FP)
					return -EOPNOTSUPP;
				frame->fp_in_frame = true;
			}
			frame->fp_off = sframe_word(row, i++);
			if (!frame->fp_off && !frame->fp_in_frame)
				return -EINVAL;
		}
	}
	return i == row->nr ? 0 : -EINVAL;
}

/* One entry of the index as it was read. */
struct sframe_fde_val {
	unsigned long	func;
	u32		size;
	u32		fres_off;
};

/*
 * Copy the first bytes a cursor will decode into its buffer, inside a
 * user access section the caller opened: as many as the buffer holds,
 * none past @cur->end. Nothing is copied where the range is not user
 * memory; the cursor then reads it itself, and fails. Return: false on a
 * fault (the caller leaves the section and fails with -EFAULT).
 */
static __always_inline bool sframe_cursor_fill(struct unwind_cursor *cur)
{
	const u8 __user *src = (const u8 __user *)cur->pos;
	/* A pointer, not cur->buf[i]: no sanitizer's bounds check here. */
	u8 *dst = cur->buf;
	unsigned int len, i = 0;
	u64 w;

	len = min_t(unsigned long, cur->end - cur->pos, sizeof(cur->buf));
	if (!len || !access_ok(src, len))
		return true;
	/* The section's own check covered the index, not this range. */
	if (can_do_masked_user_access())
		src = mask_user_address(src);
	else
		barrier_nospec();
	for (; len - i >= sizeof(w); i += sizeof(w)) {
		unsafe_get_user(w, (const u64 __user *)(src + i), efault);
		put_unaligned(w, (u64 *)(dst + i));
	}
	for (; i < len; i++)
		unsafe_get_user(dst[i], src + i, efault);
	cur->buf_addr = cur->pos;
	cur->buf_len = len;
	return true;
efault:
	return false;
}

/*
 * Find the function descriptor for @ip: its start, size, and a cursor on
 * its FREs (@cur, set up with @cur->budget) that ends where the bytes
 * they may use do (the next function's FREs begin there when they
 * follow). The entries on either side must be in order and must not
 * overlap it. The search, the three entries and the function's first
 * FRE bytes are read in one user access section: a lookup is a handful
 * of loads and one short copy, not a copy per probe.
 */
static int sframe_find_fde(const struct sframe_section *sec, unsigned long ip,
			   unsigned long *func, u32 *size,
			   struct unwind_cursor *cur,
			   struct unwind_row_span *bound)
{
	const struct sframe_fde __user *fdes = (const void __user *)sec->fdes;
	struct sframe_fde_val val[3], *v, *prev = NULL, *this, *next = NULL;
	u32 lo = 0, hi = sec->nr_fdes, idx, first, n, k;
	u64 fres_len = sec->fres_end - sec->fres;
	unsigned long fres_end;
	__le32 size32, off32;
	__le64 start;
	int ret;

	if (!user_read_access_begin(fdes, (unsigned long)hi * sizeof(*fdes)))
		return -EFAULT;
	/*
	 * The last function that starts at or below @ip, and the addresses
	 * for which every probe compares the same (sorted index or not).
	 */
	bound->start = 0;
	bound->end = ULONG_MAX;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		unsigned long at;

		unsafe_get_user(start, &fdes[mid].func_start, efault);
		at = (unsigned long)&fdes[mid] + le64_to_cpu(start);
		if (at <= ip) {
			lo = mid + 1;
			bound->start = max(bound->start, at);
		} else {
			hi = mid;
			bound->end = min(bound->end, at);
		}
	}
	ret = -ENOENT;
	if (!lo)
		goto out;
	/* It and its neighbours; their starts are from their own address. */
	idx = lo - 1;
	first = idx ? idx - 1 : idx;
	n = min_t(u32, sec->nr_fdes, idx + 2) - first;
	/*
	 * At most three. Stored through a pointer: a sanitizer's bounds check
	 * of an index may not be called in the user access section.
	 */
	for (k = 0, v = val; k < n; k++, v++) {
		const struct sframe_fde __user *e = &fdes[first + k];

		unsafe_get_user(start, &e->func_start, efault);
		unsafe_get_user(size32, &e->func_size, efault);
		unsafe_get_user(off32, &e->fres_off, efault);
		v->func = (unsigned long)e + le64_to_cpu(start);
		v->size = le32_to_cpu(size32);
		v->fres_off = le32_to_cpu(off32);
	}

	this = val + (idx - first);
	if (idx)
		prev = &val[0];
	if (idx + 1 < sec->nr_fdes)
		next = this + 1;

	ret = -EINVAL;
	if (this->func > ip)	/* the index changed under us */
		goto out;
	if (prev && (prev->func > this->func ||
		     this->func - prev->func < prev->size))
		goto out;
	ret = -ENOENT;
	if (ip - this->func >= this->size)
		goto out;

	ret = -EINVAL;
	fres_end = sec->fres_end;
	if (next) {
		if (next->func < this->func ||
		    next->func - this->func < this->size)
			goto out;
		if (next->fres_off > this->fres_off && next->fres_off < fres_len)
			fres_end = sec->fres + next->fres_off;
	}
	if (this->fres_off >= fres_len)
		goto out;
	*func = this->func;
	*size = this->size;
	cur->pos = sec->fres + this->fres_off;
	cur->end = fres_end;
	if (!sframe_cursor_fill(cur))
		goto efault;
	ret = 0;
out:
	user_read_access_end();
	return ret;

efault:
	user_read_access_end();
	return -EFAULT;
}

/**
 * sframe_find - how the frame at @ip keeps its caller's state
 * @sec: a section set up by sframe_section_init()
 * @ip: the address to look up: the interrupted IP, or a return address
 *	minus one for a caller's frame
 * @frame: filled with the rule on success
 * @span: filled on success with the addresses whose rule is the same
 * @budget: the work the walk has left, in rows decoded and reads made;
 *	    charged here
 *
 * Context: any context of the process mapping @sec whose page tables are
 * loaded; where page faults are not allowed, a page that is not resident
 * fails the lookup with -EFAULT.
 *
 * Return: 0 with @frame filled; %SFRAME_OUTERMOST when the row marks the
 * outermost frame; -ENOENT when no row covers @ip; -EOPNOTSUPP when the
 * row needs state a walk does not have (a register other than SP and FP,
 * a signal frame); -EFAULT when the section cannot be read; -EINVAL when
 * the section breaks a rule; -E2BIG when @budget ran out.
 */
int sframe_find(const struct sframe_section *sec, unsigned long ip,
		struct unwind_user_frame *frame, struct unwind_row_span *span,
		unsigned int *budget)
{
	struct unwind_cursor cur;
	struct unwind_row_span bound;
	struct sframe_row row = { };
	unsigned int addr_size, k, w, nr;
	u32 size, start, prev = 0, limit, off, row_end;
	u8 info, info2, rep_size;
	unsigned long func;
	const u8 *p;
	bool found = false;
	int ret;

	if (ip < sec->text_start || ip >= sec->text_end)
		return -ENOENT;
	unwind_cursor_init(&cur, 0, 0);
	cur.budget = budget;
	/*
	 * The search of the index, a probe an entry halving it, the three
	 * entries read and the first copy of rows.
	 */
	if (!unwind_cursor_charge(&cur, fls(sec->nr_fdes) + 3 +
				  UNWIND_READ_COST(sizeof(cur.buf))))
		return cur.err;
	ret = sframe_find_fde(sec, ip, &func, &size, &cur, &bound);
	if (ret)
		return ret;

	p = unwind_cursor_take(&cur, sizeof(struct sframe_fde_attr));
	if (!p)
		return cur.err;
	nr = get_unaligned_le16(p);
	info = p[offsetof(struct sframe_fde_attr, info)];
	info2 = p[offsetof(struct sframe_fde_attr, info2)];
	rep_size = p[offsetof(struct sframe_fde_attr, rep_size)];
	if (SFRAME_FDE_FRE_TYPE(info) > SFRAME_FRE_TYPE_ADDR4)
		return -EINVAL;
	if (SFRAME_FDE_TYPE(info2) > SFRAME_FDE_TYPE_FLEX)
		return -EINVAL;
	if (SFRAME_FDE_SIGNAL(info))
		return -EOPNOTSUPP;

	off = ip - func;
	limit = size;
	if (SFRAME_FDE_PC_MASK(info)) {
		/* .plt: the same rows repeat every rep_size bytes. */
		if (!rep_size)
			return -EINVAL;
		limit = rep_size;
		off %= limit;
	}

	addr_size = 1 << SFRAME_FDE_FRE_TYPE(info);
	row_end = limit;
	for (k = 0; k < nr; k++) {
		u8 fre_info;

		if (!unwind_cursor_charge(&cur, 1))
			return cur.err;
		p = unwind_cursor_take(&cur, addr_size + 1);
		if (!p)
			return cur.err;
		start = sframe_uval(p, addr_size);
		fre_info = p[addr_size];
		/* Rows start in increasing order inside the function. */
		if ((k && start <= prev) || start >= limit)
			return -EINVAL;
		if (SFRAME_FRE_WORD_SIZE(fre_info) > SFRAME_FRE_WORD_SIZE_4B)
			return -EINVAL;
		if (start > off) {
			row_end = start;
			break;
		}
		row.info = fre_info;
		row.nr = SFRAME_FRE_NR_WORDS(fre_info);
		row.size = 1 << SFRAME_FRE_WORD_SIZE(fre_info);
		p = unwind_cursor_take(&cur, row.nr * row.size);
		if (!p)
			return cur.err;
		for (w = 0; w < row.nr; w++)
			row.raw[w] = sframe_uval(p + w * row.size, row.size);
		found = true;
		prev = start;
	}
	if (!found)
		return -ENOENT;
	/*
	 * The row's addresses that the search would find this function for;
	 * a .plt's rows repeat: its span is the IP alone.
	 */
	span->start = max3(func + prev, bound.start, sec->text_start);
	span->end = min3(row_end < ULONG_MAX - func ? func + row_end : ULONG_MAX,
			 bound.end, sec->text_end);
	if (SFRAME_FDE_PC_MASK(info)) {
		span->start = ip;
		span->end = ip + 1;
	}

	/* No data words: the return address is undefined, the walk ends. */
	if (!row.nr)
		return SFRAME_OUTERMOST;

	memset(frame, 0, sizeof(*frame));
	if (SFRAME_FDE_TYPE(info2) == SFRAME_FDE_TYPE_FLEX)
		return sframe_flex_row(sec, &row, frame);
	return sframe_default_row(sec, &row, frame);
}
