// SPDX-License-Identifier: GPL-2.0
/*
 * What each mm remembers of the unwind tables of the files it maps, and
 * which mapping a walk's IP is in.
 *
 * The first time a walk meets an executable file mapping, the file's
 * program headers say which tables it has (probe.c). Each mm keeps a small
 * table of what was found, "nothing" included, keyed by the mapping's start
 * and file offset and by the file's identity (not a pointer to it); each
 * entry has an id never reused, which tags the rules found in its tables
 * (rules.c), so a rule is never applied to another file's code.
 *
 * Which entry an IP's mapping is, is checked once under the mmap lock and
 * then remembered as an address range, valid for as long as the mm's
 * mappings do not change: the mmap lock's sequence count (odd while it is
 * held for writing, bumped by every writer) is recorded with the ranges.
 * A library unmapped, moved, or replaced by another at the same address
 * changes the sequence, and the ranges are checked again; no hook in
 * munmap or mremap is needed. Ranges and entries are read with no lock,
 * under a sequence count of their own, so that a walk in an interrupt can
 * use them; only task context writes them.
 */
#include <linux/eh_frame.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/sframe.h>
#include <linux/slab.h>
#include <linux/unwind_user.h>

#include "mm_cache.h"
#include "stats.h"
#include "tables.h"

/*
 * The sframe_ prefix is historical for the counters every table shares:
 * files probed, their probing time, the mapping and rule caches and frames
 * by frame pointers count for every kind of table.
 */
static const char * const sframe_stat_names[NR_SFRAME_STATS] = {
	[SFRAME_STAT_FRAMES]		= "sframe_frames",
	[SFRAME_STAT_FP_FRAMES]		= "sframe_fp_frames",
	[SFRAME_STAT_FILES_PROBED]	= "sframe_files_probed",
	[SFRAME_STAT_SECTIONS]		= "sframe_sections",
	[SFRAME_STAT_REFUSED]		= "sframe_refused_version",
	[SFRAME_STAT_BAD_SECTIONS]	= "sframe_bad_sections",
	[SFRAME_STAT_PROBE_NS]		= "sframe_probe_ns",
	[SFRAME_STAT_CACHE_HITS]	= "sframe_cache_hits",
	[SFRAME_STAT_CACHE_EVICTIONS]	= "sframe_cache_evictions",
	[SFRAME_STAT_MAP_LOOKUPS]	= "map_lookups",
	[SFRAME_STAT_ROW_HITS]		= "sframe_row_hits",
	[SFRAME_STAT_RULE_LOOKUPS]	= "rule_lookups",
	[SFRAME_STAT_LOOKUP_MISSES]	= "sframe_lookup_misses",
	[SFRAME_STAT_BAD_ROWS]		= "sframe_bad_rows",
	[SFRAME_STAT_UNSUPPORTED]	= "sframe_unsupported_rows",
	[SFRAME_STAT_BUDGET_STOPS]	= "stop_budget",
	[SFRAME_STAT_NOFAULT_BUDGET_STOPS] = "stop_budget_nofault",
	[SFRAME_STAT_NO_ROW_STOPS]	= "stop_no_row",
	[SFRAME_STAT_BX_LOST_STOPS]	= "stop_base_register_lost",
	[SFRAME_STAT_SCRATCH_STOPS]	= "stop_scratch_register",
};

DEFINE_PER_CPU(struct sframe_stats, sframe_stats);

/* The most executable file mappings sframe_mm_settle() checks. */
#define SFRAME_MM_CHECK_MAX	64

/* Room for the tables of a program, ld.so, libc and a dozen more. */
static_assert(sizeof(struct sframe_mm) + 16 * sizeof(struct sframe_entry) <=
	      SFRAME_MM_BYTES);

/**
 * sframe_counters_show - print the table counters, one "name value" a line
 * @m: the seq_file of the unwinder's debugfs counters file
 *
 * Context: task context.
 */
