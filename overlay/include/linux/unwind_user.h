/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_USER_H
#define _LINUX_UNWIND_USER_H

#include <linux/unwind_user_types.h>

#ifdef CONFIG_UNWIND_USER

#include <asm/unwind_user.h>

void unwind_user_save_regs(struct unwind_user_regs *regs);
int unwind_user_start(struct unwind_user_state *state,
		      const struct unwind_user_regs *from);
int unwind_user_next(struct unwind_user_state *state);
int unwind_user_walk(struct unwind_user_state *state,
		     struct unwind_stacktrace *trace, unsigned int max_entries);
int unwind_user(struct unwind_stacktrace *trace, unsigned int max_entries,
		const struct unwind_user_regs *from);

#else /* !CONFIG_UNWIND_USER */

static inline void unwind_user_save_regs(struct unwind_user_regs *regs)
{
}

static inline int unwind_user(struct unwind_stacktrace *trace,
			      unsigned int max_entries,
			      const struct unwind_user_regs *from)
{
	trace->nr = 0;
	return -EOPNOTSUPP;
}

#endif /* CONFIG_UNWIND_USER */

#endif /* _LINUX_UNWIND_USER_H */
