// SPDX-License-Identifier: GPL-2.0
/*
 * The hostile bench's process (bench/hostile.c): hostile_0(), the top of
 * bench/gen_hostile.py's chain, which spins at its bottom until the process
 * is killed. With --ras it prints the addresses a right walk of the spin
 * may end at, one a line: the spin's, then the chain's return addresses,
 * innermost first.
 */
#include <stdio.h>
#include <string.h>

extern const unsigned long hostile_ras[];	/* a count, then addresses */
extern const char hostile_spin[];
void hostile_0(void);

int main(int argc, char **argv)
{
	unsigned long i;

	if (argc > 1 && !strcmp(argv[1], "--ras")) {
		printf("%#lx\n", (unsigned long)hostile_spin);
		for (i = 1; i <= hostile_ras[0]; i++)
			printf("%#lx\n", hostile_ras[i]);
		return 0;
	}
	hostile_0();
	return 1;
}
