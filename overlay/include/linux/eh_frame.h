/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_EH_FRAME_H
#define _LINUX_EH_FRAME_H

#include <linux/eh_frame_types.h>
#include <linux/unwind_user_types.h>

struct seq_file;
struct unwind_row_span;

/* eh_frame_find(): the row says this is the outermost frame. */
#define EH_FRAME_OUTERMOST	1
/* eh_frame_find(): no FDE covers the IP, but FDEs follow and precede it. */
#define EH_FRAME_NO_ROW		2

#ifdef CONFIG_UNWIND_USER_EH_FRAME

int eh_frame_section_init(struct eh_frame_section *sec, unsigned long hdr,
			  unsigned long size, unsigned long seg_start,
			  unsigned long seg_end, unsigned int ws);
int eh_frame_find(const struct eh_frame_section *sec,
		  struct eh_frame_memo *memo, unsigned long ip,
		  struct unwind_user_frame *frame, struct unwind_row_span *span,
		  unsigned int *budget);
void eh_frame_count_frame(bool signal);
void eh_frame_count_frames(unsigned int nr);
void eh_frame_counters_show(struct seq_file *m);

#else /* !CONFIG_UNWIND_USER_EH_FRAME */

static inline void eh_frame_counters_show(struct seq_file *m)
{
}

#endif /* CONFIG_UNWIND_USER_EH_FRAME */

#endif /* _LINUX_EH_FRAME_H */
