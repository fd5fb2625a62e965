/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: the lock type of the mm's table (not taken here). */
#ifndef _FUZZ_LINUX_SPINLOCK_H
#define _FUZZ_LINUX_SPINLOCK_H

typedef struct {
	int		locked;
} raw_spinlock_t;

#endif /* _FUZZ_LINUX_SPINLOCK_H */
