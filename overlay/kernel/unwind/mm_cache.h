/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an mm remembers of its unwind tables, read without a lock: the
 * mappings known (tables.c writes them) and the rules of the return
 * addresses met recently (any walk writes them, NMI aside). The walker's
 * table loop (user.c) reads rules inside its user access section, so the
 * readers here are inline and call nothing. Internal to kernel/unwind/.
 */
#ifndef _KERNEL_UNWIND_MM_CACHE_H
#define _KERNEL_UNWIND_MM_CACHE_H

#include <linux/hash.h>
#include <linux/limits.h>
#include <linux/mm_types.h>
#include <linux/percpu.h>
#include <linux/seqlock.h>
#include <linux/sizes.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/unwind_user.h>
#include <linux/unwind_user_types.h>

/* What identifies a mapping of a file, without holding on to the file. */
struct sframe_key {
	unsigned long	vm_start;
	unsigned long	vm_pgoff;
	unsigned long	ino;
	dev_t		dev;
	u32		generation;
	time64_t	ctime_sec;
	long		ctime_nsec;
};

/*
 * A file mapping whose tables were looked for: @id names it (never reused
 * in the mm's life), so a rule found in its tables is never taken for
 * another file's; 0 marks a free slot.
 */
struct sframe_entry {
	struct sframe_key	key;
	u64			id;
	u64			last_used;
	unsigned int		found;		/* enum unwind_user_type */
	struct unwind_user_tables t;
};

/*
 * An address range checked against the mm's mappings: the entry of the
 * file mapped there (@id, @entry), or @id 0: no tables there. Valid while
 * the mm's mappings have not changed since (sframe_mm.mm_seq).
 */
struct unwind_mm_range {
	unsigned long	start;
	unsigned long	end;
	u64		id;
	unsigned int	entry;
};

/*
 * The rule of the @len addresses from @start in the file mapping @tag
 * names (unwind_rule_tag()): the part of one table row that lies in one
 * block of code, so that the IPs of a loop and the return addresses of
 * nearby calls share it. Blocks come in three sizes (64 bytes, 1 KiB and
 * 4 KiB, each aligned): a part is kept in the set of the smallest block
 * that holds it, so that the body of a large function takes one slot, not
 * one per small block, and only the few rows that cross a 1 KiB boundary
 * or are longer than 1 KiB share a 4 KiB block's set. @len 0 marks a free
 * slot. @seq is odd while a writer fills the slot; a reader that sees it
 * odd or changed takes a miss. Offsets that do not fit are not remembered.
 */
struct unwind_mm_rule {
	u32		seq;
	s16		cfa_off;
	s16		bx_off;
	s16		ra_off;
	s16		fp_off;
	u8		flags;
	u8		type;
	u16		len;
	unsigned long	start;
	u64		tag;
};

/* The blocks' sizes, log2, smallest first. */
#define UNWIND_RULE_LEVELS	3
#define UNWIND_RULE_WIDEST_SHIFT	12
#define UNWIND_RULE_WIDEST	BIT(UNWIND_RULE_WIDEST_SHIFT)

#define UNWIND_RULE_USE_FP	BIT(0)
#define UNWIND_RULE_CFA_DEREF	BIT(1)
#define UNWIND_RULE_FP_IN_FRAME	BIT(2)
#define UNWIND_RULE_SIGFRAME	BIT(3)
#define UNWIND_RULE_USE_BX	BIT(6)
#define UNWIND_RULE_BX_LOST	BIT(7)
/*
 * Bits 4 and 5: the step a native frame with the rule takes in a user
 * access section (enum unwind_user_step in step.h), worked out once when
 * the rule is remembered rather than on every use.
 */
#define UNWIND_RULE_STEP_SHIFT	4
#define UNWIND_RULE_STEP_MASK	(3 << UNWIND_RULE_STEP_SHIFT)

/*
 * A rule of type UNWIND_USER_TYPE_NONE marks the outermost frame; one of
 * type UNWIND_USER_TYPE_FP says the tables have no row for the address:
 * its frame is found by frame pointers (the rule of a function's body).
 */

