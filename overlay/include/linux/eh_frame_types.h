/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_EH_FRAME_TYPES_H
#define _LINUX_EH_FRAME_TYPES_H

#include <linux/types.h>

/**
 * struct eh_frame_section - the .eh_frame of a mapped file, in user memory
 * @table: user address of the .eh_frame_hdr search table; 0: no section
 * @hdr: user address of .eh_frame_hdr, which the table's entries are
 *	 relative to
 * @start: the lowest address a CIE or an FDE may have (.eh_frame's start)
 * @end: the end of the segment that holds them
 * @nr_fdes: entries in the search table
 * @ws: the word size of the file's code: 8, or 4 for the i386 code of
 *	compat tasks
 *
 * Everything was read from the file's program headers and its
 * .eh_frame_hdr, which the process owns: the addresses are in range of
 * their segment, nothing more is known of them.
 */
struct eh_frame_section {
	unsigned long	table;
	unsigned long	hdr;
	unsigned long	start;
	unsigned long	end;
	u32		nr_fdes;
	u8		ws;
};

/**
 * struct eh_frame_memo - the CIE a walk's last .eh_frame lookup used
 * @cie: its user address; 0: none
 * @rules: what was read of it and its initial rules, as
 *	   kernel/unwind/eh_frame.c keeps them
 *
 * The FDEs of a file share a few CIEs: a walk that keeps the last one
 * reads and decodes it once, not once per frame. It holds for the tables
 * of one file only: the walk clears it when it takes another file's.
 */
struct eh_frame_memo {
	unsigned long	cie;
	u64		rules[9];
};

#endif /* _LINUX_EH_FRAME_TYPES_H */
