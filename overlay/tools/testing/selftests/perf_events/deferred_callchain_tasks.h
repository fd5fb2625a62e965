/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records across tasks, CPUs and events: a CPU-wide event and kernel
 * threads, threads and CPUs, requests pending at exit, exec and fork;
 * then who gets a record: an exclude_user event, disabled events, a task
 * that migrates between sample and record, an exec by a thread other
 * than the leader.
 *
 * Included once, by deferred_callchain.c.
 */
#include "deferred_callchain_common.h"

TEST_F(defer, cpu_wide_event_and_kernel_threads)
{
	struct perf_event_attr attr;
	int i, idle = 0, mine, saved;
	struct sample s;
	cpu_set_t set;
	pthread_t timer;
	__u64 j;

	/* The spin's samples must defer to reach the CPU-wide event. */
	try_first_set(0, &saved);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 1000000;	/* 1 ms */
	/* Only defer_output: no mmap or comm records asked for. */
	open_mapped(_metadata, &self->x, 0, &attr, -1, 0);

	__atomic_store_n(&spin_stop, 0, __ATOMIC_RELAXED);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_ENABLE, 0);
	nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);	/* idle */
	ASSERT_EQ(0, pthread_create(&timer, NULL, spin_timer, NULL));
	chain_run(self->x.c, DEPTH, leaf_spin);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_DISABLE, 0);
	pthread_join(timer, NULL);

	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
		TH_LOG("the CPU-wide event got no record for a deferred sample");
	}
	for (i = 0; i < self->x.recs->n; i++) {
		if (!parse_sample(self->x.recs->r[i], &s) || s.pid)
			continue;
		idle++;
		for (j = 0; j < s.nr; j++) {
			EXPECT_NE(PERF_CONTEXT_USER_DEFERRED, s.ips[j]) {
				TH_LOG("a kernel thread's sample deferred");
			}
			EXPECT_NE(PERF_CONTEXT_USER, s.ips[j]);
		}
	}
	try_first_restore(saved);
	EXPECT_LE(1, idle) TH_LOG("no sample of the idle task");
	mine = check_all(_metadata, &self->x, gettid(), 0, 1);
	EXPECT_LE(1, mine);
}

struct thread_arg {
	struct chain c;
	pid_t tid;
};

static void *thread_fn(void *p)
{
	struct thread_arg *t = p;
	int i;

	t->tid = gettid();
	for (i = 0; i < 2; i++)
		sleep_chain(&t->c, DEPTH);
	return NULL;
}

TEST_F(defer, threads_and_cpus_get_their_own_cookies)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, j, n = 0, cpu, want;
	struct perf_event_attr attr;
	struct thread_arg t[2];
	__u64 cookies[64];
	struct deferred d;
	struct rb rb[8];
	int fd[8] = { };
	pthread_t th[2];
	struct sample s;
	cpu_set_t set;

	/* An inherited per-task event can only be mapped per CPU. */
	if (ncpu > 8)
		ncpu = 8;
	switch_attr(&attr);
	attr.inherit = 1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		fd[cpu] = sys_perf_event_open(&attr, 0, cpu, -1, 0);
		ASSERT_LE(0, fd[cpu]) TH_LOG("perf_event_open: %s", strerror(errno));
		ASSERT_EQ(0, rb_map(&rb[cpu], fd[cpu]));
	}
	for (cpu = 0; cpu < ncpu; cpu++)
		ioctl(fd[cpu], PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, thread_fn, &t[i]));
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < ncpu; i++) {
		CPU_ZERO(&set);
		CPU_SET(i, &set);
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
		sleep_chain(self->x.c, DEPTH);
	}
	for (cpu = 0; cpu < ncpu; cpu++)
		ioctl(fd[cpu], PERF_EVENT_IOC_DISABLE, 0);

	/*
	 * Two entries per thread, one per CPU for this task. Each CPU's buffer
	 * has one record for every entry sampled on that CPU (an entry whose
	 * task slept on one CPU and was sampled again on another has a record
	 * in both buffers).
	 */
	want = 4 + ncpu;
	for (cpu = 0; cpu < ncpu; cpu++) {
		rb_drain(&rb[cpu], self->x.recs);
		for (i = 0; i < self->x.recs->n; i++) {
			if (!parse_sample(self->x.recs->r[i], &s) || !sample_cookie(&s))
				continue;
			ASSERT_EQ(1, count_deferred(self->x.recs, sample_cookie(&s), &d)) {
				TH_LOG("CPU %d, cookie %#llx: %d records in its buffer", cpu,
				       (unsigned long long)sample_cookie(&s),
				       count_deferred(self->x.recs, sample_cookie(&s), NULL));
			}
			EXPECT_EQ(s.tid, d.tid) TH_LOG("a record names another thread");
			for (j = 0; j < n; j++)
				if (cookies[j] == sample_cookie(&s))
					break;
			if (j == n && n < 64)
				cookies[n++] = sample_cookie(&s);
		}
		recs_free(self->x.recs);
	}
	EXPECT_LE(want, n) TH_LOG("%d distinct cookies; expected %d", n, want);
	for (cpu = 0; cpu < ncpu; cpu++) {
		rb_unmap(&rb[cpu]);
		close(fd[cpu]);
	}
}

