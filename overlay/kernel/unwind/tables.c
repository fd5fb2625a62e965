// SPDX-License-Identifier: GPL-2.0
/*
 * The rule of a user frame by the unwind tables of the file its IP is
 * mapped from: SFrame where the file's table covers the IP, else its
 * .eh_frame; and what each mm remembers of the tables it has met.
 *
 * The first time a walk meets an executable file mapping, the file's
 * program headers say which tables it has (probe.c). Each mm keeps a small
 * table of what was found, "nothing" included, keyed by the mapping's start
 * and file offset and by the file's identity (not a pointer to it). An
 * entry is only used after the IP's VMA, looked up under the mmap lock, has
 * matched it; so a library unmapped, moved, or replaced by another at the
 * same address simply misses, with no hook in munmap or mremap. A walk
 * checks each mapping once (struct unwind_user_state keeps the last one),
 * and user memory and files are read with no lock held. The rules of the
 * return addresses met most recently are kept too, whichever table gave
 * them.
 *
 * Context: task context of the walked task, where page faults may be taken.
 */
#include <linux/eh_frame.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/sframe.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/unwind_user.h>

#include "stats.h"
#include "tables.h"

/*
 * The table of one mm: the rows of the return addresses met most recently,
 * then as many mappings' tables as fit in this many bytes.
 */
#define SFRAME_MM_BYTES		SZ_8K
#define SFRAME_MM_ROWS		128	/* a power of two */

enum sframe_stat {
	SFRAME_STAT_FRAMES,		/* frames found by SFrame */
	SFRAME_STAT_FP_FRAMES,		/* frames found by frame pointers */
	SFRAME_STAT_FILES_PROBED,	/* files whose headers were read */
	SFRAME_STAT_SECTIONS,		/* ... that had a usable section */
	SFRAME_STAT_REFUSED,		/* ... had one of another version */
	SFRAME_STAT_BAD_SECTIONS,	/* ... had a section breaking a rule */
	SFRAME_STAT_PROBE_NS,		/* time spent reading them */
	SFRAME_STAT_CACHE_HITS,
	SFRAME_STAT_CACHE_EVICTIONS,
	SFRAME_STAT_ROW_HITS,		/* rows reused without a lookup */
	SFRAME_STAT_LOOKUP_MISSES,	/* IPs in a section's file it lacks */
	SFRAME_STAT_BAD_ROWS,		/* lookups that found bad data */
	SFRAME_STAT_UNSUPPORTED,	/* rows a walk cannot follow */
	NR_SFRAME_STATS,
};

/*
 * The sframe_ prefix is historical for the counters every table shares:
 * files probed, their probing time, the mapping and row caches and frames
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
	[SFRAME_STAT_ROW_HITS]		= "sframe_row_hits",
	[SFRAME_STAT_LOOKUP_MISSES]	= "sframe_lookup_misses",
	[SFRAME_STAT_BAD_ROWS]		= "sframe_bad_rows",
	[SFRAME_STAT_UNSUPPORTED]	= "sframe_unsupported_rows",
};

struct sframe_stats {
	u64 val[NR_SFRAME_STATS];
};

static DEFINE_PER_CPU(struct sframe_stats, sframe_stats);

static void sframe_stat_add(enum sframe_stat stat, u64 val)
{
	this_cpu_add(sframe_stats.val[stat], val);
}

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

struct sframe_entry {
	struct sframe_key	key;
	u64			last_used;	/* 0: the slot is free */
	unsigned int		found;		/* enum unwind_user_type */
	struct unwind_user_tables t;
};

/* The rule found for an IP, in a table indexed by a hash of the IP. */
struct sframe_row_memo {
	unsigned long			ip;	/* 0: the slot is free */
	struct unwind_user_frame	frame;
};

/* The most executable file mappings sframe_mm_settle() checks. */
#define SFRAME_MM_CHECK_MAX	64

/*
 * @exec_gen counts the executable file mappings made since the table was
 * set up (written under the mmap lock held for writing); @verdict is
 * (@exec_gen + 1) << 1 as of the last check of every such mapping, with
 * bit 0 set when none of them had a table; @has is the kinds of tables
 * (enum unwind_user_type) found for the life of the mm. These three are
 * read without the lock, also from NMI.
 */
struct sframe_mm {
	unsigned long		exec_gen;
	unsigned long		verdict;
	unsigned int		has;
	spinlock_t		lock;		/* protects all below */
	u64			clock;
	unsigned int		nr;
	struct sframe_row_memo	rows[SFRAME_MM_ROWS];
	struct sframe_entry	entries[];
};

/* Room for the tables of a program, ld.so, libc and a dozen more. */
static_assert(sizeof(struct sframe_mm) + 16 * sizeof(struct sframe_entry) <=
	      SFRAME_MM_BYTES);

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
	spin_lock_init(&c->lock);
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

