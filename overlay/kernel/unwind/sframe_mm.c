// SPDX-License-Identifier: GPL-2.0
/*
 * Find the SFrame section of the file an IP is mapped from, with no help
 * from the program or its libc, and remember it per mm.
 *
 * The first time a walk meets an executable file mapping, the file's ELF
 * and program headers are read (page cache, not user memory), and the one
 * PT_GNU_SFRAME segment, relocated by the mapping's load bias, gives the
 * section's user address. The section is then read where the process maps
 * it, with the same fault-tolerant accessors as the stack: it costs no
 * kernel memory per library.
 *
 * Each mm keeps a small table of what was found, "nothing" included, keyed
 * by the mapping's start and file offset and by the file's identity (not a
 * pointer to it). An entry is only used after the IP's VMA, looked up under
 * the mmap lock, has matched it; so a library unmapped, moved, or replaced
 * by another at the same address simply misses, with no hook in munmap or
 * mremap. A walk checks each mapping once (struct unwind_user_state keeps
 * the last one), and user memory and files are read with no lock held.
 *
 * Context: task context of the walked task, where page faults may be taken.
 */
#include <linux/elf.h>
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

#include "stats.h"

/* The program header of an SFrame section (not in 6.12's uapi elf.h). */
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		(PT_LOOS + 0x474e554)
#endif

/* The most program headers read from a file. */
#define SFRAME_MAX_PHDRS	128

/*
 * The table of one mm: the rows of the return addresses met most recently,
 * then as many sections as fit in this many bytes.
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
	bool			found;		/* false: the file has none */
	struct sframe_section	sec;
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
 * bit 0 set when none of them had a section; @has_sframe is set once any
 * section was found, for the life of the mm. These three are read without
 * the lock, also from NMI.
 */
struct sframe_mm {
	unsigned long		exec_gen;
	unsigned long		verdict;
	bool			has_sframe;
	spinlock_t		lock;		/* protects all below */
	u64			clock;
	unsigned int		nr;
	struct sframe_row_memo	rows[SFRAME_MM_ROWS];
	struct sframe_entry	entries[];
};

/* Room for the sections of a program, ld.so, libc and a dozen more. */
static_assert(sizeof(struct sframe_mm) + 16 * sizeof(struct sframe_entry) <=
	      SFRAME_MM_BYTES);

/**
 * sframe_count_frame - count a frame a walk found
 * @by_sframe: the SFrame table gave it, else frame pointers did
 *
 * Context: any; called by the walker of a task that may use SFrame.
 */
void sframe_count_frame(bool by_sframe)
{
	sframe_stat_add(by_sframe ? SFRAME_STAT_FRAMES :
				    SFRAME_STAT_FP_FRAMES, 1);
}

/**
 * sframe_counters_show - print the SFrame counters, one "name value" a line
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
}

/**
 * sframe_mm_free - free what an mm remembers of SFrame sections
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

static void sframe_key_of(struct vm_area_struct *vma, struct sframe_key *key)
{
	struct inode *inode = file_inode(vma->vm_file);
	struct timespec64 ctime = inode_get_ctime(inode);

	memset(key, 0, sizeof(*key));
	key->vm_start = vma->vm_start;
	key->vm_pgoff = vma->vm_pgoff;
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
			     bool found, const struct sframe_section *sec)
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
	if (found)
		e->sec = *sec;
	e->last_used = ++c->clock;
	/*
	 * Rows are only used for IPs in a section a walk has just matched
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

/* The rule for @ip if the mm found it recently, in a section still valid. */
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

/*
 * Read @file's program headers and set @sec up from its PT_GNU_SFRAME
 * segment, relocated for the mapping @key describes. -ENOENT when the file
 * has no section; the errors of sframe_section_init() when it has a bad
 * one.
 */
