// SPDX-License-Identifier: GPL-2.0
/*
 * The programs of bpf_walk: each, when it runs for the watched process,
 * takes that process's user stack with bpf_get_stack() and, where the
 * program may use a stack map, bpf_get_stackid(), and hands both to user
 * space through a ring buffer. bpf_walk.c says what each must have got.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#include "bpf_walk.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_walk_target);
} target SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} records SEC(".maps");

/*
 * A stack that hashes to a taken bucket replaces it: bpf_walk.c reads each
 * run's stacks before the next run, whose stacks differ.
 */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 4096);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, BPF_WALK_FRAMES * sizeof(__u64));
} stacks SEC(".maps");

/* The watched process's target, or NULL when this is another process. */
static __always_inline struct bpf_walk_target *watched(void)
{
	struct bpf_walk_target *t;
	__u32 key = 0;

	t = bpf_map_lookup_elem(&target, &key);
	if (!t || !t->tgid || t->tgid != bpf_get_current_pid_tgid() >> 32)
		return NULL;
	return t;
}

/* Which helpers a program calls. */
enum how {
	STACK_AND_ID,	/* bpf_get_stack() and bpf_get_stackid() */
	STACK,		/* bpf_get_stack(): a sleepable program has no stack map */
	TASK_STACK,	/* bpf_get_task_stack() on the current task */
};

static __always_inline int record(void *ctx, __u32 prog, __u32 arg,
				  enum how how)
{
	__u32 key = 0, n, size = sizeof(((struct bpf_walk_record *)0)->ips);
	struct bpf_walk_target *t;
	struct bpf_walk_record *r;

	t = bpf_map_lookup_elem(&target, &key);
	/* A mask the verifier follows: fewer than BPF_WALK_FRAMES entries. */
	n = t ? t->frames & (BPF_WALK_FRAMES - 1) : 0;
	if (n)
		size = n * sizeof(__u64);
	r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
	if (!r)
		return 0;
	r->prog = prog;
	r->arg = arg;
	r->id = -1;
	if (how == TASK_STACK) {
		r->len = bpf_get_task_stack(bpf_get_current_task_btf(), r->ips,
					    size, BPF_F_USER_STACK);
	} else {
		r->len = bpf_get_stack(ctx, r->ips, size, BPF_F_USER_STACK);
	}
	if (how == STACK_AND_ID)
		r->id = bpf_get_stackid(ctx, &stacks,
					BPF_F_USER_STACK | BPF_F_REUSE_STACKID);
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	if (!watched())
		return 0;
	/*
	 * The sample's mode: 1 when it interrupted user space, anywhere: no
	 * stack id then, each would take a bucket of the map.
	 */
	if ((ctx->regs.cs & 3) == 3)
		return record(ctx, BPF_WALK_PERF, 1, STACK);
	return record(ctx, BPF_WALK_PERF, 0, STACK_AND_ID);
}

/* raw_syscalls/sys_enter: the common fields, then the call's number. */
struct sys_enter {
	__u64 common;
	long id;
	unsigned long args[6];
};

SEC("tracepoint/raw_syscalls/sys_enter")
int on_syscall(struct sys_enter *ctx)
{
	struct bpf_walk_target *t = watched();

	if (!t || ctx->id != t->nr)
		return 0;
	return record(ctx, BPF_WALK_SYSCALL, 0, STACK_AND_ID);
}

/* The same by bpf_get_task_stack(): loaded where the kernel has BTF. */
SEC("tracepoint/raw_syscalls/sys_enter")
int on_syscall_task(struct sys_enter *ctx)
{
	struct bpf_walk_target *t = watched();

	if (!t || ctx->id != t->nr)
		return 0;
	return record(ctx, BPF_WALK_TASK_STACK, 0, TASK_STACK);
}

SEC("kprobe/unwind_test_bpf_hook")
int on_hook(struct pt_regs *ctx)
{
	if (!watched())
		return 0;
	return record(ctx, BPF_WALK_KPROBE, ctx->rdi, STACK_AND_ID);
}

SEC("uprobe")
int on_uprobe(struct pt_regs *ctx)
{
	if (!watched())
		return 0;
	return record(ctx, BPF_WALK_UPROBE, 0, STACK_AND_ID);
}

/* A sleepable program may not use a stack map. */
SEC("uprobe.s")
int on_uprobe_sleepable(struct pt_regs *ctx)
{
	if (!watched())
		return 0;
	return record(ctx, BPF_WALK_UPROBE_S, 0, STACK);
}

/* Between the switch to the new mm and the new image's registers. */
SEC("kprobe/setup_new_exec")
int on_exec(struct pt_regs *ctx)
{
	if (!watched())
		return 0;
	return record(ctx, BPF_WALK_EXEC, 0, STACK_AND_ID);
}

/* In do_exit(), after exit_mm(). */
SEC("tracepoint/sched/sched_process_exit")
int on_exit(void *ctx)
{
	if (!watched())
		return 0;
	return record(ctx, BPF_WALK_EXIT, 0, STACK_AND_ID);
}

char LICENSE[] SEC("license") = "GPL";