/*
 * A watched child makes the system call @tp traces from the bottom of a
 * chain and never returns from it (exit, exec) or returns in two tasks
 * (fork): the record must still come, for the right task.
 */
static void pending_at(struct __test_metadata *_metadata, struct ctx *x,
		       const char *tp, long nr, long a, long b, long c)
{
	struct perf_event_attr attr;
	int status, i, found = 0, go[2];
	struct deferred d;
	struct sample s;
	char byte = 0;
	long id;
	pid_t pid;

	if (sizeof(long) == 4)
		SKIP(return, "syscall tracepoints do not trace compat tasks");
	id = tracepoint_id(tp);
	if (id < 0)
		SKIP(return, "no %s tracepoint", tp);
	attr_init(&attr, PERF_TYPE_TRACEPOINT, id);
	attr.disabled = 0;
	ASSERT_EQ(0, pipe(go));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Wait until the parent watches this task. */
		if (read(go[0], &byte, 1) != 1)
			_exit(2);
		chain_syscall(x->c, DEPTH, nr, a, b, c);
		_exit(x->c->ret < 0 ? 3 : 0);	/* the fork case returns here */
	}
	open_mapped(_metadata, x, 0, &attr, pid, -1);
	ASSERT_EQ(1, write(go[1], &byte, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ioctl(x->fd[0], PERF_EVENT_IOC_DISABLE, 0);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));

	ASSERT_LE(1, wait_matched(&x->rb[0], x->recs, pid, 1)) {
		TH_LOG("no record for the child's pending request at %s", tp);
	}
	for (i = 0; i < x->recs->n; i++) {
		if (!parse_sample(x->recs->r[i], &s) || s.tid != pid ||
		    !sample_cookie(&s))
			continue;
		ASSERT_EQ(1, count_deferred(x->recs, sample_cookie(&s), &d)) {
			TH_LOG("a cookie must have exactly one record");
		}
		EXPECT_EQ(pid, d.tid);
		check_frames(_metadata, &d, x->c, 0);
		found = 1;
		break;
	}
	EXPECT_TRUE(found);
}

TEST_F(defer, exit_with_request_pending)
{
	pending_at(_metadata, &self->x, "syscalls/sys_enter_exit_group",
		   __NR_exit_group, 0, 0, 0);
}

TEST_F(defer, exec_with_request_pending)
{
	static char *const argv[] = { "true", NULL };
	static char *const envp[] = { NULL };

	if (access("/bin/true", X_OK))
		SKIP(return, "no /bin/true");
	pending_at(_metadata, &self->x, "syscalls/sys_enter_execve",
		   __NR_execve, (long)"/bin/true", (long)argv, (long)envp);
}

