// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user stack unwinding, checked from the program whose stack is
 * unwound. Through the test_unwind_deferred module the program asks for its
 * own user stack from task, hard IRQ and NMI context, from its exit and its
 * execve, and through 40 registered users; then it compares what the
 * callbacks received with the return addresses it recorded itself. Built
 * twice: as a 64-bit program and as an ia32 compat program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "chain.h"
#include "ctl.h"

/* Written by inline assembly, which has no register to spare on ia32. */
static unsigned long asm_l1, asm_l2;

/*
 * Leaves whose system call returns into a mini function placed right after
 * it, having first pushed what a call (and a "push %bp", or a whole
 * "push %bp; mov %sp,%bp") would have pushed. The kernel thus finds the task
 * stopped at a function's first instruction, at its "ret", or in its body
 * at an instruction that a prologue also starts with.
 */
/* What the mini function left behind, as the walk should find it. */
static void prologue_done(struct chain *c, unsigned long leaf_ra, long ret)
{
	c->leaf_ra = leaf_ra;
	c->ret = ret;
	c->top[0] = asm_l1;
	c->top[1] = asm_l2;
	c->ntop = 2;
}

#ifdef __x86_64__
#define BP		"%%rbp"
#define SP		"%%rsp"
#define ENDBR		"endbr64\n\t"
#define MOV_SP_BP_ALT	".byte 0x48, 0x8b, 0xec\n\t"	/* mov %rsp,%rbp (8b /r) */
#define DEFINE_PROLOGUE_LEAF(name, pre, post)				\
static __attribute__((noipa)) void name(struct chain *c)		\
{									\
	long ret;							\
									\
	asm volatile("lea 1f(%%rip), %%rcx\n\t"				\
		     "mov %%rcx, %[l1]\n\t"				\
		     "lea 2f(%%rip), %%rcx\n\t"				\
		     "mov %%rcx, %[l2]\n\t"				\
		     "push %%rcx\n\t"					\
		     pre						\
		     "syscall\n"					\
		     "1:\t" post					\
		     "2:\n"						\
		     : "=a"(ret), [l1] "=m"(asm_l1), [l2] "=m"(asm_l2)	\
		     : "0"(c->nr), "D"(c->a), "S"(c->b), "d"(c->c)	\
		     : "rcx", "r11", "memory");				\
	prologue_done(c, (unsigned long)__builtin_return_address(0), ret); \
}
#else
#define BP		"%%ebp"
#define SP		"%%esp"
#define ENDBR		"endbr32\n\t"
#define MOV_SP_BP_ALT	".byte 0x8b, 0xec\n\t"		/* mov %esp,%ebp (8b /r) */
#define DEFINE_PROLOGUE_LEAF(name, pre, post)				\
static __attribute__((noipa)) void name(struct chain *c)		\
{									\
	long ret;							\
									\
	asm volatile("call 0f\n"					\
		     "0:\tpop %%esi\n\t"				\
		     "lea (1f-0b)(%%esi), %%edi\n\t"			\
		     "mov %%edi, %[l1]\n\t"				\
		     "lea (2f-0b)(%%esi), %%edi\n\t"			\
		     "mov %%edi, %[l2]\n\t"				\
		     "push %%edi\n\t"					\
		     pre						\
		     "int $0x80\n"					\
		     "1:\t" post					\
		     "2:\n"						\
		     : "=a"(ret), [l1] "=m"(asm_l1), [l2] "=m"(asm_l2)	\
		     : "0"(c->nr), "b"(c->a), "c"(c->b), "d"(c->c)	\
		     : "esi", "edi", "memory");				\
	prologue_done(c, (unsigned long)__builtin_return_address(0), ret); \
}
#endif

#define FRAME		"push " BP "\n\tmov " SP ", " BP "\n\t"

DEFINE_PROLOGUE_LEAF(leaf_at_push, "",
		     "push " BP "\n\tmov " SP ", " BP "\n\tpop " BP "\n\tret\n")
DEFINE_PROLOGUE_LEAF(leaf_at_endbr, "",
		     ENDBR "push " BP "\n\tmov " SP ", " BP "\n\tpop " BP "\n\tret\n")
DEFINE_PROLOGUE_LEAF(leaf_at_ret, "", "ret\n")
DEFINE_PROLOGUE_LEAF(leaf_at_ret_imm, "", "ret $0\n")
/* An indirect branch target in the body: endbr, then no push %bp. */
DEFINE_PROLOGUE_LEAF(leaf_endbr_in_body, FRAME,
		     ENDBR "nop\n\tpop " BP "\n\tret\n")
/* bp saved again in the body (as a callee-saved register), no mov after. */
DEFINE_PROLOGUE_LEAF(leaf_push_bp_in_body, FRAME,
		     "push " BP "\n\tpop " BP "\n\tpop " BP "\n\tret\n")

