// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the kernel's unwind table readers, built unmodified
 * in user space: the tree's kernel/unwind/eh_frame.c and eh_frame_row.c
 * (.eh_frame_hdr and .eh_frame), sframe.c (SFrame), and the rules each mm
 * remembers (rules.c, mm_cache.h), against the kernel shim in shim/ and
 * the fake user memory of fuzz_mem.c.
 *
 * An input (struct fuzz_hdr, fuzz.h) places the sections in the mapped
 * bytes and names the IPs to look up. Each section is set up by its init
 * function, then every IP is looked up with the input's work budget, as a
 * walk does. Besides the sanitizers, every call is held to its kernel-doc:
 * a result it may return; a budget that only shrinks, and is spent when
 * it says -E2BIG; a section whose fields lie where they were checked to;
 * reads inside user access sections and inside the section's segment. And
 * every answer must not depend on how it was found: the same with the
 * input's budget (unless it ran out) as with an unlimited one, with the
 * walk's CIE memo as without it, through the mm's rule cache as from the
 * tables. In a race (FUZZ_RACE), where the bytes change as they are read
 * as another thread may change them, the answers may differ, and only
 * the rest is checked.
 *
 * FUZZ_TABLES_STATS=1 in the environment prints, at exit, how often each
 * function returned what. FUZZ_TABLES_TRACE=1 prints every result, for
 * the triage of a reproducer. FUZZ_TABLES_RULE_SETS=1 runs a fixed check
 * of the rule cache's placement instead (rule_sets_check()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/eh_frame.h>
#include <linux/kernel.h>
#include <linux/sframe.h>
#include <linux/unwind_user.h>

#include "mm_cache.h"
#include "step.h"

#include "fuzz.h"

/* Where the bytes are mapped: page bits 12-13 pick one, bits 0-11 add. */
static const unsigned long fuzz_bases[4] = {
	0x10000000UL,			/* an executable's */
	0x7f0000000000UL,		/* a library's */
	TASK_SIZE_MAX - 0x100000UL,	/* the top of user space */
	0x1000UL,			/* the bottom: offsets wrap */
};

enum fuzz_fn {
	FN_EH_INIT,
	FN_EH_FIND,
	FN_SF_INIT,
	FN_SF_FIND,
	FN_RULE,
	NR_FN,
};

static const char * const fn_names[NR_FN] = {
	"eh_frame_section_init", "eh_frame_find", "sframe_section_init",
	"sframe_find", "unwind_tables_rule",
};

/*
 * Every result any of them may return, and which each may: 1 is the
 * outermost frame, 2 a gap in the code a file's .eh_frame describes.
 */
static const int results[] = {
	0, 1, 2, -ENOENT, -EOPNOTSUPP, -EINVAL, -EFAULT, -E2BIG,
	-EPROTONOSUPPORT,
};
static const char * const result_names[] = {
	"ok", "outermost", "no_row", "ENOENT", "EOPNOTSUPP", "EINVAL", "EFAULT",
	"E2BIG", "EPROTONOSUPPORT",
};

#define R(i)		(1U << (i))
#define R_FIND		(R(0) | R(1) | R(3) | R(4) | R(5) | R(6) | R(7))
#ifdef EH_FRAME_NO_ROW
static_assert(EH_FRAME_NO_ROW == 2);
#define R_EH_NO_ROW	R(2)
#else
#define R_EH_NO_ROW	0
#endif
#ifdef UNWIND_TABLES_NO_ROW
static_assert(UNWIND_TABLES_NO_ROW == 2);
#define R_RULE_NO_ROW	R(2)
#else
#define R_RULE_NO_ROW	0
#endif
static const unsigned int fn_results[NR_FN] = {
	[FN_EH_INIT]	= R(0) | R(5) | R(6),
	[FN_EH_FIND]	= R_FIND | R_EH_NO_ROW,
	[FN_SF_INIT]	= R(0) | R(5) | R(6) | R(8),
	[FN_SF_FIND]	= R_FIND,
	[FN_RULE]	= R_FIND | R_RULE_NO_ROW,
};

static unsigned long tally[NR_FN][ARRAY_SIZE(results)];
static bool trace, racing;

/* One input: its header, its sections, and the walk of the rule cache. */
struct fuzz_in {
	struct fuzz_hdr		h;
	unsigned long		base;
	unsigned int		budget;
	unsigned int		ws;
	struct eh_frame_section	eh;
	struct eh_frame_memo	memo;
	unsigned long		eh_lo, eh_hi;
	bool			eh_ok;
	struct sframe_section	sf;
	unsigned long		sf_lo, sf_hi;
	bool			sf_ok;
	struct unwind_user_state state, state0;
};

