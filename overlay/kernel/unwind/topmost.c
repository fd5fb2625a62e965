// SPDX-License-Identifier: GPL-2.0
/*
 * The interrupted user frame by frame pointers: an interrupt may stop a
 * function before its prologue has set up its frame pointer, or after its
 * epilogue has popped it. The text around the IP says which, as the
 * architecture reads it (arch_unwind_user_fp_prologue()); a uprobe's
 * single-stepped copy, or in its handler the instruction the uprobe
 * keeps, stands for the probed instruction.
 */
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>
#include <linux/uprobes.h>

#include "user.h"

/*
 * Read @len bytes of user text at @addr; true when all of them were read.
 * A few bytes: loaded one by one in a user access section, cheaper than a
 * string copy. Without faults, a page that is not resident fails the read.
 */
static bool unwind_user_read_text(u8 *dst, unsigned long addr,
				  unsigned int len, bool may_fault)
{
	const u8 __user *src = (const u8 __user *)addr;
	bool ok = false;
	unsigned int i;

	if (!len)
		return true;
	if (!may_fault)
		pagefault_disable();
	if (!user_read_access_begin(src, len))
		goto out;
	for (i = 0; i < len; i++)
		unsafe_get_user(dst[i], src + i, end);
	ok = true;
end:
	user_read_access_end();
out:
	if (!may_fault)
		pagefault_enable();
	return ok;
}

/**
 * unwind_user_text_ip - the address of the text a frame stopped at
 * @ip: the frame's IP
 * @xol: set to the address of the uprobes out-of-line copy, or 0
 *
 * A task that
 * single-steps a uprobe's probed instruction out of line is at a copy of it
 * in the uprobes XOL area, or (when the walk starts from the state its
 * uprobe handler saw) at the probed address: its frame is that of the
 * probed address, whose text holds the breakpoint in place of the
 * instruction's first byte, which the copy still has. *@xol is then the
 * copy's address, else 0.
 *
 * Context: task, IRQ or NMI context of the current task.
 *
 * Return: @ip, or the probed address a uprobe's copy stands for.
 */
unsigned long unwind_user_text_ip(unsigned long ip, unsigned long *xol)
{
#ifdef CONFIG_UPROBES
	struct uprobe_task *utask = READ_ONCE(current->utask);

	if (utask && READ_ONCE(utask->state) == UTASK_SSTEP) {
		unsigned long copy = READ_ONCE(utask->xol_vaddr);
		unsigned long probed = READ_ONCE(utask->vaddr);

		if (ip == copy || ip == probed) {
			*xol = copy;
			return probed;
		}
	}
#endif
	*xol = 0;
	return ip;
}

/*
 * In a uprobe's handler the task is at the probed address, whose text
 * holds the breakpoint: put back the probed instruction's first bytes,
 * which the uprobe keeps (@insn holds the text from @ip on, @len bytes).
 */
static void unwind_user_probed_insn(unsigned long ip, u8 *insn,
				    unsigned int len)
{
#ifdef CONFIG_UPROBES
	struct uprobe_task *utask = READ_ONCE(current->utask);
	struct arch_uprobe *auprobe = utask ? READ_ONCE(utask->auprobe) : NULL;
	uprobe_opcode_t bp = UPROBE_SWBP_INSN;

	/* Set only while the handlers run; the uprobe is held meanwhile. */
	if (!auprobe || len < sizeof(bp) ||
	    ip != instruction_pointer(task_pt_regs(current)) ||
	    memcmp(insn, &bp, sizeof(bp)))
		return;
	memcpy(insn, auprobe->insn, sizeof(bp));
#endif
}

/**
 * unwind_user_fp_topmost - where in its function the interrupted frame is
 * @state: a walk at its interrupted (topmost) frame
 *
 * Reads the text around the IP, with faults where the walk may take them,
 * for the architecture to tell a prologue or "ret" (where the frame
 * pointer is not set up, or no longer) from the function's body.
 *
 * Context: task, IRQ or NMI context of the current task.
 *
 * Return: the prologue, "ret" or body; ARCH_UNWIND_USER_FP_UNKNOWN when
 * the text could not be read.
 */
enum arch_unwind_user_fp_at
unwind_user_fp_topmost(struct unwind_user_state *state)
{
	u8 buf[ARCH_UNWIND_USER_INSN_BEFORE + ARCH_UNWIND_USER_INSN_BYTES];
	u8 *insn = buf + ARCH_UNWIND_USER_INSN_BEFORE;
	bool may_fault = unwind_user_may_fault();
	unsigned int before, len, more;
	unsigned long ip, page, xol;

	ip = unwind_user_text_ip(state->ip, &xol);
	page = ip & PAGE_MASK;

	/*
	 * The window around the IP, read page by page: the IP's own page
	 * holds the text just executed; the page before or after it may not
	 * be mapped, which only shortens the window. Text just executed need
	 * not be in the page tables any more (reclaim, madvise() while the
	 * task slept): read it with faults where that is allowed.
	 */
	before = min_t(unsigned long, ip - page, ARCH_UNWIND_USER_INSN_BEFORE);
	len = min_t(unsigned long, page + PAGE_SIZE - ip,
		    ARCH_UNWIND_USER_INSN_BYTES);
	if (!unwind_user_read_text(insn - before, ip - before, before + len,
				   may_fault))
		return ARCH_UNWIND_USER_FP_UNKNOWN;

	/*
	 * Without faults, a neighbouring page that cannot be read may only
	 * be out of the page tables: the window (and so the answer) could
	 * differ from a walk that may fault, so give up instead.
	 */
	more = ARCH_UNWIND_USER_INSN_BYTES - len;
	if (more) {
		if (unwind_user_read_text(insn + len, ip + len, more,
					  may_fault))
			len += more;
		else if (!may_fault)
			return ARCH_UNWIND_USER_FP_UNKNOWN;
	}
	more = ARCH_UNWIND_USER_INSN_BEFORE - before;
	if (more && ip >= ARCH_UNWIND_USER_INSN_BEFORE) {
		if (unwind_user_read_text(buf, ip - ARCH_UNWIND_USER_INSN_BEFORE,
					  more, may_fault))
			before += more;
		else if (!may_fault)
			return ARCH_UNWIND_USER_FP_UNKNOWN;
	}
	if (xol && !unwind_user_read_text(insn, xol, 1, may_fault))
		return ARCH_UNWIND_USER_FP_UNKNOWN;
	if (!xol)
		unwind_user_probed_insn(ip, insn, len);

	return arch_unwind_user_fp_prologue(insn, before, len, state->ws);
}
