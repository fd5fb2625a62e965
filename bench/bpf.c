// SPDX-License-Identifier: GPL-2.0
/*
 * BPF's stack helpers on user stacks (bpf): bpf_get_stack() with
 * BPF_F_USER_STACK in a perf_event program (bench/bpf_stack.bpf.c) run by
 * cpu-clock samples, walking by frame pointers as stock 6.12 does
 * (/sys/kernel/unwind_user/bpf_tables 0, mode "stock-fp") or by the unwind
 * tables and frame pointers, with the rules the mm remembers (1, the
 * default). Four figures:
 *
 * Cost per call (case "depth=N"): the helper timed inside the program
 * (bpf_ktime_get_ns() before and after, less one clock read measured in
 * the same sample), over the samples that interrupted user mode, warm:
 * this program's own thread, sampled every 250 us while it spins at the
 * bottom of a chain of spin_at() frames (spin.c) N deep. The chains are
 * harness/bench's builds of spin.c into three libraries next to this
 * program:
 *
 *	libspin-fp.so		frame pointers and no table: built with
 *				-fno-omit-frame-pointer -fno-asynchronous-
 *				unwind-tables -fno-unwind-tables (no rows
 *				for its code) and linked with
 *				--no-eh-frame-hdr, so that it has neither
 *				PT_GNU_EH_FRAME nor PT_GNU_SFRAME: the kernel
 *				finds no table and walks it by frame pointers
 *	libspin-eh.so		no frame pointers, .eh_frame (as Debian builds)
 *	libspin-sframe.so	no frame pointers, an SFrame table
 *
 * Modes: stock-fp and fp (bpf_tables 0 and 1) on libspin-fp.so, eh_frame
 * and sframe (bpf_tables 1) on the other two. The helper asks for as many
 * entries as the chain has frames (at most 127, perf_event_max_stack), so
 * that every mode walks the same frames: the chain's own. The modes take
 * turns in 50 ms slices, in 15 rounds after one that warms up. Rows: us
 * per call and ns per frame (medians of the rounds), frames per call, the
 * share of calls that stored fewer entries than asked (short_pct), the
 * walks that ended at an unmet rule (unmet_pct, from the counters), the
 * clock read taken off, and per frame the ratio to stock-fp and, for the
 * tables, to fp (medians of the rounds' own ratios).
 *
 * Cost per call under churn (case "churn,depth=N"): the same, while a
 * sibling thread of this program maps 64 KiB of anonymous memory, writes
 * its first page and unmaps it, in a loop, on the other CPU (bpf_churn.c),
 * as allocators, garbage collectors and language runtimes do all the
 * time: each mapping moves the mmap lock's sequence count, and none
 * changes the process's text, which the ranges of mappings that the walks
 * in an interrupt use hold through. The churn is anonymous only, the
 * common case: a thread that maps text (a JIT, dlopen()) changes those
 * ranges by design, so that the next walks must check them again, and
 * that is another figure than this one. Modes stock-fp and fp on
 * libspin-fp.so and eh_frame on libspin-eh.so with the churn, and
 * stock-fp without it, in the same rounds, taking turns as above (the
 * three with the churn next to each other: the thread starts and stops
 * once per round and depth). Rows as the depth case's, the ratios being
 * to stock-fp and fp under the same churn, and two more: per frame the
 * ratio to stock-fp without the churn (x_quiet_stock_fp_per_frame, the
 * median of the rounds' own ratios), and the churn's pace, mappings made
 * and unmapped per ms of the slices (churn_maps_per_ms). In the emulated
 * guest the churning vCPU also takes host CPU from the sampled one:
 * x_stock_fp_per_frame compares walks under the same load.
 *
 * The warm-up (case "new process,depth=N"): a new process (fork: a new
 * mm, which has met no mapping and remembers no rule) spins at the bottom
 * of the same chain, bpf_tables 1, and is sampled every 250 us from an
 * event this program enables while it spins, until it has taken 40
 * samples. Its first walks end where a mapping or rule is not met yet and
 * the task gets a warm-up (the deferral core's walk, no record) on its
 * way back to user space. Rows, medians of 7 processes: in us, the
 * warm-up's task work (unwind_deferred_task_work(), kprobes), the walk in
 * it (the core's walk_ns over timed_walks, time_walks on) and the files'
 * headers read per warm-up (sframe_probe_ns: in the walk, or before it
 * when the core first checks the mm's files); frames per warm-up walk,
 * warm-ups per process, and the index (1 = the first) of the first sample
 * whose walk stored every entry asked for (median and max; -1: none did).
 *
 * Debian's python3 from its start (case "python3 start"): python3 running
 * python.c's workload once, sampled at 997 Hz from its exec on, stock-fp
 * against bpf_tables 1 (mode eh_frame: python3 and its libraries have
 * .eh_frame only) in turns, 127 entries asked, 7 runs each. A sample's
 * stack reaches the process's root when its outermost entry is in the
 * entry code of the program or of its ELF interpreter: from the file's
 * entry point (e_entry) to the next function start its .eh_frame_hdr table
 * lists, at the address /proc/PID/maps gives for the file. That is
 * python3's _start, which ends every walk past main (__libc_start_main
 * returns into it), and ld.so's _start and _dl_start_user (no FDE of
 * their own), where the walks of ld.so's start-up end. Samples are
 * counted among those with a user stack (not those in execve() before the
 * new image runs), taken in user or kernel mode. Rows over the runs: the
 * index of the first sample that reaches the root, how many of the first
 * PY_FIRST (200) and of the rest did not (median and max), the samples
 * and the share that reached the root (medians), and with the tables the
 * warm-ups per run and their task work and walk (medians).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bpf_stack.h"
#include "bpf_util.h"


enum { STOCK_FP, FP, EH_FRAME, SFRAME, BPF_MODES };

static const struct {
	const char *name, *lib;
	int tables;
} bpf_modes[BPF_MODES] = {
	{ "stock-fp", "libspin-fp.so", 0 },
	{ "fp", "libspin-fp.so", 1 },
	{ "eh_frame", "libspin-eh.so", 1 },
	{ "sframe", "libspin-sframe.so", 1 },
};

static const int bpf_depths[] = { 8, 32, 128 };
#define BPF_DEPTHS	((int)(sizeof(bpf_depths) / sizeof(bpf_depths[0])))

static unsigned long (*spin[BPF_MODES])(int depth, long n);


static int asked(int depth)
{
	return depth < MAX_STACK ? depth : MAX_STACK;
}

/*
 * Cost per call. The cpu-clock period and a slice's length: some 200
 * samples a slice, a few per cent of the time in the helper.
 */
