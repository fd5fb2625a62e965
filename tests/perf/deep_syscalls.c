// SPDX-License-Identifier: GPL-2.0
/*
 * A workload with known user call chains that makes system calls: the
 * demo and the perf end-to-end tests record it and check that each
 * sample's chain shows these functions, in this order, under the kernel
 * frames of the call.
 *
 *   main -> serve -> handle_request -> descend (DEPTH times) -> read_block
 *
 * read_block() issues read(2) of /dev/zero itself (inline "syscall"), so
 * the frame pointer chain starts in a function of ours and no libc frame
 * without a frame pointer hides a caller.
 *
 * usage: deep_syscalls [-d DEPTH] [-n CALLS] [-b BYTES] [-g FILE] [-p] [-i]
 *   -d  frames of descend() between handle_request() and read_block() (16)
 *   -n  read(2) calls (1000)
 *   -b  bytes per read (4096)
 *   -i  read standard input instead of /dev/zero (a pipe: the reads sleep),
 *       until end of file or CALLS reads
 *   -g  first wait until FILE exists (a profiler attaching with -p)
 *   -p  then block in pause(2) until killed, to be caught in the kernel
 */
#define _GNU_SOURCE	/* program_invocation_short_name, in number.h */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/syscall.h>

#include "number.h"

#define MAX_BYTES (1 << 20)

static char buf[MAX_BYTES];

static long __attribute__((noinline)) read_block(int fd, size_t bytes)
{
	long ret;

#ifdef __aarch64__
	register long x0 asm("x0") = fd;
	register long x1 asm("x1") = (long)buf;
	register long x2 asm("x2") = bytes;
	register long x8 asm("x8") = SYS_read;

	asm volatile ("svc #0"
		      : "+r" (x0)
		      : "r" (x1), "r" (x2), "r" (x8)
		      : "memory");
	ret = x0;
#else
	asm volatile ("syscall"
		      : "=a" (ret)
		      : "0" ((long)SYS_read), "D" ((long)fd), "S" (buf), "d" (bytes)
		      : "rcx", "r11", "memory");
#endif
	return ret;
}

static long __attribute__((noinline)) descend(int depth, int fd, size_t bytes)
{
	long ret;

	if (depth <= 1)
		ret = read_block(fd, bytes);
	else
		ret = descend(depth - 1, fd, bytes);
	/* not a tail call: each level keeps its frame */
	asm volatile ("" : "+r" (ret));
	return ret;
}

static long __attribute__((noinline)) handle_request(int depth, int fd, size_t bytes)
{
	long ret = descend(depth, fd, bytes);

	asm volatile ("" : "+r" (ret));
	return ret;
}

static int __attribute__((noinline)) serve(int depth, long calls, size_t bytes,
					   int in)
{
	int fd = in ? 0 : open("/dev/zero", O_RDONLY);
	long i, ret;

	if (fd < 0) {
		perror("deep_syscalls: /dev/zero");
		return 1;
	}
	for (i = 0; i < calls; i++) {
		ret = handle_request(depth, fd, bytes);
		if (in && ret == 0)
			break;
		if (in ? ret < 0 : ret != (long)bytes) {
			fprintf(stderr, "deep_syscalls: short read\n");
			return 1;
		}
	}
	if (!in)
		close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long depth = 16, calls = 1000, bytes = 4096;
	const char *go = NULL;
	int block = 0, in = 0, opt, ret;

	while ((opt = getopt(argc, argv, "d:n:b:g:pi")) != -1) {
		switch (opt) {
		case 'd':
			depth = number(optarg, 1, 10000, "-d (depth)");
			break;
		case 'n':
			calls = number(optarg, 0, 1L << 40, "-n (calls)");
			break;
		case 'b':
			bytes = number(optarg, 1, MAX_BYTES, "-b (bytes)");
			break;
		case 'g':
			go = optarg;
			break;
		case 'p':
			block = 1;
			break;
		case 'i':
			in = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEPTH] [-n CALLS] [-b BYTES] [-g FILE] [-p] [-i]\n",
				argv[0]);
			return 2;
		}
	}
	while (go && access(go, F_OK)) {
		struct timespec ms = { .tv_nsec = 1000000 };

		nanosleep(&ms, NULL);
	}
	ret = serve(depth, calls, bytes, in);
	if (!ret && block)
		pause();
	return ret;
}
