// SPDX-License-Identifier: GPL-2.0
/*
 * BPF's stack helpers walk a user stack as the deferred walk does, by
 * SFrame, .eh_frame and frame pointers, from any context: bpf_get_stack()
 * and bpf_get_stackid() with BPF_F_USER_STACK (their perf-event flavours
 * in a cpu-clock program, the others in tracepoint, kprobe and uprobe
 * programs), and bpf_get_stack() in a sleepable uprobe program.
 *
 * The programs (bpf_walk.bpf.c) watch a process that runs the call chain
 * of table_chain.h built without frame pointers (bpf_walk_task.c: by
 * SFrame, by .eh_frame, with a library built with frame pointers and no
 * table, as an i386 task) and says which frames it has. Each program's
 * stacks are checked against them:
 *
 * - where the process's mm remembers every mapping and rule of the chain
 *   (after its first walk made with faults: the warm-up), exactly the
 *   chain's frames, from a cpu-clock sample, a system call's tracepoint,
 *   a kprobe the test module fires from task, IRQ and NMI context, a
 *   uprobe, and through a signal handler; the same from the kprobe when
 *   the leaf keeps its CFA in a scratch register (scratch_leaf.h);
 * - before that (a new process, a library just dlopen'd) a right prefix
 *   that ends at the first frame whose mapping or rule is not at hand, a
 *   warm-up asked for once and run on the return to user space;
 * - a sleepable uprobe program: the whole chain at once;
 * - with /sys/kernel/unwind_user/bpf_tables at 0, frame pointers as
 *   before (this program's own chain keeps them), no table walk; the
 *   methods file applies;
 * - damaged .eh_frame tables end the walk at the damaged frame;
 * - in execve() before the new image's registers, and after exit_mm(),
 *   no user stack at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "chain.h"
#include "ctl.h"
#include "eh_frame_damage.h"
#include "bpf_walk.h"

#define BPF_TABLES_PATH	"/sys/kernel/unwind_user/bpf_tables"
#define INTERRUPT_BUDGET_PATH	"/sys/kernel/unwind_user/interrupt_budget"
#define MAX_RECORDS	512
#define MAX_WANT	(2 * BPF_WALK_FRAMES)

/* table_chain.h's chain with its libraries: A at levels 3 and 9, B at 5. */
#define LIB_DEPTH	11
/* Its frames from the leaf's system call to the one in library B. */
#define FRAMES_TO_LIB_B	(2 + (LIB_DEPTH - 1) - 6 + 1)

/* The helpers' counters in the unwinder's counters file. */
enum {
	WALKS,
	COMPLETE,
	UNMET,
	BAD,
	FAULTABLE,
	NO_USER,
	WARMUPS_QUEUED,
	WARMUPS,
	NR_COUNTS
};

static const char * const count_names[NR_COUNTS] = {
	[WALKS] = "bpf_walks",
	[COMPLETE] = "bpf_complete",
	[UNMET] = "bpf_unmet",
	[BAD] = "bpf_bad",
	[FAULTABLE] = "bpf_faultable",
	[NO_USER] = "bpf_no_user",
	[WARMUPS_QUEUED] = "bpf_warmups_queued",
	[WARMUPS] = "bpf_warmups",
};

struct counts {
	long long v[NR_COUNTS];
};

static void counts_read(struct counts *c)
{
	int i;

	for (i = 0; i < NR_COUNTS; i++)
		c->v[i] = counter(count_names[i]);
}

/* Frames, innermost first: what a task says its chain has. */
struct frames {
	int n;
	unsigned long ips[MAX_WANT];
};

/* A bpf_walk_task process, driven through its standard input and output. */
struct task {
	pid_t pid;
	FILE *in, *out;
	char path[PATH_MAX];
	unsigned long leaf, leaf_off;
	int getppid_nr;
	char reply[4096];
};

/* The loaded programs and what they handed over. */
struct bpf {
	struct bpf_object *obj;
	struct ring_buffer *rb;
	struct bpf_link *links[4];
	int nlinks;
	int target_fd, stacks_fd;
	int nrecs;
	struct bpf_walk_record recs[MAX_RECORDS];
};

/* @name next to this program, into @buf. */
static void beside_self(char *buf, size_t size, const char *name)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	snprintf(buf, size, "%s/%s", dirname(self), name);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct bpf *b = ctx;

	if (b->nrecs < MAX_RECORDS && size >= sizeof(b->recs[0]))
		memcpy(&b->recs[b->nrecs++], data, sizeof(b->recs[0]));
	return 0;
}

static struct bpf_program *bpf_prog(struct bpf *b, const char *name)
{
	return bpf_object__find_program_by_name(b->obj, name);
}

/*
 * The programs, loaded once before the tests fork (each test attaches
 * what it needs, and its links go with it), and why loading them failed.
 */
static struct bpf progs;
static const char *progs_err = "not loaded";

static void __attribute__((constructor)) progs_load(void)
{
	struct bpf *b = &progs;
	char path[PATH_MAX];

	beside_self(path, sizeof(path), "bpf_walk.bpf.o");
	b->obj = bpf_object__open_file(path, NULL);
	if (libbpf_get_error(b->obj)) {
		b->obj = NULL;
		progs_err = "cannot open bpf_walk.bpf.o";
		return;
	}
	/* bpf_get_current_task_btf() needs the kernel's BTF. */
	if (access("/sys/kernel/btf/vmlinux", F_OK))
		bpf_program__set_autoload(bpf_prog(b, "on_syscall_task"), false);
	if (bpf_object__load(b->obj)) {
		progs_err = "cannot load bpf_walk.bpf.o";
		return;
	}
	b->target_fd = bpf_object__find_map_fd_by_name(b->obj, "target");
	b->stacks_fd = bpf_object__find_map_fd_by_name(b->obj, "stacks");
	b->rb = ring_buffer__new(bpf_object__find_map_fd_by_name(b->obj, "records"),
				 on_record, b, NULL);
	if (b->target_fd < 0 || b->stacks_fd < 0 || !b->rb)
		progs_err = "bpf_walk.bpf.o has not got its maps";
	else
		progs_err = NULL;
}

