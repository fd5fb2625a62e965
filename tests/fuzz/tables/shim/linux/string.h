/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: the kernel's string functions are the C library's. */
#ifndef _FUZZ_LINUX_STRING_H
#define _FUZZ_LINUX_STRING_H

#include <string.h>

#endif /* _FUZZ_LINUX_STRING_H */
