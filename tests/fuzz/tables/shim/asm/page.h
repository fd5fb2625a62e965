/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: x86_64's pages and the user address limit (4-level tables). */
#ifndef _FUZZ_ASM_PAGE_H
#define _FUZZ_ASM_PAGE_H

#define PAGE_SIZE		4096UL
#define PAGE_MASK		(~(PAGE_SIZE - 1))
#define TASK_SIZE_MAX		((1UL << 47) - PAGE_SIZE)

#endif /* _FUZZ_ASM_PAGE_H */
