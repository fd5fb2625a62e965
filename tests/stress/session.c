// SPDX-License-Identifier: GPL-2.0
/*
 * What every defer_stress scenario does around its workload: the sessions
 * that watch it, the reader that drains their rings while it runs, and the
 * books closed at the end (session.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "counters.h"
#include "ledger.h"
#include "session.h"
#include "workload.h"

int seconds = 30, nr_cpus;
uint64_t period_ns = 50000;

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void fatal_errno(const char *what, int err)
{
	printf("Bail out! %s: %s\n", what, strerror(err));
	exit(2);
}

/* The reader: drains the ledgers until told to stop. */

struct ledger *ledgers[MAX_LEDGERS];
int nr_ledgers;
static volatile int reader_stop;
static int reader_fifo;		/* it got SCHED_FIFO */

/*
 * The reader runs SCHED_FIFO: under the ordinary scheduler, a workload of
 * many threads kept it off the CPU for up to a quarter of a second
 * (signals scenario, in the guest), the rings overflowed, and losses can
 * hide missing records.
 */

static void *reader_fn(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };

	(void)arg;
	reader_fifo = !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	while (!reader_stop) {
		size_t n = 0;
		int i;

		for (i = 0; i < nr_ledgers; i++)
			n += ledger_drain(ledgers[i]);
		if (!n)
			wl_usleep(200);
	}
	return NULL;
}

static pthread_t reader_start(void)
{
	pthread_t t;

	reader_stop = 0;
	if (pthread_create(&t, NULL, reader_fn, NULL)) {
		perror("defer_stress: pthread_create");
		exit(2);
	}
	return t;
}

/*
 * Enable every session, then let the workload go: no sample is taken
 * before every ring is mapped and every session is listening.
 */
static void start_all(struct wl_shared *sh)
{
	int i, err;

	for (i = 0; i < nr_ledgers; i++) {
		err = ledger_enable(ledgers[i]);
		if (err)
			fatal_errno("PERF_EVENT_IOC_ENABLE", -err);
	}
	wl_start(sh);
}

static void reader_finish(pthread_t t)
{
	int i;

	reader_stop = 1;
	pthread_join(t, NULL);
	for (i = 0; i < nr_ledgers; i++)
		ledger_drain(ledgers[i]);
}

/*
 * A session on one CPU each: @type/@config sampled every @period with
 * defer_callchain and defer_output, inherited, for @pid (or CPU-wide).
 * With @tracking, the sampling events do not get defer_output; a dummy
 * event per CPU does, redirected into the same ring, as perf does it.
 */
void session_per_cpu(struct ledger *l, pid_t pid, uint32_t type,
			    uint64_t config, uint64_t period, bool tracking)
{
	int cpu, fd, dfd, err;
	int flags = EV_DISABLED | EV_DEFER_CALLCHAIN |
		(tracking ? 0 : EV_DEFER_OUTPUT) | (pid > 0 ? EV_INHERIT : 0);

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		fd = event_open(type, config, period, flags, pid, cpu, -1);
		if (fd < 0)
			fatal_errno("perf_event_open", -fd);
		err = ledger_add_ring(l, fd, cpu, RING_PAGES);
		if (err)
			fatal_errno("mmap of a ring", -err);
		if (!tracking)
			continue;
		dfd = event_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0,
				 EV_DISABLED | EV_DEFER_OUTPUT |
				 (pid > 0 ? EV_INHERIT : 0), pid, cpu, -1);
		if (dfd < 0)
			fatal_errno("perf_event_open (tracking)", -dfd);
		err = ledger_redirect(l, dfd, fd);
		if (err)
			fatal_errno("PERF_EVENT_IOC_SET_OUTPUT", -err);
	}
}

/* Add more sampling events, without defer_output, to a session's rings. */
void session_add_sampler(struct ledger *l, pid_t pid, uint32_t type,
				uint64_t config, uint64_t period)
{
	int cpu, fd, err;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		fd = event_open(type, config, period,
				EV_DISABLED | EV_DEFER_CALLCHAIN | EV_INHERIT,
				pid, cpu, -1);
		if (fd < 0)
			fatal_errno("perf_event_open", -fd);
		err = ledger_redirect(l, fd, l->rings[cpu].fd);
		if (err)
			fatal_errno("PERF_EVENT_IOC_SET_OUTPUT", -err);
	}
}

