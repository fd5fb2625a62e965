/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Requests and their callbacks: from task, hard IRQ and NMI context and
 * in perf's sample-time throttle; cookies within and across entry
 * contexts, tasks and CPUs; 40 users and one walk; cancel, refused
 * requests and commands; requests pending at exit, at a signal and at
 * exec.
 *
 * Included once, by unwind_deferred.c.
 */
#include "unwind_deferred_common.h"

/* Ask from @ctx for slot 0 from a depth-8 chain; check the one callback. */
static void request_one(struct __test_metadata *_metadata, int fd,
			struct results *r, struct chain *c, const char *ctx)
{
	const struct cb *b = NULL;
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "request %s 0x1", ctx);
	chain_write(c, fd, cmd, 8, NULL);
	ASSERT_EQ((long)strlen(cmd), c->ret) {
		TH_LOG("'%s' failed: %s", cmd, strerror(-c->ret));
	}
	ASSERT_EQ(0, read_results(fd, r));

	ASSERT_EQ(1, r->nreq) TH_LOG("expected one request, found %d", r->nreq);
	EXPECT_STREQ(ctx, r->req[0].ctx) TH_LOG("the request ran in %s context", r->req[0].ctx);
	EXPECT_EQ(0, r->req[0].ret) TH_LOG("the first request returned %d", r->req[0].ret);
	EXPECT_NE(0, r->req[0].cookie) TH_LOG("the cookie is zero");
	EXPECT_EQ(gettid(), r->req[0].pid);

	ASSERT_EQ(1, r->ncb) TH_LOG("expected exactly one callback, got %d", r->ncb);
	b = &r->cb[0];
	EXPECT_EQ(0, b->slot);
	EXPECT_EQ(gettid(), b->pid) TH_LOG("the callback ran in another task");
	EXPECT_EQ(r->req[0].cookie, b->cookie) {
		TH_LOG("the callback's cookie differs from the request's");
	}
	EXPECT_EQ(0, b->exiting);
	check_stack(_metadata, c, b);
}

TEST_F(unwind, task_request_gets_own_stack)
{
	request_one(_metadata, self->fd, self->res, self->c, "task");
}

TEST_F(unwind, irq_request_gets_own_stack)
{
	request_one(_metadata, self->fd, self->res, self->c, "irq");
}

TEST_F(unwind, nmi_request_gets_own_stack)
{
	long long before = counter("requests_nmi");

	ASSERT_LE(0, before) TH_LOG("no %s", COUNTERS_PATH);
	request_one(_metadata, self->fd, self->res, self->c, "nmi");
	EXPECT_LT(before, counter("requests_nmi")) TH_LOG("no request was counted as NMI");
}

/*
 * perf's sample-time throttle (kernel.perf_cpu_time_max_percent) measures
 * NMI samples, which used to include the user walk. A perf sample taken in
 * a real NMI (the nmi:nmi_handler tracepoint, fired by the module's
 * self-NMI) defers that walk: its cost must still count, so with the limit
 * at 1% deep stacks make perf lower perf_event_max_sample_rate.
 */
#define CPU_PERCENT	"/proc/sys/kernel/perf_cpu_time_max_percent"
#define SAMPLE_RATE	"/proc/sys/kernel/perf_event_max_sample_rate"

static int sysctl_rw(const char *path, int *val, int write)
{
	FILE *f = fopen(path, write ? "w" : "r");
	int ok;

	if (!f)
		return -1;
	ok = write ? fprintf(f, "%d\n", *val) > 0 : fscanf(f, "%d", val) == 1;
	return fclose(f) || !ok ? -1 : 0;
}

/* Deferred samples among the records of a perf ring buffer. */
static int deferred_samples(struct perf_event_mmap_page *pg, size_t size)
{
	const char *data = (const char *)pg + getpagesize();
	__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), off;
	const struct perf_event_header *h;
	const __u64 *p;
	int n = 0;

	for (off = 0; off + sizeof(*h) <= head && off + sizeof(*h) <= size; off += h->size) {
		h = (const void *)(data + off);
		if (!h->size || off + h->size > size)
			break;
		/* tid, nr, then the chain: the marker is second to last. */
		p = (const void *)(h + 1);
		if (h->type == PERF_RECORD_SAMPLE && h->size >= sizeof(*h) + 16 &&
		    p[1] >= 2 && h->size >= sizeof(*h) + 8 * (2 + p[1]) &&
		    p[p[1]] == PERF_CONTEXT_USER_DEFERRED)
			n++;
	}
	return n;
}

/*
 * A sample of every nmi:nmi_handler hit that defers its user part, into
 * @attr; its tracepoint's id, or -1 when tracefs does not have it.
 */
