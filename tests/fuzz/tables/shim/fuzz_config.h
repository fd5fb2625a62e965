/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzz shim: the configuration the table readers are built for, included
 * first in every file (as the kernel's autoconf.h is): x86_64 with SFrame,
 * .eh_frame and ia32 compat code.
 */
#ifndef _FUZZ_CONFIG_H
#define _FUZZ_CONFIG_H

#define CONFIG_64BIT			1
#define CONFIG_X86_64			1
#define CONFIG_UNWIND_USER		1
#define CONFIG_UNWIND_USER_SFRAME	1
#define CONFIG_UNWIND_USER_EH_FRAME	1

#endif /* _FUZZ_CONFIG_H */
