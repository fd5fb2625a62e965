// SPDX-License-Identifier: GPL-2.0
/*
 * cpu-clock samples of Debian's own python3 (python): a program built
 * without frame pointers and without SFrame, with .eh_frame only, sampled
 * as irqcost samples its spin, classic against deferred with try-first
 * off and on. Classic frame pointers cannot walk its chains; the deferred
 * walk and the walk in the interrupt take them by .eh_frame. The workload
 * (py_fork() and the rest, bench.h) serves bpf.c too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define PY_DEPTH	"20"
#define PY_ROUNDS	15
#define PY_SLICES	10
#define PY_MODES	(TRY_FIRST + 1)

/*
 * For each byte read on standard input, a recursion PY_DEPTH deep with an
 * arithmetic loop of argv[1] turns at its bottom, then a byte back. Each
 * level calls the next through map(), as C code calls Python: Python
 * 3.11 runs a Python function's call of another in the caller's C frame,
 * where the native chain would not grow with the depth. 20 levels make
 * some 90 native frames: fewer than perf's 127 (perf_event_max_stack).
 */
static const char py_script[] =
	"import os, sys\n"
	"n = int(sys.argv[1])\n"
	"def down(d):\n"
	"    if d:\n"
	"        return sum(map(down, (d - 1,)))\n"
	"    x = 0\n"
	"    for i in range(n):\n"
	"        x = (x * 31 + i) & 0xffff\n"
	"    return x\n"
	"while os.read(0, 1):\n"
	"    down(" PY_DEPTH ")\n"
	"    os.write(1, b'.')\n";

/* One pass of the workload: its time in ns, the round trip included. */
double py_pass(struct py *py)
{
	double t0 = now_ns();
	char c = '.';

	if (write(py->to, &c, 1) != 1 || read(py->from, &c, 1) != 1)
		die("python3 did not answer");
	return now_ns() - t0;
}

/*
 * Fork the workload with @iters turns a pass: the child waits for a byte
 * on its standard input (py_go()) before it execs python3, so that events
 * can be opened on it first.
 */
