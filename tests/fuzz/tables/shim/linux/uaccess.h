/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzz shim: user memory is a fake address space (fuzz_tables.c) that
 * holds the fuzz input at a fixed user address. A read of any byte outside
 * it fails as a fault does; the harness also checks that every read is
 * made inside a user access section and inside the range the reader may
 * read, and that the sections are balanced.
 */
#ifndef _FUZZ_LINUX_UACCESS_H
#define _FUZZ_LINUX_UACCESS_H

#include <linux/kernel.h>
#include <linux/types.h>

bool fuzz_access_ok(unsigned long addr, unsigned long size);
bool fuzz_user_access_begin(unsigned long addr, unsigned long size);
void fuzz_user_access_end(void);
bool fuzz_get_user(u64 *val, unsigned long addr, unsigned int size);

#define access_ok(p, n)		fuzz_access_ok((unsigned long)(p), (n))
#define user_read_access_begin(p, n) \
	fuzz_user_access_begin((unsigned long)(p), (n))
#define user_read_access_end()	fuzz_user_access_end()
/* x86_64's: an address past the user limit becomes one that faults. */
#define mask_user_address(p) \
	((__typeof__(p))((unsigned long)(p) > TASK_SIZE_MAX ? ~0UL : \
			 (unsigned long)(p)))
#define can_do_masked_user_access()	1
#define barrier_nospec()	do { } while (0)

#define unsafe_get_user(x, ptr, label) do {				\
	u64 __gu_val;							\
									\
	if (!fuzz_get_user(&__gu_val, (unsigned long)(ptr),		\
			   sizeof(*(ptr))))				\
		goto label;						\
	(x) = (__typeof__(*(ptr)))__gu_val;				\
} while (0)

#endif /* _FUZZ_LINUX_UACCESS_H */
