/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_USER_TYPES_H
#define _LINUX_UNWIND_USER_TYPES_H

#include <linux/bits.h>
#include <linux/eh_frame_types.h>
#include <linux/sframe_types.h>
#include <linux/types.h>

/*
 * Methods that can find the caller of a user space frame. A task may have
 * several available; the walker tries them in order of preference for every
 * frame, so a method (such as SFrame) can be added without touching callers.
 */
enum unwind_user_type {
	UNWIND_USER_TYPE_NONE	= 0,
	UNWIND_USER_TYPE_FP	= BIT(0),
	UNWIND_USER_TYPE_SFRAME	= BIT(1),
	UNWIND_USER_TYPE_EH_FRAME = BIT(2),
};

/**
 * struct unwind_stacktrace - a user space call chain
 * @nr: number of valid entries
 * @entries: return addresses, innermost (the interrupted IP) first
 * @walk_ns: the CPU time the deferred walk that filled @entries took, when
 *	     it was timed (an NMI request asked for it, or every walk is
 *	     timed); 0 otherwise, when it reused an earlier walk, and when it
 *	     waited (@walk_waited)
 * @walk_waited: the timed walk slept (a fault that waited for I/O, a
 *		 contended lock, a reschedule) or moved to another CPU: its
 *		 time is not the CPU's, and must not count against a rate
 */
struct unwind_stacktrace {
	unsigned int	nr;
	unsigned long	*entries;
	u64		walk_ns;
	bool		walk_waited;
};

/**
 * struct unwind_user_frame - where a frame keeps its caller's state
 * @cfa_off: the canonical frame address (the caller's stack pointer) is this
 *	     far from the frame pointer (@use_fp) or the stack pointer
 * @ra_off: the return address is saved at CFA + @ra_off
 * @fp_off: the caller's frame pointer is saved at CFA + @fp_off; 0 when the
 *	    frame has not saved it (the frame pointer is still the caller's)
 * @use_fp: the CFA is computed from the frame pointer
 * @cfa_deref: the CFA is the word saved at (frame or stack pointer) +
 *	       @cfa_off, plus @cfa_add, as in a realigned (DRAP) frame or
 *	       hand-written assembly that saved its entry stack pointer
 * @cfa_add: added to the word @cfa_deref reads; 0 otherwise
 * @fp_in_frame: the caller's frame pointer is saved at the current frame
 *		 pointer + @fp_off rather than relative to the CFA
 * @sigframe: a signal frame: the CFA is the interrupted stack pointer, the
 *	      word at the stack pointer + @cfa_off (@cfa_deref is set); the
 *	      interrupted IP and frame pointer are saved at the stack pointer
 *	      + @ra_off and + @fp_off, the base register at + @bx_off; that IP
 *	      is exact, not a return address
 * @use_bx: the CFA is computed from the base register (%rbx on x86), as
 *	    ld.so's lazy-binding trampoline keeps it, rather than from the
 *	    stack or frame pointer
 * @bx_off: the caller's base register is saved at CFA + @bx_off; 0 when the
 *	    frame has not saved it (an .eh_frame rule only)
 * @bx_lost: the frame keeps the caller's base register where the walk
 *	     cannot follow it; rules of other methods never say where it is
 * @use_reg: the CFA is computed from general register @reg rather than from
 *	     the stack, frame or base register: known only in the interrupted
 *	     frame, whose registers the kernel saved (hand-written assembly
 *	     keeps its entry stack pointer in a scratch register)
 * @reg: that register's DWARF number
 * @idx_reg: with @idx_scale, the address @cfa_deref reads is also
 *	     @idx_reg's value times @idx_scale further, as OpenSSL's
 *	     Montgomery multiplication describes a frame sized by its
 *	     argument: like @reg, known in the interrupted frame only
 * @idx_scale: 0: no such term
 * @type: the method that gave the rule (enum unwind_user_type)
 */
struct unwind_user_frame {
	s32	cfa_off;
	s32	ra_off;
	s32	fp_off;
	s32	cfa_add;
	s32	bx_off;
	bool	use_fp;
	bool	cfa_deref;
	bool	fp_in_frame;
	bool	sigframe;
	bool	use_bx;
	bool	bx_lost;
	bool	use_reg;
	u8	reg;
	u8	idx_reg;
	u8	idx_scale;
	u8	type;
};

/**
 * struct unwind_user_tables - the unwind tables of an executable mapping
 * @text_start: start of the mapping
 * @text_end: its end; @text_start == @text_end: no mapping looked up
 * @sframe: its file's SFrame section; none when @sframe.text_end is 0
 * @eh: its file's .eh_frame; none when @eh.table is 0
 */
struct unwind_user_tables {
	unsigned long		text_start;
	unsigned long		text_end;
	struct sframe_section	sframe;
	struct eh_frame_section	eh;
};

