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
 * from user space, deferred with try-first off and on), complete (samples
 * whose user chain reaches the outermost frame when the stack pages are not
 * resident), walk (the deferred walker's cost
 * per frame), memory (slab memory per task that unwound).
 *
 * Samples come from a tracepoint on getppid(): a syscall-heavy workload
 * where each kernel entry is sampled by K events, from the bottom of a
 * frame-pointer call chain of known depth. Needs root, tracefs and the
 * deferred unwinder's counters in debugfs.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS	16
#define COUNTERS	"/sys/kernel/debug/unwind_deferred/counters"

static int smoke;		/* --smoke: a few iterations, to keep it alive */
static long tp_getppid;
static int no_callchain_parts;	/* callchain asked for, both parts excluded */

static void die(const char *what)
{
	fprintf(stderr, "deferred_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void emit(const char *bench, const char *c, const char *mode,
		 const char *metric, double value)
{
	printf("%s\t%s\t%s\t%s\t%.6g\n", bench, c, mode, metric, value);
	fflush(stdout);
}

static long read_long(const char *path, const char *key)
{
	char k[64];
	long v;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld%*[^\n]", k, &v) == 2) {
		size_t n = strlen(k);

		if (n && k[n - 1] == ':')
			k[n - 1] = '\0';
		if (!strcmp(k, key)) {
			fclose(f);
			return v;
		}
	}
	fclose(f);
	return -1;
}

/* A call chain of @depth frame-pointer frames, then one getppid(). */
static __attribute__((noipa)) long descend(int depth)
{
	long ret;

	if (depth > 1)
		ret = descend(depth - 1);
	else
		ret = syscall(__NR_getppid);
	asm volatile("" ::: "memory");	/* not a tail call */
	return ret;
}

/*
 * The same depth through four functions in turn, each with its own frame
 * size, so that no two frames in a row share a return address: the walk
 * bench's worst case for an unwinder that looks each frame up.
 */
static long hop0(int depth);

#define HOP(name, next, bytes)						\
static __attribute__((noipa)) long name(int depth)			\
{									\
	volatile char pad[bytes];					\
	long ret;							\
									\
	pad[0] = (char)depth;						\
	ret = depth > 1 ? next(depth - 1) : syscall(__NR_getppid);	\
	asm volatile("" ::: "memory");	/* not a tail call */		\
	return ret + pad[0];						\
}
HOP(hop3, hop0, 200)
HOP(hop2, hop3, 56)
HOP(hop1, hop2, 1000)
HOP(hop0, hop1, 8)

/*
 * DEFERRED runs with kernel.unwind_deferred_try_first off where that
 * matters (samples from user space), TRY_FIRST with it on.
 */
enum mode { NONE, CLASSIC, DEFERRED, TRY_FIRST };
static const char * const mode_name[] = {
	"none", "classic", "deferred", "try-first",
};

#define TRY_FIRST_SYSCTL "/proc/sys/kernel/unwind_deferred_try_first"

static void set_try_first(int on)
{
	FILE *f = fopen(TRY_FIRST_SYSCTL, "w");

	if (!f || fprintf(f, "%d\n", on) < 0 || fclose(f))
		die(TRY_FIRST_SYSCTL);
}

struct events {
	int n, fd[MAX_EVENTS];
	void *rb;
	size_t pages;
};

/*
 * @k getppid events of @mode for @pid on @cpu, all into the first one's
 * ring buffer.
 */
static void events_open_on(struct events *ev, enum mode mode, int k,
			   size_t pages, pid_t pid, int cpu, int inherit)
{
	struct perf_event_attr attr;
	int i;

	memset(ev, 0, sizeof(*ev));
	ev->n = mode == NONE ? 0 : k;
	ev->pages = pages;
	for (i = 0; i < ev->n; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_TRACEPOINT;
		attr.config = tp_getppid;
		attr.sample_period = 1;
		/* What perf record asks for by default, with -g. */
		attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				   PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
				   PERF_SAMPLE_CALLCHAIN;
		attr.sample_id_all = 1;
		attr.disabled = 1;
		attr.inherit = inherit;
		attr.exclude_callchain_user = no_callchain_parts;
		attr.exclude_callchain_kernel = no_callchain_parts;
		attr.defer_callchain = mode >= DEFERRED;
		/* One receiver, like perf's tracking event. */
		attr.defer_output = mode >= DEFERRED && i == 0;
		ev->fd[i] = syscall(__NR_perf_event_open, &attr, pid, cpu, -1, 0);
		if (ev->fd[i] < 0)
			die("perf_event_open");
		if (!i) {
			ev->rb = mmap(NULL, (pages + 1) * getpagesize(),
				      PROT_READ | PROT_WRITE, MAP_SHARED,
				      ev->fd[0], 0);
			if (ev->rb == MAP_FAILED)
				die("mmap");
		} else if (ioctl(ev->fd[i], PERF_EVENT_IOC_SET_OUTPUT, ev->fd[0])) {
			die("PERF_EVENT_IOC_SET_OUTPUT");
		}
	}
}