/* A test's end: its links (the programs stay loaded for the next tests). */
static void bpf_detach(struct bpf *b)
{
	while (b->nlinks)
		bpf_link__destroy(b->links[--b->nlinks]);
}

/* Watch process @tgid, its system call @nr; 0 or -errno. */
static int bpf_watch(struct bpf *b, pid_t tgid, int nr)
{
	struct bpf_walk_target t = { .tgid = tgid, .nr = nr };
	__u32 key = 0;

	return bpf_map_update_elem(b->target_fd, &key, &t, BPF_ANY) ? -errno : 0;
}

/* Have bpf_get_stack() ask for @frames entries (0: all it has room for). */
static int bpf_ask(struct bpf *b, __u32 frames)
{
	struct bpf_walk_target t;
	__u32 key = 0;

	if (bpf_map_lookup_elem(b->target_fd, &key, &t))
		return -errno;
	t.frames = frames;
	return bpf_map_update_elem(b->target_fd, &key, &t, BPF_ANY) ? -errno : 0;
}

/* Keep @link for the teardown; false when attaching failed. */
static bool bpf_keep(struct bpf *b, struct bpf_link *link)
{
	if (libbpf_get_error(link) || b->nlinks == ARRAY_SIZE(b->links))
		return false;
	b->links[b->nlinks++] = link;
	return true;
}

/* Attach program @name where its section says (tracepoints, kprobes). */
static bool bpf_attach(struct bpf *b, const char *name)
{
	return bpf_keep(b, bpf_program__attach(bpf_prog(b, name)));
}

/* The records handed over since the last call, into b->recs. */
static int bpf_take(struct bpf *b)
{
	b->nrecs = 0;
	ring_buffer__consume(b->rb);
	return b->nrecs;
}

/*
 * Start @prog (next to this program): false, with the reason in *@why,
 * when this build has not got it; the test fails when it does not start.
 */