void py_fork(struct py *py, long iters)
{
	int in[2], out[2];
	char n[32], c;

	snprintf(n, sizeof(n), "%ld", iters);
	if (pipe(in) || pipe(out))
		die("pipe");
	py->pid = fork();
	if (py->pid < 0)
		die("fork");
	if (!py->pid) {
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
			_exit(127);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		if (read(0, &c, 1) != 1)
			_exit(127);
		execl(PYTHON, "python3", "-c", py_script, n, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	py->to = in[1];
	py->from = out[0];
}

void py_go(struct py *py)
{
	if (write(py->to, "g", 1) != 1)
		die("starting python3");
}

/* Start the workload with @iters turns a pass, and run one pass. */
static void py_start(struct py *py, long iters)
{
	py_fork(py, iters);
	py_go(py);
	py_pass(py);		/* started, and its code warm */
}

/* End of input: python3 leaves its loop and exits. */
void py_stop(struct py *py)
{
	int st;

	close(py->to);
	close(py->from);
	if (waitpid(py->pid, &st, 0) < 0 || st)
		die("python3 failed");
}

static void tally_add(struct tally *sum, const struct tally *t)
{
	sum->bytes += t->bytes;
	sum->samples += t->samples;
	sum->deferred += t->deferred;
	sum->lost += t->lost;
	sum->marked += t->marked;
	sum->classic += t->classic;
	sum->user_frames += t->user_frames;
	sum->deferred_frames += t->deferred_frames;
}

/*
 * irqcost's method on another process: the four modes take turns in
 * slices of each round, each slice one pass of the workload timed from
 * this side; the cost per sample is a mode's time over none's, over its
 * samples, and the ratio to classic is the median of the rounds' own.
 * Besides: the bytes per sample, the user frames per sample (classic
 * samples' user parts and deferred records alike: try-first's chains are
 * as complete as the deferred walk's when the two agree), and which path
 * try-first's samples took. The ring is read after each slice: a slice
 * fills a good part of it with chains this deep.
 */
void bench_python(void)
{
	long iters = smoke ? 2000 : 40000;
	int rounds = smoke ? 1 : PY_ROUNDS, m, r, i, sl;
	double per[PY_MODES][PY_ROUNDS], ratio[PY_MODES][PY_ROUNDS];
	const char *name = "cpu-clock,python3";
	struct tally all[PY_MODES], in_round[PY_MODES], ta;
	struct events ev[PY_MODES];
	double t[PY_MODES];
	void (*sigpipe)(int);
	struct py py;

	if (access(PYTHON, X_OK)) {
		fprintf(stderr, "deferred_bench: python skipped: " PYTHON ": %s\n",
			strerror(errno));
		return;
	}
	/* python3 dying must not kill this program with SIGPIPE */
	sigpipe = signal(SIGPIPE, SIG_IGN);
	pin_cpu0(true);		/* python3 inherits it */
	/* What the benchmarks before left behind (rings being freed) settles. */
	if (!smoke)
		sleep(2);
	py_start(&py, iters);
	for (m = NONE; m < PY_MODES; m++)
		irq_events_open(&ev[m], m, py.pid, 100000);
	memset(all, 0, sizeof(all));
	/* round -1 warms the rings and caches up; it is not kept */
	for (r = smoke ? 0 : -1; r < rounds; r++) {
		memset(t, 0, sizeof(t));
		memset(in_round, 0, sizeof(in_round));
		for (sl = 0; sl < PY_SLICES; sl++) {
			/* odd slices reverse the order: trends cancel */
			for (i = 0; i < PY_MODES; i++) {
				m = sl % 2 ? TRY_FIRST - i : i;
				if (m >= DEFERRED)
					set_try_first(mode_try_first(m));
				events_enable(&ev[m], 1);
				t[m] += py_pass(&py);
				events_enable(&ev[m], 0);
				if (m == NONE)
					continue;
				tally(&ev[m], &ta);
				tally_add(&in_round[m], &ta);
			}
		}
		if (r < 0)
			continue;
		for (m = CLASSIC; m < PY_MODES; m++) {
			per[m][r] = in_round[m].samples ?
				(t[m] - t[NONE]) / in_round[m].samples : 0;
			tally_add(&all[m], &in_round[m]);
		}
		for (m = DEFERRED; m < PY_MODES; m++)
			ratio[m][r] = per[CLASSIC][r] ?
				per[m][r] / per[CLASSIC][r] : 0;
	}
	for (m = NONE; m < PY_MODES; m++)
		events_close(&ev[m]);
	py_stop(&py);
	set_try_first(TRY_FIRST_DEFAULT);
	pin_cpu0(false);
	signal(SIGPIPE, sigpipe);

	for (m = CLASSIC; m < PY_MODES; m++) {
		struct tally *a = &all[m];
		double chains = a->classic + a->deferred;

		if (a->lost)
			fprintf(stderr, "deferred_bench: python: %s lost %ld records\n",
				mode_name[m], a->lost);
		emit("python", name, mode_name[m], "ns_per_sample",
		     median(per[m], rounds));
		emit("python", name, mode_name[m], "bytes_per_sample",
		     a->samples ? a->bytes / a->samples : 0);
		emit("python", name, mode_name[m], "user_frames_per_sample",
		     chains ? (a->user_frames + a->deferred_frames) / chains : 0);
		/* the median of the rounds' own ratios: drift cancels */
		if (m >= DEFERRED)
			emit("python", name, mode_name[m], "cost_vs_classic",
			     median(ratio[m], rounds));
	}
	/* which path the try-first samples took */
	m = TRY_FIRST;
	emit("python", name, "try-first", "walked_at_once_pct",
	     all[m].samples ? 100.0 * all[m].classic / all[m].samples : 0);
	emit("python", name, "try-first", "deferred_pct",
	     all[m].samples ? 100.0 * all[m].marked / all[m].samples : 0);
}
