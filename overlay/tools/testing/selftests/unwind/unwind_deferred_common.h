/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of unwind_deferred.c share: the chain that writes a
 * command to the test module, the lookups of requests and callbacks in
 * its results, the check of a callback's stack, and the unwind fixture.
 */
#ifndef SELFTESTS_UNWIND_UNWIND_DEFERRED_COMMON_H
#define SELFTESTS_UNWIND_UNWIND_DEFERRED_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "chain.h"
#include "ctl.h"

/* Written by inline assembly, which has no register to spare on ia32. */
static unsigned long asm_l1, asm_l2;

static void chain_write(struct chain *c, int fd, const char *cmd, int depth,
			void (*leaf)(struct chain *c))
{
	memset(c, 0, sizeof(*c));
	c->depth = depth;
	c->nr = __NR_write;
	c->a = fd;
	c->b = (long)cmd;
	c->c = strlen(cmd);
	c->leaf = leaf ?: leaf_syscall;
	descend(c, 0);
}

static int cbs_for(const struct results *r, int slot, pid_t pid,
		   const struct cb **first)
{
	int i, n = 0;

	for (i = 0; i < r->ncb; i++) {
		if (r->cb[i].slot != slot || (pid && r->cb[i].pid != pid))
			continue;
		if (!n++ && first)
			*first = &r->cb[i];
	}
	return n;
}

static const struct req *req_at(const struct results *r, const char *at,
				int slot)
{
	int i;

	for (i = 0; i < r->nreq; i++)
		if (!strcmp(r->req[i].at, at) && r->req[i].slot == slot)
			return &r->req[i];
	return NULL;
}

/* The callback's stack must start with exactly the frames the chain has. */
static void check_stack(struct __test_metadata *_metadata,
			const struct chain *c, const struct cb *b)
{
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	int i, n = chain_frames(c, want);

	ASSERT_GE(b->nr, n) {
		TH_LOG("the callback got %u frames; the program has at least %d",
		       b->nr, n);
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(b->ips[i], (unsigned long long)want[i]) {
			TH_LOG("frame %d: the callback has %#llx, the program recorded %#lx",
			       i, b->ips[i], want[i]);
		}
	}
}

FIXTURE(unwind) {
	int fd;
	struct results *res;
	struct chain *c;
};

FIXTURE_SETUP(unwind)
{
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
}

FIXTURE_TEARDOWN(unwind)
{
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

#endif /* SELFTESTS_UNWIND_UNWIND_DEFERRED_COMMON_H */