static bool task_start(struct __test_metadata *_metadata, struct task *t,
		       const char *prog, const char **why)
{
	int to[2], from[2];

	memset(t, 0, sizeof(*t));
	beside_self(t->path, sizeof(t->path), prog);
	if (access(t->path, X_OK)) {
		snprintf(t->reply, sizeof(t->reply),
			 "%s was not built (the build's log says why)", prog);
		*why = t->reply;
		return false;
	}
	ASSERT_EQ(0, pipe(to));
	ASSERT_EQ(0, pipe(from));
	fflush(stdout);
	t->pid = fork();
	if (!t->pid) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(t->path, t->path, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	t->in = fdopen(to[1], "w");
	t->out = fdopen(from[0], "r");
	ASSERT_LT(0, t->pid);
	ASSERT_TRUE(t->in && t->out);
	ASSERT_TRUE(fgets(t->reply, sizeof(t->reply), t->out) &&
		    sscanf(t->reply, "hello leaf=%lx leaf_off=%lx getppid=%d",
			   &t->leaf, &t->leaf_off, &t->getppid_nr) == 3) {
		TH_LOG("%s did not start", t->path);
	}
	return true;
}

/* Wait for the task to end: its exit status, or -1. */
static int task_wait(struct task *t)
{
	int status;

	if (t->pid <= 0 || waitpid(t->pid, &status, 0) != t->pid)
		return -1;
	t->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void task_stop(struct task *t)
{
	if (t->in)
		fclose(t->in);
	t->in = NULL;
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		task_wait(t);
	}
	if (t->out)
		fclose(t->out);
	t->out = NULL;
}

/* Send a command; its answer is in t->reply (empty when none came). */
static void task_vsend(struct task *t, const char *fmt, va_list ap)
{
	vfprintf(t->in, fmt, ap);
	fputc('\n', t->in);
	fflush(t->in);
	if (!fgets(t->reply, sizeof(t->reply), t->out))
		t->reply[0] = '\0';
	t->reply[strcspn(t->reply, "\n")] = '\0';
}

static __printf(2, 3) void task_send(struct task *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	task_vsend(t, fmt, ap);
	va_end(ap);
}

/* Parse an answer "frames N HEX...": false when it is something else. */
static bool parse_frames(const char *reply, struct frames *f)
{
	const char *p = reply;
	char *end;
	int off = 0, i;

	if (sscanf(p, "frames %d %n", &f->n, &off) != 1 || !off ||
	    f->n < 1 || f->n > MAX_WANT)
		return false;
	p += off;
	for (i = 0; i < f->n; i++) {
		f->ips[i] = strtoul(p, &end, 16);
		if (end == p)
			return false;
		p = end;
	}
	return true;
}

/*
 * Run a command whose answer is the chain's frames, into @f: false, and
 * the answer logged, when it answers anything else.
 */
static __printf(4, 5) bool task_run(struct __test_metadata *_metadata,
				    struct task *t, struct frames *f,
				    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	task_vsend(t, fmt, ap);
	va_end(ap);
	if (parse_frames(t->reply, f))
		return true;
	TH_LOG("the chain's process answered '%s'", t->reply);
	return false;
}

/* The frames of a record: its bpf_get_stack() or its stack map entry. */
struct stack {
	const char *how;
	int n;		/* -errno: the map has no stack by that id */
	const __u64 *ips;
	__u64 map[BPF_WALK_FRAMES];
};

static void log_stack(struct __test_metadata *_metadata,
		      const struct stack *s, const struct frames *want)
{
	int i;

	for (i = 0; i < s->n || i < want->n; i++) {
		if (i < s->n && i < want->n)
			TH_LOG("  frame %d: got %#llx, the chain has %#lx", i,
			       s->ips[i], want->ips[i]);
		else if (i < s->n)
			TH_LOG("  frame %d: got %#llx", i, s->ips[i]);
		else
			TH_LOG("  frame %d: missing, the chain has %#lx", i,
			       want->ips[i]);
	}
}

/* The stacks of record @r: bpf_get_stack()'s, and the map's by its id. */
static int record_stacks(struct bpf *b, const struct bpf_walk_record *r,
			 struct stack *s)
{
	int n = 0, i;

	s[n].how = "bpf_get_stack()";
	s[n].n = r->len > 0 ? r->len / 8 : 0;
	s[n++].ips = r->ips;
	if (r->id >= 0) {
		s[n].how = "bpf_get_stackid()";
		memset(s[n].map, 0, sizeof(s[n].map));
		s[n].n = 0;
		if (bpf_map_lookup_elem(b->stacks_fd, &r->id, s[n].map))
			s[n].n = -errno;
		for (i = 0; !s[n].n && i < BPF_WALK_FRAMES && s[n].map[i]; i++)
			;
		s[n].n = s[n].n ?: i;
		s[n].ips = s[n].map;
		n++;
	}
	return n;
}

/*
 * Every stack of record @r has @min frames or more (@max or fewer, unless
 * @max is 0), the first @right of them (as far as it and the chain go)
 * the chain's frames at their index.
 */
static void check_record(struct __test_metadata *_metadata, struct bpf *b,
			 const struct bpf_walk_record *r,
			 const struct frames *want, int min, int max, int right,
			 const char *what)
{
	struct stack s[2];
	int n = record_stacks(b, r, s), k, i;

	ASSERT_LT(0, r->len) {
		TH_LOG("%s: bpf_get_stack() returned %d", what, r->len);
	}
	if (r->id != -1) {
		ASSERT_EQ(2, n) {
			TH_LOG("%s: bpf_get_stackid() returned %d", what, r->id);
		}
	}
	for (k = 0; k < n; k++) {
		ASSERT_LE(0, s[k].n) {
			TH_LOG("%s: stack id %d: %s", what, r->id,
			       strerror(-s[k].n));
		}
		ASSERT_LE(min, s[k].n) {
			TH_LOG("%s: %s has %d frames, not %d or more", what,
			       s[k].how, s[k].n, min);
			log_stack(_metadata, &s[k], want);
		}
		if (max) {
			ASSERT_GE(max, s[k].n) {
				TH_LOG("%s: %s should end by frame %d", what,
				       s[k].how, max - 1);
				log_stack(_metadata, &s[k], want);
			}
		}
		for (i = 0; i < s[k].n && i < right && i < want->n; i++) {
			ASSERT_EQ(want->ips[i], s[k].ips[i]) {
				TH_LOG("%s: %s has a wrong frame %d", what,
				       s[k].how, i);
				log_stack(_metadata, &s[k], want);
			}
		}
	}
}

/* The whole chain, and as far beyond it as the walk goes. */
static void check_chain(struct __test_metadata *_metadata, struct bpf *b,
			const struct bpf_walk_record *r,
			const struct frames *want, const char *what)
{
	check_record(_metadata, b, r, want, want->n, 0, want->n, what);
}

/* A prefix of the chain, of @max frames at most (0: any), none wrong. */
static void check_prefix(struct __test_metadata *_metadata, struct bpf *b,
			 const struct bpf_walk_record *r,
			 const struct frames *want, int max, const char *what)
{
	check_record(_metadata, b, r, want, 1, max, INT_MAX, what);
}

/* The one record of program @prog since the last take, or NULL. */
static const struct bpf_walk_record *
take_one(struct __test_metadata *_metadata, struct bpf *b, unsigned int prog)
{
	int n = bpf_take(b), i, found = -1, count = 0;

	for (i = 0; i < n; i++) {
		if (b->recs[i].prog == prog) {
			found = i;
			count++;
		}
	}
	if (count != 1) {
		TH_LOG("program %u ran %d times for the chain's process, not once",
		       prog, count);
		return NULL;
	}
	return &b->recs[found];
}

#define NO_BPF_TABLES "the BPF stack helpers do not walk by tables (no " \
	BPF_TABLES_PATH ")"

/* What every fixture holds: the programs, the task, the switches to restore. */
struct env {
	struct bpf *b;
	struct task t;
	struct counts before;
	char tables[16];
	char methods[128];
	char interrupt_budget[16];
};

/*
 * Set up @e, with a task running @prog (none when NULL): false, with the
 * reason in *@why, when the test must be skipped.
 */
static bool env_setup(struct __test_metadata *_metadata, struct env *e,
		      const char *prog, const char **why)
{
	e->t.pid = 0;
	e->tables[0] = '\0';
	e->methods[0] = '\0';
	e->b = NULL;
	if (!knob_read(BPF_TABLES_PATH, e->tables, sizeof(e->tables)) ||
	    counter("bpf_walks") < 0) {
		e->tables[0] = '\0';
		*why = NO_BPF_TABLES;
		return false;
	}
	if (!knob_read(METHODS_PATH, e->methods, sizeof(e->methods)))
		e->methods[0] = '\0';
	if (!knob_read(INTERRUPT_BUDGET_PATH, e->interrupt_budget,
		       sizeof(e->interrupt_budget)))
		e->interrupt_budget[0] = '\0';
	ASSERT_EQ(NULL, progs_err) TH_LOG("%s", progs_err);
	e->b = &progs;
	/* What the last test's programs left. */
	bpf_take(e->b);
	if (prog && !task_start(_metadata, &e->t, prog, why))
		return false;
	if (prog)
		ASSERT_EQ(0, bpf_watch(e->b, e->t.pid, e->t.getppid_nr));
	return true;
}

/* Run the chain with its libraries, @trigger at its bottom. */
static bool run_chain(struct __test_metadata *_metadata, struct env *e,
		      struct frames *f, const char *trigger)
{
	return task_run(_metadata, &e->t, f, "run %d %s", LIB_DEPTH, trigger);
}

static void env_teardown(struct env *e)
{
	task_stop(&e->t);
	if (e->b)
		bpf_detach(e->b);
	if (e->tables[0])
		knob_write(BPF_TABLES_PATH, e->tables);
	if (e->methods[0])
		knob_write(METHODS_PATH, e->methods);
	if (e->interrupt_budget[0])
		knob_write(INTERRUPT_BUDGET_PATH, e->interrupt_budget);
}

/* How much counter @i grew since @e->before. */
static long long grew(const struct env *e, int i)
{
	return counter(count_names[i]) - e->before.v[i];
}

FIXTURE(walk) {
	struct env e;
};

FIXTURE_VARIANT(walk) {
	const char *task;	/* the program that runs the chain */
	const char *lib;	/* its library B */
};

/* The chain by the program's SFrame table, and its libraries'. */
FIXTURE_VARIANT_ADD(walk, sframe) { "bpf_walk_task_sframe", "libsframe_b.so" };
/* By .eh_frame: built as distributions build. */
FIXTURE_VARIANT_ADD(walk, eh_frame) { "bpf_walk_task", "libeh_b.so" };
/* By .eh_frame, and frame pointers in a library that has no table. */
FIXTURE_VARIANT_ADD(walk, fp_library) { "bpf_walk_task", "libfp_b.so" };
/* An ia32 task, by .eh_frame. */
FIXTURE_VARIANT_ADD(walk, ia32) { "bpf_walk_task_32", "libeh_b_32.so" };

/* A task running @task's chain through library @lib. */
static bool chain_setup(struct __test_metadata *_metadata, struct env *e,
			const char *task, const char *lib, const char **why)
{
	if (!env_setup(_metadata, e, task, why))
		return false;
	task_send(&e->t, "lib %s", lib);
	ASSERT_STREQ("ok", e->t.reply);
	counts_read(&e->before);
	return true;
}

FIXTURE_SETUP(walk)
{
	const char *why = NULL;

	if (!chain_setup(_metadata, &self->e, variant->task, variant->lib, &why))
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(walk)
{
	env_teardown(&self->e);
}

/*
 * In a process never walked with faults, the stack is the interrupted IP
 * alone: no mapping or rule is at hand. The walk asks for one warm-up
 * (however many helpers walked in that kernel entry), which runs before
 * the task returns to user space.
 */
TEST_F(walk, new_process_gets_its_ip_and_one_warmup)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_prefix(_metadata, e->b, r, &want, 1,
		     "a new process's first system call");
	EXPECT_LE(1, grew(e, UNMET)) TH_LOG("bpf_unmet did not grow");
	EXPECT_EQ(1, grew(e, WARMUPS_QUEUED)) {
		TH_LOG("%lld warm-ups asked for in one kernel entry, not one",
		       grew(e, WARMUPS_QUEUED));
	}
	/* The task has answered: it is back in user space. */
	EXPECT_EQ(1, grew(e, WARMUPS)) {
		TH_LOG("%lld warm-ups ran on the return to user space, not one",
		       grew(e, WARMUPS));
	}
	EXPECT_EQ(0, grew(e, COMPLETE)) TH_LOG("a cold walk was counted complete");
}

/* After the warm-up, a tracepoint gets exactly the chain, complete. */
TEST_F(walk, syscall_after_the_warmup_gets_the_chain)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	bpf_take(e->b);
	counts_read(&e->before);
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, &want, "the system call's tracepoint");
	EXPECT_EQ(2, grew(e, COMPLETE)) {
		TH_LOG("bpf_complete grew by %lld for two complete walks",
		       grew(e, COMPLETE));
	}
	EXPECT_EQ(0, grew(e, WARMUPS_QUEUED)) TH_LOG("a warm walk asked for a warm-up");
}

