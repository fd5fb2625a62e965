// SPDX-License-Identifier: GPL-2.0
/*
 * deferred_bench's BPF program (bench/bpf.c says what it measures): on
 * every sample of the perf event it is attached to, the user stack with
 * bpf_get_stack(BPF_F_USER_STACK), as profilers take it, asking for the
 * entries deferred_bench set.
 *
 * The helper call is timed by bpf_ktime_get_ns() before and after it; a
 * third clock read right after the second gives what one read adds to
 * that bracket. Both are summed over the samples taken in user mode. Each
 * of the first BPF_STACK_MAX_SAMPLES samples is kept: the bytes the helper
 * stored (or its error), whether the sample interrupted user mode, and
 * the stack's outermost address. The event samples one task: the program
 * never runs twice at once, and its sums need no atomic operations.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "bpf_stack.h"

/* The entries to ask the helper for, at most BPF_STACK_MAX_FRAMES. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} entries SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_stack_timing);
} timing SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BPF_STACK_MAX_SAMPLES);
	__type(key, __u32);
	__type(value, struct bpf_stack_sample);
} samples SEC(".maps");

/* Samples taken, kept or not. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} nr_samples SEC(".maps");

struct stack {
	__u64 ips[BPF_STACK_MAX_FRAMES];
};

/* Too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack);
} stack SEC(".maps");

SEC("perf_event")
int user_stack(struct bpf_perf_event_data *ctx)
{
	__u32 key = 0, *want, *nr, i;
	__u64 n = BPF_STACK_MAX_FRAMES;	/* 64 bits: bounds the verifier sees */
	struct bpf_stack_timing *t;
	struct bpf_stack_sample *s;
	__u64 t0, t1, t2;
	struct stack *st;
	long len;
	int user;

	want = bpf_map_lookup_elem(&entries, &key);
	if (want)
		n = *want;
	if (n > BPF_STACK_MAX_FRAMES)
		n = BPF_STACK_MAX_FRAMES;
	st = bpf_map_lookup_elem(&stack, &key);
	t = bpf_map_lookup_elem(&timing, &key);
	nr = bpf_map_lookup_elem(&nr_samples, &key);
	if (!st || !t || !nr)
		return 0;

	t0 = bpf_ktime_get_ns();
	len = bpf_get_stack(ctx, st->ips, n * sizeof(__u64), BPF_F_USER_STACK);
	t1 = bpf_ktime_get_ns();
	t2 = bpf_ktime_get_ns();

	/* x86: the privilege level of the interrupted code */
	user = (ctx->regs.cs & 3) == 3;
	if (user) {
		t->calls++;
		t->bracket_ns += t1 - t0;
		t->clock_ns += t2 - t1;
		if (t1 - t0 > t->max_ns)
			t->max_ns = t1 - t0;
		if (len < 0)
			t->errors++;
		else
			t->frames += len / sizeof(__u64);
		if (len >= 0 && len < n * sizeof(__u64))
			t->short_calls++;
	}

	i = (*nr)++;
	s = bpf_map_lookup_elem(&samples, &i);
	if (!s)
		return 0;
	s->len = len;
	s->user = user;
	s->ns = t1 - t0;
	s->outermost = len >= (long)sizeof(__u64) ?
		       st->ips[(len / sizeof(__u64) - 1) &
			       (BPF_STACK_MAX_FRAMES - 1)] : 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
