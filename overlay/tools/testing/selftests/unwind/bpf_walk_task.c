// SPDX-License-Identifier: GPL-2.0
/*
 * The process bpf_walk watches: built without frame pointers, by SFrame
 * (bpf_walk_task_sframe), by .eh_frame (bpf_walk_task) or as an i386
 * program (bpf_walk_task_32), it runs the call chain of table_chain.h
 * when bpf_walk says so and tells it the frames that chain has, for the
 * BPF programs' stacks to be checked against.
 *
 * It starts by writing one line:
 *   hello leaf=HEX leaf_off=HEX getppid=NR
 * the address of the chain's leaf, its offset in the program's file (for
 * a uprobe) and the number of getppid() in its system call table. Then
 * it reads commands from its standard input, one a line, and answers
 * each with one line, "frames N HEX..." (innermost first) or "ok", or
 * "error WHAT":
 *   lib NAME               dlopen NAME (a library next to the program, or
 *                          a path) as the chain's library B (level 5);
 *                          library A (DT_NEEDED) is at levels 3 and 9
 *   run DEPTH getppid      a chain of DEPTH whose leaf calls getppid()
 *   run DEPTH read         ... reads 16 MiB of /dev/zero (a system call
 *                          long enough to be sampled)
 *   run DEPTH ctl CMD...   ... writes CMD to the test module's control
 *                          file
 *   signal OUTER INNER     a chain of OUTER whose leaf sends itself
 *                          SIGUSR1, whose handler runs a chain of INNER
 *                          calling getppid(): the frames of the handler's
 *                          chain, the handler and the interrupted chain
 *   exec DEPTH             execve() this program from the bottom of a
 *                          chain (no answer: the new image exits at once)
 *   leaf KIND              the chains' leaves from now on: "c" (the
 *                          chain's own), "scratch" or "indexed" (the
 *                          assembly leaves of scratch_leaf.h, their CFA
 *                          in a scratch register)
 * End of input ends it.
 */
#define _GNU_SOURCE
#include <signal.h>

#include "table_chain.h"
#include "chain_signal.h"
#include "perf_helpers.h"
#include "scratch_leaf.h"

#define READ_SIZE	(16 << 20)

static struct chain chain, inner;
static int ctl_fd = -1;
/* getppid() before any chain: only the chains' leaves call it later. */
static long ppid;
static char *read_buf;

/* Answer with the frames of @c, after the @n in @head. */
static void answer_frames(const unsigned long *head, int n,
			  const struct chain *c)
{
	unsigned long want[2 * MAX_DEPTH + 8];
	int i;

	for (i = 0; i < n; i++)
		want[i] = head[i];
	n += chain_frames(c, want + n);
	printf("frames %d", n);
	for (i = 0; i < n; i++)
		printf(" %lx", want[i]);
	printf("\n");
}

static void answer_chain(const struct chain *c)
{
	answer_frames(NULL, 0, c);
}

/* run DEPTH TRIGGER [ARGS]: @args is what follows the trigger's name. */
static void run(int depth, const char *trigger, char *args)
{
	long ret, want;
	int fd;

	if (depth < 1 || depth > MAX_DEPTH) {
		printf("error depth %d\n", depth);
		return;
	}
	if (!strcmp(trigger, "getppid")) {
		chain_syscall(&chain, depth, __NR_getppid, 0, 0, 0);
		ret = chain.ret;
		want = ppid;
	} else if (!strcmp(trigger, "read")) {
		/* Mapped before the chain runs: the walks see no new mapping. */
		if (!read_buf)
			read_buf = malloc(READ_SIZE);
		fd = open("/dev/zero", O_RDONLY);
		chain_syscall(&chain, depth, __NR_read, fd, (long)read_buf,
			      READ_SIZE);
		close(fd);
		ret = chain.ret;
		want = READ_SIZE;
	} else if (!strcmp(trigger, "ctl") && args) {
		if (ctl_fd < 0)
			ctl_fd = open(CTL_PATH, O_RDWR);
		chain_syscall(&chain, depth, __NR_write, ctl_fd, (long)args,
			      strlen(args));
		ret = chain.ret;
		want = strlen(args);
	} else {
		printf("error trigger %s\n", trigger);
		return;
	}
	if (ret != want)
		printf("error %s: %ld (%s)\n", trigger, ret,
		       ret < 0 ? strerror(-ret) : "short");
	else
		answer_chain(&chain);
}

