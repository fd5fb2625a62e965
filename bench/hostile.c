// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile tables (hostile): how long the walk in an interrupt may take when
 * a process gives it the worst unwind tables it can, against the classic
 * frame-pointer walk of the same frames. The walk is the one BPF's stack
 * helpers, perf's samples of user space (try-first) and the first sample
 * of a kernel entry (under the runqueue lock for a context switch) make:
 * it must stay within the same bound everywhere.
 *
 * The process is "hostile" (bench/hostile_main.c with bench/gen_hostile.py's
 * chain, which harness/bench links with its code at a fixed address): it
 * spins at the bottom of a chain of 127 frames, each with a frame pointer
 * and a valid .eh_frame row whose search takes the most probes of a
 * 250,000-entry table, whose FDE holds some 3,000 CFA instructions before
 * the call's row, and whose return address falls in the same set of the
 * mm's rule cache as the 125 others. It is sampled every HOSTILE_PERIOD
 * by a cpu-clock event running bench/bpf_stack.bpf.c, which asks
 * bpf_get_stack() for 127 entries, in two modes by turns, a slice each:
 * stock-fp (/sys/kernel/unwind_user/bpf_tables 0: the classic walk, 127
 * frames by frame pointers, as 6.12 and mainline walk) and tables (1).
 * HOSTILE_ROUNDS rounds after one that is not kept.
 *
 * Rows per mode, over every call of the kept rounds that interrupted user
 * mode: the helper's time per call in us (the program's bracket less the
 * slice's mean clock read), median, p99 and max; frames per call; short_pct
 * (calls that stored fewer entries than asked); wrong (calls whose last
 * entry is not the spin or one of the chain's return addresses: a walk
 * that followed garbage); and for tables, stop_budget_nofault per call (the
 * counter of walks in an interrupt that spent their budget) and the ratios
 * of its median and max to stock-fp's.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bpf_util.h"

#define HOSTILE_ROUNDS	10
#define HOSTILE_PERIOD	1000000		/* ns: some 100 samples a slice */
#define HOSTILE_SLICE_MS	300
#define HOSTILE_MAX_RAS	256
#define HOSTILE_MAX_CALLS	(HOSTILE_ROUNDS * BPF_STACK_MAX_SAMPLES)

enum { H_STOCK, H_TABLES, H_MODES };

static const char * const hostile_modes[H_MODES] = { "stock-fp", "tables" };

/* The chain's spin and return addresses: the right last entries. */
static unsigned long ras[HOSTILE_MAX_RAS];
static int nr_ras;

static void read_ras(const char *prog)
{
	char cmd[PATH_MAX + 64];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s --ras", prog);
	f = popen(cmd, "r");
	if (!f)
		die(cmd);
	while (nr_ras < HOSTILE_MAX_RAS && fscanf(f, "%lx", &ras[nr_ras]) == 1)
		nr_ras++;
	if (pclose(f) || nr_ras < 2)
		die("hostile --ras");
}

static bool right_end(unsigned long ip)
{
	int i;

	for (i = 0; i < nr_ras; i++)
		if (ras[i] == ip)
			return true;
	return false;
}

struct hostile_sums {
	double us[HOSTILE_MAX_CALLS];
	long n, frames, short_calls, wrong, nofault_stops;
};

/* A slice's calls into @s, if kept. */
static void hostile_slice(int fd, int mode, struct hostile_sums *s)
{
	static struct bpf_stack_sample smp[BPF_STACK_MAX_SAMPLES];
	int slice_ms = smoke ? 10 : HOSTILE_SLICE_MS, n, i;
	struct bpf_stack_timing t;
	long c0[NKEYS], c1[NKEYS];
	double clock;

	set_tables(mode == H_TABLES);
	bpf_reset();
	bpf_counters(c0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	usleep(slice_ms * 1000);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	bpf_counters(c1);
	bpf_timing(&t);
	if (!s)
		return;
	clock = t.calls ? (double)t.clock_ns / t.calls : 0;
	n = bpf_samples(smp);
	for (i = 0; i < n && s->n < HOSTILE_MAX_CALLS; i++) {
		if (!smp[i].user || smp[i].len <= 0)
			continue;
		s->us[s->n++] = (smp[i].ns - clock) / 1000;
		s->frames += smp[i].len / sizeof(__u64);
		s->short_calls += smp[i].len < MAX_STACK * (int)sizeof(__u64);
		s->wrong += !right_end(smp[i].outermost);
	}
	s->nofault_stops += c1[NOFAULT_STOPS] - c0[NOFAULT_STOPS];
}

/* The @p-th percentile of the sorted @v[0..n). */
static double pct(const double *v, long n, double p)
{
	long i = (long)(p / 100 * (n - 1) + 0.5);

	return n ? v[i] : 0;
}

static void emit_mode(int m, struct hostile_sums *s, struct hostile_sums *st)
{
	const char *mode = hostile_modes[m], *c = "depth=127";
	double n = s->n ? s->n : 1;

	qsort(s->us, s->n, sizeof(s->us[0]), cmp_double);
	emit("hostile", c, mode, "us_per_call", pct(s->us, s->n, 50));
	emit("hostile", c, mode, "us_p99", pct(s->us, s->n, 99));
	emit("hostile", c, mode, "us_max", s->n ? s->us[s->n - 1] : 0);
	emit("hostile", c, mode, "frames_per_call", s->frames / n);
	emit("hostile", c, mode, "short_pct", 100 * s->short_calls / n);
	emit("hostile", c, mode, "wrong", s->wrong);
	emit("hostile", c, mode, "calls", s->n);
	if (m != H_TABLES || !st->n)
		return;
	emit("hostile", c, mode, "stop_budget_nofault_per_call",
	     s->nofault_stops / n);
	emit("hostile", c, mode, "x_stock_fp_median",
	     pct(s->us, s->n, 50) / pct(st->us, st->n, 50));
	emit("hostile", c, mode, "x_stock_fp_max",
	     s->us[s->n - 1] / st->us[st->n - 1]);
}

void bench_hostile(void)
{
	static struct hostile_sums sum[H_MODES];
	char dir[PATH_MAX], prog[PATH_MAX + 32];
	int rounds = smoke ? 1 : HOSTILE_ROUNDS, r, i, m, fd, status;
	pid_t pid;

	if (access(BPF_TABLES, W_OK)) {
		fprintf(stderr, "deferred_bench: hostile skipped: " BPF_TABLES
			": not writable\n");
		return;
	}
	if (self_dir(dir, sizeof(dir)))
		die("/proc/self/exe");
	snprintf(prog, sizeof(prog), "%s/hostile", dir);
	read_ras(prog);
	bpf_load(dir);
	set_entries(MAX_STACK);
	pin_cpu0(true);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	fd = bpf_event_open(pid, HOSTILE_PERIOD, 0);
	/* round -1 pages the tables in and is not kept */
	for (r = -1; r < rounds; r++) {
		for (i = 0; i < H_MODES; i++) {
			m = r % 2 ? H_MODES - 1 - i : i;
			hostile_slice(fd, m, r < 0 ? NULL : &sum[m]);
		}
	}
	close(fd);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status))
		die("hostile did not run");
	set_tables(1);
	pin_cpu0(false);
	bpf_object__close(bs.obj);

	for (m = 0; m < H_MODES; m++)
		emit_mode(m, &sum[m], &sum[H_STOCK]);
}
