/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The entry context's walk, made at once by try_first.c and kept by the
 * deferral core (deferred.c) for the requests that follow in the same
 * entry context; what the walk for BPF (bpf.c) shares with the core.
 * Internal to kernel/unwind/.
 */
#ifndef _KERNEL_UNWIND_DEFERRED_H
#define _KERNEL_UNWIND_DEFERRED_H

#include <linux/sizes.h>
#include <linux/unwind_deferred_types.h>
#include <linux/unwind_user_types.h>

/* The per-task cache fills one 4 KiB allocation. */
#define UNWIND_MAX_ENTRIES \
	((SZ_4K - sizeof(struct unwind_cache)) / sizeof(unsigned long))

struct unwind_work;

struct unwind_cache *unwind_deferred_claim(bool predict);
int __unwind_deferred_request(struct unwind_work *work, u64 *cookie,
			      unsigned int max_entries, bool sample);
void unwind_fixup_uretprobes(struct unwind_stacktrace *trace);
bool unwind_deferred_regs_stale(void);
void unwind_deferred_claimed(struct unwind_cache *cache,
			     struct unwind_stacktrace *trace, bool truncated);

#endif /* _KERNEL_UNWIND_DEFERRED_H */
