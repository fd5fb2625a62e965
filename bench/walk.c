// SPDX-License-Identifier: GPL-2.0
/*
 * The deferred walker's cost per frame (walk), by frame pointers or, in
 * the SFrame build, by the table; and what finding SFrame tables costs a
 * new process, and the kernel memory a process that found them holds
 * (discovery).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/*
 * The deferred walker's cost per frame, from the unwinder's counters: the
 * median of rounds in which the depths take turns (absolute times drift).
 * The same program built with an SFrame table (harness/bench builds both)
 * reports as mode "sframe", with the share of frames the table gave.
 */
#define WALK_ROUNDS	9

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

/* Whether this program's own file has an SFrame table. */
bool self_has_sframe(void)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	bool found = false;
	int fd = open("/proc/self/exe", O_RDONLY), i;

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	for (i = 0; i < eh.e_phnum && !found; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			break;
		found = ph.p_type == PT_GNU_SFRAME;
	}
out:
	if (fd >= 0)
		close(fd);
	return found;
}

#define WALK_CASES	8
#define WALK_MODES	2

#define COLD_RUNS	5

/*
 * A first walk: in a new process (a new mm, which has met no table and
 * remembers no rule), the chain of @fn at @depth walked once. Return: ns
 * per frame, without the time spent reading files' headers (discovery,
 * which the discovery bench measures), or -1.
 */
