// SPDX-License-Identifier: GPL-2.0
/*
 * A program built with gcc -O2 (no frame pointers, .eh_frame only) that
 * spins at the bottom of main -> outer -> middle -> no_cfi_frame -> inner
 * while a timer signal every millisecond interrupts it wherever it is, and
 * whose handler makes system calls from a chain of its own:
 *
 *   getppid <- handler_leaf <- handler_mid <- on_alarm <- signal trampoline
 *           <- inner .. main, from the interrupted instruction
 *
 * A sample taken on sys_enter_getppid walks through the handler, the
 * signal frame, and then the interrupted chain from an instruction that
 * may be anywhere in it: a prologue, an epilogue, the spin loop, between
 * a call and the frame it sets up, the vDSO's clock_gettime() (called
 * each round), or the exit path once the run is over. Each function
 * keeps callee-saved registers (%rbp among them, as a general register)
 * live across its call, so a walk that took %rbp for a frame pointer in
 * them, or lost a register the signal frame holds, would not reach main.
 * no_cfi_frame is assembly that keeps a frame pointer and has no CFI, as
 * crtstuff's __do_global_dtors_aux, on every program's exit path, is: the
 * walk has no row for it and must take it by its frame pointer.
 *
 * The timer is ITIMER_PROF (the process's CPU time: SIGPROF, taken on the
 * tick of the CPU it runs on; alarm() ends the run) or, with "real",
 * ITIMER_REAL (wall time: SIGALRM, sent from a timer interrupt of any CPU,
 * which kicks the task; the run ends after 1,000 a second).
 *
 * usage: signal_spin [SECONDS [prof|real]]	(default 2 prof)
 */
#include <signal.h>
#include <stdbool.h>
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

/* Called from no_cfi_frame's assembly, which GCC does not see. */
__attribute__((noipa, used)) unsigned long inner(unsigned long a,
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

/*
 * A frame with a frame pointer and no CFI between two that have CFI, as
 * crtstuff's __do_global_dtors_aux is in every program (the exit path
 * goes through it when __cxa_finalize() runs), or hand-written assembly:
 * its file has .eh_frame, which has no row for it.
 */
unsigned long no_cfi_frame(unsigned long a, unsigned long b);
asm(".text\n"
    ".globl no_cfi_frame\n"
    ".type no_cfi_frame, @function\n"
    "no_cfi_frame:\n"
    "	push %rbp\n"
    "	mov %rsp, %rbp\n"
    "	call inner\n"
    "	pop %rbp\n"
    "	ret\n"
    ".size no_cfi_frame, .-no_cfi_frame\n");

static __attribute__((noinline)) unsigned long middle(unsigned long a)
{
	unsigned long x = a * 3, y = a ^ 0x5a5a, z = a + 17, w = a << 3;
	unsigned long r = no_cfi_frame(x + y, z ^ w);

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

static volatile unsigned long ticks_left;

static void on_real(int sig)
{
	on_alarm(sig);
	if (!--ticks_left)
		stop = 1;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 2;
	bool real = argc > 2 && !strcmp(argv[2], "real");
	struct itimerval every_ms = {
		.it_interval = { .tv_usec = 1000 },
		.it_value = { .tv_usec = 1000 },
	};
	struct sigaction sa;

	if (seconds <= 0 || seconds > 3600 ||
	    (argc > 2 && !real && strcmp(argv[2], "prof"))) {
		fprintf(stderr, "usage: signal_spin [SECONDS (1..3600) [prof|real]]\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = real ? on_real : on_alarm;
	sa.sa_flags = SA_RESTART;
	ticks_left = 1000UL * seconds;
	if (sigaction(real ? SIGALRM : SIGPROF, &sa, NULL) ||
	    setitimer(real ? ITIMER_REAL : ITIMER_PROF, &every_ms, NULL)) {
		perror("signal_spin: timer");
		return 1;
	}
	if (!real) {
		signal(SIGALRM, on_stop);
		alarm(seconds);
	}
	sink = outer((unsigned long)argc);
	printf("signal_spin: %lu alarms\n", (unsigned long)alarms);
	return 0;
}