/* The entry for @key, or NULL; the caller holds c->lock. */
static struct sframe_entry *sframe_cache_find(struct sframe_mm *c,
					      const struct sframe_key *key)
{
	unsigned int i;

	for (i = 0; i < c->nr; i++) {
		struct sframe_entry *e = &c->entries[i];

		if (e->last_used && !memcmp(&e->key, key, sizeof(*key)))
			return e;
	}
	return NULL;
}

static void sframe_cache_put(struct sframe_mm *c, const struct sframe_key *key,
			     unsigned int found,
			     const struct unwind_user_tables *t)
{
	struct sframe_entry *e, *lru = NULL;
	unsigned int i;

	spin_lock(&c->lock);
	e = sframe_cache_find(c, key);
	for (i = 0; !e && i < c->nr; i++) {
		if (!lru || c->entries[i].last_used < lru->last_used)
			lru = &c->entries[i];
	}
	if (!e) {
		e = lru;
		if (e->last_used)
			sframe_stat_add(SFRAME_STAT_CACHE_EVICTIONS, 1);
	}
	e->key = *key;
	e->found = found;
	e->t = *t;
	e->last_used = ++c->clock;
	/*
	 * Rows are only used for IPs in a mapping a walk has just matched
	 * against its VMA. A new entry may replace a mapping whose rows are
	 * still here (a library unmapped, another mapped at its address):
	 * forget them all. Entries are only added when a walk meets a
	 * mapping for the first time, which is rare.
	 */
	memset(c->rows, 0, sizeof(c->rows));
	spin_unlock(&c->lock);
}

static struct sframe_row_memo *sframe_row_slot(struct sframe_mm *c,
					       unsigned long ip)
{
	return &c->rows[hash_long(ip, ilog2(SFRAME_MM_ROWS))];
}

/* The rule for @ip if the mm found it recently, in a mapping still valid. */
static bool sframe_row_get(struct sframe_mm *c, unsigned long ip,
			   struct unwind_user_frame *frame)
{
	struct sframe_row_memo *r = sframe_row_slot(c, ip);
	bool hit;

	spin_lock(&c->lock);
	hit = r->ip == ip;
	if (hit)
		*frame = r->frame;
	spin_unlock(&c->lock);
	return hit;
}