/*
 * Leaves whose mini function is reached by a jump, not a system call return:
 * the chain's system call arms a hardware breakpoint ("request-at") or a
 * uprobe ("request-uprobe") on LEAF_probe (at LEAF_at()), which asks for the
 * stack there. @pre runs before it, @post from there on and holds label 1,
 * where the IP is expected.
 */
#ifdef __x86_64__
#define DEFINE_ARMED_LEAF(name, pre, post)				\
static unsigned long name##_at(void)					\
{									\
	unsigned long addr;						\
									\
	asm("lea " #name "_probe(%%rip), %0" : "=r"(addr));		\
	return addr;							\
}									\
static __attribute__((noipa)) void name(struct chain *c)		\
{									\
	long ret = syscall(c->nr, c->a, c->b, c->c);			\
									\
	asm volatile("lea 1f(%%rip), %%rcx\n\t"				\
		     "mov %%rcx, %[l1]\n\t"				\
		     "lea 2f(%%rip), %%rcx\n\t"				\
		     "mov %%rcx, %[l2]\n\t"				\
		     "push %%rcx\n\t"					\
		     pre						\
		     #name "_probe:\n"					\
		     post						\
		     "2:\n"						\
		     : [l1] "=m"(asm_l1), [l2] "=m"(asm_l2)		\
		     :							\
		     : "rcx", "memory");				\
	prologue_done(c, (unsigned long)__builtin_return_address(0),	\
		      ret < 0 ? -errno : ret);				\
}
#else
#define DEFINE_ARMED_LEAF(name, pre, post)				\
static unsigned long name##_at(void)					\
{									\
	unsigned long addr;						\
									\
	asm("mov $" #name "_probe, %0" : "=r"(addr));			\
	return addr;							\
}									\
static __attribute__((noipa)) void name(struct chain *c)		\
{									\
	long ret = syscall(c->nr, c->a, c->b, c->c);			\
									\
	asm volatile("call 0f\n"					\
		     "0:\tpop %%esi\n\t"				\
		     "lea (1f-0b)(%%esi), %%edi\n\t"			\
		     "mov %%edi, %[l1]\n\t"				\
		     "lea (2f-0b)(%%esi), %%edi\n\t"			\
		     "mov %%edi, %[l2]\n\t"				\
		     "push %%edi\n\t"					\
		     pre						\
		     #name "_probe:\n"					\
		     post						\
		     "2:\n"						\
		     : [l1] "=m"(asm_l1), [l2] "=m"(asm_l2)		\
		     :							\
		     : "esi", "edi", "memory");				\
	prologue_done(c, (unsigned long)__builtin_return_address(0),	\
		      ret < 0 ? -errno : ret);				\
}
#endif

/* Stopped right after "push %bp", at the mov after it. */
DEFINE_ARMED_LEAF(leaf_after_push, "push " BP "\n",
		  "1:\tmov " SP ", " BP "\n\tpop " BP "\n\tret\n")
DEFINE_ARMED_LEAF(leaf_after_push_alt, "push " BP "\n",
		  "1:\t" MOV_SP_BP_ALT "pop " BP "\n\tret\n")
/*
 * A uprobe on "push %bp": the request is made in its handler, before the
 * push runs, so the walk starts at the push, which has an int3 in its
 * place in the text (the uprobe then emulates it).
 */
DEFINE_ARMED_LEAF(leaf_uprobe_push, "",
		  "1:\tpush " BP "\n\tmov " SP ", " BP "\n\tpop " BP "\n\tret\n")
/* A uprobe on an endbr: the task is left at a copy of it, out of line. */
DEFINE_ARMED_LEAF(leaf_uprobe_endbr, "",
		  "1:\t" ENDBR "push " BP "\n\tmov " SP ", " BP "\n\tpop " BP "\n\tret\n")

static void chain_write(struct chain *c, int fd, const char *cmd, int depth,
			void (*leaf)(struct chain *c))
{
	memset(c, 0, sizeof(*c));
	c->depth = depth;
	c->nr = __NR_write;
	c->a = fd;
	c->b = (long)cmd;
	c->c = strlen(cmd);
	c->leaf = leaf ?: leaf_syscall;
	descend(c, 0);
}

static int cbs_for(const struct results *r, int slot, pid_t pid,
		   const struct cb **first)
{
	int i, n = 0;

	for (i = 0; i < r->ncb; i++) {
		if (r->cb[i].slot != slot || (pid && r->cb[i].pid != pid))
			continue;
		if (!n++ && first)
			*first = &r->cb[i];
	}
	return n;
}

static const struct req *req_at(const struct results *r, const char *at,
				int slot)
{
	int i;

	for (i = 0; i < r->nreq; i++)
		if (!strcmp(r->req[i].at, at) && r->req[i].slot == slot)
			return &r->req[i];
	return NULL;
}

/* The callback's stack must start with exactly the frames the chain has. */
static void check_stack(struct __test_metadata *_metadata,
			const struct chain *c, const struct cb *b)
{
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	int i, n = chain_frames(c, want);

	ASSERT_GE(b->nr, n) {
		TH_LOG("the callback got %u frames; the program has at least %d",
		       b->nr, n);
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(b->ips[i], (unsigned long long)want[i]) {
			TH_LOG("frame %d: the callback has %#llx, the program recorded %#lx",
			       i, b->ips[i], want[i]);
		}
	}
}

FIXTURE(unwind) {
	int fd;
	struct results *res;
	struct chain *c;
};

FIXTURE_SETUP(unwind)
{
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
}

FIXTURE_TEARDOWN(unwind)
{
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

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

TEST_F(unwind, nmi_samples_deferred_work_counts_in_the_throttle)
{
	size_t size = 64 * getpagesize();
	struct perf_event_attr attr;
	int percent, rate, low = 1, now, i, fd, tp = -1;
	struct perf_event_mmap_page *pg;
	FILE *f;

	f = fopen("/sys/kernel/tracing/events/nmi/nmi_handler/id", "r");
	if (!f || fscanf(f, "%d", &tp) != 1)
		tp = -1;
	if (f)
		fclose(f);
	if (tp < 0)
		SKIP(return, "no nmi:nmi_handler tracepoint");
	if (sysctl_rw(CPU_PERCENT, &percent, 0) || sysctl_rw(SAMPLE_RATE, &rate, 0))
		SKIP(return, "cannot read %s or %s", CPU_PERCENT, SAMPLE_RATE);

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = tp;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	attr.defer_callchain = 1;
	attr.defer_output = 1;
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

/*
 * paged_syscall() returns a function alone in its own page of text
 * (paged_text), long f(long nr, long a, long b, long c, unsigned long *top):
 * a frame-pointer function that makes the system call after pushing the
 * return address of a mini function placed right after the syscall
 * instruction, so that the system call returns to the mini function's
 * entry, "push %bp; mov %sp,%bp". top[] gets the frames above the caller,
 * innermost first: the return IP, the mini function's return address and
 * f's own.
 */
#define PAGED_TEXT_SIZE	4096

typedef long (*paged_syscall_t)(long nr, long a, long b, long c,
				unsigned long *top);

#ifdef __x86_64__
asm(".pushsection .text.unwind_paged, \"ax\", @progbits\n"
	".balign 4096\n"
	"paged_text:\n\t"
	"push %rbp\n\t"
	"mov %rsp, %rbp\n\t"
	"lea 1f(%rip), %rax\n\t"
	"mov %rax, (%r8)\n\t"
	"lea 2f(%rip), %rax\n\t"
	"mov %rax, 8(%r8)\n\t"
	"push %rax\n\t"
	"mov 8(%rbp), %rax\n\t"
	"mov %rax, 16(%r8)\n\t"
	"mov %rdi, %rax\n\t"
	"mov %rsi, %rdi\n\t"
	"mov %rdx, %rsi\n\t"
	"mov %rcx, %rdx\n\t"
	"syscall\n"
	"1:\tpush %rbp\n\t"
	"mov %rsp, %rbp\n\t"
	"pop %rbp\n\t"
	"ret\n"
	"2:\tpop %rbp\n\t"
	"ret\n\t"
	".balign 4096\n"
	".popsection");

static paged_syscall_t paged_syscall(void)
{
	unsigned long addr;

	asm("lea paged_text(%%rip), %0" : "=r"(addr));
	return (paged_syscall_t)addr;
}
#else
asm(".pushsection .text.unwind_paged, \"ax\", @progbits\n"
	".balign 4096\n"
	"paged_text:\n\t"
	"push %ebp\n\t"
	"mov %esp, %ebp\n\t"
	"push %ebx\n\t"
	"mov 24(%ebp), %ecx\n\t"
	"movl $1f, (%ecx)\n\t"
	"movl $2f, 4(%ecx)\n\t"
	"mov 4(%ebp), %eax\n\t"
	"mov %eax, 8(%ecx)\n\t"
	"mov 8(%ebp), %eax\n\t"
	"mov 12(%ebp), %ebx\n\t"
	"mov 16(%ebp), %ecx\n\t"
	"mov 20(%ebp), %edx\n\t"
	"push $2f\n\t"
	"int $0x80\n"
	"1:\tpush %ebp\n\t"
	"mov %esp, %ebp\n\t"
	"pop %ebp\n\t"
	"ret\n"
	"2:\tpop %ebx\n\t"
	"pop %ebp\n\t"
	"ret\n\t"
	".balign 4096\n"
	".popsection");

static paged_syscall_t paged_syscall(void)
{
	unsigned long addr;

	asm("mov $paged_text, %0" : "=r"(addr));
	return (paged_syscall_t)addr;
}
#endif

static __attribute__((noipa)) void leaf_paged(struct chain *c)
{
	c->leaf_ra = (unsigned long)__builtin_return_address(0);
	c->ret = paged_syscall()(c->nr, c->a, c->b, c->c, c->top);
	c->ntop = 3;
}

/* Is thread @tid asleep in system call @nr? */
static bool asleep_in(pid_t tid, long nr)
{
	char path[64], buf[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[0] < '0' || buf[0] > '9')
		return false;	/* "running", or -1: not in a system call */
	buf[n] = '\0';
	return strtol(buf, NULL, 10) == nr;
}

/*
 * Drops paged_text from the page tables while the thread @tid sleeps in its
 * write(), that is before its walk; the private file mapping refaults from
 * the page cache. Runs all of its code once first and then nothing new
 * until the write returns: a fault on a nearby page of text could map
 * that page again (fault-around).
 */
struct dropper {
	pid_t tid;
	int done;		/* the write returned; __atomic builtins */
	int dropped;		/* while @tid slept in write() */
	int err;
};

static void *drop_paged_text(void *arg)
{
	struct dropper *d = arg;

	asleep_in(d->tid, __NR_write);
	usleep(1);
	if (madvise((void *)paged_syscall(), PAGED_TEXT_SIZE, MADV_NORMAL)) {
		d->err = errno;
		return NULL;
	}
	while (!asleep_in(d->tid, __NR_write)) {
		if (__atomic_load_n(&d->done, __ATOMIC_ACQUIRE))
			return NULL;
		usleep(1000);
	}
	if (madvise((void *)paged_syscall(), PAGED_TEXT_SIZE, MADV_DONTNEED))
		d->err = errno;
	else
		d->dropped = asleep_in(d->tid, __NR_write);
	while (!__atomic_load_n(&d->done, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

/*
 * A task stopped at a function's entry whose text page is not in its page
 * tables when the walk runs (dropped meanwhile, or reclaimed): the walk
 * takes the fault and still finds the return address on top of the stack.
 */
TEST_F(unwind, entry_text_not_mapped_at_the_walk)
{
	const char *cmd = "request task 0x1;sleep 300";
	struct results *r = self->res;
	struct dropper d;
	pthread_t thread;
	int tries;

	if (getpagesize() != PAGED_TEXT_SIZE)
		SKIP(return, "the text page is not %d bytes", PAGED_TEXT_SIZE);
	for (tries = 0; tries < 5; tries++) {
		memset(&d, 0, sizeof(d));
		d.tid = gettid();
		ASSERT_EQ(0, ctl(self->fd, "clear"));
		ASSERT_EQ(0, pthread_create(&thread, NULL, drop_paged_text, &d));
		chain_write(self->c, self->fd, cmd, 6, leaf_paged);
		__atomic_store_n(&d.done, 1, __ATOMIC_RELEASE);
		pthread_join(thread, NULL);
		ASSERT_EQ(0, d.err) TH_LOG("madvise: %s", strerror(d.err));
		ASSERT_EQ((long)strlen(cmd), self->c->ret) {
			TH_LOG("'%s': %s", cmd, strerror(-self->c->ret));
		}
		if (d.dropped)
			break;
	}
	ASSERT_TRUE(d.dropped) {
		TH_LOG("%d tries: the text page was never dropped while the task slept in write()",
		       tries);
	}
	ASSERT_EQ(0, read_results(self->fd, r));
	ASSERT_EQ(1, r->ncb) TH_LOG("%d callbacks for one request", r->ncb);
	check_stack(_metadata, self->c, &r->cb[0]);
}

TEST_F(unwind, deep_stack_cost)
{
	long long ns, frames, walks = counter("walks");
	const int depth = 200, rounds = 20;
	struct results *r = self->res;
	int i;

	/* Walks are timed on request only; time these. */
	set_time_walks(1);
	ns = counter("walk_ns");
	frames = counter("timed_frames");
	for (i = 0; i < rounds; i++) {
		chain_write(self->c, self->fd, "request task 0x1", depth, NULL);
		ASSERT_LT(0, self->c->ret);
	}
	ASSERT_EQ(0, read_results(self->fd, r));
	ASSERT_EQ(rounds, r->ncb);
	check_stack(_metadata, self->c, &r->cb[rounds - 1]);
	walks = counter("walks") - walks;
	frames = counter("timed_frames") - frames;
	ns = counter("walk_ns") - ns;
	set_time_walks(0);
	ASSERT_EQ(rounds, walks);
	ASSERT_LT(0, ns) TH_LOG("%lld timed frames took no time", frames);
	TH_LOG("walker: %lld walks, %lld frames, %.1f ns per frame (%d-bit task)",
	       walks, frames, frames ? (double)ns / frames : 0.0,
	       (int)sizeof(unsigned long) * 8);
}

/* A task stopped in a prologue or at "ret" still yields its caller. */
FIXTURE(prologue) {
	int fd;
	struct results *res;
	struct chain *c;
};

FIXTURE_SETUP(prologue)
{
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
}

FIXTURE_TEARDOWN(prologue)
{
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

FIXTURE_VARIANT(prologue) {
	void (*leaf)(struct chain *c);
	/* What asks at at(): "request-at" or "request-uprobe"; NULL: the write */
	const char *ask;
	unsigned long (*at)(void);
};

FIXTURE_VARIANT_ADD(prologue, body) {
	.leaf = leaf_syscall,
};

FIXTURE_VARIANT_ADD(prologue, at_push_bp) {
	.leaf = leaf_at_push,
};

FIXTURE_VARIANT_ADD(prologue, at_endbr) {
	.leaf = leaf_at_endbr,
};

FIXTURE_VARIANT_ADD(prologue, after_push_bp) {
	.leaf = leaf_after_push,
	.ask = "request-at",
	.at = leaf_after_push_at,
};

FIXTURE_VARIANT_ADD(prologue, after_push_bp_other_encoding) {
	.leaf = leaf_after_push_alt,
	.ask = "request-at",
	.at = leaf_after_push_alt_at,
};

FIXTURE_VARIANT_ADD(prologue, at_ret) {
	.leaf = leaf_at_ret,
};

FIXTURE_VARIANT_ADD(prologue, at_ret_imm16) {
	.leaf = leaf_at_ret_imm,
};

FIXTURE_VARIANT_ADD(prologue, endbr_in_body) {
	.leaf = leaf_endbr_in_body,
};

FIXTURE_VARIANT_ADD(prologue, push_bp_in_body) {
	.leaf = leaf_push_bp_in_body,
};

/* The push, emulated by the uprobe, has an int3 in its place in the text. */
FIXTURE_VARIANT_ADD(prologue, uprobe_at_push_bp) {
	.leaf = leaf_uprobe_push,
	.ask = "request-uprobe",
	.at = leaf_uprobe_push_at,
};

/*
 * A uprobe single-steps these out of line, but the walk starts where its
 * handler made the request: at the probed instruction, whose first byte
 * is the uprobe's int3 in the text (the walker takes it from the copy in
 * the uprobes area): at the endbr, and after push %bp.
 */
FIXTURE_VARIANT_ADD(prologue, uprobe_at_endbr) {
	.leaf = leaf_uprobe_endbr,
	.ask = "request-uprobe",
	.at = leaf_uprobe_endbr_at,
};

FIXTURE_VARIANT_ADD(prologue, uprobe_after_push_bp) {
	.leaf = leaf_after_push,
	.ask = "request-uprobe",
	.at = leaf_after_push_at,
};

TEST_F(prologue, topmost_frame)
{
	struct results *r = self->res;
	char cmd[64] = "request task 0x1";

	if (variant->ask)
		snprintf(cmd, sizeof(cmd), "%s %lx 0x1", variant->ask,
			 variant->at());
	chain_write(self->c, self->fd, cmd, 6, variant->leaf);
	if (variant->ask && self->c->ret == -EOPNOTSUPP)
		SKIP(return, "'%s': not supported by this kernel", cmd);
	ASSERT_LT(0, self->c->ret) {
		TH_LOG("'%s': %s", cmd, strerror(-self->c->ret));
	}
	ASSERT_EQ(0, read_results(self->fd, r));
	ASSERT_EQ(1, r->ncb) {
		TH_LOG("%d callbacks for one request%s", r->ncb,
		       variant->ask && !r->nreq ? " (nothing asked)" : "");
	}
	check_stack(_metadata, self->c, &r->cb[0]);
}

/*
 * Hostile stacks: the frame pointer is pointed at frames built in a local
 * array (above the stack pointer, as real frames are). Each walk must end
 * where the rules say, counted, with no kernel warning.
 */
enum hostile_kind {
	SELF_LOOP, TWO_FRAME_LOOP, DOWNWARD, MISALIGNED, KERNEL_FP, KERNEL_RA,
	UNMAPPED, TOO_DEEP, EXACTLY_MAX, STALE_FP,
};

#define HOSTILE_WORDS	1400
#define FAKE_RA(i)	(0x10000UL + 16 * (i))

FIXTURE(hostile) {
	int fd;
	struct results *res;
	struct chain *c;
};

FIXTURE_VARIANT(hostile) {
	enum hostile_kind kind;
	int nr;			/* expected entries; 0: the entry limit */
	const char *counter;	/* must grow by one; NULL: none may */
	int only64;
};

FIXTURE_VARIANT_ADD(hostile, self_loop) { SELF_LOOP, 2, "stop_bad_frame" };
FIXTURE_VARIANT_ADD(hostile, two_frame_loop) { TWO_FRAME_LOOP, 3, "stop_bad_frame" };
FIXTURE_VARIANT_ADD(hostile, downward) { DOWNWARD, 2, "stop_bad_frame" };
FIXTURE_VARIANT_ADD(hostile, misaligned) { MISALIGNED, 2, "stop_bad_frame" };
FIXTURE_VARIANT_ADD(hostile, kernel_frame_pointer) { KERNEL_FP, 2, "stop_bad_frame", 1 };
FIXTURE_VARIANT_ADD(hostile, kernel_return_address) { KERNEL_RA, 1, "stop_bad_frame", 1 };
FIXTURE_VARIANT_ADD(hostile, unmapped) { UNMAPPED, 2, "stop_fault" };
FIXTURE_VARIANT_ADD(hostile, too_deep) { TOO_DEEP, 0, "truncated" };
FIXTURE_VARIANT_ADD(hostile, exactly_max) { EXACTLY_MAX, 0, NULL };
/* A frame pointer left one word below the stack pointer: only the IP. */
FIXTURE_VARIANT_ADD(hostile, frame_pointer_below_stack_pointer) {
	STALE_FP, 1, "stop_bad_frame"
};

FIXTURE_SETUP(hostile)
{
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
}

FIXTURE_TEARDOWN(hostile)
{
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

/* write() with the frame pointer set to @fp; asm_l1 gets the return IP. */
static __attribute__((noipa)) long hostile_write(int fd, const char *buf,
						     long len, unsigned long fp)
{
	long ret;
#ifdef __x86_64__
	asm volatile("lea 1f(%%rip), %%rcx\n\t"
		     "mov %%rcx, %[l1]\n\t"
		     "mov %%rbp, %%r12\n\t"
		     "mov %[fp], %%rbp\n\t"
		     "syscall\n"
		     "1:\tnop\n\t"
		     "mov %%r12, %%rbp"
		     : "=a"(ret), [l1] "=m"(asm_l1)
		     : "0"((long)__NR_write), "D"((long)fd), "S"(buf), "d"(len),
		       [fp] "r"(fp)
		     : "rcx", "r11", "r12", "memory");
#else
	asm volatile("call 0f\n"
		     "0:\tpop %%esi\n\t"
		     "lea (1f-0b)(%%esi), %%esi\n\t"
		     "mov %%esi, %[l1]\n\t"
		     "push %%ebp\n\t"
		     "mov %%edi, %%ebp\n\t"
		     "int $0x80\n"
		     "1:\tnop\n\t"
		     "pop %%ebp"
		     : "=a"(ret), [l1] "=m"(asm_l1)
		     : "0"((long)__NR_write), "b"(fd), "c"(buf), "d"(len), "D"(fp)
		     : "esi", "memory");
#endif
	return ret;
}

/*
 * write() with a stale frame pointer: it points at a frame popped just
 * before the system call (saved frame pointer 0, return address
 * FAKE_RA(0)), one word below the stack pointer. Taken as a frame, it
 * would yield FAKE_RA(0) and end there. asm_l1 gets the return IP.
 */
static __attribute__((noipa)) long hostile_write_stale_fp(int fd,
							  const char *buf,
							  long len)
{
	long ret;
#ifdef __x86_64__
	asm volatile("lea 1f(%%rip), %%rcx\n\t"
		     "mov %%rcx, %[l1]\n\t"
		     "mov %%rbp, %%r12\n\t"
		     "push %[ra]\n\t"
		     "push $0\n\t"
		     "mov %%rsp, %%rbp\n\t"
		     "add $8, %%rsp\n\t"
		     "syscall\n"
		     "1:\tnop\n\t"
		     "add $8, %%rsp\n\t"
		     "mov %%r12, %%rbp"
		     : "=a"(ret), [l1] "=m"(asm_l1)
		     : "0"((long)__NR_write), "D"((long)fd), "S"(buf), "d"(len),
		       [ra] "i"(FAKE_RA(0))
		     : "rcx", "r11", "r12", "memory");
#else
	asm volatile("call 0f\n"
		     "0:\tpop %%esi\n\t"
		     "lea (1f-0b)(%%esi), %%esi\n\t"
		     "mov %%esi, %[l1]\n\t"
		     "push %%ebp\n\t"
		     "push %[ra]\n\t"
		     "push $0\n\t"
		     "mov %%esp, %%ebp\n\t"
		     "add $4, %%esp\n\t"
		     "int $0x80\n"
		     "1:\tnop\n\t"
		     "add $4, %%esp\n\t"
		     "pop %%ebp"
		     : "=a"(ret), [l1] "=m"(asm_l1)
		     : "0"((long)__NR_write), "b"(fd), "c"(buf), "d"(len),
		       [ra] "i"(FAKE_RA(0))
		     : "esi", "memory");
#endif
	return ret;
}

/* An unmapped page above the stack (frames may only go up), or 0. */
static unsigned long unmapped_above_stack(void)
{
	unsigned long start, end, page = getpagesize(), a;
	unsigned char vec;
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	end = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	fclose(f);
	for (a = end; end && a < end + 64 * page && a > start; a += page)
		if (mincore((void *)a, page, &vec) && errno == ENOMEM)
			return a;
	return 0;
}

TEST_F(hostile, walk_ends_cleanly)
{
	unsigned long long kernel_fp = 0xffff888000000000ULL;
	unsigned long long kernel_ra = 0xffffffff81000000ULL;
	unsigned long words[HOSTILE_WORDS];
	const char *cmd = "request task 0x1";
	long long max = counter("max_entries");
	long long before[3], after[3];
	static const char * const stops[3] = {
		"stop_bad_frame", "stop_fault", "truncated",
	};
	struct results *r = self->res;
	int i, frames = 0, want = variant->nr;
	long ret;

	if (variant->only64 && sizeof(unsigned long) != 8)
		SKIP(return, "a compat task cannot hold a kernel address");
	ASSERT_LT(1, max) TH_LOG("no max_entries in %s", COUNTERS_PATH);
	ASSERT_LT(2 * max + 2, HOSTILE_WORDS);
	memset(words, 0, sizeof(words));

	/* Frame i is words[2i] (saved frame pointer), words[2i + 1] (ra). */
	words[1] = FAKE_RA(0);
	switch (variant->kind) {
	case SELF_LOOP:
		words[0] = (unsigned long)&words[0];
		break;
	case TWO_FRAME_LOOP:
		words[0] = (unsigned long)&words[4];
		words[4] = (unsigned long)&words[0];
		words[5] = FAKE_RA(1);
		break;
	case DOWNWARD:
		words[0] = (unsigned long)&words[0] - 16 * sizeof(unsigned long);
		break;
	case MISALIGNED:
		words[0] = (unsigned long)&words[4] + sizeof(unsigned long) / 2;
		break;
	case KERNEL_FP:
		words[0] = (unsigned long)kernel_fp;
		break;
	case KERNEL_RA:
		words[0] = 0;
		words[1] = (unsigned long)kernel_ra;
		break;
	case UNMAPPED:
		words[0] = unmapped_above_stack();
		if (!words[0])
			SKIP(return, "no unmapped page above the stack");
		break;
	case TOO_DEEP:
	case EXACTLY_MAX:
		/* The IP plus one entry per frame: max - 1 frames fill it. */
		frames = variant->kind == TOO_DEEP ? max + 50 : max - 1;
		ASSERT_LT(2 * frames + 2, HOSTILE_WORDS);
		for (i = 0; i < frames; i++) {
			words[2 * i] = i + 1 < frames ? (unsigned long)&words[2 * i + 2] : 0;
			words[2 * i + 1] = FAKE_RA(i);
		}
		want = max;
		break;
	case STALE_FP:
		break;
	}

	for (i = 0; i < 3; i++)
		before[i] = counter(stops[i]);
	if (variant->kind == STALE_FP)
		ret = hostile_write_stale_fp(self->fd, cmd, strlen(cmd));
	else
		ret = hostile_write(self->fd, cmd, strlen(cmd),
				    (unsigned long)&words[0]);
	ASSERT_EQ((long)strlen(cmd), ret) TH_LOG("write: %s", strerror(-ret));
	for (i = 0; i < 3; i++)
		after[i] = counter(stops[i]);

	ASSERT_EQ(0, read_results(self->fd, r));
	ASSERT_EQ(1, r->ncb) TH_LOG("the callback ran %d times", r->ncb);
	EXPECT_EQ(want, r->cb[0].nr) TH_LOG("the walk kept %u entries, not %d", r->cb[0].nr, want);
	EXPECT_EQ((unsigned long long)asm_l1, r->cb[0].ips[0]);
	if (want >= 2)
		EXPECT_EQ((unsigned long long)FAKE_RA(0), r->cb[0].ips[1]);
	for (i = 0; i < 3; i++) {
		int grow = variant->counter && !strcmp(variant->counter, stops[i]);

		EXPECT_EQ(grow, after[i] - before[i]) {
			TH_LOG("counter %s grew by %lld", stops[i], after[i] - before[i]);
		}
	}
}

/*
 * Frames that change under the walk: another thread keeps rewriting the
 * frame chain (good links, loops, downward and misaligned links, ends)
 * while this one asks for its stack again and again.  Every walk must end,
 * each request must get one callback with at most max_entries entries, and
 * every return address must be one the frames ever held.
 */
struct racing {
	unsigned long *words;
	int nr_frames;
	int stop;		/* read and written with __atomic builtins */
	long flips;
};

static void *racing_rewriter(void *arg)
{
	struct racing *rc = arg;
	unsigned long *w = rc->words;
	unsigned int x = 1;
	int i;

	while (!__atomic_load_n(&rc->stop, __ATOMIC_RELAXED)) {
		x = x * 1103515245 + 12345;
		i = (x >> 8) % rc->nr_frames;
		switch ((x >> 20) % 6) {
		case 0:	/* link to the next frame */
		case 1:
			w[2 * i] = i + 1 < rc->nr_frames ? (unsigned long)&w[2 * i + 2] : 0;
			break;
		case 2:	/* to itself */
			w[2 * i] = (unsigned long)&w[2 * i];
			break;
		case 3:	/* downward */
			w[2 * i] = (unsigned long)&w[0] - 64;
			break;
		case 4:	/* misaligned */
			w[2 * i] = (unsigned long)&w[2 * i + 2] + 1;
			break;
		case 5:	/* the end */
			w[2 * i] = 0;
			break;
		}
		rc->flips++;
	}
	return NULL;
}

/* UNWIND_RACE_BATCHES=N walks N * 50 times (4 by default; longer runs). */
TEST_F(unwind, frames_changing_under_the_walk_end_cleanly)
{
	const char *env = getenv("UNWIND_RACE_BATCHES");
	int batches = env && atoi(env) > 0 ? atoi(env) : 4;
	const char *cmd = "request task 0x1";
	long long max = counter("max_entries"), walks = counter("walks");
	unsigned long words[2 * 600 + 2];
	struct results *r = self->res;
	int batch, round, i, j, rounds = 0;
	struct racing rc = { .words = words, .nr_frames = 600 };
	struct timespec t0, t1;
	pthread_t thread;
	double secs;
	long ret;

	ASSERT_LT(1, max) TH_LOG("no max_entries in %s", COUNTERS_PATH);
	for (i = 0; i < rc.nr_frames; i++) {
		words[2 * i] = i + 1 < rc.nr_frames ? (unsigned long)&words[2 * i + 2] : 0;
		words[2 * i + 1] = FAKE_RA(i);
	}
	ASSERT_EQ(0, pthread_create(&thread, NULL, racing_rewriter, &rc));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (batch = 0; batch < batches; batch++) {
		ASSERT_EQ(0, ctl(self->fd, "clear"));
		for (round = 0; round < 50; round++, rounds++) {
			ret = hostile_write(self->fd, cmd, strlen(cmd), (unsigned long)&words[0]);
			ASSERT_EQ((long)strlen(cmd), ret) TH_LOG("write: %s", strerror(-ret));
		}
		ASSERT_EQ(0, read_results(self->fd, r));
		ASSERT_EQ(50, r->ncb) TH_LOG("50 requests got %d callbacks", r->ncb);
		for (i = 0; i < r->ncb; i++) {
			const struct cb *b = &r->cb[i];

			ASSERT_GE(max, b->nr) TH_LOG("a walk kept %u entries", b->nr);
			ASSERT_LE(1, b->nr);
			EXPECT_EQ((unsigned long long)asm_l1, b->ips[0]);
			for (j = 1; j < (int)b->nr && j < MAX_IPS; j++) {
				unsigned long long ra = b->ips[j];

				ASSERT_TRUE(ra >= FAKE_RA(0) && ra < FAKE_RA(rc.nr_frames) &&
					    !((ra - FAKE_RA(0)) % 16)) {
					TH_LOG("entry %d is %#llx: no frame held it", j, ra);
				}
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	__atomic_store_n(&rc.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	EXPECT_EQ(rounds, counter("walks") - walks);
	/* Each walk is bounded: 150 ms each would already be absurd. */
	EXPECT_GT(0.15 * rounds, secs) TH_LOG("%d walks took %.1f s", rounds, secs);
	TH_LOG("%d walks in %.2f s while the frames changed %ld times", rounds, secs, rc.flips);
}

TEST_HARNESS_MAIN
