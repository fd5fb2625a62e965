/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of deferred_bench share (deferred_bench.c says what each
 * figure is): the options, the output of a row, the workload's call
 * chains, the perf events and the tally of their ring buffer, the
 * unwinder's counters and switches, pinning to a CPU, and the statistics.
 *
 * Each benchmark is a bench_NAME() of its own file; main() in
 * deferred_bench.c runs them.
 */
#ifndef DEFERRED_BENCH_H
#define DEFERRED_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define MAX_EVENTS	16
#define COUNTERS	"/sys/kernel/debug/unwind_deferred/counters"
#define METHODS		"/sys/kernel/unwind_user/methods"
#define TRY_FIRST_SYSCTL "/proc/sys/kernel/unwind_deferred_try_first"

extern int smoke;		/* --smoke: a few iterations, to keep it alive */
extern long tp_getppid;
extern int no_callchain_parts;	/* callchain asked for, both parts excluded */

/* Print "deferred_bench: @what: strerror(errno)" and exit(1). */
void __attribute__((noreturn)) die(const char *what);

static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* One row: bench, case, mode, metric, value. */
void emit(const char *bench, const char *c, const char *mode,
	  const char *metric, double value);

/* The value after "@key" or "@key:" in the file @path, or -1. */
long read_long(const char *path, const char *key);

/* A call chain of @depth frame-pointer frames, then one getppid(). */
long descend(int depth);
/* The same through four functions in turn, each with its own frame size. */
long hop0(int depth);
/* Mean ns per call of @iters descend(@depth) calls. */
double run_loop(int depth, int iters);
/* A call chain of @depth frames with a spin of @n turns at its bottom. */
unsigned long spin_at(int depth, long n);

/*
 * The modes of a deferring event differ in kernel.unwind_deferred_try_first
 * (mode_try_first()): DEFERRED runs with 0 (every sample defers, as
 * mainline), TRY_FIRST with 3 (samples of user space and the first sample
 * of every stay in the kernel are walked at once where they can be),
 * PREDICTED with 7, the default (the same, but the first sample of a stay
 * defers where the task's recent stays had more than one sample each).
 */
enum mode { NONE, CLASSIC, DEFERRED, TRY_FIRST, PREDICTED };
extern const char * const mode_name[];

/*
 * Whether the kernel has kernel.unwind_deferred_try_first. Mainline's has
 * not (it defers every sample) nor the counters: there the modes end at
 * last_mode, DEFERRED, and only the benches that need neither run.
 */
extern bool have_try_first;
extern enum mode last_mode;

#define TRY_FIRST_DEFAULT	7
/* Without the setting, 0 (every sample defers) holds; others die. */
void set_try_first(int bits);
/* The try-first setting of a deferring @mode. */
int mode_try_first(enum mode mode);

struct events {
	int n, fd[MAX_EVENTS];
	void *rb;
	size_t pages;
};

void events_open_on(struct events *ev, enum mode mode, int k,
		    size_t pages, pid_t pid, int cpu, int inherit);
void events_open(struct events *ev, enum mode mode, int k, size_t pages);
void events_enable(struct events *ev, int on);
void events_close(struct events *ev);
/* A cpu-clock event of @mode for @pid, every @period ns. */
void irq_events_open(struct events *ev, enum mode mode, pid_t pid,
		     long period);

struct tally {
	double bytes;		/* all records */
	long samples, deferred, lost;
	long marked, classic;	/* samples that deferred; with a classic user part */
	double sample_bytes, deferred_bytes;
	long user_nr;		/* user entries of a classic sample */
	double user_frames;	/* user entries of all classic samples */
	double deferred_frames;	/* entries of all deferred records */
};

void tally(struct events *ev, struct tally *t);

/* For qsort(): ascending doubles. */
int cmp_double(const void *a, const void *b);
/* The median of @n values, which it sorts. */
double median(double *v, int n);

/* Run on CPU 0 only (@on), or on every CPU again. */
void pin_cpu0(bool on);

/*
 * Kprobes on perf_callchain(), perf_event_output_forward() and
 * unwind_deferred_task_work() (cost.c), for this process's tasks and,
 * with @children, those it forks after: 0, or -1 where they cannot be set
 * up (probes_teardown() then). probes_trace() clears the trace and starts
 * tracing, or stops it; probes_collect() sums and counts each function's
 * calls in the trace, a duration a return time minus an entry time.
 */
enum probe { CC, OUT, TW, NR_PROBES };

int probes_setup(bool children);
void probes_teardown(void);
void probes_trace(bool on);
void probes_collect(double sum_ns[NR_PROBES], long calls[NR_PROBES]);

/* Whether the deferred unwinder times each walk (its counter walk_ns). */
void time_walks(int on);

/* Into @path, the directory of this program's file; -1 if unknown. */
int self_dir(char *path, size_t size);

/*
 * Debian's python3 running python.c's workload: for each byte written to
 * it, a recursion 20 levels deep with a loop at its bottom, then a byte
 * back. py_fork() leaves the child waiting to exec python3 until py_go().
 */
#define PYTHON		"/usr/bin/python3"

struct py {
	pid_t pid;
	int to, from;		/* its standard input and output */
};

void py_fork(struct py *py, long iters);
void py_go(struct py *py);
/* One pass: its time in ns, the round trip included. */
double py_pass(struct py *py);
/* End of input: python3 exits; it must exit with 0. */
void py_stop(struct py *py);

/* Whether this program's own file has an SFrame table (walk.c). */
bool self_has_sframe(void);

/* Write @list to the methods file; false when it cannot be written. */
bool methods_set(const char *list);

/* The benchmarks, by file. */
void bench_bytes(void);		/* space.c */
void bench_lost(void);
void bench_memory(void);
void bench_cost(void);		/* cost.c */
void bench_overflow(void);
void bench_irqcost(void);
void bench_mixed(void);		/* mixed.c */
void bench_python(void);	/* python.c */
void bench_complete(void);	/* complete.c */
void bench_walk(void);		/* walk.c */
void bench_discovery(void);
void bench_lookup(void);	/* lookup.c */
void bench_bpf(void);		/* bpf.c */
void bench_hostile(void);	/* hostile.c */

#endif /* DEFERRED_BENCH_H */
