/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_USER_H
#define _LINUX_UNWIND_USER_H

#include <linux/unwind_user_types.h>

#ifdef CONFIG_UNWIND_USER

#include <asm/unwind_user.h>

int unwind_user_start(struct unwind_user_state *state);
int unwind_user_next(struct unwind_user_state *state);
int unwind_user(struct unwind_stacktrace *trace, unsigned int max_entries);

#else /* !CONFIG_UNWIND_USER */

static inline int unwind_user(struct unwind_stacktrace *trace,
			      unsigned int max_entries)
{
	trace->nr = 0;
	return -EOPNOTSUPP;
}

#endif /* CONFIG_UNWIND_USER */

#endif /* _LINUX_UNWIND_USER_H */
