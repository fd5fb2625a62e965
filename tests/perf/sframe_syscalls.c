// SPDX-License-Identifier: GPL-2.0
/*
 * A workload built without frame pointers and with SFrame tables
 * (-fomit-frame-pointer -Wa,--gsframe) that makes system calls from the
 * bottom of a call chain of known shape.  The demo's second act and the
 * call-graph benchmark record it with --call-graph fp, dwarf and sframe.
 *
 *   main -> serve -> steps (levels 0 .. DEPTH-2) -> leaf (DEPTH-1) -> syscall
 *
 * The steps take turns: a frame with no locals, one with a 160-byte
 * array, and one with alloca() (its CFA is based on %rbp).  The level a
 * third of the way down goes through libsframe_a.so (DT_NEEDED), the one
 * two thirds down through libsframe_b.so (dlopen'd); both are the
 * selftests' sframe_lib.c.  A library step calls step_plain() next, so a
 * chain too short for that has no library step.  leaf() makes the system
 * call itself, inline: libc has no SFrame table, and with no frame pointer
 * in its callers no walk gets past a libc wrapper.
 *
 * Every frame records its return address on the way down.  With -r FILE
 * the program writes what a complete user callchain of a sample taken in
 * the system call is, innermost first, and the time per call:
 *
 *   syscall_ret ADDR	the user IP: the instruction after the syscall
 *   chain ADDR...	the return addresses of leaf, the steps, serve
 *   ns_per_call NS	the loop's time per call, perf's cost included
 *
 * usage: sframe_syscalls [-d DEPTH] [-n CALLS] [-s read|getppid] [-b BYTES]
 *			  [-r FILE]
 *   -d  frames from the first step to leaf, both included (35)
 *   -n  system calls (1000)
 *   -s  the system call: read(2) of /dev/zero, or getppid(2) (read)
 *   -b  bytes per read (65536)
 */
#define _GNU_SOURCE	/* program_invocation_short_name, in number.h */
#include <alloca.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "number.h"
#include "sframe_lib.h"

#define MAX_DEPTH	1024
#define MAX_BYTES	(1 << 20)

struct work {
	int depth;		/* levels: steps and leaf */
	int lib_a_at, lib_b_at;	/* the levels that go through a library */
	sframe_step_t lib_b;	/* sframe_lib_b_step, from dlsym() */
	long nr, arg0, arg1, arg2;
	long ret;
	unsigned long ras[MAX_DEPTH + 1];	/* ras[level]: that frame's RA */
	unsigned long serve_ra;			/* serve's, into main */
	unsigned long syscall_ip;		/* the user IP in the call */
};

static char buf[MAX_BYTES];

static long step_plain(void *chain, int level);
static long step_array(struct work *w, int level);
static long step_alloca(struct work *w, int level);

/*
 * The last level: the system call, and the address of the instruction after
 * it (a local label: no symbol to compete with leaf's).
 */
static __attribute__((noipa)) long leaf(struct work *w, int level)
{
	unsigned long ip;
	long ret;

	w->ras[level] = (unsigned long)__builtin_return_address(0);
	asm volatile("lea 1f(%%rip), %1\n\t"
		     "syscall\n"
		     "1:\tnop"
		     : "=a"(ret), "=&r"(ip)
		     : "0"(w->nr), "D"(w->arg0), "S"(w->arg1), "d"(w->arg2)
		     : "rcx", "r11", "memory");
	w->syscall_ip = ip;
	w->ret = ret;
	return ret;
}

/*
 * Calls the frame of level @level: leaf, a library step or one of the
 * three kinds of step, by level.  Inlined into each caller, so that every
 * frame on the stack is a level.  A library step calls step_plain() next.
 */
static inline __attribute__((always_inline)) long
down(struct work *w, int level)
{
	if (level == w->depth - 1)
		return leaf(w, level);
	if (level == w->lib_a_at)
		return sframe_lib_a_step(w, level, step_plain, w->ras);
	if (level == w->lib_b_at)
		return w->lib_b(w, level, step_plain, w->ras);
	switch (level % 3) {
	case 0:
		return step_plain(w, level);
	case 1:
		return step_array(w, level);
	default:
		return step_alloca(w, level);
	}
}