static void events_open(struct events *ev, enum mode mode, int k, size_t pages)
{
	events_open_on(ev, mode, k, pages, 0, -1, 0);
}

static void events_enable(struct events *ev, int on)
{
	int i;

	for (i = 0; i < ev->n; i++)
		ioctl(ev->fd[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

static void events_close(struct events *ev)
{
	int i;

	if (ev->n)
		munmap(ev->rb, (ev->pages + 1) * getpagesize());
	for (i = 0; i < ev->n; i++)
		close(ev->fd[i]);
}

struct tally {
	double bytes;		/* all records */
	long samples, deferred, lost;
	long marked, classic;	/* samples that deferred; with a classic user part */
	double sample_bytes, deferred_bytes;
	long user_nr;		/* user entries of a classic sample */
};

/* Walk the ring buffer (it must not have wrapped) and tally the records. */
static void tally(struct events *ev, struct tally *t)
{
	struct perf_event_mmap_page *pg = ev->rb;
	char *data = (char *)ev->rb + getpagesize();
	__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	size_t size = ev->pages * getpagesize();
	__u64 off, i;

	memset(t, 0, sizeof(*t));
	t->bytes = head - pg->data_tail;
	for (off = pg->data_tail; off + 8 <= head;) {
		struct perf_event_header *h = (void *)(data + off % size);
		const __u64 *p = (const void *)(h + 1);

		if (!h->size)
			break;
		if (h->type == PERF_RECORD_SAMPLE) {
			t->samples++;
			t->sample_bytes += h->size;
			/* ip, tid, time, period, nr, ips */
			for (i = 0; off % size + h->size <= size && i < p[4]; i++) {
				if (p[5 + i] == PERF_CONTEXT_USER) {
					t->user_nr = p[4] - i - 1;
					t->classic++;
				}
				t->marked += p[5 + i] == PERF_CONTEXT_USER_DEFERRED;
			}
		} else if (h->type == PERF_RECORD_CALLCHAIN_DEFERRED) {
			t->deferred++;
			t->deferred_bytes += h->size;
		} else if (h->type == PERF_RECORD_LOST) {
			t->lost += p[1];
		}
		off += h->size;
	}
	pg->data_tail = head;
}

/* Ring-buffer bytes per sample, against the ideal for the case. */
static void bench_bytes(void)
{
	static const int depths[] = { 8, 32, 128 }, ks[] = { 1, 4, 16 };
	int entries = smoke ? 20 : 400, di, ki, e;
	struct tally c, d;
	struct events ev;
	char name[64];
	double ideal;

	for (di = 0; di < 3; di++) {
		for (ki = 0; ki < 3; ki++) {
			int depth = depths[di], k = ks[ki];

			snprintf(name, sizeof(name), "depth=%d,k=%d", depth, k);
			/* 8 MiB: 400 entries of 16 classic depth-128 samples fit. */
			events_open(&ev, CLASSIC, k, 2048);
			events_enable(&ev, 1);
			for (e = 0; e < entries; e++)
				descend(depth);
			events_enable(&ev, 0);
			tally(&ev, &c);
			events_close(&ev);

			events_open(&ev, DEFERRED, k, 2048);
			events_enable(&ev, 1);
			for (e = 0; e < entries; e++)
				descend(depth);
			events_enable(&ev, 0);
			tally(&ev, &d);
			events_close(&ev);

			if (!c.samples || !d.samples || c.lost || d.lost) {
				fprintf(stderr, "deferred_bench: bytes %s: %ld/%ld samples, %ld/%ld lost\n",
					name, c.samples, d.samples, c.lost, d.lost);
				continue;
			}
			/*
			 * Ideal: each sample keeps its kernel part and two
			 * words instead of the user part; one record per
			 * entry holds the user part once.
			 */
			ideal = c.sample_bytes / c.samples - 8.0 * (1 + c.user_nr) + 16 +
				(8 + 16 + 8.0 * c.user_nr + 16) / k;
			emit("bytes", name, "classic", "bytes_per_sample", c.bytes / c.samples);
			emit("bytes", name, "deferred", "bytes_per_sample", d.bytes / d.samples);
			emit("bytes", name, "ideal", "bytes_per_sample", ideal);
			emit("bytes", name, "deferred", "records_per_entry",
			     (double)d.deferred / entries);
			emit("bytes", name, "classic", "user_frames", c.user_nr);
		}
	}
}

/* What a small buffer that nobody reads keeps, and what it loses. */
static void bench_lost(void)
{
	int entries = smoke ? 50 : 2000, k = 4, e, m;
	const char *c = "depth=32,k=4,32KiB";
	struct events ev;
	struct tally t;

	for (m = CLASSIC; m <= DEFERRED; m++) {
		events_open(&ev, m, k, 8);	/* 32 KiB */
		events_enable(&ev, 1);
		for (e = 0; e < entries; e++)
			descend(32);
		events_enable(&ev, 0);
		tally(&ev, &t);
		events_close(&ev);
		emit("lost", c, mode_name[m], "samples_kept", t.samples);
		emit("lost", c, mode_name[m], "samples_lost_pct",
		     100.0 * (entries * k - t.samples) / (entries * k));
		if (m == DEFERRED)
			emit("lost", c, mode_name[m], "records_kept", t.deferred);
	}
}

static double run_loop(int depth, int iters)
{
	double t0 = now_ns();
	int i;

	for (i = 0; i < iters; i++)
		descend(depth);
	return (now_ns() - t0) / iters;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return v[n / 2];
}

/*
 * Walks are timed only when asked (or for an NMI sample): timing costs two
 * clock reads per walk. The benches that report walk time turn it on; the
 * cost benches measure with it off and time the walk in a pass of their
 * own. Kernels that time every walk have no switch: nothing to do there.
 */
#define TIME_WALKS	"/sys/kernel/debug/unwind_deferred/time_walks"

static void time_walks(int on)
{
	FILE *f = fopen(TIME_WALKS, "w");

	if (!f)
		return;
	fprintf(f, "%d\n", on);
	fclose(f);
}

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
 * The workload's time per entry, and what each sample costs it. The three
 * modes take turns, round after round, and each keeps its median: the
 * guest shares the host's CPUs, so absolute times drift; ratios hold.
 */
#define COST_ROUNDS	15

static void bench_cost(void)
{
	static const struct { int depth, k; } cases[] = {
		{ 8, 1 }, { 32, 1 }, { 128, 1 }, { 8, 4 }, { 32, 4 }, { 128, 4 },
	};
	int iters = smoke ? 50 : 2000, rounds = smoke ? 1 : COST_ROUNDS;
	double ns[3][COST_ROUNDS], med[3], d[COST_ROUNDS];
	struct events ev[3];
	double walk_ns;
	int di, m, r;
	char name[32];
	struct tally t;
	long walks;

	for (di = 0; di < (int)(sizeof(cases) / sizeof(cases[0])); di++) {
		snprintf(name, sizeof(name), "depth=%d,k=%d", cases[di].depth,
			 cases[di].k);
		for (m = NONE; m <= DEFERRED; m++)
			events_open(&ev[m], m, cases[di].k, 1024);
		time_walks(0);
		for (r = 0; r < rounds; r++) {
			for (m = NONE; m <= DEFERRED; m++) {
				events_enable(&ev[m], 1);
				ns[m][r] = run_loop(cases[di].depth, iters);
				events_enable(&ev[m], 0);
				if (m != NONE)
					tally(&ev[m], &t);	/* empty the buffer */
			}
		}
		walk_ns = timed_walk_ns(&ev[DEFERRED], cases[di].depth,
					iters / 4, &walks);
		/* per round, then the median: drift between rounds cancels */
		for (m = CLASSIC; m <= DEFERRED; m++) {
			for (r = 0; r < rounds; r++)
				d[r] = (ns[m][r] - ns[NONE][r]) / cases[di].k;
			emit("cost", name, mode_name[m], "ns_per_sample",
			     median(d, rounds));
		}
		if (walks)
			emit("cost", name, "deferred", "walk_ns_per_sample",
			     walk_ns / cases[di].k);
		for (r = 0; r < rounds; r++)
			d[r] = (ns[DEFERRED][r] - ns[NONE][r]) /
			       (ns[CLASSIC][r] - ns[NONE][r]);
		emit("cost", name, "deferred", "cost_vs_classic", median(d, rounds));
		for (m = NONE; m <= DEFERRED; m++) {
			events_close(&ev[m]);
			med[m] = median(ns[m], rounds);
			emit("cost", name, mode_name[m], "ns_per_syscall", med[m]);
		}
		emit("cost", name, "classic", "slowdown_pct", 100 * (med[CLASSIC] / med[NONE] - 1));
		emit("cost", name, "deferred", "slowdown_pct", 100 * (med[DEFERRED] / med[NONE] - 1));
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

enum probe { CC, OUT, TW, NR_PROBES };
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

static int probes_setup(void)
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
	    tracefs_write("buffer_size_kb", "8192", 0) ||
	    tracefs_write("events/" KPROBE_GROUP "/enable", "1", 0))
		return -1;
	return 0;
}

static void probes_teardown(void)
{
	tracefs_write("events/" KPROBE_GROUP "/enable", "0", 0);
	tracefs_write("kprobe_events", "", 0);
	tracefs_write("set_event_pid", "", 0);
	tracefs_write("buffer_size_kb", "1408", 0);
}

/* Sum and count the durations of each probed function in the trace. */
static void probes_collect(double sum_ns[NR_PROBES], long calls[NR_PROBES])
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

/* Run on CPU 0 only (@on), or on every CPU again. */
static void pin_cpu0(bool on)
{
	cpu_set_t set;
	int cpu;

	CPU_ZERO(&set);
	for (cpu = 0; cpu < (on ? 1 : (int)sysconf(_SC_NPROCESSORS_ONLN)) &&
	     cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

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
	tracefs_write("trace", "", 0);
	time_walks(0);
	tracefs_write("tracing_on", "1", 0);
	run_loop(depth, iters);
	tracefs_write("tracing_on", "0", 0);
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

static void bench_overflow(void)
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
	if (probes_setup()) {
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
				emit("overflow", name, mode_name[m], "walk_ns_per_entry",
				     median(walks, rounds));
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
 * space at the bottom of a chain, every sample its own kernel entry. The
 * cost per sample is the spin's slowdown over the samples taken.
 */
static __attribute__((noipa)) unsigned long spin_at(int depth, long n)
{
	unsigned long x = 0;
	long i;

	if (depth > 1)
		x = spin_at(depth - 1, n);
	else
		for (i = 0; i < n; i++)
			x = x * 31 + i;
	asm volatile("" : "+r"(x));
	return x;
}

static void irq_events_open(struct events *ev, enum mode mode, pid_t pid,
			    long period)
{
	struct perf_event_attr attr;

	memset(ev, 0, sizeof(*ev));
	if (mode == NONE)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = period;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	attr.sample_id_all = 1;
	attr.disabled = 1;
	attr.exclude_kernel = 0;
	attr.defer_callchain = mode >= DEFERRED;
	attr.defer_output = mode >= DEFERRED;
	ev->n = 1;
	ev->pages = 1024;
	ev->fd[0] = syscall(__NR_perf_event_open, &attr, pid, -1, -1, 0);
	if (ev->fd[0] < 0)
		die("perf_event_open cpu-clock");
	ev->rb = mmap(NULL, (ev->pages + 1) * getpagesize(),
		      PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd[0], 0);
	if (ev->rb == MAP_FAILED)
		die("mmap");
}

#define IRQ_ROUNDS	31
#define IRQ_MODES	(TRY_FIRST + 1)

/*
 * The host's speed under the emulator moves in phases of a second or so:
 * each round runs the modes in short slices that take turns, so a phase
 * slows them alike.
 */
#define IRQ_SLICES	10

static void bench_irqcost(void)
{
	static const int depths[] = { 8, 32, 128 };
	long spins = smoke ? 100000 : 40000000;
	int rounds = smoke ? 1 : IRQ_ROUNDS, di, m, r, i, sl;
	double per[IRQ_MODES][IRQ_ROUNDS], t[IRQ_MODES], t0;
	double ratio[IRQ_MODES][IRQ_ROUNDS];
	double bytes[IRQ_MODES], samples[IRQ_MODES], marked, classic;
	struct events ev[IRQ_MODES];
	struct tally ta;
	char name[32];

	pin_cpu0(true);
	/* What the benchmarks before left behind (rings being freed) settles. */
	if (!smoke)
		sleep(2);
	for (di = 0; di < (int)(sizeof(depths) / sizeof(depths[0])); di++) {
		snprintf(name, sizeof(name), "cpu-clock,depth=%d", depths[di]);
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
					m = sl % 2 ? TRY_FIRST - i : i;
					if (m >= DEFERRED)
						set_try_first(m == TRY_FIRST);
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
	set_try_first(1);
	pin_cpu0(false);
}

/*
 * Completeness: a thread runs on a stack in a shared memory file whose
 * pages it drops (MADV_DONTNEED) right before each sampled system call, so
 * the sampling context finds them not resident.
 */
#define STACK_SIZE	(1 << 20)

struct complete_arg {
	char *stack;
	int depth, rounds;
	pid_t tid;
	pthread_barrier_t start;
	unsigned long root_ra;
	int spin, stop;		/* spin in user space at the bottom until stop */
	int spinning;		/* ... and it is there */
};

static __attribute__((noipa)) void dropping_descend(struct complete_arg *a,
						     int depth)
{
	/*
	 * Frames spread over many stack pages, farther apart than the
	 * 64 KiB that fault-around maps back on the first refault.
	 */
	char pad[4096];

	asm volatile("" : : "r"(pad) : "memory");
	if (depth > 1) {
		dropping_descend(a, depth - 1);
	} else if (a->spin) {
		/* another thread drops the pages; cpu-clock samples the spin */
		__atomic_store_n(&a->spinning, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&a->stop, __ATOMIC_RELAXED))
			;
	} else {
		madvise(a->stack, STACK_SIZE, MADV_DONTNEED);
		syscall(__NR_getppid);
	}
	asm volatile("" ::: "memory");
}

static __attribute__((noipa)) void complete_root(struct complete_arg *a)
{
	int i;

	a->root_ra = (unsigned long)__builtin_return_address(0);
	for (i = 0; i < a->rounds; i++)
		dropping_descend(a, a->depth);
}

static void *complete_thread(void *p)
{
	struct complete_arg *a = p;

	a->tid = gettid();
	pthread_barrier_wait(&a->start);	/* until watched */
	complete_root(a);
	return NULL;
}

/*
 * Chains holding @ra, over all chains of the mode: CLASSIC the samples,
 * DEFERRED the records, TRY_FIRST both the samples with a classic user
 * part (a stack walked at once) and the records (a deferred one).
 */
static void count_complete(struct events *ev, unsigned long ra, long *with,
			   long *total, enum mode which)
{
	struct perf_event_mmap_page *pg = ev->rb;
	char *data = (char *)ev->rb + getpagesize();
	__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	__u64 off, i, nr;
	const __u64 *ips;
	int classic;

	*with = 0;
	*total = 0;
	for (off = pg->data_tail; off < head;) {
		struct perf_event_header *h = (void *)(data + off % (ev->pages * getpagesize()));
		const __u64 *p = (const void *)(h + 1);

		if (!h->size)
			break;
		off += h->size;
		if (h->type == PERF_RECORD_CALLCHAIN_DEFERRED && which != CLASSIC) {
			nr = p[1];
			ips = &p[2];
		} else if (h->type == PERF_RECORD_SAMPLE && which != DEFERRED) {
			/* ip, tid, time, period, nr, ips */
			nr = p[4];
			ips = &p[5];
			for (i = 0, classic = which == CLASSIC; i < nr; i++)
				classic |= ips[i] == PERF_CONTEXT_USER;
			if (!classic)
				continue;
		} else {
			continue;
		}
		(*total)++;
		for (i = 0; i < nr; i++)
			if (ips[i] == ra) {
				(*with)++;
				break;
			}
	}
	pg->data_tail = head;
}

/* Start the thread on the dropped stack; returns once it is known. */
static void complete_start(struct complete_arg *a, pthread_t *th)
{
	pthread_attr_t attr;

	pthread_barrier_init(&a->start, NULL, 2);
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, a->stack, STACK_SIZE);
	if (pthread_create(th, &attr, complete_thread, a))
		die("pthread_create");
	while (!__atomic_load_n(&a->tid, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void complete_end(struct complete_arg *a, pthread_t th)
{
	pthread_join(th, NULL);
	a->tid = 0;
	pthread_barrier_destroy(&a->start);
}

static void bench_complete(void)
{
	struct complete_arg a = { .depth = 64, .rounds = smoke ? 5 : 100 };
	const char *c = "depth=64,stack not resident";
	struct timespec ms = { 0, 1000 * 1000 };
	long with, total, n0, u0;
	struct events ev;
	pthread_t th;
	int fd, m, i;

	fd = memfd_create("bench-stack", 0);
	if (fd < 0 || ftruncate(fd, STACK_SIZE))
		die("memfd");
	a.stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a.stack == MAP_FAILED)
		die("mmap stack");
	for (m = CLASSIC; m <= DEFERRED; m++) {
		complete_start(&a, &th);
		/* Watch just that thread. */
		events_open_on(&ev, m, 1, 1024, a.tid, -1, 0);
		events_enable(&ev, 1);
		pthread_barrier_wait(&a.start);
		complete_end(&a, th);
		events_enable(&ev, 0);
		count_complete(&ev, a.root_ra, &with, &total, m);
		events_close(&ev);
		emit("complete", c, mode_name[m], "chains_reaching_root_pct",
		     total ? 100.0 * with / total : 0);
		emit("complete", c, mode_name[m], "chains", total);
	}

	/*
	 * cpu-clock samples of a thread spinning in user space on that
	 * stack, whose pages the main thread drops every millisecond, with
	 * try-first on: the samples that find a page missing must defer.
	 */
	set_try_first(1);
	a.spin = 1;
	a.rounds = 1;
	a.stop = 0;
	a.spinning = 0;
	complete_start(&a, &th);
	irq_events_open(&ev, TRY_FIRST, a.tid, 1000000);	/* 1 ms */
	pthread_barrier_wait(&a.start);
	/* Only samples of the spin: none of the thread's start or exit. */
	while (!__atomic_load_n(&a.spinning, __ATOMIC_ACQUIRE))
		sched_yield();
	n0 = read_long(COUNTERS, "try_not_resident");
	u0 = read_long(COUNTERS, "try_used");
	events_enable(&ev, 1);
	for (i = 0; i < (smoke ? 50 : 1000); i++) {
		madvise(a.stack, STACK_SIZE, MADV_DONTNEED);
		nanosleep(&ms, NULL);
	}
	events_enable(&ev, 0);
	__atomic_store_n(&a.stop, 1, __ATOMIC_RELAXED);
	complete_end(&a, th);
	n0 = read_long(COUNTERS, "try_not_resident") - n0;
	u0 = read_long(COUNTERS, "try_used") - u0;
	sleep(1);	/* the last records */
	count_complete(&ev, a.root_ra, &with, &total, TRY_FIRST);
	events_close(&ev);
	c = "cpu-clock,depth=64,stack not resident";
	emit("complete", c, "try-first", "chains_reaching_root_pct",
	     total ? 100.0 * with / total : 0);
	emit("complete", c, "try-first", "chains", total);
	emit("complete", c, "try-first", "not_resident_deferred_pct",
	     n0 + u0 > 0 ? 100.0 * n0 / (n0 + u0) : 0);
	munmap(a.stack, STACK_SIZE);
	close(fd);
}

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
static bool self_has_sframe(void)
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

static void bench_walk(void)
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
	int iters = smoke ? 20 : 100, rounds = smoke ? 1 : WALK_ROUNDS;
	double per_frame[WALK_CASES][WALK_ROUNDS], frames[WALK_CASES] = { };
	double by_table[WALK_CASES] = { };
	const char *mode = self_has_sframe() ? "sframe" : "deferred";
	long ns0, fr0, tf0, w0, sf0;
	struct events ev;
	int di, i, r;
	struct tally t;

	time_walks(1);
	events_open(&ev, DEFERRED, 1, 256);
	for (r = 0; r < rounds; r++) {
		for (di = 0; di < WALK_CASES; di++) {
			ns0 = read_long(COUNTERS, "walk_ns");
			tf0 = read_long(COUNTERS, "timed_frames");
			fr0 = read_long(COUNTERS, "frames");
			w0 = read_long(COUNTERS, "walks");
			sf0 = read_long(COUNTERS, "sframe_frames");
			events_enable(&ev, 1);
			for (i = 0; i < iters; i++)
				cases[di].fn(cases[di].depth);
			events_enable(&ev, 0);
			tally(&ev, &t);	/* empty the buffer */
			per_frame[di][r] = (double)(read_long(COUNTERS, "walk_ns") - ns0) /
					   (read_long(COUNTERS, "timed_frames") - tf0);
			frames[di] = (double)(read_long(COUNTERS, "frames") - fr0) /
				     (read_long(COUNTERS, "walks") - w0);
			if (sf0 >= 0)
				by_table[di] = (double)(read_long(COUNTERS, "sframe_frames") - sf0) /
					       (read_long(COUNTERS, "frames") - fr0);
		}
	}
	events_close(&ev);
	time_walks(0);
	for (di = 0; di < WALK_CASES; di++) {
		const char *name = cases[di].name;

		qsort(per_frame[di], rounds, sizeof(double), cmp_double);
		emit("walk", name, mode, "ns_per_frame", per_frame[di][rounds / 2]);
		emit("walk", name, mode, "frames_per_walk", frames[di]);
		emit("walk", name, mode, "sframe_share", by_table[di]);
	}
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

static void bench_discovery(void)
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

/* Threads that each unwound once, and the slab memory that costs. */
static pthread_barrier_t mem_barrier;
static int mem_unwind;

static void *mem_thread(void *p)
{
	if (mem_unwind)
		descend(4);
	pthread_barrier_wait(&mem_barrier);	/* all alive at once */
	pthread_barrier_wait(&mem_barrier);	/* measured; go */
	return NULL;
}

static void bench_memory(void)
{
	static const int counts[] = { 1000, 4000 };
	int ci, i, n, pass, cpu, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct events ev[64];
	long base[2];
	pthread_t *th;
	char name[32];

	for (ci = 0; ci < (smoke ? 1 : 2); ci++) {
		n = smoke ? 50 : counts[ci];
		th = calloc(n, sizeof(*th));
		/* Pass 0: threads that never unwind; pass 1: each unwinds once. */
		for (pass = 0; pass < 2; pass++) {
			mem_unwind = pass;
			/* Inherited by new threads: one per CPU, to be mappable. */
			for (cpu = 0; cpu < ncpu && cpu < 64; cpu++) {
				events_open_on(&ev[cpu], DEFERRED, 1, 16, 0, cpu, 1);
				events_enable(&ev[cpu], 1);
			}
			pthread_barrier_init(&mem_barrier, NULL, n + 1);
			for (i = 0; i < n; i++) {
				pthread_attr_t attr;

				pthread_attr_init(&attr);
				pthread_attr_setstacksize(&attr, 64 * 1024);
				if (pthread_create(&th[i], &attr, mem_thread, NULL))
					die("pthread_create");
			}
			pthread_barrier_wait(&mem_barrier);
			base[pass] = read_long("/proc/meminfo", "SUnreclaim");
			pthread_barrier_wait(&mem_barrier);
			for (i = 0; i < n; i++)
				pthread_join(th[i], NULL);
			pthread_barrier_destroy(&mem_barrier);
			for (cpu = 0; cpu < ncpu && cpu < 64; cpu++) {
				events_enable(&ev[cpu], 0);
				events_close(&ev[cpu]);
			}
		}
		free(th);
		snprintf(name, sizeof(name), "threads=%d", n);
		emit("memory", name, "deferred", "slab_bytes_per_unwound_task",
		     (base[1] - base[0]) * 1024.0 / n);
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} benches[] = {
		/* first: kprobe timings suffer most from what ran before */
		{ "overflow", bench_overflow },
		{ "bytes", bench_bytes }, { "lost", bench_lost },
		{ "cost", bench_cost }, { "irqcost", bench_irqcost },
		{ "complete", bench_complete },
		{ "walk", bench_walk }, { "discovery", bench_discovery },
		{ "memory", bench_memory },
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

	for (i = 0; i < (int)(sizeof(benches) / sizeof(benches[0])); i++) {
		for (j = 1; j < argc && strcmp(argv[j], benches[i].name); j++)
			;
		if (argc > 1 && j == argc)
			continue;
		benches[i].fn();
		ran++;
	}
	if (!ran) {
		fprintf(stderr, "usage: deferred_bench [--smoke] [bytes|lost|cost|irqcost|overflow|complete|walk|discovery|memory]...\n");
		return 2;
	}
	return 0;
}