static double cold_walk(long (*fn)(int depth), int depth)
{
	static const char * const keys[] = {
		"walk_ns", "timed_frames", "sframe_probe_ns",
	};
	long c[2][3];
	double v = -1;
	struct events ev;
	int fd[2], k, st;
	pid_t pid;

	if (pipe(fd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		events_open(&ev, DEFERRED, 1, 16);
		for (k = 0; k < 3; k++)
			c[0][k] = read_long(COUNTERS, keys[k]);
		events_enable(&ev, 1);
		fn(depth);
		events_enable(&ev, 0);
		for (k = 0; k < 3; k++)
			c[1][k] = read_long(COUNTERS, keys[k]);
		if (c[1][1] > c[0][1])
			v = (double)(c[1][0] - c[0][0] - (c[1][2] - c[0][2])) /
			    (c[1][1] - c[0][1]);
		if (write(fd[1], &v, sizeof(v)) != sizeof(v))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (read(fd[0], &v, sizeof(v)) != sizeof(v))
		v = -1;
	close(fd[0]);
	if (waitpid(pid, &st, 0) < 0 || st)
		die("a cold walk child failed");
	return v;
}

/*
 * The walker's cost per frame by each method, in the same run: by frame
 * pointers ("fp"), then by this program's .eh_frame ("eh_frame", every
 * program has one) or, built with an SFrame table, by that ("sframe").
 * Each mode turns only its own method on, and the modes take turns in
 * every round; the table's time over frame pointers' is the median of
 * the rounds' ratios. Besides the time: the share of frames the tables
 * gave, and per frame the rules the mm remembered (hits) and the rules
 * looked up in a table (lookups).
 */
void bench_walk(void)
{
	/* One function recursing, then four functions in turn. */
	static const struct {
		int depth;
		long (*fn)(int depth);
		const char *name;
	} cases[WALK_CASES] = {
		{ 8, descend, "depth=8" }, { 32, descend, "depth=32" },
		{ 128, descend, "depth=128" }, { 256, descend, "depth=256" },
		{ 500, descend, "depth=500" },
		{ 8, hop0, "depth=8,4 functions" },
		{ 32, hop0, "depth=32,4 functions" },
		{ 128, hop0, "depth=128,4 functions" },
	};
	static const char * const keys[] = {
		"walk_ns", "timed_frames", "frames", "walks", "sframe_frames",
		"eh_frame_frames", "sframe_row_hits", "rule_lookups",
	};
	enum { NS, TF, FR, WK, SF, EH, HITS, LOOKUPS, NKEYS };
	struct {
		const char *mode, *methods;
	} modes[WALK_MODES];
	int iters = smoke ? 20 : 100, rounds = smoke ? 1 : WALK_ROUNDS;
	double per_frame[WALK_MODES][WALK_CASES][WALK_ROUNDS];
	double sum[WALK_MODES][WALK_CASES][NKEYS] = { };
	long before[NKEYS], v;
	double ratio[WALK_CASES][WALK_ROUNDS];
	int di, i, r, k, mi;
	struct events ev;
	struct tally t;

	/* Frame pointers first: the other mode's ratio is to them. */
	modes[0].mode = "fp";
	modes[0].methods = "fp";
	modes[1].mode = self_has_sframe() ? "sframe" : "eh_frame";
	modes[1].methods = self_has_sframe() ? "fp sframe" : "fp eh_frame";

	time_walks(1);
	events_open(&ev, DEFERRED, 1, 256);
	for (r = 0; r < rounds; r++) {
		for (mi = 0; mi < WALK_MODES; mi++) {
			if (!methods_set(modes[mi].methods))
				die("writing " METHODS);
			for (di = 0; di < WALK_CASES; di++) {
				for (k = 0; k < NKEYS; k++)
					before[k] = read_long(COUNTERS, keys[k]);
				events_enable(&ev, 1);
				for (i = 0; i < iters; i++)
					cases[di].fn(cases[di].depth);
				events_enable(&ev, 0);
				tally(&ev, &t);	/* empty the buffer */
				for (k = 0; k < NKEYS; k++) {
					v = read_long(COUNTERS, keys[k]);
					sum[mi][di][k] += v >= 0 && before[k] >= 0 ?
							  v - before[k] : 0;
				}
				per_frame[mi][di][r] =
					(double)(read_long(COUNTERS, "walk_ns") - before[NS]) /
					(read_long(COUNTERS, "timed_frames") - before[TF]);
			}
		}
	}
	events_close(&ev);
	time_walks(0);
	methods_set("fp sframe eh_frame");
	/* The ratio of each round, before the times are sorted. */
	for (di = 0; di < WALK_CASES; di++)
		for (r = 0; r < rounds; r++)
			ratio[di][r] = per_frame[1][di][r] / per_frame[0][di][r];
	for (mi = 0; mi < WALK_MODES; mi++) {
		for (di = 0; di < WALK_CASES; di++) {
			const char *name = cases[di].name, *mode = modes[mi].mode;
			double *c = sum[mi][di];

			qsort(per_frame[mi][di], rounds, sizeof(double), cmp_double);
			emit("walk", name, mode, "ns_per_frame",
			     per_frame[mi][di][rounds / 2]);
			emit("walk", name, mode, "frames_per_walk", c[FR] / c[WK]);
			emit("walk", name, mode, "table_share",
			     (c[SF] + c[EH]) / c[FR]);
			emit("walk", name, mode, "rule_hits_per_frame",
			     c[HITS] / c[FR]);
			emit("walk", name, mode, "lookups_per_frame",
			     c[LOOKUPS] / c[FR]);
			if (!mi)
				continue;
			qsort(ratio[di], rounds, sizeof(double), cmp_double);
			emit("walk", name, mode, "x_fp_same_rounds",
			     ratio[di][rounds / 2]);
		}
	}

	/* First walks: every rule looked up, in new processes. */
	time_walks(1);
	for (mi = 0; mi < WALK_MODES; mi++) {
		double cold[COLD_RUNS];
		int n = smoke ? 1 : COLD_RUNS;

		if (!methods_set(modes[mi].methods))
			die("writing " METHODS);
		for (di = 0; di < WALK_CASES; di++) {
			for (r = 0; r < n; r++)
				cold[r] = cold_walk(cases[di].fn, cases[di].depth);
			qsort(cold, n, sizeof(double), cmp_double);
			emit("walk", cases[di].name, modes[mi].mode,
			     "first_walk_ns_per_frame", cold[n / 2]);
		}
	}
	time_walks(0);
	methods_set("fp sframe eh_frame");
}

/*
 * What finding SFrame tables costs (the SFrame build only). A new process's
 * first walk reads the headers of each file it meets (the program, libc,
 * ld.so, the vDSO): its walk time against its second walk's, the files it
 * probed, and the time per file, which is also what a library seen for the
 * first time costs. Then the kernel memory a process that found its tables
 * holds: SUnreclaim with many processes alive that walked once, against as
 * many that never walked.
 */
#define DISC_PROCS	31
#define DISC_MEM_PROCS	200

struct disc {
	double first_ns, warm_ns, files, probe_ns;
};

static void disc_child(int fd)
{
	static const char * const keys[] = {
		"walk_ns", "sframe_files_probed", "sframe_probe_ns",
	};
	long c[3][3];
	struct events ev;
	struct disc d;
	int w, k;

	events_open(&ev, DEFERRED, 1, 16);
	for (w = 0; w < 3; w++) {
		for (k = 0; k < 3; k++)
			c[w][k] = read_long(COUNTERS, keys[k]);
		if (w == 2)
			break;
		events_enable(&ev, 1);
		descend(8);
		events_enable(&ev, 0);
	}
	d.first_ns = c[1][0] - c[0][0];
	d.warm_ns = c[2][0] - c[1][0];
	d.files = c[1][1] - c[0][1];
	d.probe_ns = c[1][2] - c[0][2];
	if (write(fd, &d, sizeof(d)) != sizeof(d))
		_exit(1);
	_exit(0);
}

/* Run @fn(@arg) in a child process; wait for it; it must succeed. */
static void run_child(void (*fn)(int), int arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		die("fork");
	if (!pid)
		fn(arg);
	if (waitpid(pid, &st, 0) < 0 || st)
		die("a discovery child failed");
}

/* Children say they are ready on the first pipe and wait for the second. */
static int mem_ready[2], mem_go[2];

static void disc_mem_child(int walk)
{
	struct events ev;
	char c;

	close(mem_go[1]);
	/* Both passes hold an event: only the walk differs. */
	events_open(&ev, DEFERRED, 1, 16);
	if (walk) {
		events_enable(&ev, 1);
		descend(8);
		events_enable(&ev, 0);
	}
	if (write(mem_ready[1], "r", 1) != 1 || read(mem_go[0], &c, 1) < 0)
		_exit(1);
	_exit(0);
}

void bench_discovery(void)
{
	double first[DISC_PROCS], warm[DISC_PROCS], per_file[DISC_PROCS];
	int n = smoke ? 3 : DISC_PROCS, m = smoke ? 20 : DISC_MEM_PROCS;
	int i, pass, fd[2];
	long slab[2];
	double files = 0;
	char name[32], c;
	struct disc d;

	if (!self_has_sframe())
		goto memory;
	if (pipe(fd))
		die("pipe");
	time_walks(1);
	for (i = 0; i < n; i++) {
		run_child(disc_child, fd[1]);
		if (read(fd[0], &d, sizeof(d)) != sizeof(d))
			die("reading a discovery child's figures");
		first[i] = d.first_ns / 1000;
		warm[i] = d.warm_ns / 1000;
		per_file[i] = d.files ? d.probe_ns / d.files / 1000 : 0;
		files = d.files;
	}
	time_walks(0);
	close(fd[0]);
	close(fd[1]);
	qsort(first, n, sizeof(double), cmp_double);
	qsort(warm, n, sizeof(double), cmp_double);
	qsort(per_file, n, sizeof(double), cmp_double);
	emit("discovery", "new process,depth=8", "sframe", "first_walk_us", first[n / 2]);
	emit("discovery", "new process,depth=8", "sframe", "second_walk_us", warm[n / 2]);
	emit("discovery", "new process,depth=8", "sframe", "files_probed", files);
	emit("discovery", "a file seen first", "sframe", "probe_us_per_file",
	     per_file[n / 2]);

memory:
	/*
	 * Pass 0: processes that never walk; pass 1: each walked once. The
	 * build without a table gives what deferral itself holds per process
	 * (the task's unwind cache); the difference is the SFrame table's.
	 */
	for (pass = 0; pass < 2; pass++) {
		if (pipe(mem_ready) || pipe(mem_go))
			die("pipe");
		for (i = 0; i < m; i++) {
			pid_t pid = fork();

			if (pid < 0)
				die("fork");
			if (!pid)
				disc_mem_child(pass);
		}
		for (i = 0; i < m; i++)
			if (read(mem_ready[0], &c, 1) != 1)
				die("a memory child failed");
		slab[pass] = read_long("/proc/meminfo", "SUnreclaim");
		close(mem_go[1]);	/* all go */
		while (wait(NULL) > 0)
			;
		close(mem_go[0]);
		close(mem_ready[0]);
		close(mem_ready[1]);
	}
	snprintf(name, sizeof(name), "processes=%d", m);
	emit("discovery", name, self_has_sframe() ? "sframe" : "deferred",
	     "slab_bytes_per_process", (slab[1] - slab[0]) * 1024.0 / m);
	if (!self_has_sframe())
		return;
	emit("discovery", "per process", "sframe", "table_bytes",
	     read_long(COUNTERS, "sframe_mm_bytes"));
	emit("discovery", "per process", "sframe", "table_entries",
	     read_long(COUNTERS, "sframe_mm_entries"));
}
