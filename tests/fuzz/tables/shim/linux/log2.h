/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: ilog2() of a non-zero value. */
#ifndef _FUZZ_LINUX_LOG2_H
#define _FUZZ_LINUX_LOG2_H

#define ilog2(n)	((int)(63 - __builtin_clzll((unsigned long long)(n))))

#endif /* _FUZZ_LINUX_LOG2_H */
