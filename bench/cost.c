// SPDX-License-Identifier: GPL-2.0
/*
 * What each sample costs: the workload's time per system call with
 * getppid() samples (cost), the time inside the kernel from kprobes
 * (overflow), and the workload's time with cpu-clock samples taken in an
 * interrupt from user space (irqcost).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/*
 * The walk's mean time per entry for @depth, with the events in @ev open
 * and disabled, from a timed pass that is not part of any measurement.
 */
static double timed_walk_ns(struct events *ev, int depth, int entries,
			    long *walks_out)
{
	long w0, n0, walks;
	struct tally t;

	time_walks(1);
	w0 = read_long(COUNTERS, "walk_ns");
	n0 = read_long(COUNTERS, "timed_walks");
	events_enable(ev, 1);
	run_loop(depth, entries);
	events_enable(ev, 0);
	tally(ev, &t);		/* empty the buffer */
	walks = read_long(COUNTERS, "timed_walks") - n0;
	time_walks(0);
	if (walks_out)
		*walks_out = walks;
	return walks > 0 ? (double)(read_long(COUNTERS, "walk_ns") - w0) / walks : 0;
}

/*
 * The workload's time per entry, and what each sample costs it. The modes
 * take turns, round after round, and each keeps its median: the guest
 * shares the host's CPUs, so absolute times drift; ratios hold. DEFERRED
 * defers every sample; TRY_FIRST walks the first sample of each entry at
 * once (the others of the entry defer); PREDICTED, the default, does so
 * only while the task's entries get one sample each.
 */
#define COST_ROUNDS	15

void bench_cost(void)
{
	static const struct { int depth, k; } cases[] = {
		{ 8, 1 }, { 32, 1 }, { 128, 1 }, { 8, 4 }, { 32, 4 }, { 128, 4 },
	};
	int iters = smoke ? 50 : 2000, rounds = smoke ? 1 : COST_ROUNDS;
	double ns[PREDICTED + 1][COST_ROUNDS], med[PREDICTED + 1];
	double d[COST_ROUNDS];
	struct events ev[PREDICTED + 1];
	double walk_ns;
	int di, m, r;
	char name[32];
	struct tally t;
	long walks;

	for (di = 0; di < (int)(sizeof(cases) / sizeof(cases[0])); di++) {
		snprintf(name, sizeof(name), "depth=%d,k=%d", cases[di].depth,
			 cases[di].k);
		for (m = NONE; m <= last_mode; m++)
			events_open(&ev[m], m, cases[di].k, 1024);
		time_walks(0);
		for (r = 0; r < rounds; r++) {
			for (m = NONE; m <= last_mode; m++) {
				if (m >= DEFERRED)
					set_try_first(mode_try_first(m));
				events_enable(&ev[m], 1);
				ns[m][r] = run_loop(cases[di].depth, iters);
				events_enable(&ev[m], 0);
				if (m != NONE)
					tally(&ev[m], &t);	/* empty the buffer */
			}
		}
		set_try_first(0);
		walk_ns = timed_walk_ns(&ev[DEFERRED], cases[di].depth,
					iters / 4, &walks);
		/* per round, then the median: drift between rounds cancels */
		for (m = CLASSIC; m <= last_mode; m++) {
			for (r = 0; r < rounds; r++)
				d[r] = (ns[m][r] - ns[NONE][r]) / cases[di].k;
			emit("cost", name, mode_name[m], "ns_per_sample",
			     median(d, rounds));
		}
		if (walks)
			emit("cost", name, "deferred", "walk_ns_per_sample",
			     walk_ns / cases[di].k);
		for (m = DEFERRED; m <= last_mode; m++) {
			for (r = 0; r < rounds; r++)
				d[r] = (ns[m][r] - ns[NONE][r]) /
				       (ns[CLASSIC][r] - ns[NONE][r]);
			emit("cost", name, mode_name[m], "cost_vs_classic",
			     median(d, rounds));
		}
		for (m = NONE; m <= last_mode; m++) {
			events_close(&ev[m]);
			med[m] = median(ns[m], rounds);
			emit("cost", name, mode_name[m], "ns_per_syscall", med[m]);
		}
		for (m = CLASSIC; m <= last_mode; m++)
			emit("cost", name, mode_name[m], "slowdown_pct",
			     100 * (med[m] / med[NONE] - 1));
	}
}