TEST_F(defer, fork_with_request_pending)
{
	pending_at(_metadata, &self->x, "syscalls/sys_enter_clone",
		   __NR_clone, SIGCHLD, 0, 0);
}

/*
 * Who gets a record: every sample that deferred must find its record in
 * its own ring buffer, and no event may get records its session never
 * asked for.
 */

/* An exclude_user event samples in the kernel; its callchain keeps the user part. */
TEST_F(defer, exclude_user_event_gets_its_records)
{
	struct perf_event_attr attr;
	struct sample s;

	switch_attr(&attr);
	attr.exclude_user = 1;
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	run_sleep_chain(&self->x, self->x.fd[0]);
	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
		rb_drain(&self->x.rb[0], self->x.recs);
		TH_LOG("%s: its samples deferred, but no record came",
		       first_deferred_sample(self->x.recs, gettid(), &s) ?
		       "exclude_user" : "no deferred sample at all");
	}
	check_all(_metadata, &self->x, gettid(), 1, 0);
}

FIXTURE_VARIANT(disabled) {
	int enable_on_exec;
};

FIXTURE(disabled) {
	struct ctx x;
};

FIXTURE_SETUP(disabled)
{
	if (ctx_setup(_metadata, &self->x))
		return;
}

FIXTURE_TEARDOWN(disabled)
{
	ctx_teardown(&self->x);
}

FIXTURE_VARIANT_ADD(disabled, by_ioctl) { 0 };
FIXTURE_VARIANT_ADD(disabled, waiting_for_exec) { 1 };

/*
 * A disabled defer_output event (never enabled, or waiting for exec) gets
 * no records of entries that another session sampled.
 */
TEST_F(disabled, event_gets_no_other_sessions_records)
{
	struct perf_event_attr attr, off;
	struct recs *other;
	int n;

	switch_attr(&attr);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);
	memset(&off, 0, sizeof(off));
	off.size = sizeof(off);
	off.type = PERF_TYPE_SOFTWARE;
	off.config = PERF_COUNT_SW_DUMMY;
	off.sample_type = PERF_SAMPLE_TID;
	off.sample_id_all = 1;
	off.defer_output = 1;
	off.disabled = 1;
	off.enable_on_exec = variant->enable_on_exec;
	open_mapped(_metadata, &self->x, 1, &off, 0, -1);

	run_sleep_chain(&self->x, self->x.fd[0]);
	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
		TH_LOG("the enabled session got no record");
	}
	other = calloc(1, sizeof(*other));
	ASSERT_TRUE(!!other);
	rb_drain(&self->x.rb[1], other);
	n = count_type(other, PERF_RECORD_CALLCHAIN_DEFERRED);
	recs_free(other);
	free(other);
	EXPECT_EQ(0, n) TH_LOG("a disabled event got %d records it never asked for", n);
}

/*
 * The task is sampled on CPU 0 as it goes to sleep, moved to CPU 1 while
 * it sleeps, and returns to user space there: the record belongs to the
 * events of CPU 0, where the sample was taken. A session limited to CPU 1
 * never sampled it and gets nothing.
 */
FIXTURE(migrate) {
	struct ctx x;
	struct rb rb1;
	int fd1;
};

FIXTURE_VARIANT(migrate) {
	int per_task;	/* events of the task bound to a CPU, else CPU-wide */
};

FIXTURE_VARIANT_ADD(migrate, cpu_wide) { 0 };
FIXTURE_VARIANT_ADD(migrate, per_task_per_cpu) { 1 };

FIXTURE_SETUP(migrate)
{
	if (ctx_setup(_metadata, &self->x))
		return;
	self->fd1 = -1;
	memset(&self->rb1, 0, sizeof(self->rb1));
}

FIXTURE_TEARDOWN(migrate)
{
	rb_unmap(&self->rb1);
	if (self->fd1 >= 0)
		close(self->fd1);
	ctx_teardown(&self->x);
}