void sframe_counters_show(struct seq_file *m)
{
	unwind_stats_show(m, sframe_stat_names, sframe_stats.val,
			  NR_SFRAME_STATS);
	seq_printf(m, "sframe_mm_bytes %u\n", SFRAME_MM_BYTES);
	seq_printf(m, "sframe_mm_entries %zu\n",
		   (SFRAME_MM_BYTES - sizeof(struct sframe_mm)) /
		   sizeof(struct sframe_entry));
	eh_frame_counters_show(m);
}

/**
 * sframe_mm_free - free what an mm remembers of unwind tables
 * @mm: an mm being freed
 *
 * Context: any context that may free memory.
 */
void sframe_mm_free(struct mm_struct *mm)
{
	kfree(mm->sframe_cache);
	mm->sframe_cache = NULL;
}

static struct sframe_mm *sframe_mm_get(struct mm_struct *mm)
{
	/* Pairs with the cmpxchg_release() below: a table seen is set up. */
	struct sframe_mm *c = smp_load_acquire(&mm->sframe_cache);

	if (c)
		return c;
	c = kzalloc(SFRAME_MM_BYTES, GFP_KERNEL);
	if (!c)
		return NULL;
	raw_spin_lock_init(&c->lock);
	seqcount_raw_spinlock_init(&c->seq, &c->lock);
	c->nr = (SFRAME_MM_BYTES - sizeof(*c)) / sizeof(c->entries[0]);
	/* Another thread of the mm may have set one up meanwhile. */
	if (cmpxchg_release(&mm->sframe_cache, NULL, c)) {
		kfree(c);
		/* The winner's table, set up before its release. */
		c = smp_load_acquire(&mm->sframe_cache);
	}
	return c;
}

/*
 * The vDSO's text mapping: an ELF image the kernel mapped from its own
 * memory, with no file, whose tables are read where it is mapped.
 */
static bool unwind_vma_is_vdso(struct vm_area_struct *vma)
{
#ifdef arch_unwind_user_vdso
	unsigned long vdso = arch_unwind_user_vdso(vma->vm_mm);

	return vdso && !vma->vm_file && vma->vm_start == vdso;
#else
	return false;
#endif
}

/* The key of a file mapping; the vDSO's has no file (inode 0). */
static void sframe_key_of(struct vm_area_struct *vma, struct sframe_key *key)
{
	struct inode *inode;
	struct timespec64 ctime;

	memset(key, 0, sizeof(*key));
	key->vm_start = vma->vm_start;
	key->vm_pgoff = vma->vm_pgoff;
	if (!vma->vm_file)
		return;
	inode = file_inode(vma->vm_file);
	ctime = inode_get_ctime(inode);
	key->ino = inode->i_ino;
	key->dev = inode->i_sb->s_dev;
	key->generation = inode->i_generation;
	key->ctime_sec = ctime.tv_sec;
	key->ctime_nsec = ctime.tv_nsec;
}

/* The slot of the entry for @key, or -1; the caller holds c->lock. */
static int sframe_cache_find(struct sframe_mm *c, const struct sframe_key *key)
{
	unsigned int i;

	for (i = 0; i < c->nr; i++) {
		struct sframe_entry *e = &c->entries[i];

		if (e->id && !memcmp(&e->key, key, sizeof(*key)))
			return i;
	}
	return -1;
}

/*
 * Remember @r as checked at mapping sequence @seq; ranges of an older
 * sequence are forgotten. The caller holds c->lock, in @c->seq's write
 * section.
 */
static void unwind_range_store(struct sframe_mm *c, unsigned int seq,
			       const struct unwind_mm_range *r)
{
	unsigned int i, slot;

	if (c->mm_seq != seq) {
		memset(c->ranges, 0, sizeof(c->ranges));
		c->mm_seq = seq;
	}
	slot = c->next_range;
	for (i = 0; i < UNWIND_MM_RANGES; i++) {
		if (c->ranges[i].start == r->start) {
			slot = i;
			break;
		}
	}
	if (slot == c->next_range)
		c->next_range = (slot + 1) % UNWIND_MM_RANGES;
	c->ranges[slot] = *r;
}