/* The table of one mm: mappings, rules, then as many entries as fit. */
#define SFRAME_MM_BYTES		SZ_16K
#define UNWIND_MM_RULE_WAYS	4
#define UNWIND_MM_RULE_SETS	64	/* a power of two */
#define UNWIND_MM_RANGES	16

/*
 * @exec_gen counts the executable file mappings made since the table was
 * set up (written under the mmap lock held for writing); @verdict is
 * (@exec_gen + 1) << 1 as of the last check of every such mapping, with
 * bit 0 set when none of them had a table; @has is the kinds of tables
 * (enum unwind_user_type) found for the life of the mm. These three are
 * read without the lock, also from NMI.
 *
 * @ranges and @entries are written under @lock inside @seq's write
 * section, and read with no lock: a reader that meets a writer misses.
 * @ranges hold for the mm's mappings as of @mm_seq (the mm's mmap lock
 * sequence); @last_range, the slot a lookup last found, is where the next
 * one starts (a hint, written with no lock, never from NMI). @rules are
 * written with no lock, slot by slot.
 */
struct sframe_mm {
	unsigned long		exec_gen;
	unsigned long		verdict;
	unsigned int		has;
	raw_spinlock_t		lock;
	seqcount_raw_spinlock_t	seq;
	unsigned int		mm_seq;
	unsigned int		next_range;
	unsigned int		last_range;
	unsigned int		nr;
	u64			clock;
	u64			next_id;
	struct unwind_mm_range	ranges[UNWIND_MM_RANGES];
	struct unwind_mm_rule	rules[UNWIND_MM_RULE_WAYS * UNWIND_MM_RULE_SETS];
	struct sframe_entry	entries[];
};

#ifdef CONFIG_UNWIND_USER_SFRAME
/*
 * The mm's mapping sequence: false while its mmap lock is held for
 * writing (the mappings may be changing), and always without per-VMA
 * locks (which keep the sequence): nothing is then remembered.
 */
static __always_inline bool unwind_mm_seq(struct mm_struct *mm, unsigned int *seq)
{
#ifdef CONFIG_PER_VMA_LOCK
	*seq = raw_read_seqcount(&mm->mm_lock_seq);
	return !(*seq & 1);
#else
	return false;
#endif
}

/* Whether @c's mm is known to have no table a walk would use. */
static __always_inline bool sframe_mm_none(struct sframe_mm *c)
{
	unsigned long v;

	if (READ_ONCE(c->has) & unwind_user_methods())
		return false;
	v = READ_ONCE(c->verdict);
	return (v & 1) && (v >> 1) == READ_ONCE(c->exec_gen) + 1;
}

/*
 * May a walk in an interrupt use the tables? Sets @seq to the current mm's
 * mapping sequence, which the walk relies on. Context: any; takes no lock.
 * Inline: every walk in an interrupt starts with it.
 *
 * Return: 0 with @seq set: the walk may use what the mm remembers; 1: the
 * mm is known to have no table a walk would use (sframe_mm_fp_only());
 * -EAGAIN: it has met none of its files yet, or its mappings are being
 * changed.
 */
static __always_inline int unwind_tables_nofault_begin(unsigned int *seq)
{
	struct mm_struct *mm = current->mm;
	/* Pairs with the cmpxchg_release() that set the table up. */
	struct sframe_mm *c = smp_load_acquire(&mm->sframe_cache);

	if (!c)
		return -EAGAIN;
	if (sframe_mm_none(c))
		return 1;
	return unwind_mm_seq(mm, seq) ? 0 : -EAGAIN;
}
#endif

/*
 * The tag of a rule: the entry of the file it came from, the methods the
 * walk could use and the walk's word size, so that a rule found with a
 * method turned off (or not found, frame pointers then) is not reused once
 * it is on.
 */
static __always_inline u64 unwind_rule_tag(u64 id, unsigned int types,
					   unsigned int ws)
{
	return (id << 4) | (ws == sizeof(long) ? 8 : 0) | (types & 7);
}

