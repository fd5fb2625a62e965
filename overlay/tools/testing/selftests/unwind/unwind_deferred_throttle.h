/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What perf's sample-time throttle (kernel.perf_cpu_time_max_percent) may
 * be charged with for a deferred walk: the CPU time it spent walking, never
 * a wait. Here the walk waits for a page of the stack, which a
 * userfaultfd hands back late, as a slow disk or a FUSE file would: that
 * must not lower perf_event_max_sample_rate, which every perf user on the
 * machine shares.
 *
 * Included once, by unwind_deferred.c.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "unwind_deferred_common.h"

#define WAIT_STACK	(256 * 1024)
#define WAIT_LATE_MS	50	/* how late each dropped page comes back */
#define WAIT_DEPTH	128

/* The walked thread, on a stack whose pages the test drops and serves. */
struct waiter {
	struct chain *c;
	int ctl;
	char *stack;
	unsigned long top;	/* the thread's own frame: kept */
	unsigned long leaf;	/* the leaf's frame: kept */
	pid_t tid;
	int go;			/* set once its event is open */
	int phase;		/* 1: in the leaf, about to enter the kernel */
};

static struct waiter *the_waiter;

/* The leaf notes its frame, then makes the chain's write(). */
static __attribute__((noipa)) void leaf_note(struct chain *c)
{
	the_waiter->leaf = (unsigned long)__builtin_frame_address(0);
	__atomic_store_n(&the_waiter->phase, 1, __ATOMIC_RELEASE);
	leaf_syscall(c);
}