static void signal_chain(int outer, int depth)
{
	unsigned long head[MAX_DEPTH + 3];
	int n;

	if (outer < 1 || depth < 1 || outer > MAX_DEPTH || depth > MAX_DEPTH) {
		printf("error depths %d %d\n", outer, depth);
		return;
	}
	chain_prepare(&inner, depth, __NR_getppid, 0, 0, 0);
	sig_chain = &inner;
	/* The signal is taken on the return from tgkill(), at the leaf. */
	chain_syscall(&chain, outer, __NR_tgkill, getpid(), gettid(), SIGUSR1);
	if (chain.ret || inner.ret != ppid) {
		printf("error signal: tgkill %ld, getppid %ld\n", chain.ret,
		       inner.ret);
		return;
	}
	/* The handler's chain, the handler, then the interrupted chain. */
	n = chain_frames(&inner, head);
	head[n++] = sig_handler_ra;
	answer_frames(head, n, &chain);
}

/* leaf KIND: the leaf the chains end in from now on. */
static void set_leaf(const char *kind)
{
	if (!strcmp(kind, "c")) {
		chain.leaf_asm = NULL;
	} else if (!strcmp(kind, "scratch")) {
		chain.leaf_asm = scratch_cfa_leaf;
		chain.leaf_asm_ret = (unsigned long)scratch_cfa_ret;
	} else if (!strcmp(kind, "indexed")) {
		chain.leaf_asm = scratch_idx_leaf;
		chain.leaf_asm_ret = (unsigned long)scratch_idx_ret;
	} else {
		printf("error leaf %s\n", kind);
		return;
	}
	printf("ok\n");
}

static void exec_self(int depth)
{
	static char *const argv[] = { "bpf_walk_task", "--exit", NULL };
	static char *const envp[] = { NULL };
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	fflush(stdout);
	chain_syscall(&chain, depth, __NR_execve, (long)self, (long)argv,
		      (long)envp);
	printf("error execve: %s\n", strerror(-chain.ret));
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = chain_on_signal };
	char line[512], path[4200], word[16], *args;
	int a, b, n;
	void *h;

	if (argc > 1 && !strcmp(argv[1], "--exit"))
		return 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	chain.lib_a = sframe_lib_a_step;
	ppid = getppid();
	printf("hello leaf=%lx leaf_off=%lx getppid=%d\n",
	       (unsigned long)leaf, file_offset((unsigned long)leaf),
	       __NR_getppid);

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		n = 0;
		if (!strncmp(line, "lib ", 4)) {
			if (strchr(line + 4, '/'))
				snprintf(path, sizeof(path), "%s", line + 4);
			else
				lib_path(path, sizeof(path), line + 4);
			h = open_step(path, &chain.lib_b);
			if (h && chain.lib_b)
				printf("ok\n");
			else
				printf("error dlopen %s: %s\n", path, dlerror());
		} else if (sscanf(line, "run %d %15s %n", &a, word, &n) == 2) {
			args = n ? line + n : NULL;
			run(a, word, args && *args ? args : NULL);
		} else if (sscanf(line, "signal %d %d", &a, &b) == 2) {
			signal_chain(a, b);
		} else if (sscanf(line, "exec %d", &a) == 1) {
			exec_self(a);
		} else if (sscanf(line, "leaf %15s", word) == 1) {
			set_leaf(word);
		} else {
			printf("error command '%s'\n", line);
		}
	}
	return 0;
}
