// SPDX-License-Identifier: GPL-2.0
/*
 * A process with no unwind table at all, for the bpf bench's "no-table
 * process" case (bench/bpf.c): spin_at() (spin.c) at the bottom of a chain
 * as deep as its argument says, until it is killed. harness/bench links it
 * statically with frame pointers, no unwind tables and no .eh_frame_hdr,
 * so that the kernel finds no table in any of its mappings.
 */
#include <stdlib.h>

#include "bench.h"

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 8;

	for (;;)
		spin_at(depth, 1L << 30);
}
