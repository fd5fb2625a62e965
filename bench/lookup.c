// SPDX-License-Identifier: GPL-2.0
/*
 * What a first-time rule lookup costs per frame on a table the size of
 * python3's (lookup): a chain through a library of 10,000 functions
 * without frame pointers (bench/gen_lookup_lib.py), walked once in a new
 * process by its .eh_frame or by its SFrame table.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/*
 * harness/bench builds the library twice next to this program: with
 * .eh_frame alone, and with an SFrame table too. Each is walked by its
 * own table, frame pointers being the only other method on.
 */
#define LOOKUP_MODES	2
#define LOOKUP_RUNS	7

static const struct {
	const char *mode, *methods, *lib;
} lookup_modes[LOOKUP_MODES] = {
	{ "eh_frame", "fp eh_frame", "liblookup-eh.so" },
	{ "sframe", "fp sframe", "liblookup-sframe.so" },
};

static const char * const lookup_keys[] = {
	"walk_ns", "timed_frames", "sframe_probe_ns", "frames", "walks",
	"sframe_frames", "eh_frame_frames", "sframe_row_hits", "rule_lookups",
};

enum { NS, TF, PROBE, FR, WK, SF, EH, HITS, LOOKUPS, NKEYS };

/* The counters' growth over a child's first walk and over its second. */
struct lookup_run {
	long d[2][NKEYS];
};

