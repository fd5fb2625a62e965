/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hostile stacks (the hostile fixture): frame chains that loop, go down,
 * are misaligned, point into the kernel or at unmapped memory, or are too
 * deep; and frames that change under the walk. Every walk ends cleanly,
 * and is counted.
 *
 * Included once, by unwind_deferred.c.
 */
#include "unwind_deferred_common.h"

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

/*
 * An unmapped page above the stack (frames may only go up), or 0. A compat
 * task's stack may end within 64 pages of 4 GiB, where end + 64 pages
 * wraps: count pages, not addresses. The page just below 4 GiB is never
 * mapped in a compat task, so one is always found there.
 */
static unsigned long unmapped_above_stack(void)
{
	unsigned long start, end, page = getpagesize(), a;
	unsigned char vec;
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int i;

	if (!f)
		return 0;
	end = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	fclose(f);
	for (i = 0; end && i < 64; i++) {
		a = end + i * page;
		if (a < end)
			break;
		if (mincore((void *)a, page, &vec) && errno == ENOMEM)
			return a;
	}
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