static int nmi_sample_attr(struct perf_event_attr *attr)
{
	FILE *f = fopen("/sys/kernel/tracing/events/nmi/nmi_handler/id", "r");
	int tp = -1;

	if (f && fscanf(f, "%d", &tp) != 1)
		tp = -1;
	if (f)
		fclose(f);
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = tp;
	attr->sample_period = 1;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	attr->defer_callchain = 1;
	attr->defer_output = 1;
	return tp;
}

TEST_F(unwind, nmi_samples_deferred_work_counts_in_the_throttle)
{
	size_t size = 64 * getpagesize();
	struct perf_event_attr attr;
	int percent, rate, low = 1, now, i, fd;
	struct perf_event_mmap_page *pg;

	if (nmi_sample_attr(&attr) < 0)
		SKIP(return, "no nmi:nmi_handler tracepoint");
	if (sysctl_rw(CPU_PERCENT, &percent, 0) || sysctl_rw(SAMPLE_RATE, &rate, 0))
		SKIP(return, "cannot read %s or %s", CPU_PERCENT, SAMPLE_RATE);

	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open(nmi:nmi_handler): %s", strerror(errno));
	pg = mmap(NULL, size + getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, pg);

	ASSERT_EQ(0, sysctl_rw(CPU_PERCENT, &low, 1));
	ASSERT_EQ(0, sysctl_rw(SAMPLE_RATE, &rate, 1));	/* limits from 1% */
	for (i = 0, now = rate; i < 20 && now == rate; i++) {
		chain_write(self->c, self->fd, "request nmi 0x1", MAX_DEPTH - 8, NULL);
		ASSERT_LT(0, self->c->ret) TH_LOG("write: %s", strerror(-self->c->ret));
		ASSERT_EQ(0, sysctl_rw(SAMPLE_RATE, &now, 0));
	}
	EXPECT_EQ(0, sysctl_rw(CPU_PERCENT, &percent, 1));
	EXPECT_EQ(0, sysctl_rw(SAMPLE_RATE, &rate, 1));

	EXPECT_LE(1, deferred_samples(pg, size)) TH_LOG("no NMI sample deferred its user part");
	EXPECT_GT(rate, now) {
		TH_LOG("%d deep NMI samples at 1%% left the sample rate at %d", i, now);
	}
	munmap(pg, size + getpagesize());
	close(fd);
}

/*
 * A request that comes after its callback ran in this entry context (here:
 * from the callback itself; in perf: a sample taken in the callbacks or
 * later on the way out) cannot be served: -EALREADY, no cookie, and no
 * second callback.  Before, it got 1 and a cookie whose callback had passed.
 */
TEST_F(unwind, request_after_its_callback_gets_ealready)
{
	long long before = counter("already_run");
	struct results *r = self->res;

	ASSERT_LE(0, before) TH_LOG("no %s", COUNTERS_PATH);
	chain_write(self->c, self->fd, "ask-in-callback 0x1; request task 0x1", 4, NULL);
	ASSERT_LT(0, self->c->ret) TH_LOG("write: %s", strerror(-self->c->ret));
	ASSERT_EQ(0, read_results(self->fd, r));

	ASSERT_EQ(2, r->nreq) TH_LOG("expected the request and one from the callback, got %d",
				     r->nreq);
	EXPECT_STREQ("task", r->req[0].at);
	EXPECT_EQ(0, r->req[0].ret) TH_LOG("the first request returned %d", r->req[0].ret);
	EXPECT_STREQ("callback", r->req[1].at);
	EXPECT_EQ(-EALREADY, r->req[1].ret) {
		TH_LOG("a request after its callback returned %d, not -EALREADY",
		       r->req[1].ret);
	}
	EXPECT_EQ(0, r->req[1].cookie) TH_LOG("a request that gets no callback got a cookie");
	EXPECT_EQ(1, r->ncb) TH_LOG("%d callbacks for one entry", r->ncb);
	EXPECT_LT(before, counter("already_run")) TH_LOG("already_run did not count it");
}