#define BPF_ROUNDS	15
#define BPF_PERIOD	250000
#define BPF_SLICE_MS	50

struct bpf_slice {
	double ns_per_call, ns_per_frame;
};

/* Sums of the kept rounds, per depth and slot. */
struct bpf_sums {
	double calls, frames, short_calls, clock_ns, errors;
	double churn_maps, churn_ms;	/* with the churn: its mappings, time */
	long c[NKEYS];
};

/*
 * Where a slice is in a case of the cost figures: its mode, and whether
 * the churn thread runs meanwhile.
 */
struct cost_slot {
	int mode;
	bool churn;
};

/* The depth case's: every mode, no churn (slot m is mode m). */
static const struct cost_slot depth_slots[BPF_MODES] = {
	{ STOCK_FP }, { FP }, { EH_FRAME }, { SFRAME },
};

/* The churn case's: stock-fp without the churn, three modes with it. */
static const struct cost_slot churn_slots[] = {
	{ STOCK_FP, false }, { STOCK_FP, true }, { FP, true }, { EH_FRAME, true },
};
#define CHURN_SLOTS	((int)(sizeof(churn_slots) / sizeof(churn_slots[0])))

/* The slot of @n @slots with mode @mode and churn @churn; -1 if none. */
static int slot_of(const struct cost_slot *slots, int n, int mode, bool churn)
{
	int s;

	for (s = 0; s < n; s++)
		if (slots[s].mode == mode && slots[s].churn == churn)
			return s;
	return -1;
}

/* A slice of mode @mode begins: the switch set, the sums cleared. */
static void slice_begin(int mode, int depth, long *c0)
{
	set_tables(bpf_modes[mode].tables);
	set_entries(asked(depth));
	bpf_reset();
	bpf_counters(c0);
}

