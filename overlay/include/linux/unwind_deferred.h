/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_DEFERRED_H
#define _LINUX_UNWIND_DEFERRED_H

#include <linux/list.h>
#include <linux/sched.h>
#include <linux/unwind_deferred_types.h>
#include <linux/unwind_user_types.h>

struct unwind_work;

/**
 * typedef unwind_callback_t - receives a deferred user stack
 * @work: the registered user
 * @trace: the user stack of the entry context (may have nr == 0)
 * @cookie: the cookie unwind_deferred_request() returned for it
 *
 * Called in task context, where it may fault and sleep, once per entry
 * context in which @work asked for the stack. @trace is only valid during
 * the call.
 */
typedef void (*unwind_callback_t)(struct unwind_work *work,
				  struct unwind_stacktrace *trace, u64 cookie);

/**
 * struct unwind_work - a user of deferred unwinding
 * @list: entry in the list of users (private)
 * @func: the callback
 * @bit: the user's bit in the per-task masks, -1 once cancelled (private)
 */
struct unwind_work {
	struct list_head	list;
	unwind_callback_t	func;
	int			bit;
};

#ifdef CONFIG_UNWIND_DEFERRED

int unwind_deferred_init(struct unwind_work *work, unwind_callback_t func);
int unwind_deferred_request_max(struct unwind_work *work, u64 *cookie,
				unsigned int max_entries);
void unwind_deferred_cancel(struct unwind_work *work);
unsigned int unwind_deferred_cached(const unsigned long **entries);
bool unwind_deferred_try_start(struct unwind_user_state *state);
bool unwind_deferred_try_end(const struct unwind_user_state *state);
bool unwind_deferred_walk_now(unsigned int max_entries);

void unwind_task_init(struct task_struct *task);
void unwind_task_free(struct task_struct *task);
void unwind_deferred_task_exit(struct task_struct *task);
void unwind_deferred_exec_begin(void);
void unwind_deferred_exec_end(void);
void unwind_deferred_exec_new_regs(void);
bool __unwind_reset_info(void);

/*
 * unwind_deferred_request - unwind_deferred_request_max() for the whole
 * stack (as many entries as the per-task cache holds).
 */
static inline int unwind_deferred_request(struct unwind_work *work,
					  u64 *cookie)
{
	return unwind_deferred_request_max(work, cookie, UINT_MAX);
}

/*
 * On every return to user space, with interrupts disabled: a new entry
 * context begins, so forget the cookie and the walk. One load when nobody
 * asked for a stack.
 */
static __always_inline void unwind_reset_info(void)
{
	if (unlikely(READ_ONCE(current->unwind_info.mask)))
		__unwind_reset_info();
}

#else /* !CONFIG_UNWIND_DEFERRED */

static inline int unwind_deferred_init(struct unwind_work *work,
				       unwind_callback_t func)
{
	return -EOPNOTSUPP;
}

static inline int unwind_deferred_request_max(struct unwind_work *work,
					      u64 *cookie,
					      unsigned int max_entries)
{
	*cookie = 0;
	return -EOPNOTSUPP;
}

static inline int unwind_deferred_request(struct unwind_work *work,
					  u64 *cookie)
{
	*cookie = 0;
	return -EOPNOTSUPP;
}

static inline void unwind_deferred_cancel(struct unwind_work *work) { }

static inline unsigned int unwind_deferred_cached(const unsigned long **entries)
{
	return 0;
}

static inline bool unwind_deferred_try_start(struct unwind_user_state *state)
{
	return false;
}

static inline bool
unwind_deferred_try_end(const struct unwind_user_state *state)
{
	return false;
}

static inline bool unwind_deferred_walk_now(unsigned int max_entries)
{
	return false;
}

static inline void unwind_task_init(struct task_struct *task) { }
static inline void unwind_task_free(struct task_struct *task) { }
static inline void unwind_deferred_task_exit(struct task_struct *task) { }
static inline void unwind_deferred_exec_begin(void) { }
static inline void unwind_deferred_exec_end(void) { }
static inline void unwind_deferred_exec_new_regs(void) { }
static inline void unwind_reset_info(void) { }

#endif /* CONFIG_UNWIND_DEFERRED */

#endif /* _LINUX_UNWIND_DEFERRED_H */
