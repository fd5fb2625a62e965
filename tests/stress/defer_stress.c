// SPDX-License-Identifier: GPL-2.0
/*
 * Stress for deferred user callchains, bounded in time.  Each scenario
 * samples a workload with deferral on while something hostile happens,
 * reads every ring buffer, and checks the books:
 *
 *  - every sample that deferred its user part has exactly one
 *    PERF_RECORD_CALLCHAIN_DEFERRED with its (tid, cookie) in its ring,
 *    or the session lost at least as many records as there are misses
 *    (an entry sampled on two CPUs has a record in each CPU's ring);
 *  - no record comes twice into one ring, no cookie names two tasks, and
 *    records hold user addresses only;
 *  - the samples and records in the ring of an event bound to a CPU were
 *    written on that CPU (their PERF_SAMPLE_CPU);
 *  - the deferral core's counters add up: every request has one outcome
 *    (requests = queued + joined + already_pending + already_run +
 *    rejected + busy, with no errors), every queued task work ran
 *    (runs = queued) once the tasks are gone, every walk tried in an
 *    interrupt was used or deferred (try_walks = try_used +
 *    try_not_resident), and with one session, each callback wrote the
 *    records of one entry and each classic user chain came from a refused
 *    request or a walk used at once (try_used, now_used).
 *
 * Scenarios:
 *   threads   many threads sampled at a high rate
 *   forkexec  fork, exec and exit storms with requests pending
 *   churn     events opened and closed, and unwind users cancelled and
 *             registered again, while requests and callbacks are in flight
 *   signals   signals, group stops and ptrace stops while requests pend
 *   sessions  five sessions at once on one workload: per-task, per-task
 *             through a tracking event, CPU-wide, one thread alone, and
 *             CPU-wide on CPU 0 only; the ring of each CPU a session
 *             covers has the record of exactly the entries any of them
 *             sampled on that CPU, the one thread's ring of every entry
 *             of that thread
 *
 * usage: defer_stress [-t SECONDS] [-s SEED] [-T THREADS] [-p PERIOD_NS]
 *                     [SCENARIO...]
 * -t is per scenario (default 30).  Prints TAP, one test per scenario;
 * the harness judges the kernel's log (no splat).  Needs root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "ledger.h"
#include "session.h"
#include "workload.h"

#define TEST_CTL	"/sys/kernel/debug/unwind_deferred_test/ctl"
/* Slots of the test module that the churn scenario takes over. */
#define CHURN_SLOT_FIRST	32
#define CHURN_SLOT_LAST		39

static int nr_threads = 16;
static uint64_t seed, rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* threads */

static void scenario_threads(struct outcome *o)
{
	struct wl_shared *sh = wl_shared_new();
	struct counters before;
	struct ledger w;
	pid_t pid;

	counters_read(&before);
	pid = wl_spawn(sh, nr_threads * 2, WL_BUSY, 48, NULL, NULL);
	witness_open(&w, pid);
	run_watched(o, sh, pid, NULL, NULL);
	printf("# %d threads, %llu system calls\n", nr_threads * 2,
	       (unsigned long long)sh->syscalls);
	close_books(o, &before, false, true);
}

/* forkexec */

struct storm {
	volatile uint64_t forks, execs, kills, group_exits, plain_exits;
};

static struct storm *storm;
static char self_exe[4096];

static int storm_block(void *arg)
{
	int *fds = arg;
	char c;

	/* Sampled on the way to sleep; killed while the request pends. */
	return read(fds[0], &c, 1);
}

static int storm_exec(void *arg)
{
	char *argv[] = { "defer_stress", "--leaf", NULL };

	(void)arg;
	wl_leaf_calls(NULL, WL_BUSY, 8);
	execv(self_exe, argv);
	_exit(3);
}

static void *storm_thread(void *arg)
{
	(void)arg;
	for (;;)
		wl_leaf_calls(NULL, WL_BLOCKING, 8);
	return NULL;
}