/*
 * Add the entry for @key, evicting the least recently used one (and the
 * ranges that name it); store its range @r when the mappings are still
 * as of @seq. Where another walk of the mm read the same file meanwhile
 * and added it first, its entry is the one: its id stays, for the walks
 * that hold it already (a new id would send them to look it up again,
 * and a third walk could do the same to them once more).
 * Return: the kinds of tables the entry has (enum unwind_user_type bits).
 */
static unsigned int sframe_cache_put(struct sframe_mm *c,
				     const struct sframe_key *key,
				     unsigned int found,
				     const struct unwind_user_tables *t,
				     bool seq_ok, unsigned int seq,
				     struct unwind_mm_range *r)
{
	struct sframe_entry *e;
	unsigned int i, n, now;
	int slot;

	raw_spin_lock(&c->lock);
	write_seqcount_begin(&c->seq);
	slot = sframe_cache_find(c, key);
	if (slot >= 0) {
		e = &c->entries[slot];
		goto store;
	}
	for (i = 0, n = 0; i < c->nr; i++) {
		if (c->entries[i].last_used < c->entries[n].last_used)
			n = i;
	}
	slot = n;
	if (c->entries[slot].id)
		sframe_stat_add(SFRAME_STAT_CACHE_EVICTIONS, 1);
	for (i = 0; i < UNWIND_MM_RANGES; i++) {
		if (c->ranges[i].entry == slot && c->ranges[i].id)
			memset(&c->ranges[i], 0, sizeof(c->ranges[i]));
	}
	e = &c->entries[slot];
	e->key = *key;
	e->id = ++c->next_id;
	e->found = found;
	e->t = *t;
store:
	e->last_used = ++c->clock;
	r->id = e->found ? e->id : 0;
	r->entry = slot;
	/* Only if no writer of the mappings came by since they were read. */
	if (seq_ok && unwind_mm_seq(current->mm, &now) && now == seq)
		unwind_range_store(c, seq, r);
	write_seqcount_end(&c->seq);
	raw_spin_unlock(&c->lock);
	return e->found;
}

/* Count what a probe found; the kinds of tables usable (enum bits). */
static unsigned int sframe_probe_count(const struct unwind_probe *res)
{
	unsigned int found = 0;

	switch (res->sframe) {
	case 0:
		sframe_stat_add(SFRAME_STAT_SECTIONS, 1);
		found |= UNWIND_USER_TYPE_SFRAME;
		break;
	case -ENOENT:
		break;
	case -EPROTONOSUPPORT:
		sframe_stat_add(SFRAME_STAT_REFUSED, 1);
		break;
	default:
		sframe_stat_add(SFRAME_STAT_BAD_SECTIONS, 1);
		break;
	}
	/* eh_frame_section_init() counts its own. */
	if (!res->eh_frame)
		found |= UNWIND_USER_TYPE_EH_FRAME;
	return found;
}

/*
 * Look up the mapping @ip is in under the mmap lock, read the file's
 * tables the first time the mm meets it, and remember the range.
 * Return: the kinds of tables found (enum unwind_user_type bits, 0 for
 * none) with *@r filled; -ENOMEM when it cannot be told now.
 */
static int unwind_map_lookup(struct sframe_mm *c, unsigned long ip,
			     struct unwind_mm_range *r)
{
	struct mm_struct *mm = current->mm;
	struct unwind_user_tables t = { };
	struct vm_area_struct *vma;
	struct unwind_probe res;
	struct sframe_key key;
	unsigned int found, seq = 0;
	struct file *file;
	bool seq_ok;
	int slot, ret;
	u64 t0;