/* The one task, its mm and the mm's table of rules (and a spare one). */
static struct sframe_mm fuzz_cache, fuzz_ref_cache;
static struct mm_struct fuzz_mm;
static struct task_struct fuzz_task = { .mm = &fuzz_mm };
struct task_struct *fuzz_current = &fuzz_task;
struct pt_regs fuzz_regs;
DEFINE_PER_CPU(struct sframe_stats, sframe_stats);

/* tables.c's, for the one file the harness maps: every IP is in it. */
int unwind_tables_map(struct unwind_user_state *state, unsigned long ip,
		      struct unwind_user_map **map)
{
	*map = &state->maps[0];
	return 0;
}

bool unwind_tables_copy(struct unwind_user_state *state,
			const struct unwind_user_map *m)
{
	state->tables_id = m->id;
	return true;
}

static void check_result(enum fuzz_fn fn, int ret)
{
	unsigned int i;

	if (trace)
		fprintf(stderr, "trace: %s %d\n", fn_names[fn], ret);
	for (i = 0; i < ARRAY_SIZE(results); i++) {
		if (ret == results[i] && (fn_results[fn] & R(i))) {
			tally[fn][i]++;
			return;
		}
	}
	fuzz_bug("returned %d", ret);
}

static void check_budget(int ret, unsigned int before, unsigned int after)
{
	if (after > before)
		fuzz_bug("the budget grew from %u to %u", before, after);
	if (ret == -E2BIG && after)
		fuzz_bug("-E2BIG with %u of the budget left", after);
}

/* struct unwind_user_frame's comments: a signal frame's CFA is read. */
static void check_frame(const struct unwind_user_frame *f)
{
	if (f->sigframe && (!f->cfa_deref || f->use_fp || f->fp_in_frame ||
			    f->cfa_add))
		fuzz_bug("a signal frame's CFA not read at the stack pointer");
	if (f->cfa_add && (!f->cfa_deref || f->cfa_add < 0 || f->cfa_add > 4096))
		fuzz_bug("a CFA addend %d without a word read, or out of range",
			 f->cfa_add);
	if (f->use_bx && (f->use_fp || f->sigframe))
		fuzz_bug("a CFA from the base register and from another one");
	if (f->bx_off && f->bx_lost)
		fuzz_bug("the base register saved at %d, and lost", f->bx_off);
	if (f->use_reg && (f->use_fp || f->use_bx || f->sigframe ||
			   f->reg >= 16))
		fuzz_bug("a CFA from general register %u and from another one",
			 f->reg);
	if (f->idx_scale && (!f->cfa_deref || !f->cfa_add || f->use_reg ||
			     f->idx_reg >= 16 || f->idx_scale > 31))
		fuzz_bug("an index %u * %u outside the one form that has it",
			 f->idx_reg, f->idx_scale);
}

/* A rule the call has not written: filled with this before each call. */
#define POISON		0xa5

static void poison(struct unwind_user_frame *f)
{
	memset(f, POISON, sizeof(*f));
}

/* Whether the call wrote the rule: its bools are 0 or 1, not poison. */
static bool written(const struct unwind_user_frame *f)
{
	static const size_t bools[] = {
		offsetof(struct unwind_user_frame, use_fp),
		offsetof(struct unwind_user_frame, cfa_deref),
		offsetof(struct unwind_user_frame, fp_in_frame),
		offsetof(struct unwind_user_frame, sigframe),
		offsetof(struct unwind_user_frame, use_bx),
		offsetof(struct unwind_user_frame, bx_lost),
		offsetof(struct unwind_user_frame, use_reg),
	};
	const u8 *b = (const u8 *)f;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bools); i++)
		if (b[bools[i]] > 1)
			return false;
	return true;
}

/* Success must come with a rule the call wrote. */
static void check_written(int ret, const struct unwind_user_frame *f)
{
	if (!ret && !written(f))
		fuzz_bug("success, with a rule it did not write");
}

/*
 * Every call of eh_frame_find(), rules.c's too, comes here (the link's
 * --wrap=eh_frame_find), with the rule poisoned first: a success that did
 * not write it shows, whatever the caller had written there.
 */
