// SPDX-License-Identifier: GPL-2.0
/*
 * What a first-time rule lookup costs per frame on a table the size of
 * python3's (lookup): chains through a library of 10,000 functions
 * without frame pointers (bench/gen_lookup_lib.py), walked by its
 * .eh_frame or by its SFrame table in a new process: its first walk, warm
 * walks, and walks whose every rule is looked up in the mapped table.
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
	"sframe_frames", "eh_frame_frames", "rule_lookups",
};

enum { NS, TF, PROBE, FR, WK, SF, EH, LOOKUPS, NKEYS };

/*
 * The counters' growth over a child's walks: its first one (a new mm),
 * the same chain again (warm), and chains through functions no walk met
 * for a while, once the table's pages are mapped (lookups).
 */
enum { FIRST, WARM, LOOKUP, NWALKS };

struct lookup_run {
	long d[NWALKS][NKEYS];
};

/* Chains a child walks for the warm and lookup figures. */
#define LOOKUP_CHAINS	64

struct lookup_lib {
	long (*chain)(int depth);
	long (*chain_at)(int pos, int depth);
};

static void lookup_counters(long *c)
{
	int k;

	for (k = 0; k < NKEYS; k++)
		c[k] = read_long(COUNTERS, lookup_keys[k]);
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

/* Walk the chains from @first on, each @depth functions, all different. */
static void lookup_pass(const struct lookup_lib *lib, int first, int depth)
{
	int i;

	for (i = 0; i < LOOKUP_CHAINS; i++)
		lib->chain_at((first + i) * depth, depth);
}

/*
 * One child: a new mm, which has met no table and remembers no rule,
 * walks the chain once (first), again LOOKUP_CHAINS times (warm), then
 * twice through LOOKUP_CHAINS other chains that share no function: the
 * first pass maps the table's pages, and by the second the 128 rules the
 * mm remembers are those of the first pass's last chains, so every frame
 * of the library is looked up again (lookup). The counters go to @fd.
 */
static void lookup_child(const struct lookup_lib *lib, int depth, int fd)
{
	long c[NWALKS + 2][NKEYS];
	struct lookup_run run;
	struct events ev;
	int i, k;

	events_open(&ev, DEFERRED, 1, 16);
	lookup_counters(c[0]);
	events_enable(&ev, 1);
	lib->chain(depth);
	events_enable(&ev, 0);
	lookup_counters(c[1]);
	events_enable(&ev, 1);
	for (i = 0; i < LOOKUP_CHAINS; i++)
		lib->chain(depth);
	events_enable(&ev, 0);
	lookup_counters(c[2]);
	events_enable(&ev, 1);
	lookup_pass(lib, 1, depth);
	events_enable(&ev, 0);
	lookup_counters(c[3]);
	events_enable(&ev, 1);
	lookup_pass(lib, 1, depth);
	events_enable(&ev, 0);
	lookup_counters(c[4]);
	for (k = 0; k < NKEYS; k++) {
		run.d[FIRST][k] = c[1][k] - c[0][k];
		run.d[WARM][k] = c[2][k] - c[1][k];
		run.d[LOOKUP][k] = c[4][k] - c[3][k];
	}
	if (write(fd, &run, sizeof(run)) != sizeof(run))
		_exit(1);
	_exit(0);
}

static void lookup_fork(const struct lookup_lib *lib, int depth,
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
		lookup_child(lib, depth, fd[1]);
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
 * What a rule looked up costs over a remembered one, in one child: the
 * lookup walks' time per frame less the warm walks', over the rules per
 * frame the former looked up and the latter did not (where a chain holds
 * more return addresses than the mm remembers, warm walks look some up).
 */
static double ns_per_lookup(const struct lookup_run *run)
{
	const long *l = run->d[LOOKUP], *w = run->d[WARM];
	double more;

	if (l[FR] <= 0 || w[FR] <= 0)
		return 0;
	more = (double)l[LOOKUPS] / l[FR] - (double)w[LOOKUPS] / w[FR];
	if (more < 0.1)
		return 0;
	return (ns_per_frame(l) - ns_per_frame(w)) / more;
}

static double per_frame(const double *c, int key)
{
	return c[FR] > 0 ? c[key] / c[FR] : 0;
}

/*
 * The rows of a mode at @depth: medians over the children of each kind
 * of walk's time per frame (@ns) and of a lookup's cost (@lk); the sums
 * of their counters (@sum) for the rules looked up, and for the first
 * walk's frames and the tables' share of them.
 */
static void lookup_report(int mi, int depth, double ns[NWALKS][LOOKUP_RUNS],
			  double *lk, double sum[NWALKS][NKEYS], int runs)
{
	const char *mode = lookup_modes[mi].mode;
	double *c = sum[FIRST];
	double frames = c[WK] > 0 ? c[FR] / c[WK] : 0;
	char name[48];

	snprintf(name, sizeof(name), "depth=%d,10000 functions", depth);
	emit("lookup", name, mode, "first_walk_ns_per_frame",
	     median(ns[FIRST], runs));
	emit("lookup", name, mode, "warm_ns_per_frame", median(ns[WARM], runs));
	emit("lookup", name, mode, "lookup_walk_ns_per_frame",
	     median(ns[LOOKUP], runs));
	emit("lookup", name, mode, "ns_per_lookup", median(lk, runs));
	emit("lookup", name, mode, "frames_per_walk", frames);
	emit("lookup", name, mode, "table_share",
	     c[FR] > 0 ? (c[SF] + c[EH]) / c[FR] : 0);
	emit("lookup", name, mode, "first_lookups_per_frame",
	     per_frame(c, LOOKUPS));
	emit("lookup", name, mode, "warm_lookups_per_frame",
	     per_frame(sum[WARM], LOOKUPS));
	emit("lookup", name, mode, "lookup_walk_lookups_per_frame",
	     per_frame(sum[LOOKUP], LOOKUPS));
	/* The library's depth + 1 frames, then this program's. */
	if (frames < depth + 1)
		fprintf(stderr, "deferred_bench: lookup: %s walks %.1f frames at depth %d\n",
			mode, frames, depth);
}

/*
 * By .eh_frame and by SFrame in turn, in a new process each time
 * (lookup_child()): the first walk of the library's chain, every rule
 * looked up in a table of 10,000 functions whose pages the new mm has not
 * mapped; warm walks of it; and walks whose every library frame is looked
 * up in the mapped table. Per frame, the median time of each over the
 * children; the cost of a lookup over a warm frame; the rules looked up
 * per frame; the frames of the first walk (the depth, lookup_chain() and
 * this program's own frames: a walk that fell back to frame pointers
 * ends at the library's first frame) and the share the tables gave.
 */
void bench_lookup(void)
{
	static const int depths[] = { 32, 128 };
	enum { NDEPTHS = sizeof(depths) / sizeof(depths[0]) };
	double ns[LOOKUP_MODES][NDEPTHS][NWALKS][LOOKUP_RUNS];
	double lk[LOOKUP_MODES][NDEPTHS][LOOKUP_RUNS];
	double sum[LOOKUP_MODES][NDEPTHS][NWALKS][NKEYS] = { };
	struct lookup_lib libs[LOOKUP_MODES];
	int runs = smoke ? 1 : LOOKUP_RUNS, mi, di, r, w, k;
	char dir[PATH_MAX], path[PATH_MAX + 32];
	void *lib[LOOKUP_MODES];
	struct lookup_run run;

	if (self_dir(dir, sizeof(dir)))
		die("/proc/self/exe");
	for (mi = 0; mi < LOOKUP_MODES; mi++) {
		snprintf(path, sizeof(path), "%s/%s", dir, lookup_modes[mi].lib);
		lib[mi] = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		libs[mi].chain = lib[mi] ? dlsym(lib[mi], "lookup_chain") : NULL;
		libs[mi].chain_at = lib[mi] ? dlsym(lib[mi], "lookup_chain_at") :
					      NULL;
		if (!libs[mi].chain || !libs[mi].chain_at) {
			/* harness/bench builds them */
			fprintf(stderr, "deferred_bench: lookup skipped: %s\n",
				lib[mi] ? "no lookup_chain_at()" : dlerror());
			while (mi >= 0) {
				if (lib[mi])
					dlclose(lib[mi]);
				mi--;
			}
			return;
		}
		read_through(path);
		/* The text paged in. */
		for (r = 0; r <= LOOKUP_CHAINS; r++)
			libs[mi].chain_at(r * depths[NDEPTHS - 1],
					  depths[NDEPTHS - 1]);
	}

	time_walks(1);
	for (r = 0; r < runs; r++) {
		for (mi = 0; mi < LOOKUP_MODES; mi++) {
			if (!methods_set(lookup_modes[mi].methods))
				die("writing " METHODS);
			for (di = 0; di < NDEPTHS; di++) {
				lookup_fork(&libs[mi], depths[di], &run);
				for (w = 0; w < NWALKS; w++) {
					ns[mi][di][w][r] = ns_per_frame(run.d[w]);
					for (k = 0; k < NKEYS; k++)
						sum[mi][di][w][k] += run.d[w][k];
				}
				lk[mi][di][r] = ns_per_lookup(&run);
			}
		}
	}
	time_walks(0);
	methods_set("fp sframe eh_frame");

	for (di = 0; di < NDEPTHS; di++)
		for (mi = 0; mi < LOOKUP_MODES; mi++)
			lookup_report(mi, depths[di], ns[mi][di], lk[mi][di],
				      sum[mi][di], runs);
	for (mi = 0; mi < LOOKUP_MODES; mi++)
		dlclose(lib[mi]);
}