	mmap_read_lock(mm);
	sframe_stat_add(SFRAME_STAT_MAP_LOOKUPS, 1);
	/* Held for reading: no writer can be in the middle of a change. */
	seq_ok = unwind_mm_seq(mm, &seq);
	memset(r, 0, sizeof(*r));
	vma = vma_lookup(mm, ip);
	if (!vma) {
		mmap_read_unlock(mm);
		r->start = ip;
		r->end = ip + 1;
		return 0;
	}
	r->start = vma->vm_start;
	r->end = vma->vm_end;
	if (!(vma->vm_flags & VM_EXEC) ||
	    (!vma->vm_file && !unwind_vma_is_vdso(vma))) {
		if (seq_ok) {
			raw_spin_lock(&c->lock);
			write_seqcount_begin(&c->seq);
			unwind_range_store(c, seq, r);
			write_seqcount_end(&c->seq);
			raw_spin_unlock(&c->lock);
		}
		mmap_read_unlock(mm);
		return 0;
	}

	sframe_key_of(vma, &key);
	raw_spin_lock(&c->lock);
	slot = sframe_cache_find(c, &key);
	if (slot >= 0) {
		struct sframe_entry *e = &c->entries[slot];

		write_seqcount_begin(&c->seq);
		e->last_used = ++c->clock;
		found = e->found;
		r->id = found ? e->id : 0;
		r->entry = slot;
		if (seq_ok)
			unwind_range_store(c, seq, r);
		write_seqcount_end(&c->seq);
		raw_spin_unlock(&c->lock);
		mmap_read_unlock(mm);
		sframe_stat_add(SFRAME_STAT_CACHE_HITS, 1);
		return found;
	}
	raw_spin_unlock(&c->lock);

	/* Read the file with no lock held: it may take page faults and I/O. */
	file = vma->vm_file ? get_file(vma->vm_file) : NULL;
	mmap_read_unlock(mm);

	t0 = local_clock();
	ret = unwind_tables_probe(file, key.vm_start, key.vm_pgoff, r->end, &t,
				  &res);
	if (file)
		fput(file);
	sframe_stat_add(SFRAME_STAT_PROBE_NS, local_clock() - t0);
	sframe_stat_add(SFRAME_STAT_FILES_PROBED, 1);
	if (ret == -ENOMEM)
		return ret;	/* not the file's fault: ask again next time */

	found = ret ? 0 : sframe_probe_count(&res);
	if (found)
		WRITE_ONCE(c->has, READ_ONCE(c->has) | found);
	return sframe_cache_put(c, &key, found, &t, seq_ok, seq, r);
}

/* The range the mm remembers for @ip as of mapping sequence @seq. */
static bool unwind_range_get(struct sframe_mm *c, unsigned int seq,
			     unsigned long ip, struct unwind_mm_range *out)
{
	unsigned int s = raw_read_seqcount(&c->seq), i, first, slot;
	bool hit = false;

	BUILD_BUG_ON(!is_power_of_2(UNWIND_MM_RANGES));
	if ((s & 1) || READ_ONCE(c->mm_seq) != seq)
		return false;
	/* Samples come in runs in one file: start where the last hit. */
	first = READ_ONCE(c->last_range);
	for (i = 0; i < UNWIND_MM_RANGES; i++) {
		const struct unwind_mm_range *r;

		slot = (first + i) & (UNWIND_MM_RANGES - 1);
		r = &c->ranges[slot];
		if (ip >= READ_ONCE(r->start) && ip < READ_ONCE(r->end)) {
			out->start = READ_ONCE(r->start);
			out->end = READ_ONCE(r->end);
			out->id = READ_ONCE(r->id);
			out->entry = READ_ONCE(r->entry);
			hit = true;
			break;
		}
	}
	if (!hit || read_seqcount_retry(&c->seq, s))
		return false;
	if (i && !in_nmi())
		WRITE_ONCE(c->last_range, slot);
	return true;
}

/**
 * unwind_tables_seq_valid - have the mappings stayed as they were?
 * @seq: a sequence from unwind_tables_nofault_begin()
 *
 * Context: any; takes no lock.
 *
 * Return: true when no writer changed the current mm's mappings since.
 */
