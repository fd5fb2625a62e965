/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The walk itself: a task stopped at a function's entry whose text page
 * is dropped before the walk, and the walker's cost on a deep stack.
 *
 * Included once, by unwind_deferred.c.
 */
#include "unwind_deferred_common.h"

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