/* What the slice since slice_begin() took, into @sl (if kept) and @sum. */
static void slice_end(const long *c0, struct bpf_slice *sl,
		      struct bpf_sums *sum)
{
	struct bpf_stack_timing t;
	long c1[NKEYS], d[NKEYS];
	int k;

	bpf_counters(c1);
	bpf_timing(&t);
	if (!sl)
		return;
	sl->ns_per_call = t.calls ?
		((double)t.bracket_ns - t.clock_ns) / t.calls : 0;
	sl->ns_per_frame = t.frames ?
		((double)t.bracket_ns - t.clock_ns) / t.frames : 0;
	sum->calls += t.calls;
	sum->frames += t.frames;
	sum->short_calls += t.short_calls;
	sum->clock_ns += t.clock_ns;
	sum->errors += t.errors;
	bpf_counters_diff(d, c0, c1);
	for (k = 0; k < NKEYS; k++)
		sum->c[k] += d[k];
}

/* A slice of this program's own spin in mode @mode's library. */
static void bpf_slice(int fd, int mode, int depth, long spins,
		      struct bpf_slice *sl, struct bpf_sums *sum)
{
	long c0[NKEYS];

	slice_begin(mode, depth, c0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	spin[mode](depth, spins);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	slice_end(c0, sl, sum);
}

/* The median of the rounds' own ratios of ns per frame: drift cancels. */
static double ratio(const struct bpf_slice *a, const struct bpf_slice *b,
		    int rounds)
{
	double v[BPF_ROUNDS];
	int r;

	for (r = 0; r < rounds; r++)
		v[r] = a[r].ns_per_frame / b[r].ns_per_frame;
	return median(v, rounds);
}

/* @a / @b, or 0. */
static double per(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/*
 * The rows of slot @s of the @n @slots of case @name, from its slices
 * @sl[s][0..rounds): the ratios per frame are to the slots of stock-fp
 * and fp with the same churn, and with the churn to stock-fp without it.
 */
static void emit_cost(const char *name, const struct cost_slot *slots, int n,
		      int s, struct bpf_slice sl[BPF_MODES][BPF_ROUNDS],
		      const struct bpf_sums *sum, int rounds)
{
	int m = slots[s].mode, b;
	const char *mode = bpf_modes[m].name;
	bool churn = slots[s].churn;
	double v[BPF_ROUNDS];
	int r;

	if (sum->errors)
		fprintf(stderr, "deferred_bench: bpf: %s, %s: %.0f errors\n",
			name, mode, sum->errors);
	for (r = 0; r < rounds; r++)
		v[r] = sl[s][r].ns_per_call / 1000;
	emit("bpf", name, mode, "us_per_call", median(v, rounds));
	for (r = 0; r < rounds; r++)
		v[r] = sl[s][r].ns_per_frame;
	emit("bpf", name, mode, "ns_per_frame", median(v, rounds));
	emit("bpf", name, mode, "frames_per_call", per(sum->frames, sum->calls));
	emit("bpf", name, mode, "short_pct",
	     100 * per(sum->short_calls, sum->calls));
	emit("bpf", name, mode, "clock_read_ns", per(sum->clock_ns, sum->calls));
	emit("bpf", name, mode, "calls", sum->calls);
	if (bpf_modes[m].tables)
		emit("bpf", name, mode, "unmet_pct",
		     100.0 * per(sum->c[UNMET], sum->c[WALKS]));
	b = slot_of(slots, n, STOCK_FP, churn);
	if (m > STOCK_FP && b >= 0)
		emit("bpf", name, mode, "x_stock_fp_per_frame",
		     ratio(sl[s], sl[b], rounds));
	b = slot_of(slots, n, FP, churn);
	if (m > FP && b >= 0)
		emit("bpf", name, mode, "x_fp_per_frame",
		     ratio(sl[s], sl[b], rounds));
	b = slot_of(slots, n, STOCK_FP, false);
	if (churn && b >= 0)
		emit("bpf", name, mode, "x_quiet_stock_fp_per_frame",
		     ratio(sl[s], sl[b], rounds));
	if (churn)
		emit("bpf", name, mode, "churn_maps_per_ms",
		     per(sum->churn_maps, sum->churn_ms));
}

/*
 * A case of the cost figures, "@prefix" "depth=N": this program's own
 * thread, in each round and at each depth, spins a slice in each of the
 * @n @slots in turn; rows for the slots whose churn is @churn.
 */
static void cost_case(const char *prefix, const struct cost_slot *slots,
		      int n, bool churn, long spins_per_ms)
{
	int rounds = smoke ? 1 : BPF_ROUNDS, di, s, r, i;
	long spins = spins_per_ms * (smoke ? 5 : BPF_SLICE_MS), maps;
	static struct bpf_slice sl[BPF_DEPTHS][BPF_MODES][BPF_ROUNDS];
	struct bpf_sums sum[BPF_DEPTHS][BPF_MODES] = { };
	char name[48];
	double t0;
	int fd;

	fd = bpf_event_open(0, BPF_PERIOD, 0);
	/* round -1 meets every rule and takes the warm-ups; it is not kept */
	for (r = -1; r < rounds; r++) {
		for (di = 0; di < BPF_DEPTHS; di++) {
			/* odd rounds reverse the order: trends cancel */
			for (i = 0; i < n; i++) {
				s = r % 2 ? n - 1 - i : i;
				churn_set(slots[s].churn);
				maps = churn_maps();
				t0 = now_ns();
				bpf_slice(fd, slots[s].mode, bpf_depths[di], spins,
					  r < 0 ? NULL : &sl[di][s][r],
					  &sum[di][s]);
				if (r < 0 || !slots[s].churn)
					continue;
				sum[di][s].churn_ms += (now_ns() - t0) / 1e6;
				sum[di][s].churn_maps += churn_maps() - maps;
			}
		}
	}
	churn_set(false);
	close(fd);
	set_tables(1);

	for (di = 0; di < BPF_DEPTHS; di++) {
		snprintf(name, sizeof(name), "%sdepth=%d", prefix, bpf_depths[di]);
		for (s = 0; s < n; s++)
			if (slots[s].churn == churn)
				emit_cost(name, slots, n, s, sl[di], &sum[di][s],
					  rounds);
	}
}

/*
 * A process with no table at all (case "no-table process,depth=N"):
 * spin-fp-static, which harness/bench links statically with frame pointers,
 * no unwind tables and no .eh_frame_hdr, spins at the bottom of the chain
 * in a child, sampled with the switch off (stock-fp) and on (fp) in turns
 * of a slice each, as cost_case() samples this program. Its first walk with
 * the switch on asks for a warm-up, which finds that none of its files has
 * a table: from then on its walks are those of frame pointers alone. The
 * child shares CPU 0 with this program, which sleeps while a slice runs.
 */
/* spin-fp-static spinning @depth deep in a child. */
static pid_t spin_static(const char *dir, int depth)
{
	char path[PATH_MAX + 32], arg[16];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/spin-fp-static", dir);
	snprintf(arg, sizeof(arg), "%d", depth);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		execl(path, path, arg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* A slice of that child's spin in mode @mode, sampled by @fd. */
static void child_slice(int fd, int mode, int depth, int slice_ms,
			struct bpf_slice *sl, struct bpf_sums *sum)
{
	long c0[NKEYS];

	slice_begin(mode, depth, c0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	usleep(slice_ms * 1000);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	slice_end(c0, sl, sum);
}

static void bpf_no_table(const char *dir)
{
	int rounds = smoke ? 1 : BPF_ROUNDS, slice_ms = smoke ? 5 : BPF_SLICE_MS;
	static struct bpf_slice sl[BPF_DEPTHS][BPF_MODES][BPF_ROUNDS];
	struct bpf_sums sum[BPF_DEPTHS][BPF_MODES] = { };
	static const int modes[] = { STOCK_FP, FP };
	char name[48];
	int di, r, i, m, fd, status;
	pid_t pid;

	for (di = 0; di < BPF_DEPTHS; di++) {
		pid = spin_static(dir, bpf_depths[di]);
		fd = bpf_event_open(pid, BPF_PERIOD, 0);
		/* round -1 takes the warm-up; it is not kept */
		for (r = -1; r < rounds; r++) {
			for (i = 0; i < 2; i++) {
				m = modes[r % 2 ? 1 - i : i];
				child_slice(fd, m, bpf_depths[di], slice_ms,
					    r < 0 ? NULL : &sl[di][m][r],
					    &sum[di][m]);
			}
		}
		close(fd);
		kill(pid, SIGKILL);
		if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status))
			die("spin-fp-static did not run");
	}
	set_tables(1);

	for (di = 0; di < BPF_DEPTHS; di++) {
		snprintf(name, sizeof(name), "no-table process,depth=%d",
			 bpf_depths[di]);
		for (i = 0; i < 2; i++)
			emit_cost(name, depth_slots, 2, modes[i], sl[di],
				  &sum[di][modes[i]], rounds);
	}
}

/*
 * The warm-up in a new process: a child spins at the bottom of the chain
 * from its start; this program samples it until WARM_SAMPLES samples (or
 * for a second), enabling the event while the child runs in user space.
 * Both are on CPU 0: the child runs while this program sleeps.
 */
#define WARM_RUNS	7
#define WARM_SAMPLES	40

struct warm_run {
	long d[NKEYS];
	int first;		/* first sample with every entry, or -1 */
	double tw_ns;		/* the task work's time, kprobes */
	long tw;		/* and its runs */
};

/* What the task work took, from kprobes, since probes_trace(true). */
static void task_work(double *ns, long *calls)
{
	double sum[NR_PROBES];
	long n[NR_PROBES];

	probes_trace(false);
	probes_collect(sum, n);
	*ns = sum[TW];
	*calls = n[TW];
}

/*
 * The index (from 1) of the first of the @n samples of @s with @len bytes
 * of stack, among those with a user stack; -1 if none.
 */
static int first_full(const struct bpf_stack_sample *s, int n, int len)
{
	int i, k = 0;

	for (i = 0; i < n; i++) {
		if (s[i].len <= 0)
			continue;
		k++;
		if (s[i].len == len)
			return k;
	}
	return -1;
}

static void warm_run(int mode, int depth, struct warm_run *run)
{
	static struct bpf_stack_sample s[BPF_STACK_MAX_SAMPLES];
	int ready[2], fd, st, n, i;
	long c[2][NKEYS];
	pid_t pid;
	char ch;

	if (pipe(ready))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			spin[mode](depth, 1000000);
	}
	if (read(ready[0], &ch, 1) != 1)
		die("a warm-up child did not start");
	close(ready[0]);
	close(ready[1]);
	fd = bpf_event_open(pid, BPF_PERIOD, 0);
	bpf_reset();
	bpf_counters(c[0]);
	probes_trace(true);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < 200 && nr_samples() < WARM_SAMPLES; i++)
		usleep(5000);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	task_work(&run->tw_ns, &run->tw);
	bpf_counters(c[1]);
	close(fd);
	kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) < 0 || !WIFSIGNALED(st))
		die("a warm-up child failed");
	bpf_counters_diff(run->d, c[0], c[1]);
	n = bpf_samples(s);
	run->first = first_full(s, n, asked(depth) * sizeof(__u64));
}

