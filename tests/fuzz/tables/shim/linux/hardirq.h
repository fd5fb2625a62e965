/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: the harness runs in task context. */
#ifndef _FUZZ_LINUX_HARDIRQ_H
#define _FUZZ_LINUX_HARDIRQ_H

#define in_nmi()		0

#endif /* _FUZZ_LINUX_HARDIRQ_H */