int __real_eh_frame_find(const struct eh_frame_section *sec,
			 struct eh_frame_memo *memo, unsigned long ip,
			 struct unwind_user_frame *frame,
			 struct unwind_row_span *span, unsigned int *budget);

int __wrap_eh_frame_find(const struct eh_frame_section *sec,
			 struct eh_frame_memo *memo, unsigned long ip,
			 struct unwind_user_frame *frame,
			 struct unwind_row_span *span, unsigned int *budget)
{
	int ret;

	poison(frame);
	ret = __real_eh_frame_find(sec, memo, ip, frame, span, budget);
	check_written(ret, frame);
	return ret;
}

static bool same_frame(const struct unwind_user_frame *a,
		       const struct unwind_user_frame *b)
{
	return a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       a->cfa_add == b->cfa_add &&
	       a->fp_off == b->fp_off && a->use_fp == b->use_fp &&
	       a->cfa_deref == b->cfa_deref &&
	       a->fp_in_frame == b->fp_in_frame &&
	       a->sigframe == b->sigframe && a->type == b->type &&
	       a->use_bx == b->use_bx && a->bx_off == b->bx_off &&
	       a->bx_lost == b->bx_lost && a->use_reg == b->use_reg &&
	       (!a->use_reg || a->reg == b->reg) &&
	       a->idx_scale == b->idx_scale &&
	       (!a->idx_scale || a->idx_reg == b->idx_reg);
}

/* A rule, for a report. */
static const char *rule_str(char *buf, size_t len,
			    const struct unwind_user_frame *f)
{
	snprintf(buf, len, "cfa %d ra %d fp %d fp-based %d deref %d (+%d) fp-in-frame %d signal %d bx %d bx-based %d bx-lost %d reg-based %d (%u) index %u * %u type %u",
		 f->cfa_off, f->ra_off, f->fp_off, f->use_fp, f->cfa_deref,
		 f->cfa_add,
		 f->fp_in_frame, f->sigframe, f->bx_off, f->use_bx,
		 f->bx_lost, f->use_reg, f->reg, f->idx_reg, f->idx_scale,
		 f->type);
	return buf;
}

/* A limited answer must be the unlimited one, unless its budget ran out. */
static void check_same(const char *how, int ret,
		       const struct unwind_user_frame *f, int ref,
		       const struct unwind_user_frame *rf)
{
	char a[200], b[200];

	if (ret == -E2BIG || racing)
		return;
	if (ret != ref)
		fuzz_bug("%s: %d, where the tables say %d", how, ret, ref);
	if (!ret && !same_frame(f, rf))
		fuzz_bug("%s: the rule %s, where the tables say %s", how,
			 rule_str(a, sizeof(a), f), rule_str(b, sizeof(b), rf));
}

static void window1(const char *what, unsigned long lo, unsigned long hi)
{
	fuzz_window(what, 1, &lo, &hi);
}

/* [@start, @start + @len), clamped at the top of the address space. */
static unsigned long range_end(unsigned long start, unsigned long len)
{
	return start + len < start ? ULONG_MAX : start + len;
}

static void eh_setup(struct fuzz_in *in)
{
	const struct fuzz_hdr *h = &in->h;
	unsigned long hdr = in->base + h->eh_hdr;
	unsigned long seg_start = in->base + h->eh_seg_start;
	unsigned long seg_end = in->base + h->eh_seg_end;
	struct eh_frame_section *sec = &in->eh;
	int ret;

	in->eh_lo = seg_start;
	in->eh_hi = seg_end;
	window1(fn_names[FN_EH_INIT], seg_start, seg_end);
	ret = eh_frame_section_init(sec, hdr, h->eh_size, seg_start, seg_end,
				    in->ws);
	fuzz_call_done();
	check_result(FN_EH_INIT, ret);
	if (ret)
		return;
	/* The version, two encodings and two pointers come first. */
	if (sec->hdr != hdr || sec->table < hdr + 6 || !sec->nr_fdes ||
	    sec->table + 8ULL * sec->nr_fdes > (u64)hdr + h->eh_size ||
	    sec->start < seg_start || sec->start >= seg_end ||
	    sec->end != seg_end || sec->ws != in->ws)
		fuzz_bug("a section outside its header or segment");
	in->eh_ok = true;
}

/*
 * A row's span holds the IP looked up, and its first and last addresses
 * have the same rule (@find looks one up with no budget).
 */
