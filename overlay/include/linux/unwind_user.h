/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_USER_H
#define _LINUX_UNWIND_USER_H

#include <linux/compiler.h>
#include <linux/unwind_user_types.h>

#ifdef CONFIG_UNWIND_USER

#include <asm/unwind_user.h>

#ifndef arch_unwind_user_bx
/* No base register that .eh_frame rules may keep the CFA in. */
static inline unsigned long arch_unwind_user_bx(struct pt_regs *regs)
{
	return 0;
}
#endif

#ifndef arch_unwind_user_reg
/* No general register that .eh_frame rules may keep the CFA in. */
static __always_inline bool arch_unwind_user_reg(const struct pt_regs *regs,
						 unsigned int regno,
						 unsigned int ws,
						 unsigned long *val)
{
	return false;
}
#endif

/* The methods a walk may use: frame pointers and the tables. */
#define UNWIND_USER_TYPES_TABLES	(UNWIND_USER_TYPE_SFRAME | \
					 UNWIND_USER_TYPE_EH_FRAME)

/*
 * The table methods a walk of a task whose stack words are @ws bytes may
 * use: SFrame has no ABI for compat tasks, .eh_frame serves both.
 */
static inline unsigned int unwind_user_table_types(unsigned int ws)
{
	return ws == sizeof(long) ? UNWIND_USER_TYPES_TABLES :
				    UNWIND_USER_TYPE_EH_FRAME;
}

extern unsigned int unwind_user_enabled;

/**
 * unwind_user_methods - the methods user stack walks may use
 *
 * Context: any.
 *
 * Return: the enum unwind_user_type bits of the methods built in and
 * turned on (kernel/unwind/methods.c).
 */
static inline unsigned int unwind_user_methods(void)
{
	return READ_ONCE(unwind_user_enabled);
}

unsigned int unwind_user_methods_built(void);
int unwind_user_set_methods(unsigned int methods);
unsigned int unwind_user_work_budget(void);
int unwind_user_set_work_budget(unsigned int budget);
unsigned int unwind_user_interrupt_budget(void);
int unwind_user_set_interrupt_budget(unsigned int budget);
bool unwind_user_start_nofault(struct unwind_user_state *state);
bool unwind_user_end_nofault(const struct unwind_user_state *state);
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

/* The walk for BPF's stack helpers (kernel/unwind/bpf.c). */
#ifdef CONFIG_UNWIND_USER_BPF

bool unwind_user_bpf_enabled(void);
void unwind_user_bpf_set(bool on);
int unwind_user_bpf(struct unwind_stacktrace *trace, unsigned int max_entries,
		    unsigned int skip, bool may_fault);

#else /* !CONFIG_UNWIND_USER_BPF */

static inline bool unwind_user_bpf_enabled(void)
{
	return false;
}

static inline int unwind_user_bpf(struct unwind_stacktrace *trace,
				  unsigned int max_entries, unsigned int skip,
				  bool may_fault)
{
	trace->nr = 0;
	return -EOPNOTSUPP;
}

#endif /* CONFIG_UNWIND_USER_BPF */

#endif /* _LINUX_UNWIND_USER_H */
