/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: bit masks. */
#ifndef _FUZZ_LINUX_BITS_H
#define _FUZZ_LINUX_BITS_H

#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))
#define BITS_PER_BYTE		8
#define BITS_PER_LONG		64

#endif /* _FUZZ_LINUX_BITS_H */