/*
 * A cpu-clock event on @pid, its samples given to program on_sample; the
 * link owns the event's file.
 */
static bool sample_task(struct __test_metadata *_metadata, struct bpf *b,
			pid_t pid)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000,	/* 1 ms */
		/* The _pe helpers then have the sample's own chain. */
		.sample_type = PERF_SAMPLE_CALLCHAIN,
	};
	int fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, 0);

	if (fd < 0) {
		TH_LOG("perf_event_open: %s", strerror(errno));
		return false;
	}
	if (!bpf_keep(b, bpf_program__attach_perf_event(bpf_prog(b, "on_sample"),
							fd))) {
		close(fd);
		return false;
	}
	return true;
}

/*
 * Check the samples of a read of the chain: those taken in the system call
 * (their first frame is the leaf's) hold the chain, exactly with @warm, a
 * right prefix without. The number of them; the other samples taken in
 * the kernel are logged when none was.
 */
static int check_samples(struct __test_metadata *_metadata, struct bpf *b,
			 const struct frames *want, bool warm)
{
	const struct bpf_walk_record *r, *other = NULL;
	int n = bpf_take(b), i, found = 0;

	for (i = 0; i < n; i++) {
		r = &b->recs[i];
		if (r->prog != BPF_WALK_PERF || r->arg)
			continue;
		if (r->len < 8 || r->ips[0] != want->ips[0]) {
			other = other ?: r;
			continue;
		}
		if (warm)
			check_chain(_metadata, b, r, want,
				    "a sample after the warm-up");
		else
			check_prefix(_metadata, b, r, want, 0,
				     "a sample of the first read");
		found++;
	}
	if (!found && other)
		TH_LOG("a sample in the kernel not at the leaf: %d bytes, %#llx first",
		       other->len, other->ips[0]);
	return found;
}

/*
 * cpu-clock samples in a system call of the chain: bpf_get_stack_pe()
 * and bpf_get_stackid_pe() (the event's samples have their own chain)
 * walk the chain by its tables, a right prefix in the first read and
 * the whole chain once the first read's warm-up ran.
 */
TEST_F(walk, perf_event_samples_get_the_chain)
{
	struct env *e = &self->e;
	struct frames want;
	int i, found = 0;

	ASSERT_TRUE(sample_task(_metadata, e->b, e->t.pid));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "read"));
	check_samples(_metadata, e->b, &want, false);
	for (i = 0; i < 5 && !found; i++) {
		ASSERT_TRUE(run_chain(_metadata, e, &want, "read"));
		found = check_samples(_metadata, e->b, &want, true);
	}
	EXPECT_LT(0, found) TH_LOG("no sample at the leaf in 5 reads of 16 MiB");
	EXPECT_LE(1, grew(e, COMPLETE));
}

/*
 * A kprobe program on the test module's hook, which the module calls from
 * the writer's system call in task context, from a hard IRQ (irq_work)
 * and from a real NMI: each gets the chain.
 */