static void check_span(const char *what, unsigned long ip, int ret,
		       const struct unwind_user_frame *f,
		       const struct unwind_row_span *span,
		       int (*find)(struct fuzz_in *in, unsigned long ip,
				   struct unwind_user_frame *f),
		       struct fuzz_in *in)
{
	unsigned long at[2] = { span->start, span->end - 1 };
	struct unwind_user_frame g;
	unsigned int i;
	char name[64];
	int r;

	if (ret != 0 && ret != SFRAME_OUTERMOST)
		return;
	if (span->start > ip || span->end <= ip)
		fuzz_bug("%s: the row's span [%#lx, %#lx) lacks its IP %#lx",
			 what, span->start, span->end, ip);
	for (i = 0; i < 2; i++) {
		if (at[i] == ip)
			continue;
		r = find(in, at[i], &g);
		snprintf(name, sizeof(name), "%s, at its span's %s", what,
			 i ? "end" : "start");
		check_same(name, r, &g, ret, f);
	}
}

static int eh_find_at(struct fuzz_in *in, unsigned long ip,
		      struct unwind_user_frame *f)
{
	struct unwind_row_span span;
	unsigned int unlimited = UINT_MAX;
	int ret;

	window1("eh_frame_find in a span", in->eh_lo, in->eh_hi);
	poison(f);
	ret = eh_frame_find(&in->eh, NULL, ip, f, &span, &unlimited);
	fuzz_call_done();
	return ret;
}

static void eh_lookup(struct fuzz_in *in, unsigned long ip)
{
	struct unwind_user_frame f, rf;
	struct unwind_row_span span, rspan;
	unsigned int budget = in->budget, unlimited = UINT_MAX;
	int ret, ref;

	window1(fn_names[FN_EH_FIND], in->eh_lo, in->eh_hi);
	poison(&f);
	ret = eh_frame_find(&in->eh, &in->memo, ip, &f, &span, &budget);
	fuzz_call_done();
	check_result(FN_EH_FIND, ret);
	check_budget(ret, in->budget, budget);
	if (!ret)
		check_frame(&f);
	if (in->memo.cie &&
	    (in->memo.cie < in->eh.start || in->memo.cie >= in->eh.end))
		fuzz_bug("a memo of a CIE at %#lx, outside the section",
			 in->memo.cie);

	window1("eh_frame_find without a memo", in->eh_lo, in->eh_hi);
	poison(&rf);
	ref = eh_frame_find(&in->eh, NULL, ip, &rf, &rspan, &unlimited);
	fuzz_call_done();
	if (ref == -E2BIG)
		fuzz_bug("an unlimited budget ran out");
	check_same("eh_frame_find with a memo and a budget", ret, &f, ref, &rf);
	check_span("eh_frame_find", ip, ref, &rf, &rspan, eh_find_at, in);
}

static void sf_setup(struct fuzz_in *in)
{
	const struct fuzz_hdr *h = &in->h;
	unsigned long addr = in->base + h->sf;
	unsigned long text_start = in->base + h->text_start;
	unsigned long text_end = in->base + h->text_end;
	struct sframe_section *sec = &in->sf;
	u64 end = (u64)addr + h->sf_size;
	int ret;

	in->sf_lo = addr;
	in->sf_hi = range_end(addr, h->sf_size);
	window1(fn_names[FN_SF_INIT], in->sf_lo, in->sf_hi);
	ret = sframe_section_init(sec, addr, h->sf_size, text_start, text_end);
	fuzz_call_done();
	check_result(FN_SF_INIT, ret);
	if (ret)
		return;
	if (sec->text_start != text_start || sec->text_end != text_end ||
	    sec->fdes < addr || sec->fdes + 16ULL * sec->nr_fdes > end ||
	    sec->fres < addr || sec->fres > sec->fres_end ||
	    sec->fres_end > end || sec->ra_off != -(s8)sizeof(long))
		fuzz_bug("a section outside its bounds");
	in->sf_ok = true;
}

static int sf_find_at(struct fuzz_in *in, unsigned long ip,
		      struct unwind_user_frame *f)
{
	struct unwind_row_span span;
	unsigned int unlimited = UINT_MAX;
	int ret;

	window1("sframe_find in a span", in->sf_lo, in->sf_hi);
	poison(f);
	ret = sframe_find(&in->sf, ip, f, &span, &unlimited);
	fuzz_call_done();
	return ret;
}

