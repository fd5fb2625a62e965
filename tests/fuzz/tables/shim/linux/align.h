/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: ALIGN() to a power of two. */
#ifndef _FUZZ_LINUX_ALIGN_H
#define _FUZZ_LINUX_ALIGN_H

#define ALIGN(x, a)	__ALIGN_MASK(x, (__typeof__(x))(a) - 1)
#define __ALIGN_MASK(x, mask)	(((x) + (mask)) & ~(mask))

#endif /* _FUZZ_LINUX_ALIGN_H */
