/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzz shim: what the table readers take from <linux/kernel.h> and what it
 * pulls in: byte order, pages, alignment, bit operations.
 */
#ifndef _FUZZ_LINUX_KERNEL_H
#define _FUZZ_LINUX_KERNEL_H

#include <stddef.h>
#include <asm/page.h>
#include <linux/align.h>
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/types.h>

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define le16_to_cpu(x)		((u16)(x))
#define le32_to_cpu(x)		((u32)(x))
#define le64_to_cpu(x)		((u64)(x))

#define might_fault()		do { } while (0)

#endif /* _FUZZ_LINUX_KERNEL_H */