bool unwind_tables_seq_valid(unsigned int seq)
{
	unsigned int now;

	/* What the walk read, read before the check. */
	smp_rmb();
	return unwind_mm_seq(current->mm, &now) && now == seq;
}

/**
 * unwind_tables_map - the checked range of the mapping a walk's IP is in
 * @state: the walk; remembers the range in @state->maps
 * @ip: the address
 * @map: set to the range in @state->maps
 *
 * Uses the ranges the mm remembers where its mappings have not changed
 * since they were checked, and otherwise (in task context) looks the
 * mapping up under the mmap lock, reading the file's tables the first time
 * the mm meets it.
 *
 * Context: any. A walk with @state->nofault only reads what the mm
 * remembers, as of @state->mm_seq, and takes no lock; otherwise task
 * context of the walked task, which may fault and sleep, and must not
 * hold its mmap lock.
 *
 * Return: 0; -EAGAIN when a walk in an interrupt would need the lock;
 * -ENOMEM.
 */
int unwind_tables_map(struct unwind_user_state *state, unsigned long ip,
		      struct unwind_user_map **map)
{
	struct mm_struct *mm = current->mm;
	/* Pairs with the cmpxchg_release() that set the table up. */
	struct sframe_mm *c = smp_load_acquire(&mm->sframe_cache);
	struct unwind_user_map *m;
	struct unwind_mm_range r;
	unsigned int seq;
	int ret;

	/* A walk in an interrupt relies on the sequence it started with. */
	seq = state->mm_seq;
	if (c && (state->nofault || unwind_mm_seq(mm, &seq)) &&
	    unwind_range_get(c, seq, ip, &r)) {
		sframe_stat_add(SFRAME_STAT_CACHE_HITS, 1);
	} else {
		if (state->nofault)
			return -EAGAIN;
		might_fault();
		c = sframe_mm_get(mm);
		if (!c)
			return -ENOMEM;
		ret = unwind_map_lookup(c, ip, &r);
		if (ret < 0)
			return ret;
	}

	m = &state->maps[state->next_map];
	state->next_map = (state->next_map + 1) % UNWIND_USER_MAPS;
	if (state->nr_maps < UNWIND_USER_MAPS)
		state->nr_maps++;
	m->start = r.start;
	m->end = r.end;
	m->id = r.id;
	m->entry = r.entry;
	*map = m;
	return 0;
}

/**
 * unwind_tables_copy - copy the tables of a checked range into the walk
 * @state: the walk
 * @m: a range of @state->maps with tables (@m->id not 0)
 *
 * Reads the entry with no lock; where a writer is at it, a walk in task
 * context waits for the writer's lock, which is held only briefly and
 * never by an interrupt, and reads the entry under it. A walk in an
 * interrupt may have stopped that writer on its own CPU: it gives up.
 *
 * Context: any; takes no lock in an interrupt (@state->nofault).
 *
 * Return: true with @state->tables those of @m's file; false when the
 * entry was replaced, or (in an interrupt) is being written: the walk
 * looks the range up again, or ends in an interrupt.
 */
bool unwind_tables_copy(struct unwind_user_state *state,
			const struct unwind_user_map *m)
{
	/* Pairs with the cmpxchg_release() that set the table up. */
	struct sframe_mm *c = smp_load_acquire(&current->mm->sframe_cache);
	struct unwind_user_tables *t = &state->tables;
	const struct sframe_entry *e;
	unsigned int s;

	if (state->tables_id == m->id)
		goto out;
	if (!c || m->entry >= c->nr)
		return false;
	/* @t is overwritten below: it holds no entry's tables until done. */
	state->tables_id = 0;
#ifdef CONFIG_UNWIND_USER_EH_FRAME
	state->eh_memo.cie = 0;
#endif
	e = &c->entries[m->entry];
	s = raw_read_seqcount(&c->seq);
	if (!(s & 1)) {
		if (READ_ONCE(e->id) != m->id)
			return false;
		memcpy(t, &e->t, sizeof(*t));
		if (!read_seqcount_retry(&c->seq, s))
			goto copied;
	}
	if (state->nofault)
		return false;
	/*
	 * Giving up would cut the walk short with nothing wrong in the stack
	 * or the tables: where libraries come and go, other threads write
	 * the table often.
	 */
	scoped_guard(raw_spinlock, &c->lock) {
		if (e->id != m->id)
			return false;
		memcpy(t, &e->t, sizeof(*t));
	}
copied:
	state->tables_id = m->id;
out:
	/* The mapping may have grown or shrunk since the file was read. */
	t->text_start = m->start;
	t->text_end = m->end;
	if (t->sframe.text_end)
		t->sframe.text_end = m->end;
	return true;
}

