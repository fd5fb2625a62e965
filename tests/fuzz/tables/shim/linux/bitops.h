/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: the bit operations the table readers use, as the kernel's. */
#ifndef _FUZZ_LINUX_BITOPS_H
#define _FUZZ_LINUX_BITOPS_H

#include <linux/bits.h>
#include <linux/types.h>

/* The last set bit, from 1; 0 for none. */
static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

/* Sign-extend the value from bit @index, as the kernel does. */
static inline s32 sign_extend32(u32 value, int index)
{
	u8 shift = 31 - index;

	return (s32)(value << shift) >> shift;
}

#endif /* _FUZZ_LINUX_BITOPS_H */
