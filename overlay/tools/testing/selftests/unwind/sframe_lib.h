/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The library steps of sframe_walk's call chain (sframe_lib.c): each
 * records its return address in ras[level] and calls next(chain, level + 1).
 */
#ifndef SELFTESTS_UNWIND_SFRAME_LIB_H
#define SELFTESTS_UNWIND_SFRAME_LIB_H

typedef long (*sframe_next_t)(void *chain, int level);
typedef long (*sframe_step_t)(void *chain, int level, sframe_next_t next,
			      unsigned long *ras);

/* libsframe_a.so, which sframe_walk needs (DT_NEEDED) */
long sframe_lib_a_step(void *chain, int level, sframe_next_t next,
		       unsigned long *ras);
/* libsframe_b.so and libsframe_fp.so, which it dlopens */
long sframe_lib_b_step(void *chain, int level, sframe_next_t next,
		       unsigned long *ras);

/* libeh_wide.so and libsframe_wide.so (wide_lib.awk): step @i of many */
#define WIDE_STEPS	1000
sframe_step_t wide_step_at(unsigned int i);

#endif /* SELFTESTS_UNWIND_SFRAME_LIB_H */
