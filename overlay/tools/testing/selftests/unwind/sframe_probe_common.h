/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of sframe_probe.c share: the call chain the tests sample
 * (built without frame pointers), whose functions record their own return
 * addresses, the program's paths, and the time the tests with a uprobe
 * per instruction get.
 */
#ifndef SELFTESTS_UNWIND_SFRAME_PROBE_COMMON_H
#define SELFTESTS_UNWIND_SFRAME_PROBE_COMMON_H

#define _GNU_SOURCE
#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/elf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "ctl.h"
#include "perf_helpers.h"
#include "sframe_lib.h"
#include "sframe_probe.h"

#define RB_PAGES	64
#define MAX_POINTS	128
#define MAX_RECS	4096
#define MAX_RAS		8
#define MAX_FRAMES	(MAX_RAS + 1)
/* The first address past the lower (user) half of the address space. */
#define USER_END	0x0000800000000000ULL

#ifdef __PIE__
#define SELF_KIND	"PIE"
#define TWIN		"sframe_probe_nopie"
#else
#define SELF_KIND	"non-PIE"
#define TWIN		"sframe_probe"
#endif

#define RA() ((unsigned long)__builtin_return_address(0))

/*
 * A call chain of known shape: probe_top() and probe_mid() call inner(),
 * and every function records its return address in ras[n++], outermost
 * first.
 */
struct probe_chain {
	long a, b;
	long (*inner)(struct probe_chain *c);
	/* for the kernel-half tests: call leaf with @bad_ra in a slot */
	long (*bad_fn)(long (*leaf)(struct probe_chain *c),
		       struct probe_chain *c, unsigned long bad_ra);
	unsigned long bad_ra;
	int n;
	unsigned long ras[MAX_RAS];
};

/* Called twice by sframe_probed(): a frame of its own, not probed. */
static __attribute__((noipa)) long probe_callee(struct probe_chain *c,
						char *buf, long x)
{
	buf[x & 63] = (char)x;
	return buf[(x >> 3) & 63] + c->a;
}

/*
 * Every instruction of this function is probed. It has no branch, so one
 * call runs each instruction exactly once; its four values live across
 * the calls, so the compiler saves six callee-saved registers (%rbp among
 * them), and its buffer makes a stack frame.
 */
static __attribute__((noipa)) long sframe_probed(struct probe_chain *c)
{
	long a = c->a, b = c->b;
	long x = a * 7 + b, y = b * 5 - a, z = a ^ b, w = a + b * 3;
	char buf[64];

	c->ras[c->n++] = RA();
	memset(buf, 0, sizeof(buf));
	x += probe_callee(c, buf, x);
	y += probe_callee(c, buf, y + z);
	return x * y + z * w + buf[w & 63];
}

/* A big frame, based on the stack pointer. */
static __attribute__((noipa)) long probe_mid(struct probe_chain *c)
{
	char buf[1024];

	memset(buf, c->a, sizeof(buf));
	asm volatile("" : : "r"(buf) : "memory");
	c->ras[c->n++] = RA();
	return c->inner(c) + buf[c->b & 1023];
}

/* alloca: the CFA is based on %rbp. */
static __attribute__((noipa)) long probe_top(struct probe_chain *c)
{
	size_t len = 64 + (c->a & 63);
	char *p = alloca(len);

	memset(p, c->b, len);
	asm volatile("" : : "r"(p) : "memory");
	c->ras[c->n++] = RA();
	return probe_mid(c) + p[c->a & 63];
}

/* The chain a sample at @addr must have; returns its length. */
static int chain_want(const struct probe_chain *c, unsigned long addr,
		      unsigned long *want)
{
	int i, n = 0;

	want[n++] = addr;
	for (i = c->n - 1; i >= 0 && n < MAX_FRAMES; i--)
		want[n++] = c->ras[i];
	return n;
}

/* Why the kernel cannot run these tests, or NULL when it can. */
static const char *probe_missing(void)
{
	if (counter("sframe_frames") < 0)
		return "the kernel has no SFrame unwinder (CONFIG_UNWIND_USER_SFRAME)";
	if (pmu_type("uprobe") < 0)
		return "no uprobe PMU";
	return NULL;
}

/* The program's own path, and the path of @name next to it. */
static void self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	buf[n > 0 ? n : 0] = '\0';
}

static void sibling_path(char *buf, size_t size, const char *name)
{
	char exe[PATH_MAX];

	self_path(exe, sizeof(exe));
	snprintf(buf, size, "%s/%s", dirname(exe), name);
}

/*
 * Closing a uprobe event waits for RCU grace periods (uprobe unregister):
 * about 0.2 s per event on the TCG guest, 0.7 to 1.1 s with PREEMPT_RT,
 * which does not expedite them. The tests with a probe per instruction
 * close about 40 events, so they get more than the harness's 30 seconds.
 */
#define MANY_PROBES_TIMEOUT	180

#endif /* SELFTESTS_UNWIND_SFRAME_PROBE_COMMON_H */