static int storm_group_exit(void *arg)
{
	pthread_t t;
	int i;

	(void)arg;
	for (i = 0; i < 2; i++)
		pthread_create(&t, NULL, storm_thread, NULL);
	wl_leaf_calls(NULL, WL_BLOCKING, 24);
	/* exit_group() while the threads are in system calls. */
	syscall(SYS_exit_group, 0);
	return 0;
}

static int storm_plain(void *arg)
{
	(void)arg;
	wl_leaf_calls(NULL, WL_BLOCKING, 24);
	return 0;
}

/* The storm's root, the sampled process: forks children of four kinds. */
static void storm_root(struct wl_shared *sh)
{
	pid_t kids[4] = { 0 }, blocked = 0;
	unsigned int n = 0;
	int fds[2], i, status;

	if (pipe(fds))
		_exit(2);
	while (!sh->stop) {
		for (i = 0; i < 4; i++) {
			pid_t pid;

			if (kids[i])
				continue;
			pid = fork();
			if (pid < 0)
				continue;
			if (!pid) {
				int depth = 4 + n % 40;

				switch (n % 4) {
				case 0:
					wl_descend(depth, storm_plain, NULL);
					_exit(0);
				case 1:
					wl_descend(depth, storm_exec, NULL);
					_exit(3);
				case 2:
					wl_descend(depth, storm_block, fds);
					_exit(0);
				default:
					wl_descend(depth, storm_group_exit, NULL);
					_exit(0);
				}
			}
			kids[i] = pid;
			if (n % 4 == 2)
				blocked = pid;
			__atomic_add_fetch(&storm->forks, 1, __ATOMIC_RELAXED);
			if (n % 4 == 1)
				__atomic_add_fetch(&storm->execs, 1, __ATOMIC_RELAXED);
			n++;
		}
		wl_usleep(300);
		if (blocked) {
			kill(blocked, SIGKILL);
			__atomic_add_fetch(&storm->kills, 1, __ATOMIC_RELAXED);
			blocked = 0;
		}
		for (i = 0; i < 4; i++) {
			if (kids[i] && waitpid(kids[i], &status, WNOHANG) == kids[i]) {
				kids[i] = 0;
				if (WIFEXITED(status) && WEXITSTATUS(status))
					_exit(4);	/* a child went wrong */
			}
		}
	}
	for (i = 0; i < 4; i++) {
		if (kids[i]) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], &status, 0);
		}
	}
}

static void scenario_forkexec(struct outcome *o)
{
	struct wl_shared *sh = wl_shared_new();
	struct counters before;
	struct ledger w;
	pid_t pid;

	storm = wl_shared_alloc(sizeof(*storm));
	counters_read(&before);
	/* No workload threads: the root forks. */
	pid = wl_spawn(sh, 0, WL_BUSY, 8, NULL, storm_root);
	witness_open(&w, pid);
	run_watched(o, sh, pid, NULL, NULL);
	printf("# %llu forks: %llu execs, %llu killed while blocked\n",
	       (unsigned long long)storm->forks,
	       (unsigned long long)storm->execs,
	       (unsigned long long)storm->kills);
	close_books(o, &before, false, true);
	if (!o->failed && storm->execs >= 20) {
		struct counters after;

		counters_read(&after);
		if (!delta(&before, &after, C_EXEC))
			fail(o, "%s", "no request was completed at exec in all those execs");
	}
}

/* churn */

static int ctl_fd = -1;

static void churn_setup(struct wl_shared *sh)
{
	sh->ctl_fd = ctl_fd;
	sh->ctl_mask = ctl_fd < 0 ? 0 :
		((1ULL << (CHURN_SLOT_LAST + 1)) - (1ULL << CHURN_SLOT_FIRST));
}

struct churn_stats {
	volatile uint64_t cancels, inits, stray;
};

static struct churn_stats *churn;

