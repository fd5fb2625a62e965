/* SPDX-License-Identifier: GPL-2.0 */
/* The test driver's parts in other files than test.c. */
#ifndef _KERNEL_UNWIND_TEST_H
#define _KERNEL_UNWIND_TEST_H

int test_busy_table(const char *arg);
int test_slow_probes(const char *us_arg, const char *ms_arg);

#endif
