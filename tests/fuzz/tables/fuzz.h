/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the unwind table fuzzer's two halves share: the input's header
 * (fuzz_tables.c decodes it, mkseeds.py writes it) and the fake user
 * address space the readers read (fuzz_mem.c).
 */
#ifndef _FUZZ_TABLES_H
#define _FUZZ_TABLES_H

#include <linux/types.h>

/*
 * An input: this header, @nr_ips (at most FUZZ_MAX_IPS) little-endian s32
 * IPs, then the bytes mapped at the fake user address @base. Every
 * address below is a signed offset from @base.
 */
struct fuzz_hdr {
	u8	mode;		/* FUZZ_* bits, methods in bits 4 to 6 */
	u8	nr_ips;
	u16	page;		/* base: bits 12-13 pick one, 0-11 offset */
	u32	budget;		/* work budget per lookup; 0: the default */
	s32	hole;		/* a range that faults, inside the bytes */
	u32	hole_len;
	s32	eh_hdr;		/* .eh_frame_hdr and its size */
	u32	eh_size;
	s32	eh_seg_start;	/* the loaded segment that holds it */
	s32	eh_seg_end;
	s32	sf;		/* SFrame section and its segment's size */
	u32	sf_size;
	s32	text_start;	/* the text it describes */
	s32	text_end;
} __packed;

#define FUZZ_EH		0x01	/* eh_frame_section_init(), eh_frame_find() */
#define FUZZ_SFRAME	0x02	/* sframe_section_init(), sframe_find() */
#define FUZZ_RULES	0x04	/* unwind_tables_rule() and its rule cache */
#define FUZZ_WS4	0x08	/* i386 code: 4-byte words */
#define FUZZ_METHODS(mode)	(((mode) >> 4) & 7)
#define FUZZ_RACE	0x80	/* the bytes change as they are read */

#define FUZZ_MAX_IPS	16
#define FUZZ_BUDGET	(1U << 20)	/* the kernel's default */

/* The fake address space: @len bytes at @base, a faulting hole in them. */
void fuzz_map(unsigned long base, const u8 *bytes, unsigned long len,
	      unsigned long hole, unsigned long hole_len);
void fuzz_unmap(void);
/*
 * From now on, every read changes a byte of the mapping near it, as
 * another thread of the process may: @seed picks which and how.
 */
void fuzz_race(u32 seed);

/*
 * The ranges the call about to be made may read, [lo, hi) each (at most
 * two); a read outside them is a bug. @what names the call in reports.
 */
void fuzz_window(const char *what, unsigned int n, const unsigned long *lo,
		 const unsigned long *hi);
/* After a call: no user access section may be left open. */
void fuzz_call_done(void);

void fuzz_bug(const char *fmt, ...)
	__attribute__((__format__(printf, 1, 2), __noreturn__));

#endif /* _FUZZ_TABLES_H */