/* In the workload's main thread: cancel and register the slots again. */
static void churn_users(struct wl_shared *sh)
{
	size_t size = 1 << 22, got = 0;
	char cmd[32], *buf, *p;
	int slot, len;
	ssize_t n;

	if (sh->ctl_fd < 0)
		return;
	/*
	 * One pass at least: on a slow (debug) kernel the run may be over
	 * before this thread gets here, and the scenario must still cancel
	 * users while the others' requests are in flight.
	 */
	do {
		for (slot = CHURN_SLOT_FIRST; slot <= CHURN_SLOT_LAST; slot++) {
			len = snprintf(cmd, sizeof(cmd), "cancel %d", slot);
			if (write(sh->ctl_fd, cmd, len) == len)
				churn->cancels++;
			wl_usleep(100);
			len = snprintf(cmd, sizeof(cmd), "init %d", slot);
			if (write(sh->ctl_fd, cmd, len) == len)
				churn->inits++;
		}
	} while (!sh->stop);
	/* Let the threads finish before reading what the module saw. */
	sh->ctl_mask = 0;
	wl_usleep(20000);
	buf = malloc(size);
	if (!buf)
		return;
	lseek(sh->ctl_fd, 0, SEEK_SET);
	while (got < size - 1 &&
	       (n = read(sh->ctl_fd, buf + got, size - 1 - got)) > 0)
		got += n;
	buf[got] = 0;
	p = strstr(buf, "\nstray ");
	if (p)
		churn->stray = strtoull(p + 7, NULL, 10);
	free(buf);
}

struct churn_run {
	struct wl_shared *sh;
	pid_t pid;
	uint64_t opens, maps, disables;
};

static void churn_events(void *arg, double end)
{
	static const uint64_t configs[] = {
		PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
		PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_TASK_CLOCK,
	};
	size_t page = sysconf(_SC_PAGESIZE);
	struct churn_run *c = arg;

	while (now() < end) {
		uint64_t r = rnd(), config = configs[r % 4];
		int flags = EV_DEFER_CALLCHAIN, nr_tids = c->sh->nr_tids;
		pid_t pid = c->pid;
		int cpu = -1, fd;
		void *ring = MAP_FAILED;

		if (r & 0x10)
			flags |= EV_DEFER_OUTPUT;
		if ((r & 0x20) && nr_tids > 0)
			pid = c->sh->tids[(r >> 8) % nr_tids];	/* one thread */
		else
			cpu = (r >> 8) % nr_cpus;	/* inherited, one CPU */
		if (cpu >= 0)
			flags |= EV_INHERIT;
		fd = event_open(PERF_TYPE_SOFTWARE, config,
				config == PERF_COUNT_SW_CPU_CLOCK ||
				config == PERF_COUNT_SW_TASK_CLOCK ?
				20000 + (r >> 16) % 100000 : 1,
				flags, pid, cpu, -1);
		if (fd < 0)
			continue;	/* the thread is gone */
		c->opens++;
		if (r & 0x40) {
			ring = mmap(NULL, 9 * page, PROT_READ | PROT_WRITE,
				    MAP_SHARED, fd, 0);
			c->maps += ring != MAP_FAILED;
		}
		wl_usleep((r >> 24) % 1500);
		switch ((r >> 40) % 3) {
		case 0:
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
			c->disables++;
			break;
		case 1:
			if (ring != MAP_FAILED)
				munmap(ring, 9 * page);
			ring = MAP_FAILED;
			break;
		}
		close(fd);
		if (ring != MAP_FAILED)
			munmap(ring, 9 * page);
	}
}