/* Into @path, the directory of this program's file. */
static int self_dir(char *path, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", path, size - 1);
	char *slash;

	if (n < 0)
		return -1;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

/* Read the file at @path once: no child waits for the host's disk. */
static void read_through(const char *path)
{
	char buf[65536];
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

/*
 * One child: a new mm, which has met no table and remembers no rule,
 * walks the chain of @chain at @depth twice. The counters go to @fd.
 */
static void lookup_child(long (*chain)(int depth), int depth, int fd)
{
	long c[3][NKEYS];
	struct lookup_run run;
	struct events ev;
	int w, k;

	events_open(&ev, DEFERRED, 1, 16);
	for (w = 0; w < 3; w++) {
		for (k = 0; k < NKEYS; k++)
			c[w][k] = read_long(COUNTERS, lookup_keys[k]);
		if (w == 2)
			break;
		events_enable(&ev, 1);
		chain(depth);
		events_enable(&ev, 0);
	}
	for (w = 0; w < 2; w++)
		for (k = 0; k < NKEYS; k++)
			run.d[w][k] = c[w + 1][k] - c[w][k];
	if (write(fd, &run, sizeof(run)) != sizeof(run))
		_exit(1);
	_exit(0);
}

static void lookup_fork(long (*chain)(int depth), int depth,
			struct lookup_run *run)
{
	int fd[2], st;
	pid_t pid;

	if (pipe(fd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(fd[0]);
		lookup_child(chain, depth, fd[1]);
	}
	close(fd[1]);
	if (read(fd[0], run, sizeof(*run)) != sizeof(*run))
		memset(run, 0, sizeof(*run));
	close(fd[0]);
	if (waitpid(pid, &st, 0) < 0 || st)
		die("a lookup child failed");
}

/* Walk time per frame without the time spent reading files' headers. */
static double ns_per_frame(const long *d)
{
	return d[TF] > 0 ? (double)(d[NS] - d[PROBE]) / d[TF] : 0;
}

/*
 * The rows of a mode at @depth: medians of the children's times; the
 * counters of their first walks (@sum[0]) and second walks (@sum[1]).
 */
static void lookup_report(int mi, int depth, double *first, double *warm,
			  double sum[2][NKEYS], int runs)
{
	const char *mode = lookup_modes[mi].mode;
	double *c = sum[0], *w = sum[1];
	double frames = c[WK] > 0 ? c[FR] / c[WK] : 0;
	char name[48];

	snprintf(name, sizeof(name), "depth=%d,10000 functions", depth);
	emit("lookup", name, mode, "first_walk_ns_per_frame", median(first, runs));
	emit("lookup", name, mode, "warm_ns_per_frame", median(warm, runs));
	emit("lookup", name, mode, "frames_per_walk", frames);
	emit("lookup", name, mode, "table_share",
	     c[FR] > 0 ? (c[SF] + c[EH]) / c[FR] : 0);
	emit("lookup", name, mode, "lookups_per_frame",
	     c[FR] > 0 ? c[LOOKUPS] / c[FR] : 0);
	emit("lookup", name, mode, "rule_hits_per_frame",
	     c[FR] > 0 ? c[HITS] / c[FR] : 0);
	emit("lookup", name, mode, "warm_lookups_per_frame",
	     w[FR] > 0 ? w[LOOKUPS] / w[FR] : 0);
	/* The library's depth + 1 frames, then this program's. */
	if (frames < depth + 1)
		fprintf(stderr, "deferred_bench: lookup: %s walks %.1f frames at depth %d\n",
			mode, frames, depth);
}

/*
 * In a new process each time, one walk of the library's chain (the
 * first: every rule looked up, in a table of 10,000 functions), then a
 * second one (the rules the mm remembered, or looked up again where 128
 * slots do not hold them all), by .eh_frame and by SFrame in turn. Per
 * frame: the median time of each walk over the children, and over all
 * of them the rules looked up and remembered; the frames per walk (the
 * depth, lookup_chain() and this program's own frames: a walk that fell
 * back to frame pointers ends at the library's first frame) and the
 * share of them the tables gave.
 */
void bench_lookup(void)
{
	static const int depths[] = { 32, 128 };
	enum { NDEPTHS = sizeof(depths) / sizeof(depths[0]) };
	double first[LOOKUP_MODES][NDEPTHS][LOOKUP_RUNS];
	double warm[LOOKUP_MODES][NDEPTHS][LOOKUP_RUNS];
	double sum[LOOKUP_MODES][NDEPTHS][2][NKEYS] = { };
	long (*chain[LOOKUP_MODES])(int depth);
	int runs = smoke ? 1 : LOOKUP_RUNS, mi, di, r, k;
	char dir[PATH_MAX], path[PATH_MAX + 32];
	void *lib[LOOKUP_MODES];
	struct lookup_run run;

	if (self_dir(dir, sizeof(dir)))
		die("/proc/self/exe");
	for (mi = 0; mi < LOOKUP_MODES; mi++) {
		snprintf(path, sizeof(path), "%s/%s", dir, lookup_modes[mi].lib);
		lib[mi] = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		chain[mi] = lib[mi] ? dlsym(lib[mi], "lookup_chain") : NULL;
		if (!chain[mi]) {
			/* harness/bench builds them */
			fprintf(stderr, "deferred_bench: lookup skipped: %s\n",
				dlerror());
			while (mi >= 0) {
				if (lib[mi])
					dlclose(lib[mi]);
				mi--;
			}
			return;
		}
		read_through(path);
		chain[mi](depths[NDEPTHS - 1]);	/* the text paged in */
	}

	time_walks(1);
	for (r = 0; r < runs; r++) {
		for (mi = 0; mi < LOOKUP_MODES; mi++) {
			if (!methods_set(lookup_modes[mi].methods))
				die("writing " METHODS);
			for (di = 0; di < NDEPTHS; di++) {
				lookup_fork(chain[mi], depths[di], &run);
				first[mi][di][r] = ns_per_frame(run.d[0]);
				warm[mi][di][r] = ns_per_frame(run.d[1]);
				for (k = 0; k < NKEYS; k++) {
					sum[mi][di][0][k] += run.d[0][k];
					sum[mi][di][1][k] += run.d[1][k];
				}
			}
		}
	}
	time_walks(0);
	methods_set("fp sframe eh_frame");

	for (di = 0; di < NDEPTHS; di++)
		for (mi = 0; mi < LOOKUP_MODES; mi++)
			lookup_report(mi, depths[di], first[mi][di], warm[mi][di],
				      sum[mi][di], runs);
	for (mi = 0; mi < LOOKUP_MODES; mi++)
		dlclose(lib[mi]);
}
