/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_SFRAME_TYPES_H
#define _LINUX_SFRAME_TYPES_H

#include <linux/types.h>

/**
 * struct sframe_section - an SFrame section of a mapped file, in user memory
 * @text_start: start of the executable mapping the section describes
 * @text_end: end of that mapping; @text_start == @text_end: no section
 * @fdes: user address of the function descriptor index
 * @fres: user address of the frame row entry (FRE) area
 * @fres_end: end of the FRE area
 * @nr_fdes: entries in the function descriptor index
 * @ra_off: where the return address is saved, from the CFA
 *
 * Everything but @text_start and @text_end was read from the section's
 * header, which the process owns: the addresses are in range of the
 * section, nothing more is known of them.
 */
struct sframe_section {
	unsigned long	text_start;
	unsigned long	text_end;
	unsigned long	fdes;
	unsigned long	fres;
	unsigned long	fres_end;
	u32		nr_fdes;
	s8		ra_off;
};

#endif /* _LINUX_SFRAME_TYPES_H */