static void sf_lookup(struct fuzz_in *in, unsigned long ip)
{
	struct unwind_user_frame f, rf;
	struct unwind_row_span span, rspan;
	unsigned int budget = in->budget, unlimited = UINT_MAX;
	int ret, ref;

	window1(fn_names[FN_SF_FIND], in->sf_lo, in->sf_hi);
	poison(&f);
	ret = sframe_find(&in->sf, ip, &f, &span, &budget);
	fuzz_call_done();
	check_written(ret, &f);
	check_result(FN_SF_FIND, ret);
	check_budget(ret, in->budget, budget);
	/* SFrame has no signal frame rule: -EOPNOTSUPP. */
	if (!ret && f.sigframe)
		fuzz_bug("a signal frame's rule");

	window1("sframe_find unlimited", in->sf_lo, in->sf_hi);
	poison(&rf);
	ref = sframe_find(&in->sf, ip, &rf, &rspan, &unlimited);
	fuzz_call_done();
	check_written(ref, &rf);
	if (ref == -E2BIG)
		fuzz_bug("an unlimited budget ran out");
	check_same("sframe_find with a budget", ret, &f, ref, &rf);
	check_span("sframe_find", ip, ref, &rf, &rspan, sf_find_at, in);
}

/* A walk of one file mapped everywhere, with the sections set up. */
static void rules_setup(struct fuzz_in *in)
{
	struct unwind_user_state *state = &in->state;

	memset(&fuzz_cache, 0, sizeof(fuzz_cache));
	fuzz_mm.sframe_cache = &fuzz_cache;
	memset(state, 0, sizeof(*state));
	state->ws = in->ws;
	state->available_types = FUZZ_METHODS(in->h.mode);
	state->tables.text_start = in->base + in->h.text_start;
	state->tables.text_end = in->base + in->h.text_end;
	/* SFrame has no i386 ABI: the kernel reads it for 64-bit code only. */
	if (in->sf_ok && in->ws == sizeof(long))
		state->tables.sframe = in->sf;
	if (in->eh_ok)
		state->tables.eh = in->eh;
	state->maps[0].start = 0;
	state->maps[0].end = ULONG_MAX;
	state->maps[0].id = 1;
	state->nr_maps = 1;
	state->tables_id = 1;
	in->state0 = *state;
}

/*
 * The reference: a lookup in the tables themselves, by a walk that starts
 * with nothing remembered (no rule, no memo) and an unlimited budget.
 */
static int rules_ref(struct fuzz_in *in, unsigned long ip,
		     struct unwind_user_frame *f)
{
	struct unwind_user_state *state = &in->state0;
	unsigned long lo[2] = { in->eh_lo, in->sf_lo };
	unsigned long hi[2] = { in->eh_hi, in->sf_hi };
	int ret;

	memset(&fuzz_ref_cache, 0, sizeof(fuzz_ref_cache));
	fuzz_mm.sframe_cache = &fuzz_ref_cache;
	memset(&state->eh_memo, 0, sizeof(state->eh_memo));
	state->budget = UINT_MAX;
	fuzz_window("unwind_tables_rule unlimited", 2, lo, hi);
	poison(f);
	ret = unwind_tables_rule(state, ip, f);
	fuzz_call_done();
	check_written(ret, f);
	fuzz_mm.sframe_cache = &fuzz_cache;
	if (ret == -E2BIG)
		fuzz_bug("an unlimited budget ran out");
	return ret;
}