/**
 * enum unwind_user_stop - why a walk ended
 * @UNWIND_USER_END: the outermost frame was reached
 * @UNWIND_USER_FAULT: a frame, or the text at the interrupted IP, could not
 *		       be read: unmapped, or not resident where page faults
 *		       are not allowed
 * @UNWIND_USER_BAD_FRAME: a frame broke a rule (the stack did not grow,
 *			   a misaligned or non-user address)
 * @UNWIND_USER_TRUNCATED: the entry limit was reached with frames left
 * @UNWIND_USER_BUDGET: the walk spent its budget of table work (rows and
 *			instructions decoded, reads made) with frames left
 */
enum unwind_user_stop {
	UNWIND_USER_END,
	UNWIND_USER_FAULT,
	UNWIND_USER_BAD_FRAME,
	UNWIND_USER_TRUNCATED,
	UNWIND_USER_BUDGET,
};

/**
 * struct unwind_user_regs - the user state a walk starts from
 * @ip: the interrupted user instruction pointer
 * @sp: the user stack pointer
 * @fp: the user frame pointer
 * @ws: word size of the task's stack (4 for compat tasks)
 * @bx: the user base register (%rbx on x86), where an .eh_frame rule may
 *	keep the CFA
 *
 * Taken from the task's saved user registers when a deferred walk is
 * asked for: the kernel may change those registers before the walk runs
 * (a signal frame, a restarted system call, ptrace), and the walk must
 * describe the state the request was made in.
 */
struct unwind_user_regs {
	unsigned long	ip;
	unsigned long	sp;
	unsigned long	fp;
	unsigned long	bx;
	unsigned int	ws;
};

/**
 * struct unwind_user_map - an address range a walk has checked
 * @start: its start
 * @end: its end; @start == @end: a free slot
 * @id: the per-mm entry of the file mapped there; 0: no tables there
 * @entry: that entry's slot
 */
struct unwind_user_map {
	unsigned long	start;
	unsigned long	end;
	u64		id;
	unsigned int	entry;
};

/* The ranges a walk remembers (a program and the libraries it calls). */
#define UNWIND_USER_MAPS	4

/* unwind_user_state's bx_at for a base register the walk no longer knows. */
#define UNWIND_USER_BX_LOST	1UL

/**
 * struct unwind_user_state - position of a user stack walk
 * @ip: instruction pointer of the current frame
 * @sp: stack pointer of the current frame (the CFA of the frame below it)
 * @fp: frame pointer of the current frame
 * @ws: word size of the task's stack (4 for compat tasks)
 * @bx: the interrupted frame's base register (%rbx on x86)
 * @bx_at: where the current frame's base register is: 0 in @bx (no frame
 *	   walked so far saved it), else the stack slot the last frame that
 *	   saved it saved it in; %UNWIND_USER_BX_LOST when a frame walked
 *	   may have changed it without saying where (a rule of frame
 *	   pointers or SFrame, or one the walk cannot follow)
 * @current_type: the method that found the current frame
 * @available_types: methods that may be tried (enum unwind_user_type bits)
 * @topmost: the current frame is the interrupted one, which may not have
 *	     set up its frame yet
 * @regs_live: the current frame is the interrupted one and the task's
 *	       saved user registers still hold its state, so that a rule may
 *	       read any of them (@use_reg and @idx_reg of a frame's rule)
 * @done: no further frame can be found; @stop says why
 * @cut_at_max: end at the entry limit without looking for a frame past
 *		it, for a caller that does not tell a cut chain from a whole
 *		one (%UNWIND_USER_TRUNCATED then says only that the limit was
 *		reached)
 * @stop: the reason the walk ended
 * @sigframes: signal frames crossed so far
 * @nofault: the walk runs in an interrupt and stands in for a deferred
 *	     one: it uses only what the mm remembers and pages that are
 *	     resident, and ends with %UNWIND_USER_FAULT where it would need
 *	     more
 * @mm_seq: with @nofault, the mm's mapping sequence the walk relies on
 * @budget: table work the walk has left (rows, instructions, reads)
 * @next_map: the slot of @maps to fill next
 * @nr_maps: the slots of @maps filled
 * @tables_id: the per-mm entry @tables were copied from; 0: none
 * @maps: the address ranges checked so far
 * @tables: the unwind tables of that entry's file
 * @eh_memo: the CIE the last .eh_frame lookup in @tables used
 */
struct unwind_user_state {
	unsigned long		ip;
	unsigned long		sp;
	unsigned long		fp;
	unsigned long		bx;
	unsigned long		bx_at;
	unsigned int		ws;
	enum unwind_user_type	current_type;
	unsigned int		available_types;
	bool			topmost;
	bool			regs_live;
	bool			done;
	bool			cut_at_max;
	enum unwind_user_stop	stop;
	unsigned int		sigframes;
#ifdef CONFIG_UNWIND_USER_SFRAME
	bool			nofault;
	unsigned int		mm_seq;
	unsigned int		budget;
	unsigned int		next_map;
	unsigned int		nr_maps;
	u64			tables_id;
	struct unwind_user_map	maps[UNWIND_USER_MAPS];
	struct unwind_user_tables tables;
#ifdef CONFIG_UNWIND_USER_EH_FRAME
	struct eh_frame_memo	eh_memo;
#endif
#endif
};

#endif /* _LINUX_UNWIND_USER_TYPES_H */