TEST_F(walk, kprobe_in_task_irq_and_nmi_gets_the_chain)
{
	static const char * const ctxs[] = { "task", "irq", "nmi" };
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;
	unsigned int i;

	if (access(CTL_PATH, F_OK))
		SKIP(return, NO_MODULE);
	ASSERT_TRUE(bpf_attach(e->b, "on_hook")) {
		TH_LOG("cannot attach to unwind_test_bpf_hook");
	}
	/* The warm-up. */
	ASSERT_TRUE(run_chain(_metadata, e, &want, "ctl bpf task"));
	bpf_take(e->b);
	for (i = 0; i < ARRAY_SIZE(ctxs); i++) {
		task_send(&e->t, "run %d ctl bpf %s", LIB_DEPTH, ctxs[i]);
		if (i == BPF_WALK_CTX_NMI && strstr(e->t.reply, "not supported")) {
			TH_LOG("no self-NMI here: the NMI case was not run");
			break;
		}
		ASSERT_TRUE(parse_frames(e->t.reply, &want)) {
			TH_LOG("'bpf %s': %s", ctxs[i], e->t.reply);
		}
		r = take_one(_metadata, e->b, BPF_WALK_KPROBE);
		ASSERT_NE(NULL, r) TH_LOG("from %s context", ctxs[i]);
		ASSERT_EQ(i, r->arg) {
			TH_LOG("the hook asked from %s ran in context %u",
			       ctxs[i], r->arg);
		}
		check_chain(_metadata, e->b, r, &want, ctxs[i]);
	}
}

/*
 * The chain's leaf keeps its CFA in a scratch register (scratch_leaf.h):
 * the helpers walk the interrupted frame's saved registers, and read it
 * there, from task, IRQ and NMI context.
 */
TEST_F(walk, kprobe_follows_a_cfa_in_a_scratch_register)
{
	static const char * const leaves[] = { "scratch", "indexed" };
	static const char * const ctxs[] = { "task", "irq", "nmi" };
	long long stops = counter("stop_scratch_register");
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;
	unsigned int i, l;

	if (access(CTL_PATH, F_OK))
		SKIP(return, NO_MODULE);
	if (strstr(variant->task, "sframe"))
		SKIP(return, "SFrame has no rule for a CFA in a scratch register");
	ASSERT_TRUE(bpf_attach(e->b, "on_hook"));
	for (l = 0; l < ARRAY_SIZE(leaves); l++) {
		task_send(&e->t, "leaf %s", leaves[l]);
		ASSERT_STREQ("ok", e->t.reply);
		/* The warm-up: the leaf's file is looked up with faults. */
		ASSERT_TRUE(run_chain(_metadata, e, &want, "ctl bpf task"));
		bpf_take(e->b);
		for (i = 0; i < ARRAY_SIZE(ctxs); i++) {
			task_send(&e->t, "run %d ctl bpf %s", LIB_DEPTH, ctxs[i]);
			if (i == BPF_WALK_CTX_NMI &&
			    strstr(e->t.reply, "not supported"))
				break;
			ASSERT_TRUE(parse_frames(e->t.reply, &want)) {
				TH_LOG("'bpf %s': %s", ctxs[i], e->t.reply);
			}
			r = take_one(_metadata, e->b, BPF_WALK_KPROBE);
			ASSERT_NE(NULL, r) TH_LOG("%s leaf, from %s", leaves[l],
						  ctxs[i]);
			check_chain(_metadata, e->b, r, &want, ctxs[i]);
		}
	}
	EXPECT_EQ(stops, counter("stop_scratch_register"));
}

/* Attach @name, a uprobe program, to the chain's leaf in its process. */
static bool attach_leaf(struct bpf *b, const struct task *t, const char *name)
{
	return bpf_keep(b, bpf_program__attach_uprobe(bpf_prog(b, name), false,
						      t->pid, t->path,
						      t->leaf_off));
}

/*
 * A uprobe program on the chain's leaf: the probed address, then the
 * chain's return addresses; the address alone in a new process, whose
 * warm-up makes the next call's stack whole.
 */
TEST_F(walk, uprobe_gets_the_ip_then_the_chain)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_TRUE(attach_leaf(e->b, &e->t, "on_uprobe"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	want.ips[0] = e->t.leaf;
	r = take_one(_metadata, e->b, BPF_WALK_UPROBE);
	ASSERT_NE(NULL, r);
	check_prefix(_metadata, e->b, r, &want, 1,
		     "the first uprobe hit of a new process");
	EXPECT_EQ(1, grew(e, WARMUPS)) TH_LOG("the uprobe's walk got no warm-up");

	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	want.ips[0] = e->t.leaf;
	r = take_one(_metadata, e->b, BPF_WALK_UPROBE);
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, &want, "the uprobe after the warm-up");
}

/*
 * A sleepable uprobe program may fault: its bpf_get_stack() gets the
 * whole chain in a new process at once, with no warm-up.
 */
TEST_F(walk, sleepable_uprobe_gets_the_chain_at_once)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_TRUE(attach_leaf(e->b, &e->t, "on_uprobe_sleepable"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	want.ips[0] = e->t.leaf;
	r = take_one(_metadata, e->b, BPF_WALK_UPROBE_S);
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, &want, "a sleepable uprobe in a new process");
	EXPECT_EQ(1, grew(e, FAULTABLE)) TH_LOG("bpf_faultable did not count the walk");
	EXPECT_EQ(0, grew(e, WARMUPS_QUEUED)) TH_LOG("a faultable walk asked for a warm-up");
}

/*
 * A library dlopen'd after the warm-up: its mapping is not at hand, the
 * walk ends at its frame (included) and asks for a warm-up; then the
 * chain is whole.
 */
TEST_F(walk, dlopened_library_ends_the_walk_until_its_warmup)
{
	struct env *e = &self->e;
	const char *why = NULL;
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	/* A new process: the library is not in the chain yet. */
	task_stop(&e->t);
	ASSERT_TRUE(task_start(_metadata, &e->t, variant->task, &why));
	ASSERT_EQ(0, bpf_watch(e->b, e->t.pid, e->t.getppid_nr));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	bpf_take(e->b);

	task_send(&e->t, "lib %s", variant->lib);
	ASSERT_STREQ("ok", e->t.reply);
	counts_read(&e->before);
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_prefix(_metadata, e->b, r, &want, FRAMES_TO_LIB_B,
		     "the first walk after the dlopen()");
	EXPECT_LE(1, grew(e, UNMET)) TH_LOG("bpf_unmet did not grow");
	EXPECT_EQ(1, grew(e, WARMUPS)) TH_LOG("no warm-up ran");

	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, &want, "the walk through the library after its warm-up");
}

/*
 * A signal handler's chain, the handler, the signal frame and the chain
 * the signal interrupted, through both libraries.
 */
