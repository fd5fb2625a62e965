/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: the sequence count type of the mm's table (not used here). */
#ifndef _FUZZ_LINUX_SEQLOCK_H
#define _FUZZ_LINUX_SEQLOCK_H

typedef struct {
	unsigned int	sequence;
} seqcount_raw_spinlock_t;

#endif /* _FUZZ_LINUX_SEQLOCK_H */
