// SPDX-License-Identifier: GPL-2.0
/*
 * Read a file's .eh_frame where the process maps it, to find where a frame
 * at a given IP keeps its caller's state: the .eh_frame_hdr search table
 * gives the function's FDE, the FDE its CIE, and their call frame
 * instructions give the row of the IP (eh_frame_row.c). Every entry's
 * length is capped, and only the augmentations in use are accepted.
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

#include "eh_frame_decode.h"
#include "stats.h"

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
	[EH_STAT_GAPS]		= "eh_frame_gaps",
};

DEFINE_PER_CPU(struct eh_frame_stats, eh_frame_stats);

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
 * eh_frame_count_frames - count frames a walk took by .eh_frame rules
 * @nr: how many, none of them signal frames
 *
 * Context: any.
 */
void eh_frame_count_frames(unsigned int nr)
{
	this_cpu_add(eh_frame_stats.val[EH_STAT_FRAMES], nr);
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

/**
 * eh_frame_section_init - check an .eh_frame_hdr and note its search table
 * @sec: filled on success
 * @hdr: user address of .eh_frame_hdr (PT_GNU_EH_FRAME, relocated)
 * @size: its segment's size
 * @seg_start: start of the loaded segment that holds it
 * @seg_end: end of that segment
 * @ws: the word size of the file's code (4: i386 code of compat tasks)
 *
 * Context: task context of the process mapping the section; may fault.
 *
 * Return: 0; -EFAULT when the header cannot be read; -EINVAL when it
 * breaks a rule or has no sorted search table (its FDEs cannot be found
 * without a scan of the whole section).
 */
int eh_frame_section_init(struct eh_frame_section *sec, unsigned long hdr,
			  unsigned long size, unsigned long seg_start,
			  unsigned long seg_end, unsigned int ws)
{
	struct unwind_cursor cur;
	unsigned long start, table;
	const u8 *h;
	u64 count;
	int ret = -EINVAL;

	if (hdr < seg_start || seg_end > TASK_SIZE_MAX || seg_start >= seg_end ||
	    hdr >= seg_end || size < 4 || size > seg_end - hdr ||
	    (ws != 4 && ws != 8))
		goto bad;
	unwind_cursor_init(&cur, hdr, hdr + size);
	h = unwind_cursor_take(&cur, 4);
	if (!h) {
		ret = cur.err;
		goto bad;
	}
	/* Version 1; the table must be there, sorted, 4-byte entries. */
	if (h[0] != 1 || h[1] == DW_EH_PE_omit || h[2] == DW_EH_PE_omit ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		goto bad;
	start = eh_pointer(&cur, h[1], hdr, ws);
	count = eh_pointer(&cur, h[2], 0, ws);
	table = cur.pos;
	if (cur.err) {
		ret = cur.err;
		goto bad;
	}
	/* The search counts entries in 32 bits (a table of 32 GiB). */
	if (start < seg_start || start >= seg_end || !count ||
	    count > U32_MAX || count > (hdr + size - table) / 8)
		goto bad;

	sec->table = table;
	sec->hdr = hdr;
	sec->start = start;
	sec->end = seg_end;
	sec->nr_fdes = count;
	sec->ws = ws;
	eh_stat_inc(EH_STAT_SECTIONS);
	return 0;
bad:
	eh_stat_inc(EH_STAT_BAD_HEADERS);
	return ret;
}

/*
 * The FDE for @ip by the search table: the last entry whose location is at
 * or below @ip; *@inside says whether an entry follows it (the FDE found
 * is not the file's last). *@bound is set to the addresses for which every
 * probe compares as for @ip (so the search finds the same entry), sorted
 * table or not. One user access section for the whole search, charged a
 * unit a probe.
 */
static int eh_frame_find_fde(const struct eh_frame_section *sec,
			     unsigned long ip, unsigned long *fde,
			     bool *inside, struct unwind_row_span *bound,
			     unsigned int *budget)
{
	const s32 __user *t = (const s32 __user *)sec->table;
	u32 lo = 0, hi = sec->nr_fdes;
	unsigned long at;
	s32 loc, off;

	if (!unwind_charge(budget, fls(hi) + 1))
		return -E2BIG;
	if (!user_read_access_begin(t, (unsigned long)hi * 8))
		return -EFAULT;
	bound->start = 0;
	bound->end = ULONG_MAX;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		unsafe_get_user(loc, t + 2 * mid, efault);
		at = sec->hdr + loc;
		if (at <= ip) {
			lo = mid + 1;
			bound->start = max(bound->start, at);
		} else {
			hi = mid;
			bound->end = min(bound->end, at);
		}
	}
	if (!lo) {
		user_read_access_end();
		return -ENOENT;
	}
	*inside = lo < sec->nr_fdes;
	unsafe_get_user(off, t + 2 * (lo - 1) + 1, efault);
	user_read_access_end();
	*fde = sec->hdr + off;
	return 0;

efault:
	user_read_access_end();
	return -EFAULT;
}

/* The registers a walk knows, in the DWARF numbering of @ws-byte code. */
static void eh_frame_regs(struct eh_cie *cie, unsigned int ws)
{
	cie->ws = ws;
#ifdef ARCH_EH_FRAME_COMPAT_MACHINE
	if (ws == 4) {
		cie->reg_sp = ARCH_EH_FRAME_REG32_SP;
		cie->reg_fp = ARCH_EH_FRAME_REG32_FP;
		cie->reg_ra = ARCH_EH_FRAME_REG32_RA;
		cie->reg_bx = ARCH_EH_FRAME_REG32_BX;
		return;
	}
#endif
	cie->reg_sp = ARCH_EH_FRAME_REG_SP;
	cie->reg_fp = ARCH_EH_FRAME_REG_FP;
	cie->reg_ra = ARCH_EH_FRAME_REG_RA;
#ifdef ARCH_EH_FRAME_REG_BX
	cie->reg_bx = ARCH_EH_FRAME_REG_BX;
#else
	cie->reg_bx = U8_MAX;	/* none: no rule keeps the CFA elsewhere */
#endif
}

/*
 * The CIE at @addr, which must lie in [@sec->start, @before).
 * -EINVAL when it breaks a rule or has an augmentation a walk cannot skip.
 */
static int eh_frame_read_cie(const struct eh_frame_section *sec,
			     unsigned long addr, unsigned long before,
			     struct eh_cie *cie, unsigned int *budget)
{
	char aug[EH_FRAME_MAX_AUG + 1];
	struct unwind_cursor cur;
	unsigned long aug_end;
	unsigned int i;
	u64 len, ra;
	u8 version;

	if (addr < sec->start || addr >= before)
		return -EINVAL;
	eh_frame_regs(cie, sec->ws);
	unwind_cursor_init(&cur, addr, before);
	cur.budget = budget;
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
	if (!cie->code_align || ra != cie->reg_ra)
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
				eh_pointer(&cur, eh_u(&cur, 1) & 0x7f, 0,
					   cie->ws);
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

/* The memo's rules: an opaque buffer outside this reader. */
static_assert(sizeof(struct eh_cie_rules) <=
	      sizeof_field(struct eh_frame_memo, rules));

/**
 * eh_frame_find - how the frame at @ip keeps its caller's state
 * @sec: a section set up by eh_frame_section_init()
 * @memo: the CIE the walk's last lookup in @sec used, read and decoded
 *	  again only when this lookup's FDE points to another; or NULL
 * @ip: the address to look up: the interrupted IP, or a return address
 *	minus one for a caller's frame
 * @frame: filled with the rule on success
 * @span: filled on success with the addresses whose rule is the same
 * @budget: the work the walk has left, in instructions decoded and reads
 *	    made; charged here
 *
 * Context: any context of the process mapping @sec whose page tables are
 * loaded; where page faults are not allowed, a page that is not resident
 * fails the lookup with -EFAULT.
 *
 * Return: 0 with @frame filled; %EH_FRAME_OUTERMOST when the row marks the
 * outermost frame; %EH_FRAME_NO_ROW when no FDE covers @ip but FDEs of the
 * file cover code on both sides of it (code without CFI: assembly, where
 * frame pointers would be a guess); -ENOENT when no FDE covers @ip and none
 * follows it; -EOPNOTSUPP when the row needs state a walk does not have
 * (another register, an expression of another form, an unknown
 * instruction); -EFAULT when the section cannot be read; -EINVAL when it
 * breaks a rule; -E2BIG when @budget ran out. Every result but 0, -ENOENT,
 * -EFAULT and -E2BIG is counted by its reason.
 */
int eh_frame_find(const struct eh_frame_section *sec,
		  struct eh_frame_memo *memo, unsigned long ip,
		  struct unwind_user_frame *frame, struct unwind_row_span *span,
		  unsigned int *budget)
{
	struct eh_cie_rules local, *cr = &local;
	struct unwind_cursor cur;
	unsigned long fde, cie_ptr, cie, begin, range, end;
	struct unwind_row_span bound;
	bool known = false, inside = false;
	u64 len, id;
	int ret;

	eh_stat_inc(EH_STAT_LOOKUPS);
	ret = eh_frame_find_fde(sec, ip, &fde, &inside, &bound, budget);
	if (ret)
		goto out;

	/* The FDE: length, CIE pointer, location, range, augmentation. */
	ret = -EINVAL;
	if (fde < sec->start || fde >= sec->end)
		goto out;
	unwind_cursor_init(&cur, fde, sec->end);
	cur.budget = budget;
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
	cie = cie_ptr - id;
	if (memo) {
		cr = (struct eh_cie_rules *)memo->rules;
		/* The CIE comes before the FDE, as eh_frame_read_cie() checks. */
		known = memo->cie && memo->cie == cie && cr->cie.end <= fde;
		if (!known)
			memo->cie = 0;
	}
	if (!known) {
		ret = eh_frame_read_cie(sec, cie, fde, &cr->cie, budget);
		if (ret)
			goto out;
	}
	begin = eh_pointer(&cur, cr->cie.fde_enc, 0, cr->cie.ws);
	range = eh_pointer(&cur, cr->cie.fde_enc & 0x0f, 0, cr->cie.ws);
	if (cr->cie.aug_z) {
		len = eh_uleb(&cur);
		if (!cur.err && len > cur.end - cur.pos) {
			ret = -EINVAL;
			goto out;
		}
		cur.pos += len;
	}
	if (cur.err)
		goto fail;
	if (ip < begin || ip - begin >= range) {
		ret = inside ? EH_FRAME_NO_ROW : -ENOENT;
		goto out;
	}
	if (!known) {
		/* Counted there when it fails. */
		ret = eh_frame_cie_rules(cr, budget);
		if (ret)
			return ret;
		if (memo)
			memo->cie = cie;
	}

	/* The FDE's range may end at the top of the address space. */
	end = range < ULONG_MAX - begin ? begin + range : ULONG_MAX;
	ret = eh_frame_row(cr, &cur, begin, end, ip, frame, span);
	if (ret == 0 || ret == EH_FRAME_OUTERMOST) {
		/* Only where the search would find this FDE again. */
		span->start = max(span->start, bound.start);
		span->end = min(span->end, bound.end);
	}
	return ret;

fail:
	ret = cur.err;
out:
	switch (ret) {
	case -ENOENT:
		eh_stat_inc(EH_STAT_MISSES);
		break;
	case EH_FRAME_NO_ROW:
		eh_stat_inc(EH_STAT_MISSES);
		eh_stat_inc(EH_STAT_GAPS);
		break;
	case -EINVAL:
		eh_stat_inc(EH_STAT_BAD_DATA);
		break;
	}
	return ret;
}
