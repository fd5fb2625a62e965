/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzz shim: the kernel's integer types on top of the C library's (its
 * dev_t and friends stay the library's, so that both can be included),
 * and the errno values, which every kernel header brings in somehow (the
 * C library's are the kernel's on x86).
 */
#ifndef _FUZZ_LINUX_TYPES_H
#define _FUZZ_LINUX_TYPES_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/compiler.h>

typedef uint8_t		u8;
typedef uint16_t	u16;
typedef uint32_t	u32;
typedef uint64_t	u64;
typedef int8_t		s8;
typedef int16_t		s16;
typedef int32_t		s32;
typedef int64_t		s64;
typedef u16		__le16;
typedef u32		__le32;
typedef u64		__le64;
typedef s64		time64_t;

#endif /* _FUZZ_LINUX_TYPES_H */