static void scenario_churn(struct outcome *o)
{
	struct wl_shared *sh = wl_shared_new();
	struct churn_run c = { .sh = sh };
	struct counters before;
	struct ledger w;

	churn = wl_shared_alloc(sizeof(*churn));
	ctl_fd = open(TEST_CTL, O_RDWR | O_CLOEXEC);
	if (ctl_fd >= 0 && write(ctl_fd, "clear", 5) != 5) {
		close(ctl_fd);
		ctl_fd = -1;
	}
	counters_read(&before);
	c.pid = wl_spawn(sh, nr_threads, WL_BUSY, 32, churn_setup, churn_users);
	witness_open(&w, c.pid);
	run_watched(o, sh, c.pid, churn_events, &c);
	printf("# %llu events opened and closed on the workload (%llu with a ring, %llu disabled first)\n",
	       (unsigned long long)c.opens, (unsigned long long)c.maps,
	       (unsigned long long)c.disables);
	if (ctl_fd >= 0)
		printf("# test module: %llu cancels and %llu registrations of slots %d-%d, %llu ctl requests from the workload, %llu callbacks for a cancelled user\n",
		       (unsigned long long)churn->cancels,
		       (unsigned long long)churn->inits, CHURN_SLOT_FIRST,
		       CHURN_SLOT_LAST, (unsigned long long)sh->ctl_writes,
		       (unsigned long long)churn->stray);
	else
		printf("# test module not loaded: no unwind users cancelled\n");
	close_books(o, &before, true, false);
	if (ctl_fd >= 0) {
		close(ctl_fd);
		ctl_fd = -1;
		if (churn->stray)
			fail(o, "%s", "a cancelled user got a callback");
		if (!churn->cancels || !sh->ctl_writes)
			fail(o, "%s", "the test module's users were not exercised");
	}
	if (!c.opens)
		fail(o, "%s", "no event could be opened on the workload");
}

/* signals */

static struct wl_shared *sig_sh;

static int sig_leaf(void *arg)
{
	(void)arg;
	return wl_leaf_calls(NULL, WL_BUSY, 4);
}

static void sig_handler(int sig)
{
	(void)sig;
	wl_descend(6, sig_leaf, NULL);
	__atomic_add_fetch(&sig_sh->handler_runs, 1, __ATOMIC_RELAXED);
}

static void sig_setup(struct wl_shared *sh)
{
	struct sigaction sa = { .sa_handler = sig_handler };

	sig_sh = sh;
	sigaction(SIGUSR1, &sa, NULL);
}

struct sig_run {
	struct wl_shared *sh;
	pid_t pid;
	uint64_t sent, group_stops, ptrace_stops, ptrace_failed;
};

/* Why the last ptrace stop failed, for the report. */
static char ptrace_why[96];

static int ptrace_stop_once(pid_t tid)
{
	struct user_regs_struct regs;
	int status, sig = 0, i, err;
	const char *step;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
		err = errno;
		step = "PTRACE_SEIZE";
		goto fail;
	}
	step = "PTRACE_INTERRUPT";
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0))
		goto undo;
	step = "waitpid";
	if (waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status))
		goto undo;
	/* A signal-delivery stop: hand the signal back at the detach. */
	if (status >> 16 != PTRACE_EVENT_STOP)
		sig = WSTOPSIG(status);
	ptrace(PTRACE_GETREGS, tid, 0, &regs);
	wl_usleep(200);
	step = "PTRACE_DETACH";
	if (!ptrace(PTRACE_DETACH, tid, 0, sig))
		return 0;
undo:
	err = errno;
	/* Leave no thread traced: a traced thread would hold the group. */
	for (i = 0; i < 1000 && ptrace(PTRACE_DETACH, tid, 0, 0); i++) {
		waitpid(tid, &status, __WALL | WNOHANG);
		wl_usleep(1000);
	}
fail:
	snprintf(ptrace_why, sizeof(ptrace_why), "%s: %s", step, strerror(err));
	return -1;
}

/*
 * Until @end, and past it until each kind (a signal, a group stop, a
 * ptrace stop) happened once: on a slow (debug) kernel the threads may
 * take most of the run to start. Waits for them 30 s past @end at most.
 */
