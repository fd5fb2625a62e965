/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FIXTURE(exec): a program that walked execs itself, or its twin, at the
 * same addresses; the new program's chains must be right and found from
 * its own mm. Each program after exec runs exec_stage_main().
 *
 * Included once, by sframe_probe.c.
 */
#include "sframe_probe_session.h"

/*
 * One program of the exec test: probe some instructions of sframe_probed()
 * (its mm's first walks, which must read the program's file themselves),
 * check the chains, and exec @next with the rest of the arguments.
 */
static void exec_stage(struct __test_metadata *_metadata, int argc,
		       char **argv)
{
	long long probed = counter("sframe_files_probed");
	long long found = counter("sframe_sections");
	unsigned long here = (unsigned long)sframe_probed;
	struct probe_chain c = { .a = 5, .b = 17, .inner = sframe_probed };
	char path[PATH_MAX], addr[32];
	struct session *s;

	self_path(path, sizeof(path));
	TH_LOG("after exec: %s (%s), sframe_probed() at %#lx", path, SELF_KIND,
	       here);
	/* argv: the previous program and its sframe_probed(), then next. */
	ASSERT_LE(2, argc);
	if (!strcmp(argv[0], path)) {
		ASSERT_EQ(strtoul(argv[1], NULL, 0), here) {
			TH_LOG("the program moved from %s: address space randomization is on",
			       argv[1]);
		}
	}
	ASSERT_LE(0, probed) TH_LOG("no %s", COUNTERS_PATH);

	s = session_open(_metadata);
	add_probed_insns(_metadata, s, 8);
	session_run(_metadata, s, &c, 1);
	session_check(_metadata, s, &c, 0, false);
	session_close(s);

	EXPECT_LT(probed, counter("sframe_files_probed")) {
		TH_LOG("this mm's first walks read no file: they used what another mm found");
	}
	EXPECT_LT(found, counter("sframe_sections")) {
		TH_LOG("this mm's first walks found no SFrame section");
	}
	if (argc < 3 || _metadata->exit_code)
		return;
	snprintf(addr, sizeof(addr), "%#lx", here);
	fflush(stdout);
	fflush(stderr);
	execl(argv[2], argv[2], "--exec-stage", path, addr, (char *)NULL);
	ASSERT_TRUE(false) TH_LOG("exec %s: %s", argv[2], strerror(errno));
}

static int exec_stage_main(int argc, char **argv)
{
	static struct __test_metadata m = { .name = "exec_stage" };

	if (!setjmp(m.env))
		exec_stage(&m, argc, argv);
	return m.exit_code == KSFT_PASS && !m.aborted ? 0 : 1;
}

FIXTURE(exec) {
	int try_first;	/* for the programs it execs, which check */
};

FIXTURE_VARIANT(exec) {
	bool twin;		/* exec the other build, else this program */
};

FIXTURE_VARIANT_ADD(exec, self) { false };
FIXTURE_VARIANT_ADD(exec, twin) { true };

FIXTURE_SETUP(exec)
{
	const char *missing = probe_missing();

	self->try_first = -1;
	if (missing)
		SKIP(return, "%s", missing);
	try_first_kernel_off(&self->try_first);
}

FIXTURE_TEARDOWN(exec)
{
	try_first_restore(self->try_first);
}

/*
 * With address space randomization off, this program execs itself, which
 * walks its chain (so its mm remembers the tables of the program and its
 * libraries), then execs this program again or its twin: the last
 * program's chains must be right, found by its own mm's walks.
 */
TEST_F_TIMEOUT(exec, chain_right_after_exec, MANY_PROBES_TIMEOUT)
{
	char path[PATH_MAX], next[PATH_MAX + 32];
	int status;
	pid_t pid;

	self_path(path, sizeof(path));
	if (variant->twin)
		sibling_path(next, sizeof(next), TWIN);
	else
		snprintf(next, sizeof(next), "%s", path);
	ASSERT_EQ(0, access(next, X_OK)) TH_LOG("%s: %s", next, strerror(errno));

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		personality(ADDR_NO_RANDOMIZE);
		execl(path, path, "--exec-stage", "-", "0", next, (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) {
		TH_LOG("the exec'd program died by signal %d", WTERMSIG(status));
	}
	ASSERT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("a program after exec failed (its log is above)");
	}
}