static int sframe_probe(struct file *file, const struct sframe_key *key,
			unsigned long vm_end, struct sframe_section *sec)
{
	const struct elf64_phdr *text = NULL, *sf = NULL;
	unsigned long off, bias;
	struct elf64_hdr eh;
	struct elf64_phdr *ph;
	loff_t pos = 0;
	size_t len;
	int i, ret;

	if (!(file->f_mode & FMODE_READ) || !S_ISREG(file_inode(file)->i_mode))
		return -ENOENT;
	if (key->vm_pgoff > ULONG_MAX >> PAGE_SHIFT)
		return -ENOENT;
	off = key->vm_pgoff << PAGE_SHIFT;

	if (kernel_read(file, &eh, sizeof(eh), &pos) != sizeof(eh))
		return -ENOENT;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != ELF_ARCH ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_phentsize != sizeof(*ph) || !eh.e_phnum ||
	    eh.e_phnum > SFRAME_MAX_PHDRS)
		return -ENOENT;

	len = eh.e_phnum * sizeof(*ph);
	ph = kmalloc(len, GFP_KERNEL);
	if (!ph)
		return -ENOMEM;
	pos = eh.e_phoff;
	if (pos < 0 || kernel_read(file, ph, len, &pos) != len) {
		ret = -ENOENT;
		goto out;
	}

	for (i = 0; i < eh.e_phnum; i++) {
		const struct elf64_phdr *p = &ph[i];
		u64 seg = p->p_offset & PAGE_MASK;

		if (p->p_type == PT_GNU_SFRAME) {
			if (sf) {
				ret = -EINVAL;
				goto out;
			}
			sf = p;
		}
		/* The executable segment this mapping's file offset is in. */
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && !text &&
		    seg <= off && off - seg < p->p_filesz + (p->p_offset - seg))
			text = p;
	}
	if (!sf || !text) {
		ret = -ENOENT;
		goto out;
	}

	/* Where file offset p_offset, at p_vaddr in the file, is mapped. */
	bias = key->vm_start + text->p_offset - off - text->p_vaddr;
	ret = sframe_section_init(sec, sf->p_vaddr + bias, sf->p_memsz,
				  key->vm_start, vm_end);
out:
	kfree(ph);
	return ret;
}

/*
 * The SFrame section of the mapping @ip is in, into @sec: 0 when there is
 * one, -ENOENT with [*@start, *@end) a range known to have none, or
 * -ENOMEM when it could not be told now.
 */
static int sframe_mm_lookup(unsigned long ip, struct sframe_section *sec,
			    unsigned long *start, unsigned long *end)
{
	struct mm_struct *mm = current->mm;
	struct sframe_mm *c = sframe_mm_get(mm);
	struct vm_area_struct *vma;
	struct sframe_entry *e;
	struct sframe_key key;
	struct file *file;
	unsigned long vm_end;
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
		return -ENOENT;
	}
	*start = vma->vm_start;
	*end = vm_end = vma->vm_end;
	if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file) {
		mmap_read_unlock(mm);
		return -ENOENT;
	}

	sframe_key_of(vma, &key);
	spin_lock(&c->lock);
	e = sframe_cache_find(c, &key);
	if (e) {
		e->last_used = ++c->clock;
		ret = e->found ? 0 : -ENOENT;
		if (e->found) {
			*sec = e->sec;
			sec->text_end = vm_end;
		}
		spin_unlock(&c->lock);
		mmap_read_unlock(mm);
		sframe_stat_add(SFRAME_STAT_CACHE_HITS, 1);
		return ret;
	}
	spin_unlock(&c->lock);

	/* Read the file with no lock held: it may take page faults and I/O. */
	file = get_file(vma->vm_file);
	mmap_read_unlock(mm);

	t0 = local_clock();
	ret = sframe_probe(file, &key, vm_end, sec);
	fput(file);
	sframe_stat_add(SFRAME_STAT_PROBE_NS, local_clock() - t0);
	sframe_stat_add(SFRAME_STAT_FILES_PROBED, 1);

	switch (ret) {
	case 0:
		sframe_stat_add(SFRAME_STAT_SECTIONS, 1);
		WRITE_ONCE(c->has_sframe, true);
		break;
	case -ENOMEM:
		return ret;	/* not the file's fault: ask again next time */
	case -ENOENT:
		break;
	case -EPROTONOSUPPORT:
		sframe_stat_add(SFRAME_STAT_REFUSED, 1);
		ret = -ENOENT;
		break;
	default:
		sframe_stat_add(SFRAME_STAT_BAD_SECTIONS, 1);
		ret = -ENOENT;
		break;
	}
	sframe_cache_put(c, &key, !ret, sec);
	return ret;
}

/**
 * sframe_state_find - the SFrame rule for a frame of the current task
 * @state: the walk, which remembers the last mapping looked up
 * @ip: the address to look up (see sframe_find())
 * @frame: filled with the rule on success
 *
 * Finds the section of the file @ip is mapped from (reading the file the
 * first time the mm meets it) and looks @ip up in it.
 *
 * Context: task context of the walked task, which must not hold its mmap
 * lock; may fault and sleep.
 *
 * Return: as sframe_find(), and -ENOENT when @ip's mapping has no section,
 * -ENOMEM.
 */