/*
 * Time inside the kernel, from kprobes: perf_callchain() (the callchain part
 * of the overflow path), perf_event_output_forward() (the whole overflow
 * output) and unwind_deferred_task_work() (the deferred walk and records,
 * once per entry).  Each duration is a return time minus an entry time in
 * the trace; the probes' own cost is measured with an event whose callchain
 * has both parts excluded (perf_callchain() returns at once) and taken off.
 */
#define TRACEFS		"/sys/kernel/tracing/"
#define KPROBE_GROUP	"unwind_bench"

static const char * const probe_fn[NR_PROBES] = {
	"perf_callchain", "perf_event_output_forward", "unwind_deferred_task_work",
};

static int tracefs_write(const char *file, const char *val, int append)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), TRACEFS "%s", file);
	fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -1;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	close(fd);
	return ret;
}

int probes_setup(bool children)
{
	char def[128], pid[32];
	int p;

	tracefs_write("events/" KPROBE_GROUP "/enable", "0", 0);
	if (tracefs_write("kprobe_events", "", 0))
		return -1;
	for (p = 0; p < NR_PROBES; p++) {
		snprintf(def, sizeof(def), "p:" KPROBE_GROUP "/in%d %s\n", p, probe_fn[p]);
		if (tracefs_write("kprobe_events", def, 1))
			return -1;
		snprintf(def, sizeof(def), "r:" KPROBE_GROUP "/out%d %s\n", p, probe_fn[p]);
		if (tracefs_write("kprobe_events", def, 1))
			return -1;
	}
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (tracefs_write("set_event_pid", pid, 0) ||
	    (children && tracefs_write("options/event-fork", "1", 0)) ||
	    tracefs_write("buffer_size_kb", "8192", 0) ||
	    tracefs_write("events/" KPROBE_GROUP "/enable", "1", 0))
		return -1;
	return 0;
}

void probes_teardown(void)
{
	tracefs_write("events/" KPROBE_GROUP "/enable", "0", 0);
	tracefs_write("kprobe_events", "", 0);
	tracefs_write("set_event_pid", "", 0);
	tracefs_write("options/event-fork", "0", 0);
	tracefs_write("buffer_size_kb", "1408", 0);
}

void probes_trace(bool on)
{
	if (on)
		tracefs_write("trace", "", 0);
	tracefs_write("tracing_on", on ? "1" : "0", 0);
}

void probes_collect(double sum_ns[NR_PROBES], long calls[NR_PROBES])
{
	double start[NR_PROBES] = { 0 };
	char line[512], tag[16];
	FILE *f = fopen(TRACEFS "trace", "r");
	int p;

	memset(calls, 0, NR_PROBES * sizeof(calls[0]));
	memset(sum_ns, 0, NR_PROBES * sizeof(sum_ns[0]));
	if (!f)
		die(TRACEFS "trace");
	while (fgets(line, sizeof(line), f)) {
		char *at, *ts;

		if (line[0] == '#')
			continue;
		for (p = 0; p < NR_PROBES; p++) {
			snprintf(tag, sizeof(tag), ": in%d:", p);
			at = strstr(line, tag);
			if (!at) {
				snprintf(tag, sizeof(tag), ": out%d:", p);
				at = strstr(line, tag);
			}
			if (at)
				break;
		}
		if (!at)
			continue;
		*at = '\0';
		ts = strrchr(line, ' ');
		if (!ts)
			continue;
		if (tag[2] == 'i') {
			start[p] = atof(ts) * 1e9;
		} else if (start[p]) {
			sum_ns[p] += atof(ts) * 1e9 - start[p];
			calls[p]++;
			start[p] = 0;
		}
	}
	fclose(f);
}

#define OVERFLOW_ROUNDS	15