TEST_F(unwind, same_entry_same_cookie_next_entry_new_cookie)
{
	struct results *r = self->res;
	unsigned long long first;
	int i;

	chain_write(self->c, self->fd, "request task 0x1 3", 4, NULL);
	ASSERT_LT(0, self->c->ret);
	ASSERT_EQ(0, read_results(self->fd, r));
	ASSERT_EQ(3, r->nreq);
	EXPECT_EQ(0, r->req[0].ret) TH_LOG("the first request returned %d", r->req[0].ret);
	for (i = 1; i < 3; i++) {
		EXPECT_EQ(1, r->req[i].ret) {
			TH_LOG("request %d in the same entry returned %d, not 1",
			       i, r->req[i].ret);
		}
		EXPECT_EQ(r->req[0].cookie, r->req[i].cookie) {
			TH_LOG("the cookie changed within one entry");
		}
	}
	ASSERT_EQ(1, r->ncb) TH_LOG("%d callbacks for one entry", r->ncb);
	first = r->req[0].cookie;

	chain_write(self->c, self->fd, "request task 0x1", 4, NULL);
	ASSERT_LT(0, self->c->ret);
	ASSERT_EQ(0, read_results(self->fd, r));
	ASSERT_EQ(4, r->nreq);
	EXPECT_EQ(0, r->req[3].ret) {
		TH_LOG("a new entry's first request returned %d", r->req[3].ret);
	}
	EXPECT_NE(first, r->req[3].cookie) TH_LOG("two entries share cookie %#llx", first);
	EXPECT_NE(0, r->req[3].cookie);
	ASSERT_EQ(2, r->ncb);
	EXPECT_EQ(r->req[3].cookie, r->cb[1].cookie);
}

TEST_F(unwind, one_walk_one_callback_per_user)
{
	struct results *r = self->res;
	long long walks = counter("walks"), calls = counter("callbacks");
	int slot, i;

	/* All 40 users in one entry: from NMI, hard IRQ and task context. */
	chain_write(self->c, self->fd,
		    "request nmi 0x1;request irq 0x2;request task 0xfffffffffc",
		    6, NULL);
	ASSERT_LT(0, self->c->ret) TH_LOG("write: %s", strerror(-self->c->ret));
	ASSERT_EQ(0, read_results(self->fd, r));
	ASSERT_EQ(NR_SLOTS, r->nreq);
	for (i = 0; i < r->nreq; i++) {
		EXPECT_EQ(0, r->req[i].ret) {
			TH_LOG("slot %d: request returned %d", r->req[i].slot, r->req[i].ret);
		}
		EXPECT_EQ(r->req[0].cookie, r->req[i].cookie) {
			TH_LOG("slot %d got another cookie", r->req[i].slot);
		}
	}
	EXPECT_STREQ("nmi", r->req[0].ctx);
	EXPECT_STREQ("irq", r->req[1].ctx);

	ASSERT_EQ(NR_SLOTS, r->ncb) TH_LOG("%d callbacks for %d users", r->ncb, NR_SLOTS);
	for (slot = 0; slot < NR_SLOTS; slot++) {
		const struct cb *b = NULL;

		ASSERT_EQ(1, cbs_for(r, slot, 0, &b)) TH_LOG("slot %d", slot);
		EXPECT_EQ(r->req[0].cookie, b->cookie);
		check_stack(_metadata, self->c, b);
	}
	EXPECT_EQ(1, counter("walks") - walks) TH_LOG("the stack was walked more than once");
	EXPECT_EQ(NR_SLOTS, counter("callbacks") - calls);
}

TEST_F(unwind, cancel_drops_pending_request)
{
	struct results *r = self->res;
	const struct req *q;

	chain_write(self->c, self->fd,
		    "request task 0x3;cancel 1;request task 0x2", 4, NULL);
	ASSERT_LT(0, self->c->ret) TH_LOG("write: %s", strerror(-self->c->ret));
	ASSERT_EQ(0, read_results(self->fd, r));
	ASSERT_EQ(3, r->nreq);
	EXPECT_EQ(0, r->req[1].ret);
	EXPECT_EQ(-EINVAL, r->req[2].ret) {
		TH_LOG("a cancelled user's request returned %d", r->req[2].ret);
	}
	EXPECT_EQ(0, r->req[2].cookie);
	EXPECT_EQ(1, cbs_for(r, 0, 0, NULL));
	EXPECT_EQ(0, cbs_for(r, 1, 0, NULL)) TH_LOG("a cancelled user's callback ran");

	/* The slot's next owner starts clean. */
	ASSERT_EQ(0, ctl(self->fd, "init 1"));
	chain_write(self->c, self->fd, "request task 0x2", 4, NULL);
	ASSERT_LT(0, self->c->ret);
	ASSERT_EQ(0, read_results(self->fd, r));
	q = &r->req[r->nreq - 1];
	EXPECT_EQ(0, q->ret) TH_LOG("the re-registered user's request returned %d", q->ret);
	EXPECT_EQ(1, cbs_for(r, 1, 0, NULL)) TH_LOG("the re-registered user got no callback");
}

