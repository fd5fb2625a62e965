/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding a file's unwind tables (probe.c) for the per-mm cache and the
 * walker's rule lookup (tables.c). Internal to kernel/unwind/.
 */
#ifndef _KERNEL_UNWIND_TABLES_H
#define _KERNEL_UNWIND_TABLES_H

#include <linux/fs.h>
#include <linux/unwind_user_types.h>

/**
 * struct unwind_probe - what the program headers of a mapped file gave
 * @sframe: 0 when its SFrame section was set up; -ENOENT: it has none;
 *	    else the error of sframe_section_init()
 * @eh_frame: 0 when its .eh_frame was set up; -ENOENT: it has none (or
 *	      the method is not built); else the error of
 *	      eh_frame_section_init()
 */
struct unwind_probe {
	int	sframe;
	int	eh_frame;
};

int unwind_tables_probe(struct file *file, unsigned long vm_start,
			unsigned long vm_pgoff, unsigned long vm_end,
			struct unwind_user_tables *t, struct unwind_probe *res);

#endif /* _KERNEL_UNWIND_TABLES_H */