TEST_F(walk, signal_handler_stack_reaches_the_interrupted_chain)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	ASSERT_TRUE(task_run(_metadata, &e->t, &want, "signal %d %d",
			     LIB_DEPTH, 5));
	bpf_take(e->b);
	ASSERT_TRUE(task_run(_metadata, &e->t, &want, "signal %d %d",
			     LIB_DEPTH, 5));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, &want, "the signal handler's system call");
}

/*
 * What the chain's kind does not change, on the .eh_frame chain: the
 * switches, and bpf_get_task_stack().
 */
FIXTURE(eh_chain) {
	struct env e;
};

FIXTURE_SETUP(eh_chain)
{
	const char *why = NULL;

	if (!chain_setup(_metadata, &self->e, "bpf_walk_task", "libeh_b.so",
			 &why))
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(eh_chain)
{
	env_teardown(&self->e);
}

/*
 * bpf_get_task_stack() of the current task is walked as bpf_get_stack()
 * is: after the warm-up, the whole chain.
 */
TEST_F(eh_chain, task_stack_of_current_gets_the_chain)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	if (bpf_program__fd(bpf_prog(e->b, "on_syscall_task")) < 0)
		SKIP(return, "no kernel BTF: bpf_get_current_task_btf() cannot be used");
	ASSERT_TRUE(bpf_attach(e->b, "on_syscall_task"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_TASK_STACK);
	ASSERT_NE(NULL, r);
	check_prefix(_metadata, e->b, r, &want, 1,
		     "bpf_get_task_stack() in a new process");
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_TASK_STACK);
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, &want,
		    "bpf_get_task_stack() after the warm-up");
}

/* Warm the task up, then check that its chain is whole. */
static void warm_up(struct __test_metadata *_metadata, struct env *e,
		    struct frames *want)
{
	const struct bpf_walk_record *r;

	ASSERT_TRUE(run_chain(_metadata, e, want, "getppid"));
	bpf_take(e->b);
	ASSERT_TRUE(run_chain(_metadata, e, want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, want, "after the warm-up");
}

/*
 * bpf_tables at 0: the helpers walk frame pointers, as before, which the
 * leaf's poisoned frame pointer stops after the first frame; no table
 * walk is made. At 1 again, the chain is whole.
 */
TEST_F(eh_chain, switched_off_walks_frame_pointers)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	warm_up(_metadata, e, &want);
	ASSERT_EQ(0, knob_write(BPF_TABLES_PATH, "0"));
	counts_read(&e->before);
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_prefix(_metadata, e->b, r, &want, 0, "a frame-pointer walk");
	EXPECT_GT(want.n, r->len / 8) {
		TH_LOG("%d frames with bpf_tables at 0: frame pointers cannot find them",
		       r->len / 8);
	}
	EXPECT_EQ(0, grew(e, WALKS)) TH_LOG("a table walk was made with bpf_tables at 0");

	ASSERT_EQ(0, knob_write(BPF_TABLES_PATH, "1"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, &want, "bpf_tables at 1 again");
	EXPECT_LE(1, grew(e, WALKS)) TH_LOG("bpf_walks did not count the table walks");
}

/*
 * The methods file applies to the helpers' walks: with frame pointers
 * alone, the chain ends after its first frame; with the methods back,
 * it is whole.
 */
TEST_F(eh_chain, methods_apply_to_the_walk)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	warm_up(_metadata, e, &want);
	ASSERT_EQ(0, knob_write(METHODS_PATH, "fp"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_prefix(_metadata, e->b, r, &want, 0, "methods: fp");
	EXPECT_GT(want.n, r->len / 8) {
		TH_LOG("%d frames with the methods at fp: tables were used",
		       r->len / 8);
	}
	ASSERT_EQ(0, knob_write(METHODS_PATH, e->methods));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, &want, "the methods back");
}

/*
 * A process warmed up with .eh_frame alone, then walked with every method:
 * the rules are remembered per set of methods, so the walk must look its
 * rules up again, with interrupt_budget's work (a BPF program's walk may
 * not fault). Returns the walk's record, or NULL.
 */
static const struct bpf_walk_record *
walk_with_new_methods(struct __test_metadata *_metadata, struct env *e,
		      struct frames *want, const char *budget)
{
	if (!e->interrupt_budget[0] || !e->methods[0])
		return NULL;
	ASSERT_EQ(0, knob_write(METHODS_PATH, "fp eh_frame")) {
		TH_LOG("the methods file refused \"fp eh_frame\"");
	}
	warm_up(_metadata, e, want);
	ASSERT_EQ(0, knob_write(INTERRUPT_BUDGET_PATH, budget));
	ASSERT_EQ(0, knob_write(METHODS_PATH, e->methods));
	counts_read(&e->before);
	ASSERT_TRUE(run_chain(_metadata, e, want, "getppid"));
	return take_one(_metadata, e->b, BPF_WALK_SYSCALL);
}

/*
 * interrupt_budget 0: the walk looks no rule up; it ends after its first
 * frame, counted under stop_budget_nofault, and asks for a warm-up, which
 * remembers the rules, so the next walk is whole.
 */
TEST_F(eh_chain, interrupt_budget_0_leaves_the_lookups_to_the_warmup)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	long long stops = counter("stop_budget_nofault");
	struct frames want;

	if (!e->interrupt_budget[0])
		SKIP(return, "no " INTERRUPT_BUDGET_PATH);
	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	r = walk_with_new_methods(_metadata, e, &want, "0");
	ASSERT_NE(NULL, r);
	/* Its first frame alone: a second needs a rule looked up. */
	check_prefix(_metadata, e->b, r, &want, 1, "interrupt_budget 0");
	EXPECT_LT(stops, counter("stop_budget_nofault")) {
		TH_LOG("stop_budget_nofault did not count the walk's stop");
	}
	EXPECT_EQ(1, grew(e, WARMUPS_QUEUED)) TH_LOG("no warm-up was asked for");
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, &want, "the walk after the warm-up");
}

/*
 * interrupt_budget large enough for every lookup of the chain: the same
 * walk is whole at once and asks for no warm-up.
 */