struct sleeper {
	struct chain *c;
	pid_t tid;
	int go[2];
};

/* Whether @recs holds a sample of @tid with @cookie. */
static bool sampled_cookie(const struct recs *recs, __u32 tid, __u64 cookie)
{
	struct sample s;
	int i;

	for (i = 0; i < recs->n; i++) {
		if (parse_sample(recs->r[i], &s) && s.tid == tid &&
		    sample_cookie(&s) == cookie)
			return true;
	}
	return false;
}

static int pin(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(tid, sizeof(set), &set);
}

static void *sleeper_fn(void *p)
{
	static const struct timespec nap = { 0, 300 * 1000 * 1000 };
	struct sleeper *sl = p;
	char byte;

	if (pin(0, 0))
		return NULL;
	__atomic_store_n(&sl->tid, gettid(), __ATOMIC_RELEASE);
	if (read(sl->go[0], &byte, 1) != 1)
		return NULL;
	chain_syscall(sl->c, DEPTH, __NR_nanosleep, (long)&nap, 0, 0);
	return NULL;
}

/* Report the tid, wait for the go, then execve() from the chain. */
static void *exec_thread_fn(void *p)
{
	struct sleeper *sl = p;
	char byte;

	__atomic_store_n(&sl->tid, gettid(), __ATOMIC_RELEASE);
	if (read(sl->go[0], &byte, 1) != 1)
		return NULL;
	chain_syscall(sl->c, DEPTH, __NR_execve, sl->c->a, sl->c->b, sl->c->c);
	return NULL;
}

TEST_F(migrate, record_goes_to_the_cpu_of_the_sample)
{
	struct perf_event_attr attr;
	struct recs *other;
	struct sleeper sl;
	struct sample s;
	pthread_t th;
	pid_t target;
	char byte = 0;
	int i, n, cpu;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	sl.c = self->x.c;
	sl.tid = 0;
	ASSERT_EQ(0, pipe(sl.go));
	ASSERT_EQ(0, pthread_create(&th, NULL, sleeper_fn, &sl));
	while (!__atomic_load_n(&sl.tid, __ATOMIC_ACQUIRE))
		usleep(1000);

	/* One session per CPU: a sampler that is also the receiver. */
	switch_attr(&attr);
	attr.disabled = 0;
	/*
	 * No wakeup per sample: on PREEMPT_RT perf's wakeup irq_work runs
	 * in the irq_work/N thread, whose own switches a CPU-wide
	 * context-switch event samples, each waking it again; the ping-pong
	 * starves the sleeper. The test drains the buffers without poll().
	 */
	attr.wakeup_events = 0;
	target = variant->per_task ? sl.tid : -1;
	for (cpu = 0; cpu < 2; cpu++) {
		int fd = sys_perf_event_open(&attr, target, cpu, -1, 0);

		ASSERT_LE(0, fd) TH_LOG("perf_event_open on CPU %d: %s", cpu, strerror(errno));
		ASSERT_EQ(0, rb_map(cpu ? &self->rb1 : &self->x.rb[0], fd));
		if (cpu)
			self->fd1 = fd;
		else
			self->x.fd[0] = fd;
	}

	ASSERT_EQ(1, write(sl.go[1], &byte, 1));
	usleep(100 * 1000);		/* asleep on CPU 0 by now */
	ASSERT_EQ(0, pin(sl.tid, 1));	/* it wakes up on CPU 1 */
	pthread_join(th, NULL);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_DISABLE, 0);
	ioctl(self->fd1, PERF_EVENT_IOC_DISABLE, 0);

	n = wait_matched(&self->x.rb[0], self->x.recs, sl.tid, 1);
	ASSERT_TRUE(first_deferred_sample(self->x.recs, sl.tid, &s)) {
		TH_LOG("no deferred sample of the sleeper on CPU 0");
	}
	ASSERT_LE(1, n) {
		TH_LOG("CPU 0's session sampled the sleep but got no record");
	}
	check_all(_metadata, &self->x, sl.tid, 1, 0);

	other = calloc(1, sizeof(*other));
	ASSERT_TRUE(!!other);
	rb_drain(&self->rb1, other);
	for (i = 0; i < self->x.recs->n; i++) {
		if (!parse_sample(self->x.recs->r[i], &s) || s.tid != sl.tid ||
		    !sample_cookie(&s))
			continue;
		/*
		 * An entry preempted again after the move (a loaded host)
		 * was sampled on CPU 1 too: CPU 1's session owns a record.
		 */
		if (sampled_cookie(other, sl.tid, sample_cookie(&s)))
			continue;
		EXPECT_EQ(0, count_deferred(other, sample_cookie(&s), NULL)) {
			TH_LOG("CPU 1's session got the record of a sample taken on CPU 0");
		}
	}
	recs_free(other);
	free(other);
	close(sl.go[0]);
	close(sl.go[1]);
}

