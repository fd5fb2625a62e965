// SPDX-License-Identifier: GPL-2.0
/*
 * A small program whose SFrame table has each kind of row the x86_64
 * unwinder must read: SP-based frames of several sizes, an alloca frame
 * whose CFA is FP-based with FP saved, a leaf without a frame, and the
 * .plt's PC-mask rows. Built with -O2 -fomit-frame-pointer -Wa,--gsframe.
 */
#include <alloca.h>
#include <string.h>

__attribute__((noinline)) long leaf(long n)
{
	long r;

	asm volatile("syscall" : "=a"(r) : "0"(39L) : "rcx", "r11", "memory");
	return r + n;
}

__attribute__((noinline)) long mid(long n)
{
	char *p = alloca(n * 16 + 8);

	memset(p, 1, n * 16 + 8);
	return leaf(p[n]) + 1;
}

__attribute__((noinline)) long top(long n)
{
	long a[40];
	int i;

	for (i = 0; i < 40; i++)
		a[i] = i * n;
	return mid(n) + a[n % 40];
}

int main(int argc, char **argv)
{
	return top(argc) & 1;
}