/* Mean ns per call of each probed function in one traced run of @mode. */
static void overflow_round(enum mode mode, int depth, int k, int iters,
			   double mean[NR_PROBES], double *tw_per_out,
			   double *walk_per_entry)
{
	double sum[NR_PROBES];
	long calls[NR_PROBES];
	struct events ev;
	struct tally t;
	int p;

	/* NONE: callchain asked for with both parts excluded (probe cost) */
	no_callchain_parts = mode == NONE;
	events_open(&ev, mode == NONE ? CLASSIC : mode, k, 1024);
	no_callchain_parts = 0;
	events_enable(&ev, 1);
	run_loop(depth, iters / 10);	/* warm caches, first allocations */
	time_walks(0);
	probes_trace(true);
	run_loop(depth, iters);
	probes_trace(false);
	events_enable(&ev, 0);
	tally(&ev, &t);
	/* the walk the task work contains, timed in a pass of its own */
	*walk_per_entry = mode == DEFERRED ?
		timed_walk_ns(&ev, depth, iters / 4, NULL) : 0;
	events_close(&ev);
	probes_collect(sum, calls);
	for (p = 0; p < NR_PROBES; p++)
		mean[p] = calls[p] ? sum[p] / calls[p] : 0;
	*tw_per_out = calls[OUT] ? (double)calls[TW] / calls[OUT] : 0;
}

void bench_overflow(void)
{
	static const struct { int depth, k; } cases[] = {
		{ 8, 1 }, { 32, 1 }, { 128, 1 }, { 128, 4 },
	};
	int iters = smoke ? 20 : 2000, rounds = smoke ? 1 : OVERFLOW_ROUNDS;
	double v[3][NR_PROBES][OVERFLOW_ROUNDS], ratio[OVERFLOW_ROUNDS];
	double d[OVERFLOW_ROUNDS], mean[NR_PROBES], per_out, walk;
	double walks[OVERFLOW_ROUNDS];
	int di, m, p, r;
	char name[32];

	pin_cpu0(true);
	if (probes_setup(false)) {
		probes_teardown();
		die("kprobe events in " TRACEFS);
	}
	for (di = 0; di < (int)(sizeof(cases) / sizeof(cases[0])); di++) {
		snprintf(name, sizeof(name), "depth=%d,k=%d", cases[di].depth,
			 cases[di].k);
		for (r = 0; r < rounds; r++) {
			for (m = NONE; m <= DEFERRED; m++) {
				overflow_round(m, cases[di].depth, cases[di].k, iters,
					       mean, &per_out, &walk);
				for (p = 0; p < NR_PROBES; p++)
					v[m][p][r] = mean[p];
				if (m == DEFERRED) {
					ratio[r] = per_out;
					walks[r] = walk;
				}
			}
		}
		/*
		 * Each round's modes ran back to back: take the probes' cost
		 * off within the round, then the median over the rounds
		 * (drift between rounds cancels).
		 */
		per_out = median(ratio, rounds);
		for (m = CLASSIC; m <= DEFERRED; m++) {
			double cc, out, tw = 0;

			for (r = 0; r < rounds; r++)
				d[r] = v[m][CC][r] - v[NONE][CC][r];
			cc = median(d, rounds);
			for (r = 0; r < rounds; r++)
				d[r] = v[m][OUT][r] - v[NONE][OUT][r];
			out = median(d, rounds);
			emit("overflow", name, mode_name[m], "callchain_ns", cc);
			emit("overflow", name, mode_name[m], "overflow_ns", out);
			if (m == DEFERRED) {
				/* one probe pair's cost, as measured on perf_callchain() */
				for (r = 0; r < rounds; r++)
					d[r] = v[m][TW][r] - v[NONE][CC][r];
				tw = median(d, rounds);
				emit("overflow", name, mode_name[m], "task_work_ns_per_entry", tw);
				/* the walk it contains, from the core's counters */
				walk = median(walks, rounds);
				if (walk > 0)	/* none: mainline has no counters */
					emit("overflow", name, mode_name[m],
					     "walk_ns_per_entry", walk);
				tw *= per_out;
			}
			emit("overflow", name, mode_name[m], "total_ns_per_sample", out + tw);
		}
		emit("overflow", name, "none", "probe_pair_ns",
		     median(v[NONE][CC], rounds));
	}
	probes_teardown();
	pin_cpu0(false);
}

