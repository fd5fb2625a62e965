/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The entry context's walk, made at once by try_first.c and kept by the
 * deferral core (deferred.c) for the requests that follow in the same
 * entry context; what the walk for BPF (bpf.c) shares with the core.
 * Internal to kernel/unwind/.
 */
#ifndef _KERNEL_UNWIND_DEFERRED_H
#define _KERNEL_UNWIND_DEFERRED_H

#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/unwind_deferred_types.h>
#include <linux/uprobes.h>
#include <linux/unwind_user_types.h>

/* The per-task cache fills one 4 KiB allocation. */
#define UNWIND_MAX_ENTRIES \
	((SZ_4K - sizeof(struct unwind_cache)) / sizeof(unsigned long))

struct unwind_work;

struct unwind_cache *unwind_deferred_claim(bool predict);
int __unwind_deferred_request(struct unwind_work *work, u64 *cookie,
			      unsigned int max_entries, bool sample);
void __unwind_fixup_uretprobes(struct unwind_stacktrace *trace);
void unwind_deferred_claimed(struct unwind_cache *cache,
			     struct unwind_stacktrace *trace, bool truncated);

/*
 * A pending uretprobe replaces the return address of the function it probes
 * with its trampoline: put the real one back, innermost first, as classic
 * perf callchains do. Inline: every walk asks, few tasks have one.
 */
static __always_inline void
unwind_fixup_uretprobes(struct unwind_stacktrace *trace)
{
#ifdef CONFIG_UPROBES
	struct uprobe_task *utask = current->utask;

	if (unlikely(utask && utask->return_instances))
		__unwind_fixup_uretprobes(trace);
#endif
}

/*
 * Whether the saved user registers are another image's: in execve(), from
 * the switch to the new mm until the binary loader sets the new image's
 * registers, they still describe the old image, and a walk from them would
 * read the old image's stack with the new image's mappings and tables.
 * Context: any context of the current task.
 */
static __always_inline bool unwind_deferred_regs_stale(void)
{
	return READ_ONCE(current->unwind_info.exec_new_mm);
}

#endif /* _KERNEL_UNWIND_DEFERRED_H */
