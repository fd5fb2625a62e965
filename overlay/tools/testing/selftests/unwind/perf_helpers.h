/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests that sample through perf_event_open() share
 * (perf_events/deferred_callchain and unwind/sframe_probe): a PMU's type,
 * the file offset of a uprobe, and copying a record out of a ring buffer.
 */
#ifndef SELFTESTS_UNWIND_PERF_HELPERS_H
#define SELFTESTS_UNWIND_PERF_HELPERS_H

#include <linux/types.h>
#include <stdio.h>
#include <string.h>

/* The type of the dynamic PMU @name ("uprobe", ...), or -1. */
static inline long pmu_type(const char *name)
{
	char path[128];
	long type = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
		 name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

/* The offset of @addr in the file mapped there, for a uprobe; or -1. */
static inline long file_offset(unsigned long addr)
{
	unsigned long start, end, pgoff;
	char line[512], perm[8];
	long off = -1;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx", &start, &end, perm,
			   &pgoff) != 4)
			continue;
		if (addr >= start && addr < end) {
			off = addr - start + pgoff;
			break;
		}
	}
	fclose(f);
	return off;
}

/*
 * Copy @len bytes at ring offset @off out of the @size bytes of ring-buffer
 * data at @data, across the wrap.
 */
static inline void ring_copy(const char *data, size_t size, __u64 off,
			     void *dst, size_t len)
{
	size_t at = off % size, first = size - at;

	if (first >= len) {
		memcpy(dst, data + at, len);
	} else {
		memcpy(dst, data + at, first);
		memcpy((char *)dst + first, data, len - first);
	}
}

#endif /* SELFTESTS_UNWIND_PERF_HELPERS_H */