/*
 * The same from an interrupt: cpu-clock samples of a task spinning in user
 * space at the bottom of a chain (spin_at()), every sample its own kernel
 * entry. The cost per sample is the spin's slowdown over the samples taken.
 */
#define IRQ_ROUNDS	31
#define IRQ_MODES	(PREDICTED + 1)

/*
 * The host's speed under the emulator moves in phases of a second or so:
 * each round runs the modes in short slices that take turns, so a phase
 * slows them alike.
 */
#define IRQ_SLICES	10

void bench_irqcost(void)
{
	static const int depths[] = { 8, 32, 128 };
	long spins = smoke ? 100000 : 40000000;
	int rounds = smoke ? 1 : IRQ_ROUNDS, di, m, r, i, sl;
	double per[IRQ_MODES][IRQ_ROUNDS], t[IRQ_MODES], t0;
	double ratio[IRQ_MODES][IRQ_ROUNDS];
	double bytes[IRQ_MODES], samples[IRQ_MODES], marked, classic;
	struct events ev[IRQ_MODES];
	struct tally ta;
	char name[48];

	pin_cpu0(true);
	/* What the benchmarks before left behind (rings being freed) settles. */
	if (!smoke)
		sleep(2);
	for (di = 0; di < (int)(sizeof(depths) / sizeof(depths[0])); di++) {
		/* Built with SFrame, try-first walks the chain by its table. */
		snprintf(name, sizeof(name), "cpu-clock,depth=%d%s", depths[di],
			 self_has_sframe() ? ",sframe table" : "");
		for (m = NONE; m < IRQ_MODES; m++) {
			/* 100 us: the spin, not the samples, takes most of the time */
			irq_events_open(&ev[m], m, 0, 100000);
			bytes[m] = samples[m] = 0;
		}
		marked = classic = 0;
		/* round -1 warms the rings and caches up; it is not kept */
		for (r = smoke ? 0 : -1; r < rounds; r++) {
			memset(t, 0, sizeof(t));
			for (sl = 0; sl < IRQ_SLICES; sl++) {
				/* odd slices reverse the order: trends cancel */
				for (i = 0; i < IRQ_MODES; i++) {
					m = sl % 2 ? IRQ_MODES - 1 - i : i;
					if (m >= DEFERRED)
						set_try_first(mode_try_first(m));
					events_enable(&ev[m], 1);
					t0 = now_ns();
					spin_at(depths[di], spins / IRQ_SLICES);
					t[m] += now_ns() - t0;
					events_enable(&ev[m], 0);
				}
			}
			for (m = CLASSIC; m < IRQ_MODES; m++) {
				tally(&ev[m], &ta);
				if (r < 0)
					continue;
				per[m][r] = ta.samples ?
					(t[m] - t[NONE]) / ta.samples : 0;
				bytes[m] += ta.bytes;
				samples[m] += ta.samples;
				if (m == TRY_FIRST) {
					marked += ta.marked;
					classic += ta.classic;
				}
			}
			for (m = DEFERRED; r >= 0 && m < IRQ_MODES; m++)
				ratio[m][r] = per[CLASSIC][r] ?
					per[m][r] / per[CLASSIC][r] : 0;
		}
		for (m = CLASSIC; m < IRQ_MODES; m++) {
			events_close(&ev[m]);
			emit("irqcost", name, mode_name[m], "ns_per_sample",
			     median(per[m], rounds));
			emit("irqcost", name, mode_name[m], "bytes_per_sample",
			     samples[m] ? bytes[m] / samples[m] : 0);
			/* the median of the rounds' own ratios: drift cancels */
			if (m >= DEFERRED)
				emit("irqcost", name, mode_name[m], "cost_vs_classic",
				     median(ratio[m], rounds));
		}
		/* which path the try-first samples took */
		emit("irqcost", name, "try-first", "walked_at_once_pct",
		     samples[TRY_FIRST] ? 100 * classic / samples[TRY_FIRST] : 0);
		emit("irqcost", name, "try-first", "deferred_pct",
		     samples[TRY_FIRST] ? 100 * marked / samples[TRY_FIRST] : 0);
	}
	set_try_first(0);
	pin_cpu0(false);
}