/**
 * sframe_mm_exec_mapped - note a mapping that may be a new executable file
 * @vma: a mapping mmap() made or mprotect() changed, with its mm's mmap lock
 *	 held for writing
 *
 * A file mapped executable since the last check may have tables, so the
 * mm is no longer known to have none.
 */
void sframe_mm_exec_mapped(struct vm_area_struct *vma)
{
	struct sframe_mm *c = vma->vm_mm->sframe_cache;

	if (c && (vma->vm_flags & VM_EXEC) && vma->vm_file)
		WRITE_ONCE(c->exec_gen, c->exec_gen + 1);
}

/**
 * sframe_mm_fp_only - is the mm known to have no table a walk would use?
 * @mm: the current task's mm
 *
 * Context: any, NMI included; reads four words and takes no lock.
 *
 * Return: true when every file the mm maps executable was checked and none
 * has a table of a method that is turned on, and the mm never had one: a
 * walk by frame pointers alone then gives exactly what a walk that may use
 * tables gives.
 */
bool sframe_mm_fp_only(struct mm_struct *mm)
{
	/* Pairs with the cmpxchg_release() that set the table up. */
	struct sframe_mm *c = smp_load_acquire(&mm->sframe_cache);

	return c && sframe_mm_none(c);
}

/**
 * sframe_mm_settle - find out whether the current mm has unwind tables
 *
 * Once per new executable file mapping, checks every executable file
 * mapping of the current mm for tables (reading the headers of files not
 * seen before, as a walk does), so that sframe_mm_fp_only() can tell. An
 * mm with more than %SFRAME_MM_CHECK_MAX such mappings, or a check that
 * could not allocate, gets no verdict: it is walked as before.
 *
 * Context: task context of the current task, which must not hold its mmap
 * lock; may fault and sleep.
 */
void sframe_mm_settle(void)
{
	struct mm_struct *mm = current->mm;
	unsigned long starts[SFRAME_MM_CHECK_MAX], gen;
	struct vm_area_struct *vma;
	struct unwind_mm_range r;
	struct sframe_mm *c;
	unsigned int n = 0, i;
	bool many = false;

	/* An exiting task may hold its own mmap lock (after an oops). */
	if (!mm || (current->flags & PF_EXITING))
		return;
	c = sframe_mm_get(mm);
	if (!c || (READ_ONCE(c->has) & unwind_user_methods()) ||
	    (READ_ONCE(c->verdict) >> 1) == READ_ONCE(c->exec_gen) + 1)
		return;

	mmap_read_lock(mm);
	/* Mappings made from here on bump the generation. */
	gen = c->exec_gen;
	{
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma) {
			if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file)
				continue;
			if (n == SFRAME_MM_CHECK_MAX) {
				many = true;
				break;
			}
			starts[n++] = vma->vm_start;
		}
	}
	mmap_read_unlock(mm);

	for (i = 0; !many && i < n; i++) {
		int ret = unwind_map_lookup(c, starts[i], &r);

		/* Tables of a method turned off do not count. */
		if (ret < 0 || (ret & unwind_user_methods()))
			return;
	}
	/* Checked; bit 0 only when every mapping was and none had one. */
	WRITE_ONCE(c->verdict, ((gen + 1) << 1) | (many ? 0 : 1));
}
