/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: the sizes the table readers use. */
#ifndef _FUZZ_LINUX_SIZES_H
#define _FUZZ_LINUX_SIZES_H

#define SZ_4K		0x00001000
#define SZ_8K		0x00002000
#define SZ_64K		0x00010000
#define SZ_1G		0x40000000

#endif /* _FUZZ_LINUX_SIZES_H */
