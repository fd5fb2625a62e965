/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the bpf bench (bench/bpf.c) and its BPF program
 * (bench/bpf_stack.bpf.c) share: the limits and the maps' values.
 */
#ifndef BPF_STACK_H
#define BPF_STACK_H

#include <linux/types.h>

#define BPF_STACK_MAX_FRAMES	128	/* a power of two: indexes are masked */
#define BPF_STACK_MAX_SAMPLES	4096

/* Sums over the samples taken in user mode. */
struct bpf_stack_timing {
	__u64 calls;
	__u64 bracket_ns;	/* clock read, helper, clock read */
	__u64 clock_ns;		/* clock read, clock read */
	__u64 frames;		/* entries the helper stored */
	__u64 short_calls;	/* fewer entries than asked for */
	__u64 errors;		/* the helper returned an error */
	__u64 max_ns;		/* the longest bracket */
};

/* One of the first BPF_STACK_MAX_SAMPLES samples. */
struct bpf_stack_sample {
	__s32 len;		/* bytes stored, or the helper's error */
	__u32 user;		/* the sample interrupted user mode */
	__u64 outermost;	/* the last entry stored */
	__u64 ns;		/* the bracket: clock read, helper */
};

#endif /* BPF_STACK_H */