/*
 * Rows @metric_median and @metric_max of @n values, which it sorts; -1
 * (never) sorts last, and stays -1.
 */
static void emit_median_max(const char *c, const char *mode,
			    const char *metric, double *v, int n)
{
	char name[64];
	int i;

	for (i = 0; i < n; i++)
		if (v[i] < 0)
			v[i] = INFINITY;
	qsort(v, n, sizeof(double), cmp_double);
	snprintf(name, sizeof(name), "%s_median", metric);
	emit("bpf", c, mode, name, isinf(v[n / 2]) ? -1 : v[n / 2]);
	snprintf(name, sizeof(name), "%s_max", metric);
	emit("bpf", c, mode, name, isinf(v[n - 1]) ? -1 : v[n - 1]);
}

static void bpf_warm(void)
{
	enum { TASK_WORK, WALK, PROBE, FRAMES, WARMUPS_RUN, FIRST, NV };
	static const char * const metric[NV] = {
		"warmup_task_work_us", "warmup_walk_us", "warmup_probe_us",
		"warmup_frames", "warmups_per_process", "first_full_sample",
	};
	int runs = smoke ? 1 : WARM_RUNS, di, m, r, k;
	double v[NV][WARM_RUNS];
	struct warm_run run;
	char name[48];

	set_tables(1);
	time_walks(1);
	for (di = 0; di < BPF_DEPTHS; di++) {
		snprintf(name, sizeof(name), "new process,depth=%d",
			 bpf_depths[di]);
		set_entries(asked(bpf_depths[di]));
		for (m = FP; m < BPF_MODES; m++) {
			for (r = 0; r < runs; r++) {
				warm_run(m, bpf_depths[di], &run);
				v[TASK_WORK][r] = per(run.tw_ns, run.tw) / 1000;
				v[WALK][r] = per(run.d[WALK_NS], run.d[TIMED]) / 1000;
				v[PROBE][r] = per(run.d[PROBE_NS],
						  run.d[WARMUPS]) / 1000;
				v[FRAMES][r] = per(run.d[TIMED_FRAMES],
						   run.d[TIMED]);
				v[WARMUPS_RUN][r] = run.d[WARMUPS];
				v[FIRST][r] = run.first;
			}
			for (k = 0; k < FIRST; k++)
				emit("bpf", name, bpf_modes[m].name, metric[k],
				     median(v[k], runs));
			emit_median_max(name, bpf_modes[m].name, metric[FIRST],
					v[FIRST], runs);
		}
	}
	time_walks(0);
}

