// SPDX-License-Identifier: GPL-2.0
/*
 * A step of sframe_walk's call chain that lives in a shared library: built
 * as libsframe_a.so (DT_NEEDED by sframe_walk), libsframe_b.so (dlopen'd,
 * and copied with a damaged SFrame section by the hostile tests) and
 * libsframe_fp.so (frame pointers kept, for the tests of refused
 * sections). STEP names the function.
 */
#include "sframe_lib.h"

/* Beside STEP in the function index: STEP has neighbours on both sides. */
__attribute__((noipa)) long sframe_lib_before(long x)
{
	return x * 3 + 1;
}

/* Record the return address into the caller, then call on. */
__attribute__((noipa)) long STEP(void *chain, int level, sframe_next_t next,
				 unsigned long *ras)
{
	char buf[200];

	buf[level % 200] = level;
	asm volatile("" : : "r"(buf) : "memory");
	ras[level] = (unsigned long)__builtin_return_address(0);
	return next(chain, level + 1) + buf[level % 200];
}

__attribute__((noipa)) long sframe_lib_after(long x)
{
	return x * 5 + 2;
}
