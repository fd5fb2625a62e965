/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzz shim: x86_64's pages and the user address limit (4-level tables);
 * i386's limit for harness/fuzz's -m32 build, made only for the .eh_frame
 * of its code (a seed), where 1UL << 47 would not fit a long.
 */
#ifndef _FUZZ_ASM_PAGE_H
#define _FUZZ_ASM_PAGE_H

#define PAGE_SIZE		4096UL
#define PAGE_MASK		(~(PAGE_SIZE - 1))
#ifdef __x86_64__
#define TASK_SIZE_MAX		((1UL << 47) - PAGE_SIZE)
#else
#define TASK_SIZE_MAX		0xc0000000UL
#endif

#endif /* _FUZZ_ASM_PAGE_H */