struct range {
	unsigned long start, end;
};

/* The address process @pid maps the start of file @path at, or 0. */
static unsigned long map_start(pid_t pid, const char *path)
{
	unsigned long start = 0, lo, off;
	char file[64], line[PATH_MAX + 128], name[PATH_MAX];
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	f = fopen(file, "r");
	if (!f)
		return 0;
	while (!start && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %s", &lo, &off, name) == 3 &&
		    !off && !strcmp(name, path))
			start = lo;
	}
	fclose(f);
	return start;
}

/* The pointer encodings of the .eh_frame_hdr every linker writes. */
#define EH_HDR_ENC	0x3b031b01	/* version 1, pcrel, udata4, datarel */

/*
 * Where the entry code of the file @path is in process @pid (see the top
 * of this file): into @r; false where it cannot be told.
 */
static bool entry_code(pid_t pid, const char *path, struct range *r)
{
	unsigned long lowest = ULONG_MAX, next = ULONG_MAX, load, loc;
	Elf64_Phdr ph, hdr = { .p_type = PT_NULL };
	__s32 *table = NULL;
	__u32 head[3];
	bool ok = false;
	Elf64_Ehdr eh;
	int fd, i;

	fd = open(path, O_RDONLY);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			goto out;
		if (ph.p_type == PT_LOAD && ph.p_vaddr < lowest)
			lowest = ph.p_vaddr & ~(unsigned long)(getpagesize() - 1);
		if (ph.p_type == PT_GNU_EH_FRAME)
			hdr = ph;
	}
	if (hdr.p_type != PT_GNU_EH_FRAME ||
	    pread(fd, head, sizeof(head), hdr.p_offset) != sizeof(head) ||
	    head[0] != EH_HDR_ENC || head[2] > hdr.p_filesz / 8)
		goto out;
	table = malloc(head[2] * 8);
	if (!table || pread(fd, table, head[2] * 8, hdr.p_offset + 12) !=
		      (ssize_t)head[2] * 8)
		goto out;
	/* Pairs of function start and FDE, relative to the header. */
	for (i = 0; i < (int)head[2]; i++) {
		loc = hdr.p_vaddr + table[2 * i];
		if (loc > eh.e_entry && loc < next)
			next = loc;
	}
	load = map_start(pid, path);
	if (!load || next == ULONG_MAX)
		goto out;
	r->start = eh.e_entry - lowest + load;
	r->end = next - lowest + load;
	ok = true;
