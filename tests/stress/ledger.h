/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ledger of a perf session under stress: its ring buffers, drained by
 * one reader, and the accounting of deferred callchains in them.  Every
 * sample that deferred its user part is entered by (tid, cookie); every
 * PERF_RECORD_CALLCHAIN_DEFERRED is entered by the same key.  At the end,
 * each sampled key must have exactly one record, or be covered by what the
 * session lost.
 */
#ifndef STRESS_LEDGER_H
#define STRESS_LEDGER_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define LEDGER_MAX_RINGS	64
#define LEDGER_MAX_FDS		256

/* Every event of a ledger uses this sample_type (sample_id_all set). */
#define LEDGER_SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
				 PERF_SAMPLE_CALLCHAIN)

struct ring {
	int fd;			/* the event the ring is mapped on */
	void *base;
	size_t data_size;
	unsigned char *copy;	/* a record that wraps is copied here */
};

struct key {
	uint64_t cookie;
	uint32_t tid;
	uint32_t pid;
	uint32_t samples;
	uint32_t records;
};

struct keytab {
	struct key *slot;
	size_t size, used;
};

struct ledger {
	const char *name;
	int nr_rings, nr_fds;
	struct ring rings[LEDGER_MAX_RINGS];
	int fds[LEDGER_MAX_FDS];	/* every event of the session */
	struct keytab keys;
	pid_t only_pid;		/* > 0: account only this process's samples */
	/* what was read */
	uint64_t samples, deferred, classic_user, no_user, records;
	uint64_t lost, lost_samples, throttles, others;
	uint64_t record_frames, records_bad_ip, malformed;
	uint64_t cookie_tid_clash;
	/* set by ledger_check() */
	uint64_t matched, unmatched, duplicated, strays;
};

/*
 * Open a sampling event with LEDGER_SAMPLE_TYPE; returns the fd or -errno.
 * @type/@config/@period: the event; @flags: extra attr bits (see below).
 */
#define EV_DEFER_CALLCHAIN	0x1
#define EV_DEFER_OUTPUT		0x2
#define EV_INHERIT		0x4
#define EV_DISABLED		0x8
int event_open(uint32_t type, uint64_t config, uint64_t period, int flags,
	       pid_t pid, int cpu, int group_fd);

void ledger_init(struct ledger *l, const char *name);
/* Map a ring of @pages data pages on event @fd; returns 0 or -errno. */
int ledger_add_ring(struct ledger *l, int fd, unsigned int pages);
/* Send event @fd's records to the ring on @ring_fd (same CPU); 0 or -errno. */
int ledger_redirect(struct ledger *l, int fd, int ring_fd);
/* Enable every event of the session (opened with EV_DISABLED). */
int ledger_enable(struct ledger *l);
/* Read everything in the rings; returns the number of bytes read. */
size_t ledger_drain(struct ledger *l);
/* Unmap the rings and close every event. */
void ledger_close(struct ledger *l);
void ledger_free(struct ledger *l);

/*
 * Match samples with records.  @strays_ok: records without a sample in
 * this ledger are expected (another session or user asked for them).
 * Returns NULL when the ledger is consistent, else what is wrong.
 */
const char *ledger_check(struct ledger *l, bool strays_ok, char *buf,
			 size_t len);
/* One "# ..." line with the ledger's figures. */
void ledger_print(const struct ledger *l);

/* The key for (@tid, @cookie), or NULL if @l never saw it. */
const struct key *ledger_find(const struct ledger *l, uint32_t tid,
			      uint64_t cookie);
/* Call @fn for every key with samples. */
void ledger_for_each_sampled(const struct ledger *l,
			     void (*fn)(const struct key *k, void *arg),
			     void *arg);

#endif