static void sig_storm(void *arg, double end)
{
	struct sig_run *s = arg;

	while (s->sh->nr_tids < nr_threads && now() < end + 30)
		wl_usleep(1000);
	while (s->sh->nr_tids &&
	       (now() < end || !s->sent || !s->group_stops ||
		!s->ptrace_stops) && now() < end + 30) {
		uint64_t r = rnd();
		pid_t tid = s->sh->tids[(r >> 8) % s->sh->nr_tids];

		switch (r % 10) {
		case 0:
		case 1:
			kill(s->pid, SIGSTOP);
			wl_usleep(300 + (r >> 32) % 1000);
			kill(s->pid, SIGCONT);
			s->group_stops++;
			break;
		case 2:
		case 3:
		case 4:
			if (ptrace_stop_once(tid))
				s->ptrace_failed++;
			else
				s->ptrace_stops++;
			break;
		default:
			syscall(SYS_tgkill, s->pid, tid, SIGUSR1);
			s->sent++;
			break;
		}
		wl_usleep((r >> 20) % 500);
	}
}

static void scenario_signals(struct outcome *o)
{
	struct wl_shared *sh = wl_shared_new();
	struct sig_run s = { .sh = sh };
	struct counters before;
	struct ledger w;

	counters_read(&before);
	s.pid = wl_spawn(sh, nr_threads, WL_BLOCKING, 32, sig_setup, NULL);
	witness_open(&w, s.pid);
	run_watched(o, sh, s.pid, sig_storm, &s);
	printf("# %llu SIGUSR1 sent, %llu handler runs; %llu group stops; %llu ptrace stops (%llu attempts failed)\n",
	       (unsigned long long)s.sent,
	       (unsigned long long)sh->handler_runs,
	       (unsigned long long)s.group_stops,
	       (unsigned long long)s.ptrace_stops,
	       (unsigned long long)s.ptrace_failed);
	if (s.ptrace_failed)
		printf("# the last failed ptrace stop: %s\n", ptrace_why);
	close_books(o, &before, false, true);
	if (!sh->handler_runs || !s.group_stops || !s.ptrace_stops)
		fail(o, "%s", "not every kind of stop or signal happened");
}

/* sessions */

/* The sessions of scenario_sessions(), in the order of its ledgers. */
enum { S_TASK, S_TRACKING, S_CPU_WIDE, S_MAIN, S_CPU0, NR_SESSIONS };

/*
 * The main thread works too: session D watches it alone.  With two CPUs
 * or more it moves itself between CPU 0 and CPU 1 at the bottom of each
 * chain: sched_setaffinity() switches it out on one CPU (a context-switch
 * sample there, in the system call) and it returns to user space on the
 * other.  Its entries sampled on CPU 0 only thus end on CPU 1, and the
 * other way round: the records must follow the samples' CPU, not the CPU
 * of the return.
 */