TEST_F(unwind, kernel_thread_is_refused)
{
	struct results *r = self->res;
	const struct req *q;

	ASSERT_EQ(0, ctl(self->fd, "kthread"));
	ASSERT_EQ(0, read_results(self->fd, r));
	q = req_at(r, "kthread", 0);
	ASSERT_TRUE(!!q);
	EXPECT_EQ(-EINVAL, q->ret) TH_LOG("a kernel thread's request returned %d", q->ret);
	EXPECT_EQ(0, q->cookie);
	EXPECT_EQ(0, r->ncb);
}

TEST_F(unwind, bad_commands_are_refused)
{
	static const struct {
		const char *cmd;
		int err;
	} bad[] = {
		{ "request task 0x0", -EINVAL },
		{ "request task 0x10000000000", -EINVAL },
		{ "request bogus 0x1", -EINVAL },
		{ "request task 0x1 0", -EINVAL },
		{ "request task zz", -EINVAL },
		{ "cancel 40", -EINVAL },
		{ "cancel", -EINVAL },
		{ "init 0", -EBUSY },
		{ "arm-exit 0", -EINVAL },
		{ "request-at ffff888000000000 0x1", -EINVAL },
		{ "request-at 401000", -EINVAL },
		{ "request-uprobe 0 0x1", -EINVAL },
		{ "sleep 1001", -EINVAL },
		{ "frobnicate", -EINVAL },
	};
	unsigned int i;
	int fd2;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(bad[i].err, ctl(self->fd, bad[i].cmd)) {
			TH_LOG("'%s' was not refused with %d", bad[i].cmd,
			       bad[i].err);
		}
	}
	fd2 = open(CTL_PATH, O_RDWR);
	EXPECT_EQ(-1, fd2) TH_LOG("a second open succeeded");
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(0, read_results(self->fd, self->res));
	EXPECT_EQ(0, self->res->nreq);
}

TEST_F(unwind, cookies_unique_across_tasks_and_cpus)
{
	struct results *r = self->res;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), cpu, i, j, status;

	ASSERT_LT(0, ncpu);
	for (cpu = 0; cpu < ncpu && cpu < 8; cpu++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (!pid) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				_exit(2);
			for (i = 0; i < 4; i++) {
				chain_write(self->c, self->fd, "request task 0x1", 3, NULL);
				if (self->c->ret <= 0)
					_exit(3);
			}
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	ASSERT_EQ(0, read_results(self->fd, r));
	ASSERT_EQ(4 * (cpu), r->nreq);
	for (i = 0; i < r->nreq; i++) {
		EXPECT_EQ(0, r->req[i].ret);
		for (j = 0; j < i; j++)
			EXPECT_NE(r->req[i].cookie, r->req[j].cookie) {
				TH_LOG("entries %d and %d share cookie %#llx", i, j,
				       r->req[i].cookie);
			}
	}
	EXPECT_EQ(r->nreq, r->ncb);
}

TEST_F(unwind, exit_with_request_pending)
{
	struct results *r = self->res;
	long long done = counter("exit_completions");
	const struct req *q;
	const struct cb *b = NULL;
	int status, ret;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		ret = ctl(self->fd, "arm-exit 0x1");
		if (ret)
			_exit(ret == -EOPNOTSUPP ? 4 : 5);
		memset(self->c, 0, sizeof(*self->c));
		self->c->depth = 5;
		self->c->nr = __NR_exit_group;
		self->c->leaf = leaf_syscall;
		descend(self->c, 0);
		_exit(6);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 4)
		SKIP(return, "the test module has no kprobes");
	ASSERT_EQ(0, WEXITSTATUS(status));

	ASSERT_EQ(0, read_results(self->fd, r));
	q = req_at(r, "exit", 0);
	ASSERT_TRUE(!!q) TH_LOG("no request was made in do_exit()");
	EXPECT_EQ(pid, q->pid);
	ASSERT_EQ(0, q->ret) TH_LOG("the request in do_exit() returned %d", q->ret);
	ASSERT_EQ(1, cbs_for(r, 0, pid, &b)) TH_LOG("the exiting task's callback did not run once");
	EXPECT_EQ(q->cookie, b->cookie);
	EXPECT_EQ(1, b->exiting) TH_LOG("the callback did not run in the exit path");
	EXPECT_EQ(1, counter("exit_completions") - done);
	check_stack(_metadata, self->c, b);
}

static int usr1_runs;

static void usr1_handler(int sig)
{
	__atomic_fetch_add(&usr1_runs, 1, __ATOMIC_RELAXED);
}

/*
 * A request made on the way out after get_signal() (a sample taken while
 * the signal frame is written, say) is walked after the frame is set up,
 * when the registers already point at the handler. The record must hold
 * the stack the request was made on: the chain that sent the signal.
 */