/*
 * The session most scenarios watch their workload with: cpu-clock at the
 * high rate with defer_output, context switches and page faults into the
 * same rings.  Several samples may then share one entry.
 */
void witness_open(struct ledger *l, pid_t pid)
{
	ledger_init(l, "witness");
	l->only_pid = 0;
	session_per_cpu(l, pid, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
			period_ns, false);
	session_add_sampler(l, pid, PERF_TYPE_SOFTWARE,
			    PERF_COUNT_SW_CONTEXT_SWITCHES, 1);
	session_add_sampler(l, pid, PERF_TYPE_SOFTWARE,
			    PERF_COUNT_SW_PAGE_FAULTS, 4);
	ledgers[nr_ledgers++] = l;
}

void fail(struct outcome *o, const char *fmt, const char *what)
{
	if (o->failed || !what)
		return;
	snprintf(o->why, sizeof(o->why), fmt, what);
	o->failed = true;
}

/*
 * Close the scenario's books: ledgers, then counters.  With @one_session
 * (the only perf session, nothing lost), the books of perf and of the core
 * agree: one entry with records per callback (an entry sampled on several
 * CPUs has a record in the ring of each), one deferred sample per request
 * that gave a cookie, one classic sample per request refused or per walk
 * tried in an interrupt and used (try-then-defer).
 */
void close_books(struct outcome *o, const struct counters *before,
			bool strays_ok, bool one_session)
{
	struct ledger *l = ledgers[0];
	struct counters after;
	uint64_t callbacks, deferring, refused;
	char buf[512];
	int i;

	if (!reader_fifo)
		printf("# the reader ran without SCHED_FIFO (not permitted): rings may overflow\n");
	for (i = 0; i < nr_ledgers; i++) {
		int err = ledger_flush_lost(ledgers[i]);

		if (err)
			fatal_errno("flushing the rings' losses", -err);
		ledger_close(ledgers[i]);
	}
	for (i = 0; i < nr_ledgers; i++) {
		fail(o, "%s", ledger_check(ledgers[i], strays_ok, buf, sizeof(buf)));
		ledger_print(ledgers[i]);
	}
	fail(o, "%s", counters_check(before, &after, buf, sizeof(buf)));
	callbacks = delta(before, &after, C_CALLBACKS);
	deferring = delta(before, &after, C_QUEUED) +
		delta(before, &after, C_JOINED) + delta(before, &after, C_PENDING);
	/*
	 * A sample that took its resident stack at once is classic too: one
	 * that interrupted user space, or the first of a stay in the kernel.
	 */
	refused = delta(before, &after, C_RUN) +
		delta(before, &after, C_REJECTED) + delta(before, &after, C_BUSY) +
		delta(before, &after, C_TRY_USED) + delta(before, &after, C_NOW_USED);
	if (one_session && !l->lost && !l->lost_samples &&
	    (l->recorded != callbacks || l->deferred != deferring ||
	     l->classic_user != refused)) {
		snprintf(buf, sizeof(buf), "%s: %llu entries with records for %llu callbacks; %llu deferred samples for %llu deferring requests; %llu classic samples for %llu refused requests and walks used at once",
			 l->name, (unsigned long long)l->recorded,
			 (unsigned long long)callbacks,
			 (unsigned long long)l->deferred,
			 (unsigned long long)deferring,
			 (unsigned long long)l->classic_user,
			 (unsigned long long)refused);
		fail(o, "%s", buf);
	}
	if (one_session && l->recorded > callbacks)
		fail(o, "%s: more entries with records than callbacks", l->name);
	for (i = 0; i < nr_ledgers; i++)
		ledger_free(ledgers[i]);
	nr_ledgers = 0;
}

static void workload_exit_check(struct outcome *o, int status)
{
	static char buf[64];

	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return;
	snprintf(buf, sizeof(buf), "status 0x%x", status);
	fail(o, "the workload did not exit cleanly: %s", buf);
}

/*
 * Enable the sessions, let workload @pid go, run @during (if any) for the
 * scenario's time while the reader drains the rings, stop the workload
 * and read what is left.
 */
void run_watched(struct outcome *o, struct wl_shared *sh, pid_t pid,
			void (*during)(void *arg, double end), void *arg)
{
	double end = now() + seconds;
	pthread_t reader = reader_start();

	start_all(sh);
	if (during)
		during(arg, end);
	while (now() < end)
		wl_usleep(20000);
	workload_exit_check(o, wl_stop(sh, pid));
	reader_finish(reader);
}