/*
 * log2 of the size of the blocks of @level. No table: a sanitizer's bounds
 * check may not be called in the user access section the walk runs it in.
 */
static __always_inline unsigned int unwind_rule_shift(unsigned int level)
{
	BUILD_BUG_ON(UNWIND_RULE_LEVELS != 3);
	switch (level) {
	case 0:
		return 6;
	case 1:
		return 10;
	default:
		return UNWIND_RULE_WIDEST_SHIFT;
	}
}

/*
 * The set of @ip's block of @level. The sizes are numbered apart, so that
 * a large block and the first smaller one in it do not share a set.
 */
static __always_inline struct unwind_mm_rule *
unwind_rule_set(struct sframe_mm *c, unsigned long ip, unsigned int level)
{
	unsigned long block = (ip >> unwind_rule_shift(level)) ^
			      ((unsigned long)level << (BITS_PER_LONG - 2));

	return &c->rules[UNWIND_MM_RULE_WAYS *
			 hash_long(block, ilog2(UNWIND_MM_RULE_SETS))];
}

/* Whether slot @r's addresses, as read, include @ip. */
static __always_inline bool unwind_rule_covers(struct unwind_mm_rule *r,
					       unsigned long ip)
{
	return ip - READ_ONCE(r->start) < READ_ONCE(r->len);
}

/*
 * Read one slot: true with *@frame (and *@step, when asked for) when it
 * holds @ip's rule for @tag.
 */
static __always_inline bool unwind_rule_read(struct unwind_mm_rule *r,
					     unsigned long ip, u64 tag,
					     struct unwind_user_frame *frame,
					     u8 *step)
{
	u32 seq;
	u8 flags;

	/* Most slots of a set hold other addresses: two loads tell. */
	if (!unwind_rule_covers(r, ip))
		return false;
	/* Pairs with the release that published the slot's rule. */
	seq = smp_load_acquire(&r->seq);
	if ((seq & 1) || !unwind_rule_covers(r, ip) ||
	    READ_ONCE(r->tag) != tag)
		return false;
	frame->cfa_off = READ_ONCE(r->cfa_off);
	frame->bx_off = READ_ONCE(r->bx_off);
	frame->ra_off = READ_ONCE(r->ra_off);
	frame->fp_off = READ_ONCE(r->fp_off);
	flags = READ_ONCE(r->flags);
	frame->type = READ_ONCE(r->type);
	frame->use_fp = flags & UNWIND_RULE_USE_FP;
	frame->cfa_deref = flags & UNWIND_RULE_CFA_DEREF;
	frame->cfa_add = 0;
	frame->fp_in_frame = flags & UNWIND_RULE_FP_IN_FRAME;
	frame->sigframe = flags & UNWIND_RULE_SIGFRAME;
	frame->use_bx = flags & UNWIND_RULE_USE_BX;
	frame->bx_lost = flags & UNWIND_RULE_BX_LOST;
	frame->use_reg = false;
	frame->idx_scale = 0;
	if (step)
		*step = (flags & UNWIND_RULE_STEP_MASK) >> UNWIND_RULE_STEP_SHIFT;
	/* Read it all before the check that no writer came by. */
	smp_rmb();
	return READ_ONCE(r->seq) == seq;
}

/**
 * unwind_rule_get - the rule the mm remembers for an address
 * @c: the mm's table
 * @ip: the address (a return address minus one, or an interrupted IP)
 * @tag: unwind_rule_tag() of the file mapping @ip was found in
 * @frame: filled on a hit
 * @step: NULL, or filled on a hit with the step a native frame with the
 *	  rule takes (enum unwind_user_step)
 *
 * Context: any, NMI included, user access sections included: takes no
 * lock, calls nothing and writes nothing shared.
 *
 * Return: true on a hit.
 */
static __always_inline bool unwind_rule_get(struct sframe_mm *c,
					    unsigned long ip, u64 tag,
					    struct unwind_user_frame *frame,
					    u8 *step)
{
	unsigned int level, w;

	for (level = 0; level < UNWIND_RULE_LEVELS; level++) {
		struct unwind_mm_rule *set = unwind_rule_set(c, ip, level);

		for (w = 0; w < UNWIND_MM_RULE_WAYS; w++) {
			if (unwind_rule_read(&set[w], ip, tag, frame, step))
				return true;
		}
	}
	return false;
}

