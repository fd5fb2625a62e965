/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: hash_long() of a 64-bit kernel, and ilog2() for its bits. */
#ifndef _FUZZ_LINUX_HASH_H
#define _FUZZ_LINUX_HASH_H

#include <linux/log2.h>
#include <linux/types.h>

#define GOLDEN_RATIO_64		0x61C8864680B583EBull

static inline u32 hash_64(u64 val, unsigned int bits)
{
	return val * GOLDEN_RATIO_64 >> (64 - bits);
}

#define hash_long(val, bits)	hash_64(val, bits)

#endif /* _FUZZ_LINUX_HASH_H */