static __attribute__((noipa)) long step_plain(void *chain, int level)
{
	struct work *w = chain;

	w->ras[level] = (unsigned long)__builtin_return_address(0);
	return down(w, level + 1) + 1;
}

static __attribute__((noipa)) long step_array(struct work *w, int level)
{
	volatile char pad[160];

	w->ras[level] = (unsigned long)__builtin_return_address(0);
	pad[level % 160] = (char)level;
	return down(w, level + 1) + pad[level % 160];
}

static __attribute__((noipa)) long step_alloca(struct work *w, int level)
{
	char *p = alloca(32 + (level & 3) * 16);

	w->ras[level] = (unsigned long)__builtin_return_address(0);
	p[0] = (char)level;
	asm volatile("" : : "r"(p) : "memory");
	return down(w, level + 1) + p[0];
}

static __attribute__((noipa)) int serve(struct work *w, long calls, double *ns)
{
	struct timespec t0, t1;
	long i;

	w->serve_ra = (unsigned long)__builtin_return_address(0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < calls; i++) {
		down(w, 0);
		if (w->ret < 0) {
			fprintf(stderr, "sframe_syscalls: system call %ld failed: %ld\n",
				w->nr, w->ret);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ns = calls ? ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / calls : 0;
	return 0;
}

static int report(const char *path, const struct work *w, double ns)
{
	FILE *f = fopen(path, "w");
	int level;

	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "syscall_ret %#lx\nchain", w->syscall_ip);
	for (level = w->depth - 1; level >= 0; level--)
		fprintf(f, " %#lx", w->ras[level]);
	fprintf(f, " %#lx\nns_per_call %.1f\n", w->serve_ra, ns);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct work w;
	const char *out = NULL, *call = "read";
	long calls = 1000, bytes = 65536;
	void *lib;
	double ns;
	int opt;

	w.depth = 35;
	while ((opt = getopt(argc, argv, "d:n:s:b:r:")) != -1) {
		switch (opt) {
		case 'd':
			w.depth = number(optarg, 3, MAX_DEPTH, "-d (depth)");
			break;
		case 'n':
			calls = number(optarg, 0, 1L << 40, "-n (calls)");
			break;
		case 's':
			call = optarg;
			break;
		case 'b':
			bytes = number(optarg, 1, MAX_BYTES, "-b (bytes)");
			break;
		case 'r':
			out = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEPTH] [-n CALLS] [-s read|getppid] [-b BYTES] [-r FILE]\n",
				argv[0]);
			return 2;
		}
	}
	if (!strcmp(call, "read")) {
		w.nr = SYS_read;
		w.arg0 = open("/dev/zero", O_RDONLY);
		w.arg1 = (long)buf;
		w.arg2 = bytes;
		if (w.arg0 < 0) {
			perror("sframe_syscalls: /dev/zero");
			return 1;
		}
	} else if (!strcmp(call, "getppid")) {
		w.nr = SYS_getppid;
	} else {
		fprintf(stderr, "sframe_syscalls: -s takes read or getppid, not '%s'\n", call);
		return 2;
	}
	/* found through the executable's run path, $ORIGIN */
	lib = dlopen("libsframe_b.so", RTLD_NOW);
	w.lib_b = lib ? (sframe_step_t)dlsym(lib, "sframe_lib_b_step") : NULL;
	if (!w.lib_b) {
		fprintf(stderr, "sframe_syscalls: libsframe_b.so: %s\n", dlerror());
		return 1;
	}
	/* a library step calls step_plain(), which must not be the leaf's level */
	w.lib_a_at = w.depth / 3 < w.depth - 2 ? w.depth / 3 : -1;
	w.lib_b_at = 2 * w.depth / 3 < w.depth - 2 ? 2 * w.depth / 3 : -1;
	if (serve(&w, calls, &ns))
		return 1;
	return out ? report(out, &w, ns) : 0;
}