int sframe_state_find(struct unwind_user_state *state, unsigned long ip,
		      struct unwind_user_frame *frame)
{
	struct sframe_section *sec = &state->sframe;
	unsigned long start, end;
	struct sframe_mm *c;
	int ret;

	if (ip >= state->nosframe_start && ip < state->nosframe_end)
		return -ENOENT;
	if (state->sframe_memo_ip && ip == state->sframe_memo_ip) {
		*frame = state->sframe_memo;
		return 0;
	}
	if (ip < sec->text_start || ip >= sec->text_end) {
		ret = sframe_mm_lookup(ip, sec, &start, &end);
		if (ret) {
			sec->text_start = 0;
			sec->text_end = 0;
			if (ret == -ENOENT) {
				state->nosframe_start = start;
				state->nosframe_end = end;
			}
			return ret;
		}
	}

	/* A section was found, so the table is set up. */
	c = smp_load_acquire(&current->mm->sframe_cache);
	if (ip && sframe_row_get(c, ip, frame)) {
		sframe_stat_add(SFRAME_STAT_ROW_HITS, 1);
		ret = 0;
	} else {
		ret = sframe_find(sec, ip, frame);
		if (!ret && ip)
			sframe_row_put(c, ip, frame);
	}
	switch (ret) {
	case 0:
		state->sframe_memo_ip = ip;
		state->sframe_memo = *frame;
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

/**
 * sframe_mm_exec_mapped - note a mapping that may be a new executable file
 * @vma: a mapping mmap() made or mprotect() changed, with its mm's mmap lock
 *	 held for writing
 *
 * A file mapped executable since the last check may have a section, so the
 * mm is no longer known to have none.
 */
void sframe_mm_exec_mapped(struct vm_area_struct *vma)
{
	struct sframe_mm *c = vma->vm_mm->sframe_cache;

	if (c && (vma->vm_flags & VM_EXEC) && vma->vm_file)
		WRITE_ONCE(c->exec_gen, c->exec_gen + 1);
}

/**
 * sframe_mm_fp_only - is the mm known to have no SFrame section?
 * @mm: the current task's mm
 *
 * Context: any, NMI included; reads three words and takes no lock.
 *
 * Return: true when every file the mm maps executable was checked and none
 * has a section, and the mm never had one: a walk by frame pointers alone
 * then gives exactly what a walk that may use SFrame gives.
 */
bool sframe_mm_fp_only(struct mm_struct *mm)
{
	/* Pairs with the cmpxchg_release() that set the table up. */
	struct sframe_mm *c = smp_load_acquire(&mm->sframe_cache);
	unsigned long v;

	if (!c || READ_ONCE(c->has_sframe))
		return false;
	v = READ_ONCE(c->verdict);
	return (v & 1) && (v >> 1) == READ_ONCE(c->exec_gen) + 1;
}

/**
 * sframe_mm_settle - find out whether the current mm has SFrame sections
 *
 * Once per new executable file mapping, checks every executable file
 * mapping of the current mm for a section (reading the headers of files
 * not seen before, as a walk does), so that sframe_mm_fp_only() can tell.
 * An mm with more than %SFRAME_MM_CHECK_MAX such mappings, or a check that
 * could not allocate, gets no verdict: it is walked as before.
 *
 * Context: task context of the current task, which must not hold its mmap
 * lock; may fault and sleep.
 */
void sframe_mm_settle(void)
{
	struct mm_struct *mm = current->mm;
	unsigned long starts[SFRAME_MM_CHECK_MAX], start, end, gen;
	struct sframe_section sec;
	struct vm_area_struct *vma;
	struct sframe_mm *c;
	unsigned int n = 0, i;
	bool many = false;

	if (!mm)
		return;
	c = sframe_mm_get(mm);
	if (!c || READ_ONCE(c->has_sframe) ||
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
		switch (sframe_mm_lookup(starts[i], &sec, &start, &end)) {
		case 0:		/* sets has_sframe */
			return;
		case -ENOMEM:
			return;
		}
	}
	/* Checked; bit 0 only when every mapping was and none had one. */
	WRITE_ONCE(c->verdict, ((gen + 1) << 1) | (many ? 0 : 1));
}