static void sframe_row_put(struct sframe_mm *c, unsigned long ip,
			   const struct unwind_user_frame *frame)
{
	struct sframe_row_memo *r = sframe_row_slot(c, ip);

	spin_lock(&c->lock);
	r->ip = ip;
	r->frame = *frame;
	spin_unlock(&c->lock);
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
 * The tables of the mapping @ip is in, into @t: the kinds found (enum
 * unwind_user_type bits, 0 with [*@start, *@end) a range known to have
 * none), or -ENOMEM when it could not be told now.
 */
static int sframe_mm_lookup(unsigned long ip, struct unwind_user_tables *t,
			    unsigned long *start, unsigned long *end)
{
	struct mm_struct *mm = current->mm;
	struct sframe_mm *c = sframe_mm_get(mm);
	struct vm_area_struct *vma;
	struct unwind_probe res;
	struct sframe_entry *e;
	struct sframe_key key;
	struct file *file;
	unsigned long vm_end;
	unsigned int found;
	u64 t0;
	int ret;

	if (!c)
		return -ENOMEM;
	mmap_read_lock(mm);
	vma = vma_lookup(mm, ip);
	if (!vma) {
		mmap_read_unlock(mm);
		*start = ip;
		*end = ip + 1;
		return 0;
	}
	*start = vma->vm_start;
	*end = vm_end = vma->vm_end;
	if (!(vma->vm_flags & VM_EXEC) ||
	    (!vma->vm_file && !unwind_vma_is_vdso(vma))) {
		mmap_read_unlock(mm);
		return 0;
	}

	sframe_key_of(vma, &key);
	spin_lock(&c->lock);
	e = sframe_cache_find(c, &key);
	if (e) {
		e->last_used = ++c->clock;
		found = e->found;
		if (found) {
			*t = e->t;
			t->text_end = vm_end;
			if (found & UNWIND_USER_TYPE_SFRAME)
				t->sframe.text_end = vm_end;
		}
		spin_unlock(&c->lock);
		mmap_read_unlock(mm);
		sframe_stat_add(SFRAME_STAT_CACHE_HITS, 1);
		return found;
	}
	spin_unlock(&c->lock);

	/* Read the file with no lock held: it may take page faults and I/O. */
	file = vma->vm_file ? get_file(vma->vm_file) : NULL;
	mmap_read_unlock(mm);

	t0 = local_clock();
	ret = unwind_tables_probe(file, key.vm_start, key.vm_pgoff, vm_end, t,
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
	sframe_cache_put(c, &key, found, t);
	return found;
}

/* The SFrame rule, counted as SFrame's; -ENOENT lets .eh_frame try. */
static int unwind_tables_sframe(const struct unwind_user_tables *t,
				unsigned long ip,
				struct unwind_user_frame *frame)
{
	int ret = sframe_find(&t->sframe, ip, frame);

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
 * The rule of the tables @t has for @ip: SFrame first, .eh_frame for what
 * it does not cover, each where @methods allows it and its code has the
 * walk's word size @ws (a 64-bit process may map an i386 file).
 */
static int unwind_tables_find(const struct unwind_user_tables *t,
			      unsigned int methods, unsigned int ws,
			      unsigned long ip, struct unwind_user_frame *frame)
{
	int ret = -ENOENT;

	if ((methods & UNWIND_USER_TYPE_SFRAME) && t->sframe.text_end) {
		ret = unwind_tables_sframe(t, ip, frame);
		if (ret != -ENOENT)
			return ret;
	}
#ifdef CONFIG_UNWIND_USER_EH_FRAME
	if ((methods & UNWIND_USER_TYPE_EH_FRAME) && t->eh.table &&
	    t->eh.ws == ws) {
		ret = eh_frame_find(&t->eh, ip, frame);
		if (!ret)
			frame->type = UNWIND_USER_TYPE_EH_FRAME;
		else if (ret == EH_FRAME_OUTERMOST)
			ret = SFRAME_OUTERMOST;
	}
#endif
	return ret;
}

/**
 * unwind_tables_rule - the rule of a user frame by its file's tables
 * @state: the walk, which remembers the last mapping looked up; its
 *	   @available_types says which tables may be used
 * @ip: the address to look up: the interrupted IP (or one a signal frame
 *	saved), or a return address minus one
 * @frame: filled with the rule on success, its @type saying which table
 *	   gave it
 *
 * Finds the tables of the file @ip is mapped from (reading the file's
 * program headers the first time the mm meets it) and looks @ip up in
 * them: SFrame where it covers @ip, else .eh_frame.
 *
 * Context: task context of the walked task, which must not hold its mmap
 * lock; may fault and sleep.
 *
 * Return: 0; %SFRAME_OUTERMOST when the row marks the outermost frame;
 * -ENOENT when no table covers @ip (frame pointers may); -EOPNOTSUPP when
 * the row needs what a walk does not have; -EINVAL for bad data; -EFAULT;
 * -ENOMEM.
 */
int unwind_tables_rule(struct unwind_user_state *state, unsigned long ip,
		       struct unwind_user_frame *frame)
{
	struct unwind_user_tables *t = &state->tables;
	unsigned long start, end;
	struct sframe_mm *c;
	int ret;

	might_fault();
	if (ip >= state->notables_start && ip < state->notables_end)
		return -ENOENT;
	if (state->memo_ip && ip == state->memo_ip) {
		*frame = state->memo;
		return 0;
	}
	if (ip < t->text_start || ip >= t->text_end) {
		ret = sframe_mm_lookup(ip, t, &start, &end);
		if (ret <= 0) {
			t->text_start = 0;
			t->text_end = 0;
			if (!ret) {
				state->notables_start = start;
				state->notables_end = end;
				ret = -ENOENT;
			}
			return ret;
		}
	}

	/* Tables were found, so the mm's cache is set up. */
	c = smp_load_acquire(&current->mm->sframe_cache);
	if (ip && sframe_row_get(c, ip, frame) &&
	    (frame->type & state->available_types)) {
		sframe_stat_add(SFRAME_STAT_ROW_HITS, 1);
		ret = 0;
	} else {
		ret = unwind_tables_find(t, state->available_types, state->ws,
					 ip, frame);
		if (!ret && ip)
			sframe_row_put(c, ip, frame);
	}
	if (!ret) {
		state->memo_ip = ip;
		state->memo = *frame;
	}
	return ret;
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
	unsigned long v;

	if (!c || (READ_ONCE(c->has) & unwind_user_methods()))
		return false;
	v = READ_ONCE(c->verdict);
	return (v & 1) && (v >> 1) == READ_ONCE(c->exec_gen) + 1;
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
	unsigned long starts[SFRAME_MM_CHECK_MAX], start, end, gen;
	struct unwind_user_tables t;
	struct vm_area_struct *vma;
	struct sframe_mm *c;
	unsigned int n = 0, i;
	bool many = false;

	if (!mm)
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
		int ret = sframe_mm_lookup(starts[i], &t, &start, &end);

		/* Tables of a method turned off do not count. */
		if (ret < 0 || (ret & unwind_user_methods()))
			return;
	}
	/* Checked; bit 0 only when every mapping was and none had one. */
	WRITE_ONCE(c->verdict, ((gen + 1) << 1) | (many ? 0 : 1));
}