out:
	free(table);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* The real path of the ELF interpreter of @path, into @interp. */
static bool interpreter(const char *path, char *interp)
{
	char name[PATH_MAX] = "";
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, i;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh)) {
		for (i = 0; i < eh.e_phnum; i++) {
			if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
			    sizeof(ph))
				break;
			if (ph.p_type == PT_INTERP && ph.p_filesz < sizeof(name) &&
			    pread(fd, name, ph.p_filesz, ph.p_offset) ==
			    (ssize_t)ph.p_filesz)
				break;
		}
	}
	close(fd);
	return name[0] && realpath(name, interp);
}

/* The process's root frames: its program's and its interpreter's entry code. */
static bool root_ranges(pid_t pid, struct range r[2])
{
	char exe[PATH_MAX], interp[PATH_MAX], link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	return entry_code(pid, exe, &r[0]) && interpreter(exe, interp) &&
	       entry_code(pid, interp, &r[1]);
}

#define PY_RUNS		7
#define PY_FIRST	200
#define PY_PERIOD	1003009		/* 997 Hz */

struct py_run {
	int samples, first, first_n, after_n, no_user;
	long d[NKEYS];
	double tw_ns;		/* the task work's time, kprobes */
	long tw;		/* and its runs */
};

/* One python3 from its exec to its exit, sampled by the program. */
static void py_run(int tables, long iters, struct py_run *run)
{
	static struct bpf_stack_sample s[BPF_STACK_MAX_SAMPLES];
	long c[2][NKEYS];
	struct range r[2];
	struct py py;
	int fd, n, i;
	bool roots;

	set_tables(tables);
	set_entries(MAX_STACK);
	bpf_reset();
	py_fork(&py, iters);
	fd = bpf_event_open(py.pid, PY_PERIOD, 1);
	bpf_counters(c[0]);
	probes_trace(true);
	py_go(&py);
	py_pass(&py);
	roots = root_ranges(py.pid, r);
	py_stop(&py);
	task_work(&run->tw_ns, &run->tw);
	bpf_counters(c[1]);
	close(fd);
	if (!roots)
		die("finding python3's root frames");
	bpf_counters_diff(run->d, c[0], c[1]);

	n = bpf_samples(s);
	memset(run, 0, offsetof(struct py_run, d));
	run->first = -1;
	for (i = 0; i < n; i++) {
		unsigned long a = s[i].outermost;
		bool root;

		if (s[i].len <= 0) {
			run->no_user++;
			continue;
		}
		run->samples++;
		root = (a >= r[0].start && a < r[0].end) ||
		       (a >= r[1].start && a < r[1].end);
		if (root && run->first < 0)
			run->first = run->samples;
		if (root)
			continue;
		if (run->samples <= PY_FIRST)
			run->first_n++;
		else
			run->after_n++;
	}
	if (n == BPF_STACK_MAX_SAMPLES)
		fprintf(stderr, "deferred_bench: bpf: python3 took more than %d samples\n",
			n);
}

