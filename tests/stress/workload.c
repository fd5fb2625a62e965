// SPDX-License-Identifier: GPL-2.0
/*
 * The sampled workload of the stress scenarios; see workload.h.  Built with
 * frame pointers and without sibling calls, so that every frame of the
 * chain is on the stack when the leaf enters the kernel.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

struct wl_thread {
	struct wl_shared *sh;
	enum wl_mode mode;
	int depth;
	unsigned int round;
};

void *wl_shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("defer_stress: mmap");
		exit(2);
	}
	return p;	/* zeroed */
}

struct wl_shared *wl_shared_new(void)
{
	struct wl_shared *sh = wl_shared_alloc(sizeof(*sh));

	sh->ctl_fd = -1;
	return sh;
}

int wl_options(int argc, char **argv, struct wl_options *o)
{
	int opt;

	o->seed = time(NULL) ^ getpid();
	while ((opt = getopt(argc, argv, "t:s:T:p:")) != -1) {
		switch (opt) {
		case 't':
			o->seconds = atoi(optarg);
			break;
		case 's':
			o->seed = strtoull(optarg, NULL, 0);
			break;
		case 'T':
			o->threads = atoi(optarg);
			break;
		case 'p':
			o->period_ns = strtoull(optarg, NULL, 0);
			break;
		default:
			return -1;
		}
	}
	return optind;
}

void wl_usleep(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

int __attribute__((noinline)) wl_descend(int depth, int (*fn)(void *arg),
					 void *arg)
{
	int ret;

	if (depth <= 0)
		return fn(arg);
	ret = wl_descend(depth - 1, fn, arg);
	/* Keep this frame live across the call. */
	__asm__ __volatile__("" : "+r"(ret));
	return ret + 1;
}

int __attribute__((noinline)) wl_leaf_calls(struct wl_shared *sh,
					    enum wl_mode mode, unsigned int n)
{
	static __thread int zero_fd = -1, pipe_rd = -1;
	static __thread char buf[4096];
	unsigned int i;
	int fds[2];

	if (zero_fd < 0)
		zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (pipe_rd < 0 && !pipe2(fds, O_CLOEXEC))
		pipe_rd = fds[0];	/* the write end stays open: poll waits */

	for (i = 0; i < n; i++) {
		switch (i % 8) {
		case 0:
		case 3:
			syscall(SYS_getppid);
			break;
		case 1:
		case 5:
			if (read(zero_fd, buf, sizeof(buf)) < 0)
				return -1;
			break;
		case 2:
			sched_yield();
			break;
		case 4: {
			/* Fresh pages: page faults from this frame. */
			char *p = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			int j;

			if (p == MAP_FAILED)
				return -1;
			for (j = 0; j < 8; j++)
				p[j * 4096] = 1;
			munmap(p, 8 * 4096);
			break;
		}
		case 6:
			if (mode == WL_BLOCKING) {
				struct pollfd pfd = { .fd = pipe_rd, .events = POLLIN };

				poll(&pfd, 1, 1);
			}
			break;
		case 7:
			if (mode == WL_BLOCKING)
				wl_usleep(50);
			if (sh && sh->ctl_fd >= 0 && sh->ctl_mask) {
				char cmd[64];
				int len = snprintf(cmd, sizeof(cmd), "request task %llx",
						   (unsigned long long)sh->ctl_mask);

				if (write(sh->ctl_fd, cmd, len) == len)
					__atomic_add_fetch(&sh->ctl_writes, 1,
							   __ATOMIC_RELAXED);
			}
			break;
		}
	}
	if (sh)
		__atomic_add_fetch(&sh->syscalls, n, __ATOMIC_RELAXED);
	return 0;
}

static int wl_leaf(void *arg)
{
	struct wl_thread *t = arg;

	return wl_leaf_calls(t->sh, t->mode, 16);
}

static void *wl_thread_fn(void *arg)
{
	struct wl_thread *t = arg;
	int slot = __atomic_fetch_add(&t->sh->nr_tids, 1, __ATOMIC_RELAXED);

	if (slot < WL_MAX_THREADS)
		t->sh->tids[slot] = syscall(SYS_gettid);
	while (!t->sh->stop) {
		if (wl_descend(t->depth, wl_leaf, t) < 0)
			break;
		t->round++;
	}
	return NULL;
}

pid_t wl_spawn(struct wl_shared *sh, int threads, enum wl_mode mode,
	       int max_depth, void (*setup)(struct wl_shared *sh),
	       void (*main_fn)(struct wl_shared *sh))
{
	pthread_t tid[WL_MAX_THREADS];
	struct wl_thread *t;
	int i, go[2];
	char c;
	pid_t pid;

	if (threads > WL_MAX_THREADS)
		threads = WL_MAX_THREADS;
	sh->stop = 0;
	sh->nr_tids = 0;
	if (pipe2(go, O_CLOEXEC)) {
		perror("defer_stress: pipe");
		exit(2);
	}
	pid = fork();
	if (pid) {
		close(go[0]);
		sh->go_fd = go[1];
		return pid;
	}

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close(go[1]);
	if (setup)
		setup(sh);
	/*
	 * Wait in one system call: no entry of this task can be sampled
	 * before the controller's sessions are all set up and enabled.
	 */
	if (read(go[0], &c, 1) != 1)
		_exit(2);
	close(go[0]);
	t = calloc(threads + 1, sizeof(*t));
	if (!t)
		_exit(2);
	for (i = 0; i < threads; i++) {
		t[i].sh = sh;
		t[i].mode = mode;
		t[i].depth = 4 + (i * 7) % (max_depth - 3);
		if (pthread_create(&tid[i], NULL, wl_thread_fn, &t[i]))
			_exit(2);
	}
	if (main_fn)
		main_fn(sh);
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	_exit(0);
}

void wl_start(struct wl_shared *sh)
{
	if (write(sh->go_fd, "g", 1) != 1) {
		perror("defer_stress: go");
		exit(2);
	}
	close(sh->go_fd);
}

int wl_stop(struct wl_shared *sh, pid_t pid)
{
	int status;

	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}