TEST_F(eh_chain, large_interrupt_budget_walks_the_chain_at_once)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	if (!e->interrupt_budget[0])
		SKIP(return, "no " INTERRUPT_BUDGET_PATH);
	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	r = walk_with_new_methods(_metadata, e, &want, "65536");
	ASSERT_NE(NULL, r);
	check_chain(_metadata, e->b, r, &want, "interrupt_budget 65536");
	EXPECT_EQ(0, grew(e, WARMUPS_QUEUED)) {
		TH_LOG("a walk with budget for every lookup asked for a warm-up");
	}
	/* The program walks twice: bpf_get_stack() and bpf_get_stackid(). */
	EXPECT_EQ(2, grew(e, COMPLETE)) {
		TH_LOG("bpf_complete grew by %lld for two complete walks",
		       grew(e, COMPLETE));
	}
}

/*
 * The knob takes a number, 0 included, and refuses anything else: -EINVAL,
 * or -ERANGE for a number past 32 bits.
 */
TEST_F(eh_chain, interrupt_budget_refuses_what_is_not_a_number)
{
	static const struct {
		const char *val;
		int err;
	} bad[] = {
		{ "abc", -EINVAL }, { "-1", -EINVAL }, { "12x", -EINVAL },
		{ "4294967296", -ERANGE },
	};
	struct env *e = &self->e;
	char back[16];
	unsigned int i;

	if (!e->interrupt_budget[0])
		SKIP(return, "no " INTERRUPT_BUDGET_PATH);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(bad[i].err, knob_write(INTERRUPT_BUDGET_PATH, bad[i].val)) {
			TH_LOG("interrupt_budget \"%s\": not refused with %d",
			       bad[i].val, bad[i].err);
		}
	}
	ASSERT_EQ(0, knob_write(INTERRUPT_BUDGET_PATH, "0"));
	ASSERT_TRUE(knob_read(INTERRUPT_BUDGET_PATH, back, sizeof(back)));
	EXPECT_STREQ("0\n", back);
	ASSERT_EQ(0, knob_write(INTERRUPT_BUDGET_PATH, "4096\n"));
	ASSERT_TRUE(knob_read(INTERRUPT_BUDGET_PATH, back, sizeof(back)));
	EXPECT_STREQ("4096\n", back);
}

/*
 * Damaged copies of library B (eh_frame_damage.h) in an .eh_frame chain:
 * after the warm-up, whose walk meets the damage and counts it, the
 * helpers' walk ends at the damaged frame: counted as bad where the data
 * breaks a rule, and where it holds a row the reader does not follow (an
 * unknown opcode, an expression, a register rule) as the deferred walk
 * counts it, ended as at an outermost frame, with the table's own counter
 * saying why; where the table no longer claims the frame but claims code
 * after it, it ends there too (code without CFI); where it claims nothing
 * after it, frame pointers take it.
 */
FIXTURE(hostile) {
	struct env e;
	int fd;		/* the damaged copy, a memfd the task inherits */
};

FIXTURE_VARIANT(hostile) {
	void (*damage)(struct eh_lib *l);
	const char *counter;	/* must grow */
	bool ends;		/* the walk ends at the damaged frame */
	bool bad;		/* ... counted as bpf_bad, not bpf_complete */
};

FIXTURE_VARIANT_ADD(hostile, fde_past_the_segment) {
	damage_fde_length, "eh_frame_bad_data", true, true };
FIXTURE_VARIANT_ADD(hostile, cie_pointer_out_of_range) {
	damage_cie_pointer, "eh_frame_bad_data", true, true };
FIXTURE_VARIANT_ADD(hostile, unknown_opcode) {
	damage_unknown_opcode, "eh_frame_unsupported_opcodes", true, false };
FIXTURE_VARIANT_ADD(hostile, expression_not_evaluated) {
	damage_expression, "eh_frame_unsupported_expressions", true, false };
FIXTURE_VARIANT_ADD(hostile, return_address_in_a_register) {
	damage_register, "eh_frame_unsupported_registers", true, false };
FIXTURE_VARIANT_ADD(hostile, restore_without_remember) {
	damage_restore_state, "eh_frame_bad_data", true, true };
/* Unclaimed amid claimed functions: the walk ends there, not guesses. */
FIXTURE_VARIANT_ADD(hostile, fde_not_covering_the_ip) {
	damage_range, "stop_no_row", true, false };
/* Past the last claimed function: frame pointers take that frame. */
FIXTURE_VARIANT_ADD(hostile, fde_not_covering_the_ip_past_the_last) {
	damage_range_last, "eh_frame_misses", false, false };
FIXTURE_VARIANT_ADD(hostile, header_version_2) {
	damage_hdr_version, "eh_frame_bad_headers", false, false };

FIXTURE_SETUP(hostile)
{
	const char *why = NULL;
	struct eh_lib l = { };
	char path[PATH_MAX];

	beside_self(path, sizeof(path), "libeh_b.so");
	self->fd = memfd_create("bpf_walk_damaged_lib", 0);
	ASSERT_LE(0, self->fd);
	ASSERT_TRUE(eh_load(&l, path)) {
		TH_LOG("%s: no FDE for sframe_lib_b_step in the search table", path);
	}
	variant->damage(&l);
	ASSERT_EQ((ssize_t)l.len, write(self->fd, l.data, l.len));
	free(l.data);
	if (!env_setup(_metadata, &self->e, "bpf_walk_task", &why))
		SKIP(return, "%s", why);
	task_send(&self->e.t, "lib /proc/self/fd/%d", self->fd);
	ASSERT_STREQ("ok", self->e.t.reply);
}

FIXTURE_TEARDOWN(hostile)
{
	env_teardown(&self->e);
	close(self->fd);
}

TEST_F(hostile, walk_ends_at_the_damaged_frame)
{
	struct env *e = &self->e;
	long long damage = counter(variant->counter);
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	bpf_take(e->b);
	EXPECT_LT(damage, counter(variant->counter)) {
		TH_LOG("the warm-up's walk did not count %s", variant->counter);
	}
	counts_read(&e->before);
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	check_record(_metadata, e->b, r, &want, FRAMES_TO_LIB_B,
		     variant->ends ? FRAMES_TO_LIB_B : 0, FRAMES_TO_LIB_B,
		     "the walk through the damaged library");
	if (variant->ends) {
		EXPECT_EQ(2, grew(e, variant->bad ? BAD : COMPLETE)) {
			TH_LOG("two walks ended at the damage, want %s +2: %s +%lld, %s +%lld",
			       variant->bad ? "bpf_bad" : "bpf_complete",
			       "bpf_bad", grew(e, BAD), "bpf_complete",
			       grew(e, COMPLETE));
		}
		EXPECT_EQ(0, grew(e, WARMUPS_QUEUED)) {
			TH_LOG("the damaged frame asked for another warm-up");
		}
	}
}

