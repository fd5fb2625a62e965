/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_SFRAME_H
#define _LINUX_SFRAME_H

#include <linux/mm_types.h>
#include <linux/sframe_types.h>
#include <linux/unwind_user_types.h>

struct seq_file;

/* sframe_find(): the row says this is the outermost frame. */
#define SFRAME_OUTERMOST	1

/*
 * The addresses [@start, @end) one row of a table covers: every IP there
 * has the rule the row gives (sframe_find(), eh_frame_find()).
 */
struct unwind_row_span {
	unsigned long	start;
	unsigned long	end;
};

#ifdef CONFIG_UNWIND_USER_SFRAME

int sframe_section_init(struct sframe_section *sec, unsigned long addr,
			unsigned long size, unsigned long text_start,
			unsigned long text_end);
int sframe_find(const struct sframe_section *sec, unsigned long ip,
		struct unwind_user_frame *frame, struct unwind_row_span *span,
		unsigned int *budget);

/* The rules of the walker's tables and their per-mm cache (tables.c). */
int unwind_tables_rule(struct unwind_user_state *state, unsigned long ip,
		       struct unwind_user_frame *frame);
void unwind_tables_count_frame(const struct unwind_user_frame *frame);
void sframe_counters_show(struct seq_file *m);
void sframe_mm_free(struct mm_struct *mm);
void sframe_mm_exec_mapped(struct vm_area_struct *vma);
bool sframe_mm_fp_only(struct mm_struct *mm);
void sframe_mm_settle(void);
bool unwind_tables_seq_valid(unsigned int seq);

/* A new mm (exec, fork) finds its own sections. */
static inline void sframe_mm_init(struct mm_struct *mm)
{
	mm->sframe_cache = NULL;
}

#else /* !CONFIG_UNWIND_USER_SFRAME */

static inline void sframe_counters_show(struct seq_file *m)
{
}

static inline void sframe_mm_free(struct mm_struct *mm)
{
}

static inline void sframe_mm_exec_mapped(struct vm_area_struct *vma)
{
}

/* Without SFrame support every walk is by frame pointers. */
static inline bool sframe_mm_fp_only(struct mm_struct *mm)
{
	return true;
}

static inline void sframe_mm_settle(void)
{
}

static inline void sframe_mm_init(struct mm_struct *mm)
{
}

#endif /* CONFIG_UNWIND_USER_SFRAME */

#endif /* _LINUX_SFRAME_H */
