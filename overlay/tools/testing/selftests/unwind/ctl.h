/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test_unwind_deferred module's control file, as the unwind selftests
 * use it: commands go in with write(2) (from a known call chain), requests
 * and callbacks come back as text; the unwinder's debugfs counters, and
 * its sysfs switches.
 */
#ifndef SELFTESTS_UNWIND_CTL_H
#define SELFTESTS_UNWIND_CTL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#define CTL_PATH	"/sys/kernel/debug/unwind_deferred_test/ctl"
#define COUNTERS_PATH	"/sys/kernel/debug/unwind_deferred/counters"
#define TIME_WALKS_PATH	"/sys/kernel/debug/unwind_deferred/time_walks"
#define METHODS_PATH	"/sys/kernel/unwind_user/methods"
#define NR_SLOTS	40
#define MAX_REQS	1024
#define MAX_CBS		96
#define MAX_IPS		512
#define RESULTS_SIZE	(2 << 20)

struct req {
	char at[16];
	char ctx[8];
	int slot, ret, pid;
	unsigned long long cookie;
};

struct cb {
	int slot, pid, exiting;
	unsigned long long cookie;
	unsigned int nr;
	unsigned long long ips[MAX_IPS];
};

struct results {
	int nreq, ncb, lost;
	struct req req[MAX_REQS];
	struct cb cb[MAX_CBS];
	char text[RESULTS_SIZE];
};

static inline int ctl(int fd, const char *cmd)
{
	return write(fd, cmd, strlen(cmd)) < 0 ? -errno : 0;
}

static inline int read_results(int fd, struct results *r)
{
	ssize_t n, len = 0;
	char *line, *save;

	r->nreq = 0;
	r->ncb = 0;
	r->lost = 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	while ((n = read(fd, r->text + len, RESULTS_SIZE - 1 - len)) > 0)
		len += n;
	if (n < 0)
		return -errno;
	r->text[len] = '\0';

	for (line = strtok_r(r->text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "req ", 4) && r->nreq < MAX_REQS) {
			struct req *q = &r->req[r->nreq];

			if (sscanf(line, "req at=%15s ctx=%7s slot=%d ret=%d cookie=%llx pid=%d",
				   q->at, q->ctx, &q->slot, &q->ret, &q->cookie,
				   &q->pid) != 6)
				return -EINVAL;
			r->nreq++;
		} else if (!strncmp(line, "cb ", 3) && r->ncb < MAX_CBS) {
			struct cb *b = &r->cb[r->ncb];
			char *p, *end;
			int off = 0;
			unsigned int i;

			if (sscanf(line, "cb slot=%d pid=%d cookie=%llx nr=%u exiting=%d ips=%n",
				   &b->slot, &b->pid, &b->cookie, &b->nr,
				   &b->exiting, &off) != 5 || !off || b->nr > MAX_IPS)
				return -EINVAL;
			p = line + off;
			for (i = 0; i < b->nr; i++) {
				b->ips[i] = strtoull(p, &end, 16);
				if (end == p)
					return -EINVAL;
				p = *end == ',' ? end + 1 : end;
			}
			r->ncb++;
		} else if (!strncmp(line, "lost ", 5)) {
			r->lost = atoi(line + 5);
		}
	}
	return 0;
}

static inline long long counter(const char *name)
{
	char key[64];
	long long val;
	FILE *f = fopen(COUNTERS_PATH, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			fclose(f);
			return val;
		}
	}
	fclose(f);
	return -1;
}

/* The first line of the file at @path into @buf; false when unreadable. */
static inline bool knob_read(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = !!fgets(buf, size, f);
	fclose(f);
	return ok;
}

/* Write @val to the file at @path (a sysfs switch): 0 or -errno. */
static inline int knob_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Time every deferred walk (1) or only those NMI samples ask for (0). */
static inline void set_time_walks(int on)
{
	FILE *f = fopen(TIME_WALKS_PATH, "w");

	if (!f)
		return;
	fprintf(f, "%d\n", on);
	fclose(f);
}

/*
 * Every fixture: the control file, a results buffer and @size bytes of
 * shared memory for its call chain at *@shared (children that exit or exec
 * report there). False when the test module is not loaded.
 */
static inline bool ctl_open(struct __test_metadata *_metadata, int *fd,
			    struct results **res, void **shared, size_t size)
{
	*res = NULL;
	*shared = MAP_FAILED;
	*fd = open(CTL_PATH, O_RDWR);
	if (*fd < 0 && errno == ENOENT)
		return false;
	ASSERT_LE(0, *fd) TH_LOG("open %s: %s", CTL_PATH, strerror(errno));
	*res = calloc(1, sizeof(**res));
	ASSERT_TRUE(!!*res);
	*shared = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(*shared != MAP_FAILED);
	ASSERT_EQ(0, ctl(*fd, "clear"));
	return true;
}

static inline void ctl_close(int fd, struct results *res, void *shared, size_t size)
{
	if (fd >= 0)
		close(fd);
	if (shared != MAP_FAILED)
		munmap(shared, size);
	free(res);
}

#define NO_MODULE "no " CTL_PATH ": load test_unwind_deferred"

#endif /* SELFTESTS_UNWIND_CTL_H */
