/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: an mm is its unwind table cache. */
#ifndef _FUZZ_LINUX_MM_TYPES_H
#define _FUZZ_LINUX_MM_TYPES_H

struct sframe_mm;
struct vm_area_struct;

struct mm_struct {
	struct sframe_mm	*sframe_cache;
	unsigned int		unwind_text_seq;
	unsigned int		unwind_text_gen;
};

#endif /* _FUZZ_LINUX_MM_TYPES_H */
