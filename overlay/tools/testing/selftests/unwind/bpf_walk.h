/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bpf_walk.bpf.c hands bpf_walk.c: one record per run of a program
 * for the watched process, with the user stack the stack helpers gave.
 */
#ifndef SELFTESTS_UNWIND_BPF_WALK_H
#define SELFTESTS_UNWIND_BPF_WALK_H

#include <linux/types.h>

#define BPF_WALK_FRAMES	64

/* The program that made a record. */
enum bpf_walk_prog {
	BPF_WALK_PERF,		/* cpu-clock sample: bpf_get_stack{,id}_pe() */
	BPF_WALK_SYSCALL,	/* raw_syscalls/sys_enter of the watched call */
	BPF_WALK_TASK_STACK,	/* the same, bpf_get_task_stack() of current */
	BPF_WALK_KPROBE,	/* the test module's hook, from task, IRQ, NMI */
	BPF_WALK_UPROBE,	/* uprobe on the chain's leaf */
	BPF_WALK_UPROBE_S,	/* the same, sleepable: bpf_get_stack() only */
	BPF_WALK_EXEC,		/* kprobe on setup_new_exec() */
	BPF_WALK_EXIT,		/* sched_process_exit, after exit_mm() */
};

/* The hook's argument: the context the module called it from. */
enum bpf_walk_ctx {
	BPF_WALK_CTX_TASK,
	BPF_WALK_CTX_IRQ,
	BPF_WALK_CTX_NMI,
};

/*
 * Which process the programs watch, the system call of the chain, and the
 * entries bpf_get_stack() asks for (0: BPF_WALK_FRAMES; fewer than that).
 */
struct bpf_walk_target {
	__u32 tgid;
	__s32 nr;
	__u32 frames;
};

struct bpf_walk_record {
	__u32 prog;		/* enum bpf_walk_prog */
	__u32 arg;		/* kprobe: enum bpf_walk_ctx; perf: user mode */
	__s32 len;		/* bytes bpf_get_stack() stored, or its error */
	__s32 id;		/* bpf_get_stackid(), its error, or -1: not asked */
	__u64 ips[BPF_WALK_FRAMES];
};

#endif /* SELFTESTS_UNWIND_BPF_WALK_H */
