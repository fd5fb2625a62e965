/* SPDX-License-Identifier: GPL-2.0 */
/* The option parser the perf tests' workloads share. */
#ifndef TESTS_PERF_NUMBER_H
#define TESTS_PERF_NUMBER_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * @arg as a number in @min..@max, or exit 2 saying which option was bad.
 * Needs _GNU_SOURCE, defined before the first #include.
 */
static long number(const char *arg, long min, long max, const char *what)
{
	char *end;
	long v = strtol(arg, &end, 0);

	if (end == arg || *end || v < min || v > max) {
		fprintf(stderr, "%s: %s must be %ld..%ld, got '%s'\n",
			program_invocation_short_name, what, min, max, arg);
		exit(2);
	}
	return v;
}

#endif /* TESTS_PERF_NUMBER_H */