/*
 * The range of @state->maps @ip is in, or NULL. Called in a user access
 * section: a pointer, where an index would call a sanitizer's check.
 */
static __always_inline struct unwind_user_map *
unwind_user_map_of(struct unwind_user_state *state, unsigned long ip)
{
	unsigned int i;

	for (i = 0; i < state->nr_maps; i++) {
		struct unwind_user_map *m = state->maps + i;

		if (ip >= m->start && ip < m->end)
			return m;
	}
	return NULL;
}

struct unwind_row_span;
void unwind_rule_put(struct sframe_mm *c, unsigned long ip,
		     const struct unwind_row_span *span, u64 tag,
		     const struct unwind_user_frame *frame);

/*
 * unwind_tables_rule(): no table row covers the IP, but .eh_frame covers
 * code of its file on both sides of it: code without CFI (assembly), where
 * frame pointers would guess. The walk ends there.
 */
#define UNWIND_TABLES_NO_ROW	2

/*
 * The work one table lookup costs beyond its probes, reads and rows (see
 * UNWIND_READ_COST()), charged to the walk's budget.
 */
#define UNWIND_LOOKUP_COST	16

/* The counters of the tables and their cache (tables.c prints them). */
enum sframe_stat {
	SFRAME_STAT_FRAMES,		/* frames found by SFrame */
	SFRAME_STAT_FP_FRAMES,		/* frames found by frame pointers */
	SFRAME_STAT_FILES_PROBED,	/* files whose headers were read */
	SFRAME_STAT_SECTIONS,		/* ... that had a usable section */
	SFRAME_STAT_REFUSED,		/* ... had one of another version */
	SFRAME_STAT_BAD_SECTIONS,	/* ... had a section breaking a rule */
	SFRAME_STAT_PROBE_NS,		/* time spent reading them */
	SFRAME_STAT_CACHE_HITS,		/* mappings the mm remembered */
	SFRAME_STAT_CACHE_EVICTIONS,
	SFRAME_STAT_MAP_LOOKUPS,	/* mappings looked up under the lock */
	SFRAME_STAT_ROW_HITS,		/* rules the mm remembered */
	SFRAME_STAT_RULE_LOOKUPS,	/* rules looked up in a table */
	SFRAME_STAT_LOOKUP_MISSES,	/* IPs in a section's file it lacks */
	SFRAME_STAT_BAD_ROWS,		/* lookups that found bad data */
	SFRAME_STAT_UNSUPPORTED,	/* rows a walk cannot follow */
	SFRAME_STAT_BUDGET_STOPS,	/* walks that spent their budget */
	SFRAME_STAT_NOFAULT_BUDGET_STOPS, /* ... in an interrupt: deferred */
	SFRAME_STAT_NO_ROW_STOPS,	/* walks ended amid described code */
	SFRAME_STAT_BX_LOST_STOPS,	/* ... at a CFA in a lost register */
	SFRAME_STAT_SCRATCH_STOPS,	/* ... at one in a scratch register */
	NR_SFRAME_STATS,
};

struct sframe_stats {
	u64 val[NR_SFRAME_STATS];
};

DECLARE_PER_CPU(struct sframe_stats, sframe_stats);

static __always_inline void sframe_stat_add(enum sframe_stat stat, u64 val)
{
	this_cpu_add(sframe_stats.val[stat], val);
}

/* The mapping of a walk's IP: its range and its file's entry (tables.c). */
int unwind_tables_map(struct unwind_user_state *state, unsigned long ip,
		      struct unwind_user_map **map);
bool unwind_tables_copy(struct unwind_user_state *state,
			const struct unwind_user_map *m);
int unwind_tables_lookup(struct unwind_user_state *state,
			 const struct unwind_user_map *m, unsigned long ip,
			 struct unwind_user_frame *frame);

#endif /* _KERNEL_UNWIND_MM_CACHE_H */
