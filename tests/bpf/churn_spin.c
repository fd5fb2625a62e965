// SPDX-License-Identifier: GPL-2.0
/*
 * A program built with frame pointers (and the .eh_frame every gcc build
 * has) whose main thread spins 30 calls deep while a second thread maps
 * 64 KiB of anonymous memory, writes its first page and unmaps it, in a
 * loop, as allocators, garbage collectors and language runtimes do: each
 * mapping moves the mm's mmap lock sequence. tests/bpf/bpf_tools.py
 * samples it with Debian's BPF tools, the tables on and off: the helpers'
 * walk must not lose the stacks that 6.12's frame-pointer walk gets.
 *
 *	churn_spin WARM_NAME
 *
 * Prints "ready" once the mapping thread runs; on SIGUSR1 the main thread
 * takes the name WARM_NAME (/proc/self/comm), as the tool test's other
 * programs do. The mapping thread is named "churn-mapper".
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define DEPTH	30
#define MAP_LEN	(64 << 10)

static const char *warm_name;
static volatile int mapping, stop;
static volatile unsigned long sink;

static void rename_self(int sig)
{
	int fd = open("/proc/self/comm", O_WRONLY);

	(void)sig;
	if (fd < 0)
		return;
	if (write(fd, warm_name, strlen(warm_name)) < 0)
		_exit(3);
	close(fd);
}

static void *map_unmap(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "churn-mapper");
	mapping = 1;
	for (;;) {
		char *p = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("churn_spin: mmap");
			exit(2);
		}
		p[0] = 1;
		munmap(p, MAP_LEN);
	}
	return NULL;
}

/* Not a tail call: the increment after it keeps every frame on the stack. */
static __attribute__((noipa)) void down(int n)
{
	if (n) {
		down(n - 1);
		sink++;
		return;
	}
	while (!stop)
		sink++;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 2) {
		fprintf(stderr, "usage: churn_spin WARM_NAME\n");
		return 2;
	}
	warm_name = argv[1];
	signal(SIGUSR1, rename_self);
	if (pthread_create(&t, NULL, map_unmap, NULL)) {
		fprintf(stderr, "churn_spin: pthread_create failed\n");
		return 2;
	}
	while (!mapping)
		sched_yield();
	printf("ready\n");
	fflush(stdout);
	down(DEPTH - 2);
	return 0;
}
