// SPDX-License-Identifier: GPL-2.0
/*
 * A program built with gcc -O2 (no frame pointers, .eh_frame only) that
 * spins at the bottom of main -> outer -> middle -> inner while a SIGALRM
 * every millisecond of its CPU time (ITIMER_PROF) interrupts it wherever it
 * is, and whose handler makes system calls from a chain of its own:
 *
 *   getppid <- handler_leaf <- handler_mid <- on_alarm <- signal trampoline
 *           <- inner/middle/outer/main at the interrupted instruction
 *
 * A sample taken on sys_enter_getppid walks through the handler, the
 * signal frame, and then the interrupted chain from an instruction that
 * may be anywhere in it: in a prologue, an epilogue, the spin loop,
 * between a call and the frame it sets up, or in the vDSO's
 * clock_gettime(), which the loop calls each round. Each interrupted function keeps
 * callee-saved registers (%rbx, %rbp as a general register, %r12..%r15)
 * live across its call, so a walk that took %rbp for a frame pointer or
 * lost a register the signal frame holds would not reach main.
 *
 * usage: signal_spin [SECONDS]	(default 2)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

static volatile unsigned long sink;
static volatile sig_atomic_t stop;
static volatile unsigned long alarms;

static __attribute__((noinline)) long handler_leaf(int n)
{
	long r = 0;

	for (int i = 0; i < n; i++)
		r += syscall(SYS_getppid);
	return r;
}

static __attribute__((noinline)) long handler_mid(int n)
{
	long r = handler_leaf(n);

	sink += r;
	return r + 1;
}

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
	sink += handler_mid(4);
}

/*
 * Each level mixes its argument through registers that must survive the
 * call below it, and the bottom level spins through a loop with several
 * shapes of code (loads, stores, a call of a leaf), so that the alarm
 * lands in every kind of instruction of a -O2 function.
 */
static __attribute__((noinline)) unsigned long spin_leaf(unsigned long x)
{
	return x * 2654435761UL ^ (x >> 7);
}

static __attribute__((noinline)) unsigned long inner(unsigned long a,
						      unsigned long b)
{
	unsigned long buf[16];
	unsigned long acc = a;
	struct timespec now;

	memset(buf, 0, sizeof(buf));
	while (!stop) {
		for (int i = 0; i < 16; i++) {
			buf[i] += spin_leaf(acc + i) + b;
			acc ^= buf[(i * 7) & 15];
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		sink = acc + now.tv_nsec;
	}
	return acc + buf[3];
}

static __attribute__((noinline)) unsigned long middle(unsigned long a)
{
	unsigned long x = a * 3, y = a ^ 0x5a5a, z = a + 17, w = a << 3;
	unsigned long r = inner(x + y, z ^ w);

	return r + x + y + z + w;
}

static __attribute__((noinline)) unsigned long outer(unsigned long a)
{
	unsigned long p = a + 1, q = a * 5, s = a ^ 0x33;
	unsigned long r = middle(p ^ q);

	return r ^ p ^ q ^ s;
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 2;
	struct itimerval prof = {
		.it_interval = { .tv_usec = 1000 },
		.it_value = { .tv_usec = 1000 },
	};
	struct sigaction sa;

	if (seconds <= 0 || seconds > 3600) {
		fprintf(stderr, "usage: signal_spin [SECONDS (1..3600)]\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL) ||
	    setitimer(ITIMER_PROF, &prof, NULL)) {
		perror("signal_spin: SIGPROF timer");
		return 1;
	}
	signal(SIGALRM, on_stop);
	alarm(seconds);
	sink = outer((unsigned long)argc);
	printf("signal_spin: %lu alarms\n", (unsigned long)alarms);
	return 0;
}