static void bpf_python(void)
{
	static const int modes[] = { STOCK_FP, EH_FRAME };
	enum { FIRST, FIRST_N, AFTER_N, SAMPLES, ROOTED, WARMUPS_RUN, WALK,
	       TASK_WORK, NV };
	double v[2][NV][PY_RUNS];
	int runs = smoke ? 1 : PY_RUNS, m, r;
	const char *name = "python3 start,997 Hz", *mode;
	struct py_run run;

	if (access(PYTHON, X_OK)) {
		fprintf(stderr, "deferred_bench: bpf: python3 skipped: " PYTHON ": %s\n",
			strerror(errno));
		return;
	}
	time_walks(1);
	/* the modes take turns */
	for (r = 0; r < runs; r++) {
		for (m = 0; m < 2; m++) {
			mode = bpf_modes[modes[m]].name;
			py_run(bpf_modes[modes[m]].tables, smoke ? 20000 : 200000,
			       &run);
			v[m][FIRST][r] = run.first;
			v[m][FIRST_N][r] = run.first_n;
			v[m][AFTER_N][r] = run.after_n;
			v[m][SAMPLES][r] = run.samples;
			v[m][ROOTED][r] = run.samples ? 100.0 *
				(run.samples - run.first_n - run.after_n) /
				run.samples : 0;
			v[m][WARMUPS_RUN][r] = run.d[WARMUPS];
			v[m][WALK][r] = per(run.d[WALK_NS], run.d[TIMED]) / 1000;
			v[m][TASK_WORK][r] = per(run.tw_ns, run.tw) / 1000;
			/* each run, for the record */
			fprintf(stderr, "deferred_bench: bpf: python3 %s: %d samples (%d more with no user stack), first rooted %d, unrooted %d + %d, %ld unmet, %ld warm-ups\n",
				mode, run.samples, run.no_user, run.first,
				run.first_n, run.after_n, run.d[UNMET],
				run.d[WARMUPS]);
		}
	}
	time_walks(0);
	set_tables(1);

	for (m = 0; m < 2; m++) {
		mode = bpf_modes[modes[m]].name;
		emit_median_max(name, mode, "first_rooted", v[m][FIRST], runs);
		emit_median_max(name, mode, "unrooted_of_first_200",
				v[m][FIRST_N], runs);
		emit_median_max(name, mode, "unrooted_after_200",
				v[m][AFTER_N], runs);
		emit("bpf", name, mode, "samples", median(v[m][SAMPLES], runs));
		emit("bpf", name, mode, "rooted_pct", median(v[m][ROOTED], runs));
		if (!bpf_modes[modes[m]].tables)
			continue;
		emit("bpf", name, mode, "warmups", median(v[m][WARMUPS_RUN], runs));
		emit("bpf", name, mode, "warmup_task_work_us",
		     median(v[m][TASK_WORK], runs));
		emit("bpf", name, mode, "warmup_walk_us", median(v[m][WALK], runs));
	}
}