/*
 * A program that asks for no more entries than the frames up to the
 * damaged one gets those, and its walk is complete: as the classic walk,
 * it looks nothing up past its last entry. bpf_get_stackid() asks for all
 * its map's stacks hold, and still ends at the damage.
 */
TEST_F(hostile, walk_that_stops_short_of_the_damage_is_complete)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;
	int i;

	if (!variant->bad)
		SKIP(return, "the walk does not count this damage as bad data");
	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	bpf_take(e->b);
	ASSERT_EQ(0, bpf_ask(e->b, FRAMES_TO_LIB_B));
	counts_read(&e->before);
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(FRAMES_TO_LIB_B * 8, r->len) {
		TH_LOG("asked for %d entries, bpf_get_stack() returned %d bytes",
		       FRAMES_TO_LIB_B, r->len);
	}
	for (i = 0; i < FRAMES_TO_LIB_B && i < want.n; i++) {
		ASSERT_EQ(want.ips[i], r->ips[i]) {
			TH_LOG("frame %d is %#llx, not %#lx", i, r->ips[i],
			       want.ips[i]);
		}
	}
	EXPECT_EQ(1, grew(e, COMPLETE)) {
		TH_LOG("the short walk was not counted complete: bpf_complete +%lld, bpf_bad +%lld",
		       grew(e, COMPLETE), grew(e, BAD));
	}
	EXPECT_EQ(1, grew(e, BAD)) {
		TH_LOG("want bpf_bad +1 (bpf_get_stackid()'s walk), got +%lld",
		       grew(e, BAD));
	}
}

/*
 * The task's own end: in execve(), between the switch to the new mm and
 * the new image's registers (setup_new_exec()), the registers are the old
 * image's and the mm the new one's: no frame at all; after exit_mm(), no
 * user stack either.
 */
FIXTURE(exec_exit) {
	struct env e;
};

FIXTURE_SETUP(exec_exit)
{
	const char *why = NULL;

	if (!env_setup(_metadata, &self->e, "bpf_walk_task", &why))
		SKIP(return, "%s", why);
	counts_read(&self->e.before);
}

FIXTURE_TEARDOWN(exec_exit)
{
	env_teardown(&self->e);
}

/* Every stack of record @r is empty. */
static void check_empty(struct __test_metadata *_metadata, struct bpf *b,
			const struct bpf_walk_record *r, const char *what)
{
	struct stack s[2];
	int n = record_stacks(b, r, s), k;

	for (k = 0; k < n; k++) {
		EXPECT_GE(0, s[k].n) {
			TH_LOG("%s: %s has %d frames, first %#llx", what,
			       s[k].how, s[k].n, s[k].ips[0]);
		}
	}
}

TEST_F(exec_exit, execve_before_the_new_registers_has_no_stack)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;

	ASSERT_TRUE(bpf_attach(e->b, "on_exec"));
	task_send(&e->t, "exec %d", LIB_DEPTH);
	ASSERT_STREQ("", e->t.reply) TH_LOG("execve() failed");
	ASSERT_EQ(0, task_wait(&e->t));
	r = take_one(_metadata, e->b, BPF_WALK_EXEC);
	ASSERT_NE(NULL, r);
	check_empty(_metadata, e->b, r, "setup_new_exec()");
	EXPECT_LE(1, grew(e, NO_USER)) TH_LOG("bpf_no_user did not grow");
}

TEST_F(exec_exit, after_exit_mm_there_is_no_stack)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_TRUE(bpf_attach(e->b, "on_exit"));
	/* A task walked before: it has a cache to get wrong. */
	ASSERT_TRUE(bpf_attach(e->b, "on_syscall"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	ASSERT_TRUE(run_chain(_metadata, e, &want, "getppid"));
	fclose(e->t.in);
	e->t.in = NULL;
	ASSERT_EQ(0, task_wait(&e->t));
	r = take_one(_metadata, e->b, BPF_WALK_EXIT);
	ASSERT_NE(NULL, r);
	check_empty(_metadata, e->b, r, "sched_process_exit");
	EXPECT_LE(1, grew(e, NO_USER)) TH_LOG("bpf_no_user did not grow");
}

/*
 * This program keeps its frame pointers (chain.h's chain): with
 * bpf_tables at 0 its stack is walked by them, whole, as stock 6.12
 * walks it, and no table walk is made.
 */
FIXTURE(own_chain) {
	struct env e;
	struct chain c;
};

FIXTURE_SETUP(own_chain)
{
	const char *why = NULL;

	if (!env_setup(_metadata, &self->e, NULL, &why))
		SKIP(return, "%s", why);
	ASSERT_EQ(0, bpf_watch(self->e.b, getpid(), __NR_getppid));
	ASSERT_TRUE(bpf_attach(self->e.b, "on_syscall"));
}

FIXTURE_TEARDOWN(own_chain)
{
	env_teardown(&self->e);
}

TEST_F(own_chain, switched_off_is_the_frame_pointer_walk)
{
	struct env *e = &self->e;
	const struct bpf_walk_record *r;
	struct frames want;

	ASSERT_EQ(0, knob_write(BPF_TABLES_PATH, "0"));
	counts_read(&e->before);
	chain_syscall(&self->c, 8, __NR_getppid, 0, 0, 0);
	r = take_one(_metadata, e->b, BPF_WALK_SYSCALL);
	ASSERT_NE(NULL, r);
	want.n = chain_frames(&self->c, want.ips);
	check_chain(_metadata, e->b, r, &want, "a frame-pointer chain with bpf_tables at 0");
	EXPECT_EQ(0, grew(e, WALKS)) TH_LOG("a table walk was made with bpf_tables at 0");
}

TEST_HARNESS_MAIN