static int sessions_main_leaf(void *arg)
{
	static int cpu;
	cpu_set_t set;

	if (nr_cpus >= 2) {
		cpu ^= 1;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	return wl_leaf_calls(arg, WL_BUSY, 16);
}

static void sessions_main(struct wl_shared *sh)
{
	while (!sh->stop)
		wl_descend(20, sessions_main_leaf, sh);
}

/*
 * Which session must have which record.  The kernel writes an entry's
 * record to per-task events bound to no CPU (session D, the main thread),
 * and to the events bound to each CPU a deferred sample of the entry (in
 * any session) was taken on, or to those of every CPU when it was sampled
 * on more CPUs than the kernel remembers.  So, per session and per CPU it
 * covers: the ring of that CPU has the record of exactly the entries
 * sampled on that CPU.  The sessions on every CPU (A, B, C) then have a
 * record of every entry any session sampled, one in the ring of each CPU
 * it was sampled on; the CPU 0 session (E) has the record of every entry
 * sampled on CPU 0 (rule 1) and of no other (rule 2).
 */
struct cross {
	struct ledger **all;
	pid_t pid;
	int cur;		/* the session whose keys are walked */
	/* the CPUs of each session's rings; 0: session D's task ring */
	uint64_t covers[NR_SESSIONS];
	/* records that should be there and are not; records that should not */
	uint64_t missing[NR_SESSIONS], strays[NR_SESSIONS];
	/* entries sampled by any session; on CPU 0; on CPU 0 and another;
	 * on more CPUs than the kernel remembers */
	uint64_t entries, on_cpu0, on_cpu0_and_more, many_cpus;
	/* main-thread entries sampled on CPU 0 only that returned to user
	 * space on another CPU, and sampled elsewhere only that returned on
	 * CPU 0 */
	uint64_t left_cpu0, came_to_cpu0;
};

/* The CPUs any session saw a deferred sample of the entry taken on. */
static uint64_t sampled_cpus(const struct cross *x, const struct key *k)
{
	uint64_t cpus = 0;
	int i;

	for (i = 0; i < NR_SESSIONS; i++) {
		const struct key *r = ledger_find(x->all[i], k->tid, k->cookie);

		if (r)
			cpus |= r->sample_cpus;
	}
	return cpus;
}

/* One entry, seen first in session x->cur: which session lacks what? */
static void cross_one(const struct key *k, void *arg)
{
	struct cross *x = arg;
	uint64_t cpus, want, has;
	int i;

	for (i = 0; i < x->cur; i++) {
		if (ledger_find(x->all[i], k->tid, k->cookie))
			return;		/* counted with session i */
	}
	cpus = sampled_cpus(x, k);
	if (cpus) {
		x->entries++;
		if (__builtin_popcountll(cpus) > LEDGER_DEFER_CPUS)
			x->many_cpus++;
		if (cpus & 1) {
			x->on_cpu0++;
			if (cpus & ~1ULL)
				x->on_cpu0_and_more++;
		}
	}
	for (i = 0; i < NR_SESSIONS; i++) {
		const struct key *r = ledger_find(x->all[i], k->tid, k->cookie);

		if (!x->covers[i]) {
			/* Session D: every entry of the main thread. */
			bool wanted = cpus && k->tid == (uint32_t)x->pid;
			bool got = r && r->task_records;

			x->missing[i] += wanted && !got;
			x->strays[i] += got && !wanted;
			continue;
		}
		want = ledger_record_cpus(cpus) & x->covers[i];
		has = r ? r->ring_record_cpus : 0;
		x->missing[i] += __builtin_popcountll(want & ~has);
		x->strays[i] += __builtin_popcountll(has & ~want);
	}
}

/*
 * A main-thread entry with its record in session D, which is written on
 * the CPU the thread returns to user space on: did it move off or onto
 * CPU 0 after its samples?
 */
static void main_moved(const struct key *k, void *arg)
{
	struct cross *x = arg;
	uint64_t cpus = sampled_cpus(x, k);

	if (!k->task_records)
		return;
	if (cpus == 1 && k->task_record_cpus && !(k->task_record_cpus & 1))
		x->left_cpu0++;
	else if (cpus && !(cpus & 1) && k->task_record_cpus == 1)
		x->came_to_cpu0++;
}

static void scenario_sessions(struct outcome *o)
{
	struct wl_shared *sh = wl_shared_new();
	struct ledger a, b, c, d, e;
	struct ledger *all[NR_SESSIONS] = { &a, &b, &c, &d, &e };
	struct cross x = { .all = all };
	struct counters before;
	uint64_t lost_any = 0;
	char buf[256];
	int fd, err, i;

	counters_read(&before);
	x.pid = wl_spawn(sh, nr_threads, WL_BUSY, 32, NULL, sessions_main);
	ledger_init(&a, "per-task");
	session_per_cpu(&a, x.pid, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
			period_ns, false);
	ledger_init(&b, "per-task, tracking event");
	session_per_cpu(&b, x.pid, PERF_TYPE_SOFTWARE,
			PERF_COUNT_SW_CONTEXT_SWITCHES, 1, true);
	ledger_init(&c, "CPU-wide");
	c.only_pid = x.pid;
	session_per_cpu(&c, -1, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
			period_ns * 2, false);
	ledger_init(&d, "main thread");
	fd = event_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 2,
			EV_DISABLED | EV_DEFER_CALLCHAIN | EV_DEFER_OUTPUT,
			x.pid, -1, -1);
	if (fd < 0)
		fatal_errno("perf_event_open (main thread)", -fd);
	err = ledger_add_ring(&d, fd, -1, RING_PAGES);
	if (err)
		fatal_errno("mmap of a ring", -err);
	/*
	 * E: CPU-wide on CPU 0 only (perf record -C 0), cpu-clock with
	 * defer_output and every context switch into the same ring, so tasks
	 * are sampled on CPU 0 as they block or are preempted, and may wake
	 * up on another CPU.
	 */
	ledger_init(&e, "CPU 0 only");
	e.only_pid = x.pid;
	fd = event_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
			period_ns * 2,
			EV_DISABLED | EV_DEFER_CALLCHAIN | EV_DEFER_OUTPUT,
			-1, 0, -1);
	if (fd < 0)
		fatal_errno("perf_event_open (CPU 0)", -fd);
	err = ledger_add_ring(&e, fd, 0, RING_PAGES);
	if (err)
		fatal_errno("mmap of a ring", -err);
	fd = event_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1,
			EV_DISABLED | EV_DEFER_CALLCHAIN, -1, 0, -1);
	if (fd < 0)
		fatal_errno("perf_event_open (CPU 0)", -fd);
	err = ledger_redirect(&e, fd, e.rings[0].fd);
	if (err)
		fatal_errno("PERF_EVENT_IOC_SET_OUTPUT", -err);
	for (i = 0; i < NR_SESSIONS; i++)
		ledgers[nr_ledgers++] = all[i];
	for (i = 0; i < nr_cpus && i < LEDGER_MASK_CPUS; i++)
		x.covers[S_TASK] |= 1ULL << i;
	x.covers[S_TRACKING] = x.covers[S_CPU_WIDE] = x.covers[S_TASK];
	x.covers[S_MAIN] = 0;
	x.covers[S_CPU0] = 1;

	run_watched(o, sh, x.pid, NULL, NULL);

	for (x.cur = 0; x.cur < NR_SESSIONS; x.cur++)
		ledger_for_each_key(all[x.cur], cross_one, &x);
	ledger_for_each_key(&d, main_moved, &x);
	for (i = 0; i < NR_SESSIONS; i++)
		lost_any += all[i]->lost + all[i]->lost_samples;
	printf("# %llu entries sampled, %llu of them on CPU 0 (%llu also on another CPU), %llu on more than %d CPUs; main thread: %llu entries sampled on CPU 0 only returned to user space on another CPU, %llu sampled elsewhere only returned on CPU 0\n",
	       (unsigned long long)x.entries, (unsigned long long)x.on_cpu0,
	       (unsigned long long)x.on_cpu0_and_more,
	       (unsigned long long)x.many_cpus, LEDGER_DEFER_CPUS,
	       (unsigned long long)x.left_cpu0,
	       (unsigned long long)x.came_to_cpu0);
	for (i = 0; i < NR_SESSIONS; i++) {
		printf("# %s: %llu records missing of entries any session sampled %s, %llu records of entries not sampled there\n",
		       all[i]->name, (unsigned long long)x.missing[i],
		       i == S_MAIN ? "in the main thread" :
		       i == S_CPU0 ? "on CPU 0" : "on a CPU, in that CPU's ring",
		       (unsigned long long)x.strays[i]);
		if (all[i]->cpus_over_mask)
			printf("# %s: %llu samples or records of a CPU >= %d, not checked per CPU\n",
			       all[i]->name,
			       (unsigned long long)all[i]->cpus_over_mask,
			       LEDGER_MASK_CPUS);
		if (x.missing[i] > all[i]->lost) {
			snprintf(buf, sizeof(buf), "%s: %llu records missing of entries sampled by some session, more than the %llu records lost",
				 all[i]->name, (unsigned long long)x.missing[i],
				 (unsigned long long)all[i]->lost);
			fail(o, "%s", buf);
		}
		/*
		 * A lost sample (in any session: PERF_RECORD_LOST counts
		 * samples and records alike, PERF_RECORD_LOST_SAMPLES
		 * samples) may have been the entry's only deferred sample
		 * on a CPU, whose events then have its record without our
		 * knowing why: each loss excuses one such record, as the
		 * books excuse a missing record for each record lost.  With
		 * nothing lost, the check is exact.
		 */
		if (x.strays[i] > lost_any) {
			snprintf(buf, sizeof(buf), "%s: %llu records of entries not sampled on its CPUs, more than the %llu records and samples lost in all sessions",
				 all[i]->name, (unsigned long long)x.strays[i],
				 (unsigned long long)lost_any);
			fail(o, "%s", buf);
		}
	}
	if (!x.on_cpu0)
		fail(o, "%s", "no entry was sampled on CPU 0");
	close_books(o, &before, true, false);
}

