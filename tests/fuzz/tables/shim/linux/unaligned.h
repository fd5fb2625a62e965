/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: unaligned little-endian loads and stores, by memcpy(). */
#ifndef _FUZZ_LINUX_UNALIGNED_H
#define _FUZZ_LINUX_UNALIGNED_H

#include <string.h>
#include <linux/types.h>

static inline u16 get_unaligned_le16(const void *p)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline u32 get_unaligned_le32(const void *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline u64 get_unaligned_le64(const void *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#define put_unaligned(val, p) do {					\
	__typeof__(*(p)) __pu_v = (val);				\
	memcpy((p), &__pu_v, sizeof(__pu_v));				\
} while (0)

#endif /* _FUZZ_LINUX_UNALIGNED_H */
