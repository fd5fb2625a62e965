/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_DEFERRED_TYPES_H
#define _LINUX_UNWIND_DEFERRED_TYPES_H

#include <linux/types.h>
#include <linux/unwind_user_types.h>

/**
 * struct unwind_cache - the user stack of the current entry context
 * @nr_entries: entries stored
 * @valid: @entries hold this entry context's walk
 * @truncated: the walk stopped at its entry limit with frames left
 * @entries: the walk, innermost first
 */
struct unwind_cache {
	unsigned int		nr_entries;
	bool			valid;
	bool			truncated;
	unsigned long		entries[];
};

/**
 * struct unwind_task_info - per-task deferred unwind state
 * @mask: bits of the users that asked for this entry context, plus the
 *	  core's own PENDING, RESET, USED, SAMPLED and MANY bits
 *	  (kernel/unwind/deferred.c); changed with atomic ops, also from NMI
 * @done: users whose callback already ran in this entry context
 * @cookie: the cookie of this entry context, 0 until the first request
 * @regs: the user state at the first request, where the walk starts
 * @max_entries: the most entries any request of this entry context needs
 * @in_exec: in execve(), between unwind_deferred_exec_begin() and _end()
 * @exec_new_mm: in execve(), the new mm in place and the saved user
 *		 registers still the old image's, until
 *		 unwind_deferred_exec_new_regs()
 * @time_walk: a request of this entry context came from NMI: the walk is
 *	       timed for the requester's sample-time throttle
 * @many_score: 0 to 3, higher the more of the task's recent entry contexts
 *		had more than one sample (kernel/unwind/deferred.c)
 * @cache: the walk, allocated on the task's first walk
 * @work: the task work that walks the stack and runs the callbacks
 */
struct unwind_task_info {
	unsigned long		mask;
	unsigned long		done;
	u64			cookie;
	struct unwind_user_regs	regs;
	unsigned int		max_entries;
	bool			in_exec;
	bool			exec_new_mm;
	bool			time_walk;
	u8			many_score;
	struct unwind_cache	*cache;
	struct callback_head	work;
};

#endif /* _LINUX_UNWIND_DEFERRED_TYPES_H */
