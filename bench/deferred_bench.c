// SPDX-License-Identifier: GPL-2.0
/*
 * What deferred user callchains save, measured against classic ones in the
 * same run. Prints one tab-separated line per figure:
 *
 *	bench	case	mode	metric	value
 *
 * bench: bytes (ring-buffer bytes per sample), lost (records lost with a
 * small buffer), cost (the workload's time per system call and the cost per
 * sample), irqcost (the same for cpu-clock samples taken in an interrupt
 * from user space, deferred with try-first off and on), mixed (cost and
 * bytes where the samples per entry change: phases of one and four, and
 * two threads at once), python (the same
 * for Debian's python3, which has no frame pointers: its chains by
 * .eh_frame, and their length), complete (samples whose user chain reaches
 * the outermost frame when the stack pages are not resident), walk (the
 * deferred walker's cost per frame), lookup (a new process's first walk
 * per frame through a library of 10,000 functions, every rule looked up
 * in its .eh_frame or its SFrame table), memory (slab memory per task
 * that unwound), bpf (BPF's bpf_get_stack() on user stacks: its cost per
 * call by frame pointers and by the tables, also while another thread
 * maps and unmaps memory, the warm-up a new process takes, and the
 * samples Debian's python3 takes from its start before its stacks reach
 * its root), hostile (the same helper's walk on the worst
 * valid tables a process can give it, against the classic walk).
 *
 * Samples come from a tracepoint on getppid(): a syscall-heavy workload
 * where each kernel entry is sampled by K events, from the bottom of a
 * frame-pointer call chain of known depth (irqcost, python, bpf: cpu-clock).
 * Needs root, tracefs and the deferred unwinder's counters in debugfs;
 * lookup and bpf need the libraries (and bpf its BPF object) harness/bench
 * builds next to this program. On a kernel with mainline's deferral only
 * (no kernel.unwind_deferred_try_first, no counters: harness/mainline),
 * overflow and cost run in their classic and deferred modes, and the
 * other benches are skipped, each with a line on stderr.
 *
 * One file per group of benchmarks, with bench.h for what they share
 * (common.c): space.c (bytes, lost, memory), cost.c (cost, overflow,
 * irqcost), mixed.c, python.c, complete.c, walk.c (walk, discovery), lookup.c,
 * bpf.c (with bpf_stack.bpf.c, bpf_util.c and bpf_churn.c), hostile.c
 * (its process is hostile_main.c and gen_hostile.py's chain); spin.c is
 * the chain cpu-clock samples interrupt. harness/bench builds them into one program.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

int smoke;
long tp_getppid;

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
		bool mainline;	/* runs without the try-first setting */
	} benches[] = {
		/* first: kprobe timings suffer most from what ran before */
		{ "overflow", bench_overflow, true },
		{ "bytes", bench_bytes }, { "lost", bench_lost },
		{ "cost", bench_cost, true }, { "irqcost", bench_irqcost },
		{ "mixed", bench_mixed },
		{ "python", bench_python }, { "complete", bench_complete },
		{ "walk", bench_walk }, { "discovery", bench_discovery },
		{ "lookup", bench_lookup }, { "memory", bench_memory },
		{ "bpf", bench_bpf }, { "hostile", bench_hostile },
	};
	int i, j, ran = 0;
	FILE *f;

	if (argc > 1 && !strcmp(argv[1], "--smoke")) {
		smoke = 1;
		argc--;
		argv++;
	}
	f = fopen("/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id", "r");
	if (!f || fscanf(f, "%ld", &tp_getppid) != 1)
		die("the syscalls:sys_enter_getppid tracepoint");
	fclose(f);
	if (access(TRY_FIRST_SYSCTL, F_OK)) {
		have_try_first = false;
		last_mode = DEFERRED;
		/* every sample defers, as in mainline, which has no counters */
		fputs("deferred_bench: no " TRY_FIRST_SYSCTL "\n"
		      "deferred_bench: a kernel that defers every sample: modes none, classic and deferred only, no walk times\n",
		      stderr);
	}

	for (i = 0; i < (int)(sizeof(benches) / sizeof(benches[0])); i++) {
		for (j = 1; j < argc && strcmp(argv[j], benches[i].name); j++)
			;
		if (argc > 1 && j == argc)
			continue;
		ran++;
		if (!have_try_first && !benches[i].mainline) {
			fprintf(stderr,
				"deferred_bench: %s skipped: only overflow and cost run without the try-first setting\n",
				benches[i].name);
			continue;
		}
		/* DEFERRED defers every sample; TRY_FIRST sets its own. */
		set_try_first(0);
		benches[i].fn();
	}
	if (have_try_first)
		set_try_first(TRY_FIRST_DEFAULT);
	if (!ran) {
		/* from the table, which it cannot miss */
		fputs("usage: deferred_bench [--smoke] [", stderr);
		for (i = 0; i < (int)(sizeof(benches) / sizeof(benches[0])); i++)
			fprintf(stderr, "%s%s", i ? "|" : "", benches[i].name);
		fputs("]...\n", stderr);
		return 2;
	}
	return 0;
}
