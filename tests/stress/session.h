/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every defer_stress scenario does around its workload: the sessions
 * that watch it, the reader that drains their rings, and the books.
 */
#ifndef STRESS_SESSION_H
#define STRESS_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "counters.h"
#include "ledger.h"
#include "workload.h"

#define RING_PAGES	64
#define MAX_LEDGERS	5

/* The run's options: seconds per scenario, CPUs, cpu-clock period. */
extern int seconds, nr_cpus;
extern uint64_t period_ns;

/* The sessions of the running scenario, drained by the reader. */
extern struct ledger *ledgers[MAX_LEDGERS];
extern int nr_ledgers;

/* A scenario's verdict: the first failure's reason. */
struct outcome {
	char why[512];
	bool failed;
};

double now(void);
/* Bail out of the whole run: the test could not be set up. */
void fatal_errno(const char *what, int err);
/* Fail @o with @fmt and @what, unless it failed already or @what is NULL. */
void fail(struct outcome *o, const char *fmt, const char *what);

/* A session with a ring on every CPU, for @pid or CPU-wide. */
void session_per_cpu(struct ledger *l, pid_t pid, uint32_t type,
		     uint64_t config, uint64_t period, bool tracking);
/* More sampling events, without defer_output, into a session's rings. */
void session_add_sampler(struct ledger *l, pid_t pid, uint32_t type,
			 uint64_t config, uint64_t period);
/* The session most scenarios watch with: cpu-clock, switches, faults. */
void witness_open(struct ledger *l, pid_t pid);

/* Run workload @pid for the scenario's time under every session. */
void run_watched(struct outcome *o, struct wl_shared *sh, pid_t pid,
		 void (*during)(void *arg, double end), void *arg);
/* Check the sessions' ledgers and the counters; frees the sessions. */
void close_books(struct outcome *o, const struct counters *before,
		 bool strays_ok, bool one_session);

#endif
