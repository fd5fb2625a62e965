/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The workload the stress scenarios sample: threads that call down a chain
 * of frames and make system calls at the bottom, in a child process that
 * waits for the go-ahead and stops when told.
 */
#ifndef STRESS_WORKLOAD_H
#define STRESS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WL_MAX_THREADS	64

/* How the leaf of the chain spends its time. */
enum wl_mode {
	WL_BUSY,	/* short system calls and page faults */
	WL_BLOCKING,	/* also waits in poll() and nanosleep() */
};

/* Shared (MAP_SHARED) between the controller and the workload. */
struct wl_shared {
	volatile int stop;
	int go_fd;		/* the controller's end of the go-ahead pipe */
	volatile int nr_tids;
	volatile pid_t tids[WL_MAX_THREADS];
	volatile uint64_t syscalls, handler_runs, ctl_writes;
	int ctl_fd;		/* the test module's ctl, or -1 */
	uint64_t ctl_mask;	/* slots the leaf asks for through ctl */
};

/* Zeroed memory shared with the processes forked later. */
void *wl_shared_alloc(size_t size);
struct wl_shared *wl_shared_new(void);
/*
 * Fork the workload: @threads threads in @mode, call chains 4..@max_depth
 * deep.  The child runs @setup (if any) first; its threads start at
 * wl_start().  Its main thread then runs @main_fn (if any), which returns
 * once sh->stop is set, and it exits when its threads are done.
 */
pid_t wl_spawn(struct wl_shared *sh, int threads, enum wl_mode mode,
	       int max_depth, void (*setup)(struct wl_shared *sh),
	       void (*main_fn)(struct wl_shared *sh));
void wl_start(struct wl_shared *sh);
/* Tell the workload to stop and reap it; returns its exit status. */
int wl_stop(struct wl_shared *sh, pid_t pid);

/* Call down @depth frames, then run @fn(@arg) at the bottom. */
int wl_descend(int depth, int (*fn)(void *arg), void *arg);
/* One round of the leaf's system calls; used by other processes too. */
int wl_leaf_calls(struct wl_shared *sh, enum wl_mode mode, unsigned int n);
/* Sleep @us microseconds. */
void wl_usleep(long us);

/* The options of the stress programs. */
struct wl_options {
	int seconds;			/* -t */
	int threads;			/* -T */
	unsigned long long seed;	/* -s; by default from the time and pid */
	unsigned long long period_ns;	/* -p */
};

/*
 * Parse -t SECONDS -s SEED -T THREADS -p PERIOD_NS into @o, which holds
 * the other defaults; returns the index of the first argument that is not
 * an option, or -1 on an unknown option.
 */
int wl_options(int argc, char **argv, struct wl_options *o);

#endif