static void rules_lookup(struct fuzz_in *in, unsigned long ip)
{
	struct unwind_user_state *state = &in->state;
	unsigned long lo[2] = { in->eh_lo, in->sf_lo };
	unsigned long hi[2] = { in->eh_hi, in->sf_hi };
	struct unwind_user_frame f, want;
	unsigned int pass;
	u64 tag;
	u8 step;
	int ret, exp = rules_ref(in, ip, &want);

	/* The first lookup remembers what it found, the second finds that. */
	for (pass = 0; pass < 2; pass++) {
		fuzz_window(fn_names[FN_RULE], 2, lo, hi);
		state->budget = in->budget;
		poison(&f);
		ret = unwind_tables_rule(state, ip, &f);
		fuzz_call_done();
		check_written(ret, &f);
		if (!pass)
			check_result(FN_RULE, ret);
		check_budget(ret, in->budget, state->budget);
		check_same(pass ? "unwind_tables_rule, remembered" :
				  "unwind_tables_rule", ret, &f, exp, &want);
	}

	/* The slot: the step worked out when it was filled is the rule's. */
	tag = unwind_rule_tag(1, state->available_types, state->ws);
	if (unwind_rule_get(&fuzz_cache, ip, tag, &f, &step) &&
	    step != unwind_user_step_of(&f))
		fuzz_bug("a remembered rule's step %u, not %u", step,
			 unwind_user_step_of(&f));
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static struct fuzz_in in;
	s32 ips[FUZZ_MAX_IPS];
	unsigned long len;
	unsigned int i, nr;
	size_t off;

	if (size < sizeof(in.h))
		return 0;
	memset(&in, 0, sizeof(in));
	memcpy(&in.h, data, sizeof(in.h));
	nr = in.h.nr_ips % (FUZZ_MAX_IPS + 1);
	off = sizeof(in.h) + nr * sizeof(ips[0]);
	if (size < off)
		return 0;
	memcpy(ips, data + sizeof(in.h), nr * sizeof(ips[0]));
	in.base = fuzz_bases[(in.h.page >> 12) & 3] + (in.h.page & 0xfff);
	in.budget = in.h.budget ?: FUZZ_BUDGET;
	in.ws = in.h.mode & FUZZ_WS4 ? 4 : 8;
	len = min_t(unsigned long, size - off, TASK_SIZE_MAX - in.base);
	fuzz_map(in.base, data + off, len, in.base + in.h.hole,
		 in.h.hole_len);
	racing = in.h.mode & FUZZ_RACE;
	if (racing && len)
		fuzz_race(in.h.hole ^ in.h.hole_len);

	if (in.h.mode & FUZZ_EH)
		eh_setup(&in);
	if (in.h.mode & FUZZ_SFRAME)
		sf_setup(&in);
	if (in.h.mode & FUZZ_RULES)
		rules_setup(&in);
	for (i = 0; i < nr; i++) {
		unsigned long ip = in.base + ips[i];

		if (trace)
			fprintf(stderr, "trace: ip %#lx (base %+d)\n", ip,
				ips[i]);
		if (in.eh_ok)
			eh_lookup(&in, ip);
		if (in.sf_ok)
			sf_lookup(&in, ip);
		if (in.h.mode & FUZZ_RULES)
			rules_lookup(&in, ip);
	}
	fuzz_unmap();
	return 0;
}

static void print_stats(void)
{
	unsigned int fn, i;

	for (fn = 0; fn < NR_FN; fn++) {
		fprintf(stderr, "stats: %s", fn_names[fn]);
		for (i = 0; i < ARRAY_SIZE(results); i++)
			if (fn_results[fn] & R(i))
				fprintf(stderr, " %s=%lu", result_names[i],
					tally[fn][i]);
		fputc('\n', stderr);
	}
}

/* An environment switch: set, and neither empty nor "0". */
static bool on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/*
 * FUZZ_TABLES_RULE_SETS=1: the rule cache keeps the rules of call sites
 * side by side, each row wider than 64 bytes, eight in one 1 KiB block
 * (a chain of neighbouring functions): all eight are found after they
 * were put, none evicted by its neighbours. Exits with the result.
 */
static int rule_sets_check(void)
{
	const unsigned long block = 0x400000;
	struct unwind_user_frame f = {
		.cfa_off = 16, .ra_off = -8, .type = UNWIND_USER_TYPE_EH_FRAME,
	};
	u64 tag = unwind_rule_tag(1, 7, sizeof(long));
	unsigned int i, found = 0;
	u8 step;

	memset(&fuzz_cache, 0, sizeof(fuzz_cache));
	for (i = 0; i < 8; i++) {
		unsigned long ip = block + 0x80 * i + 0x30;
		struct unwind_row_span span = { ip - 0x20, ip + 0x30 };

		unwind_rule_put(&fuzz_cache, ip, &span, tag, &f);
	}
	for (i = 0; i < 8; i++) {
		unsigned long ip = block + 0x80 * i + 0x30;

		if (unwind_rule_get(&fuzz_cache, ip, tag, &f, &step))
			found++;
		else
			printf("rule of %#lx not found\n", ip);
	}
	printf("%u of 8 neighbouring rules found\n", found);
	return found == 8 ? 0 : 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (on("FUZZ_TABLES_RULE_SETS"))
		exit(rule_sets_check());
	if (on("FUZZ_TABLES_STATS"))
		atexit(print_stats);
	trace = on("FUZZ_TABLES_TRACE");
	return 0;
}
