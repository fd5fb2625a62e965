// SPDX-License-Identifier: GPL-2.0
/*
 * The fake user address space of the unwind table fuzzer: the input's
 * bytes, copied into a heap buffer of their exact size (so that ASan sees
 * any read past them, the shim's own included), at a fixed user address.
 * The shim's user access primitives (shim/linux/uaccess.h) land here: a
 * read of a byte outside the bytes, or in the hole, fails as a fault; a
 * read outside a user access section, a nested or unbalanced section, a
 * read outside the range the reader may read (its section's segment) is a
 * bug, and aborts. In a race, each read also changes a byte near it, as
 * another thread may while the reader reads.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kernel.h>
#include <linux/uaccess.h>

#include "fuzz.h"

static u8 *mem;
static unsigned long mem_start, mem_len, hole_start, hole_end;
static unsigned int nr_windows;
static unsigned long win_lo[2], win_hi[2];
static const char *call = "setup";
static bool in_section;
static u32 race;		/* xorshift state; 0: no race */

void fuzz_bug(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "BUG: unwind table reader, in %s: ", call);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void fuzz_map(unsigned long base, const u8 *bytes, unsigned long len,
	      unsigned long hole, unsigned long hole_len)
{
	mem = malloc(len ? len : 1);
	if (!mem)
		abort();
	memcpy(mem, bytes, len);
	mem_start = base;
	mem_len = len;
	hole_start = hole_len ? hole : 0;
	hole_end = hole + hole_len < hole ? ULONG_MAX : hole_start + hole_len;
	nr_windows = 0;
	in_section = false;
	race = 0;
}

void fuzz_race(u32 seed)
{
	race = seed | 1;
}

/* Change a byte within 256 of the one at @off, the next to be read. */
static void fuzz_race_step(unsigned long off)
{
	race ^= race << 13;
	race ^= race >> 17;
	race ^= race << 5;
	mem[(off + (race & 0xff)) % mem_len] ^= race >> 8 | 1;
}

void fuzz_unmap(void)
{
	free(mem);
	mem = NULL;
	mem_len = 0;
	call = "setup";
}

void fuzz_window(const char *what, unsigned int n, const unsigned long *lo,
		 const unsigned long *hi)
{
	unsigned int i;

	call = what;
	nr_windows = n;
	for (i = 0; i < n; i++) {
		win_lo[i] = lo[i];
		win_hi[i] = hi[i];
	}
}

void fuzz_call_done(void)
{
	if (in_section)
		fuzz_bug("returned inside a user access section");
	nr_windows = 0;
}

/* The x86_64 check: the range neither wraps nor passes the user limit. */
bool fuzz_access_ok(unsigned long addr, unsigned long size)
{
	unsigned long sum = addr + size;

	return sum >= addr && sum <= TASK_SIZE_MAX;
}

bool fuzz_user_access_begin(unsigned long addr, unsigned long size)
{
	if (in_section)
		fuzz_bug("nested user access section at %#lx", addr);
	if (!fuzz_access_ok(addr, size))
		return false;
	in_section = true;
	return true;
}

void fuzz_user_access_end(void)
{
	if (!in_section)
		fuzz_bug("user access section ended twice");
	in_section = false;
}

bool fuzz_get_user(u64 *val, unsigned long addr, unsigned int size)
{
	unsigned long end = addr + size;
	unsigned int i;

	if (!in_section)
		fuzz_bug("unsafe_get_user() of %#lx outside a section", addr);
	for (i = 0; i < nr_windows; i++)
		if (addr >= win_lo[i] && end <= win_hi[i] && end > addr)
			break;
	if (i == nr_windows)
		fuzz_bug("read of %u bytes at %#lx: not where it may read",
			 size, addr);
	*val = 0;
	if (addr < mem_start || end > mem_start + mem_len ||
	    (addr < hole_end && end > hole_start))
		return false;
	memcpy(val, mem + (addr - mem_start), size);
	if (race)
		fuzz_race_step(end - mem_start);
	return true;
}