static const struct scenario {
	const char *name;
	void (*run)(struct outcome *o);
	const char *what;
} scenarios[] = {
	{ "threads", scenario_threads, "many threads sampled at a high rate" },
	{ "forkexec", scenario_forkexec, "fork, exec and exit storms with requests pending" },
	{ "churn", scenario_churn, "events opened and closed, users cancelled, while requests are in flight" },
	{ "signals", scenario_signals, "signals, group stops and ptrace stops while requests pend" },
	{ "sessions", scenario_sessions, "per-task, tracking-event, CPU-wide, one-thread and CPU 0 sessions at once" },
};

#define NR_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

static int leaf_main(void)
{
	wl_descend(6, sig_leaf, NULL);
	return 0;
}

static void usage(void)
{
	size_t i;

	fprintf(stderr, "usage: defer_stress [-t SECONDS] [-s SEED] [-T THREADS] [-p PERIOD_NS] [SCENARIO...]\nscenarios:");
	for (i = 0; i < NR_SCENARIOS; i++)
		fprintf(stderr, " %s", scenarios[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct wl_options o = {
		.seconds = seconds, .threads = nr_threads, .period_ns = period_ns,
	};
	const struct scenario *run[NR_SCENARIOS];
	int nr_run = 0, failed = 0, i;
	size_t j;

	if (argc == 2 && !strcmp(argv[1], "--leaf"))
		return leaf_main();

	if (wl_options(argc, argv, &o) < 0)
		usage();
	seconds = o.seconds;
	nr_threads = o.threads;
	seed = o.seed;
	period_ns = o.period_ns;
	if (seconds < 1 || nr_threads < 1 || nr_threads > WL_MAX_THREADS / 2 ||
	    period_ns < 10000)
		usage();
	for (i = optind; i < argc; i++) {
		for (j = 0; j < NR_SCENARIOS; j++) {
			if (!strcmp(argv[i], scenarios[j].name))
				break;
		}
		if (j == NR_SCENARIOS)
			usage();
		run[nr_run++] = &scenarios[j];
	}
	if (!nr_run) {
		for (j = 0; j < NR_SCENARIOS; j++)
			run[nr_run++] = &scenarios[j];
	}

	setvbuf(stdout, NULL, _IOLBF, 0);
	rng = seed | 1;
	nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) < 0)
		fatal_errno("readlink /proc/self/exe", errno);
	if (access(COUNTERS, R_OK))
		fatal_errno(COUNTERS " (root, debugfs and CONFIG_UNWIND_DEFERRED needed)",
			    errno);

	printf("1..%d\n", nr_run);
	printf("# seed %llu, %d s per scenario, %d CPUs, cpu-clock every %llu ns\n",
	       (unsigned long long)seed, seconds, nr_cpus,
	       (unsigned long long)period_ns);
	for (i = 0; i < nr_run; i++) {
		struct outcome o = { .failed = false };
		double t0 = now();

		run[i]->run(&o);
		if (o.failed) {
			failed++;
			printf("# replay: defer_stress -s %llu -t %d %s\n",
			       (unsigned long long)seed, seconds, run[i]->name);
			printf("not ok %d %s: %s\n", i + 1, run[i]->name, o.why);
		} else {
			printf("ok %d %s: %s (%.0f s)\n", i + 1, run[i]->name,
			       run[i]->what, now() - t0);
		}
	}
	return failed ? 1 : 0;
}