/* Local profiling aid: BPFPROF="mode:depth:slices" runs one mode only. */
static int bpf_prof(const char *dir, long spins_per_ms)
{
	const char *e = getenv("BPFPROF");
	struct bpf_sums sum = { };
	int m, depth, slices, i, fd, status;
	struct bpf_slice sl;
	char mname[16];
	pid_t pid;

	if (!e || sscanf(e, "%15[^:]:%d:%d", mname, &depth, &slices) != 3)
		return 0;
	if (!strcmp(mname, "notable-stock") || !strcmp(mname, "notable-fp")) {
		m = strcmp(mname, "notable-fp") ? STOCK_FP : FP;
		pid = spin_static(dir, depth);
		fd = bpf_event_open(pid, BPF_PERIOD, 0);
		for (i = 0; i < slices + 1; i++)
			child_slice(fd, m, depth, BPF_SLICE_MS, &sl, &sum);
		close(fd);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	} else {
		for (m = 0; m < BPF_MODES; m++)
			if (!strcmp(bpf_modes[m].name, mname))
				break;
		if (m == BPF_MODES)
			die("BPFPROF mode");
		fd = bpf_event_open(0, BPF_PERIOD, 0);
		for (i = 0; i < slices + 1; i++)
			bpf_slice(fd, m, depth, spins_per_ms * BPF_SLICE_MS,
				  &sl, &sum);
		close(fd);
	}
	printf("bpfprof %s depth %d calls %.0f frames %.0f\n", mname, depth,
	       sum.calls, sum.frames);
	return 1;
}

void bench_bpf(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	void *lib[BPF_MODES] = { };
	long spins_per_ms;
	double t0;
	int m;

	if (access(BPF_TABLES, W_OK)) {
		fprintf(stderr, "deferred_bench: bpf skipped: " BPF_TABLES ": %s\n",
			strerror(errno));
		return;
	}
	if (self_dir(dir, sizeof(dir)))
		die("/proc/self/exe");
	bpf_load(dir);
	for (m = 0; m < BPF_MODES; m++) {
		snprintf(path, sizeof(path), "%s/%s", dir, bpf_modes[m].lib);
		lib[m] = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		spin[m] = lib[m] ? dlsym(lib[m], "spin_at") : NULL;
		if (!spin[m]) {
			/* harness/bench builds them */
			fprintf(stderr, "deferred_bench: bpf: %s\n", dlerror());
			exit(1);
		}
		/* The text paged in. */
		spin[m](128, 1);
	}
	pin_cpu0(true);
	/* How many turns of the spin take a millisecond, events off. */
	t0 = now_ns();
	spin[FP](8, 1000000);
	spins_per_ms = 1000000 / ((now_ns() - t0) / 1e6);
	if (spins_per_ms < 1)
		spins_per_ms = 1;
	if (bpf_prof(dir, spins_per_ms))
		goto out;

	cost_case("", depth_slots, BPF_MODES, false, spins_per_ms);
	cost_case("churn,", churn_slots, CHURN_SLOTS, true, spins_per_ms);
	bpf_no_table(dir);
	/* the warm-ups' task work, in the children */
	if (probes_setup(true)) {
		probes_teardown();
		die("kprobe events");
	}
	bpf_warm();
	bpf_python();
	probes_teardown();
out:
	pin_cpu0(false);
	for (m = 0; m < BPF_MODES; m++)
		dlclose(lib[m]);
	bpf_object__close(bs.obj);
}
