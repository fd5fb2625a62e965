// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF benches' shared part (bench/bpf_util.h says what it holds).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bpf_util.h"

struct bpf_bench bs;

void set_tables(int on)
{
	FILE *f = fopen(BPF_TABLES, "w");

	if (!f || fprintf(f, "%d\n", on) < 0 || fclose(f))
		die(BPF_TABLES);
}

int map_fd(const char *name)
{
	int fd = bpf_object__find_map_fd_by_name(bs.obj, name);

	if (fd < 0)
		die(name);
	return fd;
}

/* libbpf's warnings and errors, not its debug lines. */
static int bpf_print(enum libbpf_print_level level, const char *fmt,
		     va_list ap)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

void bpf_load(const char *dir)
{
	char path[PATH_MAX + 32];
	struct bpf_program *prog;

	libbpf_set_print(bpf_print);
	snprintf(path, sizeof(path), "%s/" BPF_OBJECT, dir);
	bs.obj = bpf_object__open_file(path, NULL);
	if (libbpf_get_error(bs.obj))
		die(path);
	if (bpf_object__load(bs.obj))
		die("loading " BPF_OBJECT);
	prog = bpf_object__find_program_by_name(bs.obj, "user_stack");
	if (!prog)
		die("no user_stack program in " BPF_OBJECT);
	bs.prog = bpf_program__fd(prog);
	bs.entries = map_fd("entries");
	bs.timing = map_fd("timing");
	bs.samples = map_fd("samples");
	bs.nr = map_fd("nr_samples");
}

void set_entries(__u32 n)
{
	__u32 key = 0;

	if (bpf_map_update_elem(bs.entries, &key, &n, BPF_ANY))
		die("the entries map");
}

void bpf_reset(void)
{
	struct bpf_stack_timing t = { };
	__u32 key = 0, zero = 0;

	if (bpf_map_update_elem(bs.timing, &key, &t, BPF_ANY) ||
	    bpf_map_update_elem(bs.nr, &key, &zero, BPF_ANY))
		die("resetting the maps");
}

void bpf_timing(struct bpf_stack_timing *t)
{
	__u32 key = 0;

	if (bpf_map_lookup_elem(bs.timing, &key, t))
		die("the timing map");
}

__u32 nr_samples(void)
{
	__u32 key = 0, nr;

	if (bpf_map_lookup_elem(bs.nr, &key, &nr))
		die("reading the count of samples");
	return nr;
}

int bpf_samples(struct bpf_stack_sample *s)
{
	__u32 nr = nr_samples(), i;

	if (nr > BPF_STACK_MAX_SAMPLES)
		nr = BPF_STACK_MAX_SAMPLES;
	for (i = 0; i < nr; i++)
		if (bpf_map_lookup_elem(bs.samples, &i, &s[i]))
			die("the samples map");
	return nr;
}

/*
 * A cpu-clock event on @pid every @period ns, running the program; enabled
 * by @on_exec at its next execve(), else disabled. Its samples ask for no
 * callchain: the helper walks the stack rather than copy the sample's, as
 * profilers' events are opened.
 */
int bpf_event_open(pid_t pid, long period, int on_exec)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = period,
		.sample_type = PERF_SAMPLE_IP,
		.disabled = 1,
		.enable_on_exec = on_exec,
	};
	int fd;

	fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, 0);
	if (fd < 0)
		die("perf_event_open cpu-clock");
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, bs.prog))
		die("PERF_EVENT_IOC_SET_BPF");
	return fd;
}

static const char * const bpf_keys[] = {
	"bpf_walks", "bpf_unmet", "bpf_warmups", "walk_ns", "timed_walks",
	"timed_frames", "sframe_probe_ns", "stop_budget_nofault",
};

void bpf_counters(long *c)
{
	int k;

	for (k = 0; k < NKEYS; k++)
		c[k] = read_long(COUNTERS, bpf_keys[k]);
}

void bpf_counters_diff(long *d, const long *a, const long *b)
{
	int k;

	for (k = 0; k < NKEYS; k++)
		d[k] = b[k] - a[k];
}