/*
 * A thread other than the leader calls execve(): it takes the leader's tid
 * on the way. The record of its sample at the execve() entry carries the
 * tid the sample carries.
 */
TEST_F(defer, exec_by_a_non_leader_thread)
{
	static char *const argv[] = { "true", NULL };
	static char *const envp[] = { NULL };
	struct perf_event_attr attr;
	int status, tidp[2], go[2];
	struct deferred d;
	struct sample s;
	pid_t pid, tid;
	char byte = 0;
	long id;

	if (sizeof(long) == 4)
		SKIP(return, "syscall tracepoints do not trace compat tasks");
	if (access("/bin/true", X_OK))
		SKIP(return, "no /bin/true");
	id = tracepoint_id("syscalls/sys_enter_execve");
	if (id < 0)
		SKIP(return, "no syscalls:sys_enter_execve tracepoint");
	ASSERT_EQ(0, pipe(tidp));
	ASSERT_EQ(0, pipe(go));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct sleeper sl = { .c = self->x.c };
		pthread_t th;

		/* The thread reports its tid, waits, then execs. */
		sl.go[0] = go[0];
		if (pthread_create(&th, NULL, exec_thread_fn, &sl))
			_exit(2);
		while (!__atomic_load_n(&sl.tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		if (write(tidp[1], &sl.tid, sizeof(sl.tid)) != sizeof(sl.tid))
			_exit(3);
		pthread_join(th, NULL);
		_exit(4);	/* execve failed */
	}
	ASSERT_EQ(sizeof(tid), read(tidp[0], &tid, sizeof(tid)));
	ASSERT_NE(pid, tid);
	attr_init(&attr, PERF_TYPE_TRACEPOINT, id);
	attr.disabled = 0;
	open_mapped(_metadata, &self->x, 0, &attr, tid, -1);
	self->x.c->a = (long)"/bin/true";
	self->x.c->b = (long)argv;
	self->x.c->c = (long)envp;
	ASSERT_EQ(1, write(go[1], &byte, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("the child did not exec /bin/true (status %#x)", status);
	}

	wait_matched(&self->x.rb[0], self->x.recs, tid, 1);
	ASSERT_TRUE(first_deferred_sample(self->x.recs, tid, &s)) {
		TH_LOG("no deferred sample of the thread at execve()");
	}
	ASSERT_EQ(1, count_deferred(self->x.recs, sample_cookie(&s), &d)) {
		TH_LOG("the sample at execve() has no single record");
	}
	EXPECT_EQ(tid, d.tid) {
		TH_LOG("the record names tid %u; the sample names %d (the leader is %d)",
		       d.tid, tid, pid);
	}
	check_frames(_metadata, &d, self->x.c, 0);
}

/*
 * The record of an entry context is written on each CPU one of its
 * waiting samples was taken on, by an IPI from the task's way out, and
 * on no other; at most four CPUs (PERF_DEFER_SLOTS) get one, and a
 * sample on a fifth takes its user chain at once. The test module moves
 * the writer across five CPUs within one write(), sampled at each switch
 * by a context-switch event bound to each CPU: the fifth CPU's sample is
 * classic, and neither it nor a sixth CPU, where the task never runs,
 * gets a record. Before, the way out interrupted every CPU with such an
 * event and each wrote the record. Needs six CPUs and the module.
 */
#define MODULE_CTL	"/sys/kernel/debug/unwind_deferred_test/ctl"
#define SIX		6

TEST_F(defer, record_reaches_at_most_four_cpus)
{
	static const char cmd[] = "migrate 1; migrate 2; migrate 3; migrate 4; migrate 0";
	int deferred[SIX] = { }, classic[SIX] = { }, records[SIX] = { };
	struct perf_event_attr attr;
	struct rb rb[SIX] = { };
	int fd[SIX], ctl, cpu, i;
	struct deferred d;
	struct recs *recs;
	struct sample s;
	cpu_set_t all;

	if (sysconf(_SC_NPROCESSORS_ONLN) < SIX)
		SKIP(return, "needs %d CPUs, %ld online", SIX,
		     sysconf(_SC_NPROCESSORS_ONLN));
	ctl = open(MODULE_CTL, O_RDWR);
	if (ctl < 0)
		SKIP(return, "%s: %s (module test_unwind_deferred)", MODULE_CTL,
		     strerror(errno));
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	ASSERT_EQ(0, pin(0, 0));
	switch_attr(&attr);
	for (cpu = 0; cpu < SIX; cpu++) {
		fd[cpu] = sys_perf_event_open(&attr, 0, cpu, -1, 0);
		ASSERT_LE(0, fd[cpu]) TH_LOG("perf_event_open on CPU %d: %s", cpu, strerror(errno));
		ASSERT_EQ(0, rb_map(&rb[cpu], fd[cpu]));
	}
	for (cpu = 0; cpu < SIX; cpu++)
		ioctl(fd[cpu], PERF_EVENT_IOC_ENABLE, 0);
	chain_syscall(self->x.c, DEPTH, __NR_write, ctl, (long)cmd, strlen(cmd));
	for (cpu = 0; cpu < SIX; cpu++)
		ioctl(fd[cpu], PERF_EVENT_IOC_DISABLE, 0);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	close(ctl);
	ASSERT_EQ((long)strlen(cmd), self->x.c->ret) {
		TH_LOG("write(%s): %s", cmd, strerror(-self->x.c->ret));
	}

	recs = calloc(1, sizeof(*recs));
	ASSERT_TRUE(!!recs);
	for (cpu = 0; cpu < SIX; cpu++) {
		rb_drain(&rb[cpu], recs);
		for (i = 0; i < recs->n; i++) {
			if (parse_sample(recs->r[i], &s) && s.tid == gettid()) {
				if (sample_cookie(&s))
					deferred[cpu]++;
				else
					classic[cpu]++;
			} else if (parse_deferred(recs->r[i], &d) &&
				   d.has_id && d.tid == gettid()) {
				records[cpu]++;
			}
		}
		recs_free(recs);
		rb_unmap(&rb[cpu]);
		close(fd[cpu]);
		TH_LOG("CPU %d: %d deferred and %d classic samples, %d records",
		       cpu, deferred[cpu], classic[cpu], records[cpu]);
	}
	free(recs);

	for (cpu = 0; cpu < 4; cpu++)
		EXPECT_LE(1, deferred[cpu] + classic[cpu]) {
			TH_LOG("CPU %d: no sample of the moves", cpu);
		}
	EXPECT_EQ(0, deferred[4]) TH_LOG("the fifth CPU's sample deferred");
	EXPECT_LE(1, classic[4]) TH_LOG("the fifth CPU has no classic sample");
	EXPECT_EQ(0, records[4]) TH_LOG("the fifth CPU got a record");
	EXPECT_EQ(0, records[5]) TH_LOG("a CPU the task never ran on got a record");
}