TEST_F(unwind, signal_frame_set_up_after_the_request)
{
	struct sigaction sa = { .sa_handler = usr1_handler };
	struct sigaction old;
	struct results *r = self->res;
	const struct cb *b = NULL;
	const struct req *q;
	int ret;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, &old));
	ret = ctl(self->fd, "arm-signal 0x1");
	if (ret == -EOPNOTSUPP) {
		sigaction(SIGUSR1, &old, NULL);
		SKIP(return, "the test module has no kretprobe on get_signal()");
	}
	ASSERT_EQ(0, ret);
	__atomic_store_n(&usr1_runs, 0, __ATOMIC_RELAXED);
	chain_syscall(self->c, 6, __NR_tgkill, getpid(), gettid(), SIGUSR1);
	sigaction(SIGUSR1, &old, NULL);
	ASSERT_EQ(0, self->c->ret);
	ret = __atomic_load_n(&usr1_runs, __ATOMIC_RELAXED);
	ASSERT_EQ(1, ret) TH_LOG("the handler ran %d times", ret);

	ASSERT_EQ(0, read_results(self->fd, r));
	q = req_at(r, "signal", 0);
	ASSERT_TRUE(!!q) TH_LOG("no request was made when get_signal() returned");
	ASSERT_EQ(0, q->ret) TH_LOG("the request returned %d", q->ret);
	ASSERT_EQ(1, cbs_for(r, 0, gettid(), &b)) TH_LOG("expected one callback");
	EXPECT_EQ(q->cookie, b->cookie);
	EXPECT_NE((unsigned long long)(unsigned long)usr1_handler, b->ips[0]) {
		TH_LOG("the record starts at the signal handler, set up after the request");
	}
	check_stack(_metadata, self->c, b);
}

TEST_F(unwind, exec_with_request_pending)
{
	struct results *r = self->res;
	long long done = counter("exec_completions");
	static char *const argv[] = { "true", NULL };
	static char *const envp[] = { NULL };
	const struct req *old, *mid, *new;
	const struct cb *b;
	int status, ret, i, nold = 0, nnew = 0;
	pid_t pid;

	if (access("/bin/true", X_OK))
		SKIP(return, "no /bin/true to exec");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		ret = ctl(self->fd, "arm-exec 0x1");
		if (ret)
			_exit(ret == -EOPNOTSUPP ? 4 : 5);
		memset(self->c, 0, sizeof(*self->c));
		self->c->depth = 5;
		self->c->nr = __NR_execve;
		self->c->a = (long)"/bin/true";
		self->c->b = (long)argv;
		self->c->c = (long)envp;
		self->c->leaf = leaf_syscall;
		descend(self->c, 0);
		_exit(6);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 4)
		SKIP(return, "the test module has no kprobes");
	ASSERT_EQ(0, WEXITSTATUS(status));

	ASSERT_EQ(0, read_results(self->fd, r));
	old = req_at(r, "exec-old", 0);
	mid = req_at(r, "exec-mid", 0);
	new = req_at(r, "exec-new", 0);
	ASSERT_TRUE(!!old) TH_LOG("no request when execve started");
	ASSERT_TRUE(!!mid) TH_LOG("no request at execve's point of no return");
	ASSERT_TRUE(!!new) TH_LOG("no request once the new image was set up");
	EXPECT_EQ(0, old->ret);
	/* Tid and mm change from here on: no walk may be deferred across. */
	EXPECT_EQ(-EBUSY, mid->ret) {
		TH_LOG("a request between the old and the new mm returned %d", mid->ret);
	}
	EXPECT_EQ(0, new->ret) TH_LOG("the new image's request returned %d", new->ret);
	EXPECT_NE(old->cookie, new->cookie) TH_LOG("the new image got the old image's cookie");

	for (i = 0; i < r->ncb; i++) {
		b = &r->cb[i];
		if (b->pid != pid)
			continue;
		if (b->cookie == old->cookie) {
			nold++;
			check_stack(_metadata, self->c, b);
		} else if (b->cookie == new->cookie) {
			nnew++;
			EXPECT_LE(1, b->nr);
			EXPECT_NE(self->c->top[0], b->ips[0]) {
				TH_LOG("the new image was unwound at the old address");
			}
		}
	}
	EXPECT_EQ(1, nold) TH_LOG("%d callbacks for the old image", nold);
	EXPECT_EQ(1, nnew) TH_LOG("%d callbacks for the new image", nnew);
	EXPECT_EQ(1, counter("exec_completions") - done);
}
