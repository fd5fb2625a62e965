// SPDX-License-Identifier: GPL-2.0
/*
 * On every sample of the watched task: its user stack, taken right now
 * with bpf_get_stack(), which must not defer even when the event asks
 * perf to defer its own callchains.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#define MAX_FRAMES	64

struct user_stack {
	__u32 tid;
	__s32 len;	/* bytes stored by bpf_get_stack(), or its error */
	__u64 ips[MAX_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct user_stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} target SEC(".maps");

SEC("perf_event")
int get_user_stack(struct bpf_perf_event_data *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct user_stack *s;
	__u32 key = 0, *want;

	want = bpf_map_lookup_elem(&target, &key);
	if (!want || *want != tid)
		return 0;
	s = bpf_map_lookup_elem(&stacks, &key);
	if (!s)
		return 0;
	s->tid = tid;
	s->len = bpf_get_stack(ctx, s->ips, sizeof(s->ips), BPF_F_USER_STACK);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
