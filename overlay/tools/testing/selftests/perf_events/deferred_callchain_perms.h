/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Permissions (the perms fixture): an unprivileged task under each
 * perf_event_paranoid level.
 *
 * Included once, by deferred_callchain.c.
 */
#include "deferred_callchain_common.h"

/*
 * Permissions: under perf_event_paranoid 2, 1, 0 and -1, an unprivileged
 * task (uid and gid 65534) gets deferred records for itself and none for a
 * root task running beside it; it cannot attach to that task, nor open a
 * CPU-wide receiver unless the level allows CPU-wide events (0 and -1);
 * an exclude_user event gets only its own task's records, and an
 * exclude_callchain_user event neither defers nor gets records.
 */
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define NOBODY		65534

struct perms_result {
	int self_err;		/* errno opening its own event, 0 when opened */
	int self_deferred;	/* its samples that deferred */
	int self_records;	/* records with its tid */
	int foreign_records;	/* records with another tid */
	int other_err;		/* errno opening an event on the root task */
	int cpu_err;		/* errno opening a CPU-wide receiver */
	int excl_user_err;	/* errno opening an exclude_user event */
	int excl_user_foreign;	/* its records of another task */
	int excl_cc_err;	/* errno opening an exclude_callchain_user event */
	int excl_cc_deferred;	/* its samples that deferred */
	int excl_cc_records;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Sample a user-space spin with @attr on this task; count what comes back. */
/* 0 if @attr opens for @pid on @cpu (the event is closed again), else errno. */
static int open_errno(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd = sys_perf_event_open(attr, pid, cpu, -1, 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int perms_sample(struct perf_event_attr *attr, int *deferred,
			int *mine, int *foreign)
{
	struct recs *recs = calloc(1, sizeof(*recs));
	struct rb rb = { 0 };
	struct deferred d;
	struct sample s;
	int fd, i, err;
	double end;

	fd = sys_perf_event_open(attr, 0, -1, -1, 0);
	if (fd < 0 || !recs) {
		err = errno;
		free(recs);
		return err ?: ENOMEM;
	}
	if (rb_map(&rb, fd)) {
		err = errno;
		close(fd);
		free(recs);
		return err;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	end = now_ms() + 300;
	while (now_ms() < end)
		asm volatile("" ::: "memory");	/* stay in user space */
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	rb_drain(&rb, recs);
	for (i = 0; i < recs->n; i++) {
		if (parse_sample(recs->r[i], &s) && sample_cookie(&s))
			(*deferred)++;
		if (parse_deferred(recs->r[i], &d) && d.has_id) {
			if (d.tid == (__u32)gettid())
				(*mine)++;
			else
				(*foreign)++;
		}
	}
	recs_free(recs);
	free(recs);
	rb_unmap(&rb);
	close(fd);
	return 0;
}

static void perms_child(struct perms_result *res, pid_t root_task)
{
	struct perf_event_attr attr;
	int unused = 0;

	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		_exit(2);

	/* What paranoid 2 allows: user space only, kernel callchains too. */
	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 100000;
	attr.exclude_kernel = 1;
	attr.exclude_callchain_kernel = 1;
	res->self_err = perms_sample(&attr, &res->self_deferred,
				     &res->self_records, &res->foreign_records);

	res->other_err = open_errno(&attr, root_task, -1);

	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	attr.defer_callchain = 0;
	attr.exclude_kernel = 1;
	res->cpu_err = open_errno(&attr, -1, 0);

	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 100000;
	attr.exclude_user = 1;
	res->excl_user_err = perms_sample(&attr, &unused, &unused,
					  &res->excl_user_foreign);

	attr_init(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 100000;
	attr.exclude_kernel = 1;
	attr.exclude_callchain_kernel = 1;
	attr.exclude_callchain_user = 1;
	res->excl_cc_err = perms_sample(&attr, &res->excl_cc_deferred, &res->excl_cc_records,
					&res->excl_cc_records);
	_exit(0);
}

FIXTURE(perms) {
	int saved, saved_ok, saved_try_first;
	pid_t root_task;
	struct perms_result *res;
};

FIXTURE_VARIANT(perms) {
	int paranoid;
};

FIXTURE_VARIANT_ADD(perms, paranoid_2) { 2 };
FIXTURE_VARIANT_ADD(perms, paranoid_1) { 1 };
FIXTURE_VARIANT_ADD(perms, paranoid_0) { 0 };
FIXTURE_VARIANT_ADD(perms, paranoid_minus_1) { -1 };

FIXTURE_SETUP(perms)
{
	self->root_task = -1;
	self->res = MAP_FAILED;
	self->saved_try_first = -1;
	self->saved_ok = !sysctl_get(PARANOID, &self->saved);
	if (geteuid())
		SKIP(return, "needs root, to set %s and become uid %d", PARANOID, NOBODY);
	if (defer_or_skip(_metadata))
		return;
	ASSERT_TRUE(self->saved_ok) TH_LOG("cannot read %s", PARANOID);
	ASSERT_EQ(0, write_sysctl(PARANOID, variant->paranoid));
	/* The unprivileged child's samples spin in user space: defer them. */
	try_first_set(0, &self->saved_try_first);
	self->res = mmap(NULL, sizeof(*self->res), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->res);
	memset(self->res, 0, sizeof(*self->res));
	/* A root task busy in system calls next to the unprivileged one. */
	self->root_task = fork();
	ASSERT_LE(0, self->root_task);
	if (!self->root_task) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			syscall(__NR_getppid);
	}
}

FIXTURE_TEARDOWN(perms)
{
	if (self->root_task > 0) {
		kill(self->root_task, SIGKILL);
		waitpid(self->root_task, NULL, 0);
	}
	if (self->saved_ok && !geteuid())
		write_sysctl(PARANOID, self->saved);
	try_first_restore(self->saved_try_first);
	if (self->res != MAP_FAILED)
		munmap(self->res, sizeof(*self->res));
}

TEST_F(perms, unprivileged_gets_records_only_for_its_own_tasks)
{
	const struct perms_result *r = self->res;
	int status;
	pid_t child;

	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		perms_child(self->res, self->root_task);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("the unprivileged child failed (status %#x)", status);
	}

	ASSERT_EQ(0, r->self_err) {
		TH_LOG("paranoid %d: its own user-space event: %s", variant->paranoid,
		       strerror(r->self_err));
	}
	EXPECT_LT(0, r->self_deferred) TH_LOG("none of its samples deferred");
	EXPECT_LT(0, r->self_records) TH_LOG("no record for its own task");
	EXPECT_EQ(0, r->foreign_records) {
		TH_LOG("%d records of another task reached it", r->foreign_records);
	}
	EXPECT_NE(0, r->other_err) TH_LOG("it opened an event on a root task");
	if (variant->paranoid >= 1)
		EXPECT_NE(0, r->cpu_err) {
			TH_LOG("paranoid %d let it open a CPU-wide receiver", variant->paranoid);
		}
	if (!r->excl_user_err)
		EXPECT_EQ(0, r->excl_user_foreign) {
			TH_LOG("an exclude_user event got %d records of another task",
			       r->excl_user_foreign);
		}
	ASSERT_EQ(0, r->excl_cc_err) TH_LOG("exclude_callchain_user event: %s",
					    strerror(r->excl_cc_err));
	EXPECT_EQ(0, r->excl_cc_deferred) {
		TH_LOG("an exclude_callchain_user event deferred %d samples", r->excl_cc_deferred);
	}
	EXPECT_EQ(0, r->excl_cc_records) {
		TH_LOG("an exclude_callchain_user event got %d records", r->excl_cc_records);
	}
}