static void *waiter_fn(void *p)
{
	/* Pages between the chain and this frame, the thread's own. */
	char pad[2 * 4096];
	struct waiter *w = p;

	asm volatile("" : : "r"(pad) : "memory");	/* keep it */
	w->top = (unsigned long)__builtin_frame_address(0);
	__atomic_store_n(&w->tid, gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&w->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	/* The module sleeps after the request: the test drops pages then. */
	chain_write(w->c, w->ctl, "request nmi 0x1; sleep 150", WAIT_DEPTH,
		    leaf_note);
	return NULL;
}

static int uffd_open(void *addr, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)addr, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Serve missing pages of [@from, @to) from @saved, each WAIT_LATE_MS late,
 * until the waiter is done (joined here) or 5 s passed. Returns how many
 * were served.
 */
static int serve_late(int uffd, pthread_t th, unsigned long from,
		      unsigned long to, const char *saved)
{
	struct timespec late = { 0, WAIT_LATE_MS * 1000 * 1000 };
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	long page = getpagesize();
	struct uffd_msg msg;
	int served = 0, i;

	for (i = 0; i < 100 && pthread_tryjoin_np(th, NULL); i++) {
		struct uffdio_copy copy = { .len = page };
		unsigned long addr;

		if (poll(&pfd, 1, 50) != 1 ||
		    read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		addr = msg.arg.pagefault.address & ~(page - 1);
		if (addr >= from && addr < to) {
			nanosleep(&late, NULL);
			copy.src = (unsigned long)saved + (addr - from);
			served++;
		} else {
			static const char zero[65536];

			copy.src = (unsigned long)zero;
		}
		copy.dst = addr;
		ioctl(uffd, UFFDIO_COPY, &copy);
	}
	if (i == 100)
		pthread_join(th, NULL);
	return served;
}

#define PERF_CPU_PERCENT	"/proc/sys/kernel/perf_cpu_time_max_percent"
#define PERF_SAMPLE_RATE	"/proc/sys/kernel/perf_event_max_sample_rate"

TEST_F(unwind, walk_that_waited_is_not_charged_to_the_throttle)
{
	long long waited0 = counter("waited_walks"), waited1;
	int percent, rate, limit = 1, fast = 10000, now = -1, fd, uffd;
	struct waiter w = { .c = self->c, .ctl = self->fd };
	struct perf_event_attr attr;
	unsigned long from, to;
	pthread_attr_t pattr;
	long page = getpagesize(), rb_size = 64 * page;
	struct perf_event_mmap_page *pg;
	int served, deferred;
	char *saved;
	pthread_t th;

	if (nmi_sample_attr(&attr) < 0)
		SKIP(return, "no nmi:nmi_handler tracepoint");
	ASSERT_LE(0, waited0) TH_LOG("no waited_walks counter");
	if (sysctl_rw(PERF_CPU_PERCENT, &percent, 0) ||
	    sysctl_rw(PERF_SAMPLE_RATE, &rate, 0))
		SKIP(return, "cannot read %s or %s", PERF_CPU_PERCENT, PERF_SAMPLE_RATE);

	w.stack = mmap(NULL, WAIT_STACK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, w.stack);
	memset(w.stack, 0, WAIT_STACK);	/* present: only dropped pages fault */
	uffd = uffd_open(w.stack, WAIT_STACK);
	if (uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	saved = malloc(WAIT_STACK);
	ASSERT_NE(NULL, saved);

	/*
	 * 1 us allowed per sample (10,000 samples/s, 1 %), against a running
	 * mean that one sample moves by 1/16,384 of its time: a walk of the
	 * chain's frames moves it by nanoseconds, one wait for a late page
	 * by microseconds.
	 */
	ASSERT_EQ(0, sysctl_rw(PERF_SAMPLE_RATE, &fast, 1));
	ASSERT_EQ(0, sysctl_rw(PERF_CPU_PERCENT, &limit, 1));

	the_waiter = &w;
	ASSERT_EQ(0, pthread_attr_init(&pattr));
	ASSERT_EQ(0, pthread_attr_setstack(&pattr, w.stack, WAIT_STACK));
	ASSERT_EQ(0, pthread_create(&th, &pattr, waiter_fn, &w));
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	fd = syscall(__NR_perf_event_open, &attr, w.tid, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open(nmi:nmi_handler): %s", strerror(errno));
	/* Its buffer: where the record goes, so the sample defers. */
	pg = mmap(NULL, rb_size + page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, pg);

	__atomic_store_n(&w.go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&w.phase, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(50 * 1000);	/* in the module's sleep, after the request */
	/*
	 * Every page from the leaf's frame to the thread's own: the thread
	 * is asleep in the kernel, and the first to touch them is the walk.
	 */
	from = w.leaf & ~(page - 1);
	to = w.top & ~(page - 1);
	ASSERT_LT(from, to) TH_LOG("the leaf's frame is in the thread's own page");
	memcpy(saved, (void *)from, to - from);
	ASSERT_EQ(0, madvise((void *)from, to - from, MADV_DONTNEED));
	served = serve_late(uffd, th, from, to, saved);
	ASSERT_EQ(0, sysctl_rw(PERF_SAMPLE_RATE, &now, 0));
	waited1 = counter("waited_walks");

	deferred = deferred_samples(pg, rb_size);
	munmap(pg, rb_size + page);
	close(fd);
	EXPECT_EQ(0, sysctl_rw(PERF_CPU_PERCENT, &percent, 1));
	EXPECT_EQ(0, sysctl_rw(PERF_SAMPLE_RATE, &rate, 1));
	close(uffd);
	free(saved);
	munmap(w.stack, WAIT_STACK);

	ASSERT_LT(0, self->c->ret) TH_LOG("write: %s", strerror(-self->c->ret));
	ASSERT_LE(1, deferred) TH_LOG("the NMI sample did not defer its user part");
	ASSERT_LE(1, served) TH_LOG("the walk never asked for a dropped page");
	EXPECT_LT(waited0, waited1) TH_LOG("waited_walks did not count the walk");
	EXPECT_EQ(fast, now) {
		TH_LOG("a walk that waited %d ms for %d pages lowered the sample rate to %d",
		       WAIT_LATE_MS * served, served, now);
	}
}
