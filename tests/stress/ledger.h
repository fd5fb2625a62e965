/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ledger of a perf session under stress: its ring buffers, drained by
 * one reader, and the accounting of deferred callchains in them.  Every
 * sample that deferred its user part is entered by (tid, cookie); every
 * PERF_RECORD_CALLCHAIN_DEFERRED is entered by the same key.
 *
 * Samples and records carry the CPU they were written on (PERF_SAMPLE_CPU,
 * also in the records' sample_id).  The kernel writes an entry's record
 * once to each defer_output event that is a per-task event bound to no CPU,
 * or bound to a CPU on which a sample of the entry deferred (in any
 * session), on that CPU.  A session with one event per CPU thus gets one
 * record of the entry in the ring of each CPU it was sampled on.  So each
 * key keeps the CPUs its deferred samples were taken on, and the CPUs
 * whose rings hold its records.  At the end, each ring that holds a
 * sample of the key must hold exactly one record of it, or the session
 * lost at least as many records as are missing.
 *
 * One thread drains a ledger; several threads may each drain their own.
 */
#ifndef STRESS_LEDGER_H
#define STRESS_LEDGER_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define LEDGER_MAX_RINGS	64
#define LEDGER_MAX_FDS		256

/*
 * Every event of a ledger uses this sample_type (sample_id_all set).  A
 * sample is then TID, TIME, CPU, CALLCHAIN (the order of
 * PERF_RECORD_SAMPLE); a record's sample_id is TID, TIME, CPU.
 */
#define LEDGER_SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
				 PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN)

/*
 * CPUs are kept in 64-bit masks; samples and records of a CPU >= 64 are
 * counted (cpus_over_mask) but leave no bit, and their keys are not
 * checked per CPU.  The guest has 2 CPUs, stress runs use up to 8.
 */
#define LEDGER_MASK_CPUS	64
#define LEDGER_ALL_CPUS		(~0ULL)

/*
 * The kernel remembers up to this many CPUs per entry on which its samples
 * deferred (PERF_DEFER_SLOTS); an entry sampled on more CPUs has its record
 * written to the events of every CPU.
 */
#define LEDGER_DEFER_CPUS	4

/* The CPUs whose CPU-bound events get the record of an entry sampled on @cpus. */
static inline uint64_t ledger_record_cpus(uint64_t cpus)
{
	return __builtin_popcountll(cpus) > LEDGER_DEFER_CPUS ?
		LEDGER_ALL_CPUS : cpus;
}

struct ring {
	int fd;			/* the event the ring is mapped on */
	int cpu;		/* the CPU its events are bound to, or -1 */
	void *base;
	size_t data_size;
	unsigned char *copy;	/* a record that wraps is copied here */
};

struct key {
	uint64_t cookie;
	uint32_t tid;
	uint32_t pid;
	uint32_t samples;	/* deferred samples, in every ring */
	uint32_t records;	/* records, in every ring */
	uint64_t sample_cpus;	/* CPUs its deferred samples were taken on */
	/* in the rings of events bound to a CPU: */
	uint64_t ring_sample_cpus;	/* the CPUs whose ring has a sample */
	uint64_t ring_record_cpus;	/* the CPUs whose ring has a record */
	uint32_t ring_records;		/* records there */
	/* in the rings of per-task events bound to no CPU: */
	uint32_t task_samples, task_records;
	uint64_t task_record_cpus;	/* the CPUs those records were written on */
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
	/*
	 * If set, called with every record accounted, as it is read: the
	 * thread it is of, and its frames (innermost first); @priv is the
	 * caller's.
	 */
	void (*on_record)(struct ledger *l, uint32_t tid, const uint64_t *ips,
			  uint64_t nr);
	void *priv;
	/* what was read */
	uint64_t samples, deferred, classic_user, no_user, records;
	uint64_t lost, lost_samples, throttles, others;
	uint64_t lost_late;	/* of @lost, reported by ledger_flush_lost() */
	uint64_t record_frames, records_bad_ip, malformed;
	uint64_t cookie_tid_clash;
	/* samples or records in the ring of another CPU than theirs */
	uint64_t wrong_cpu;
	uint64_t cpus_over_mask;	/* samples and records of a CPU >= 64 */
	/*
	 * set by ledger_check(): entries with samples that have all their
	 * records, records missing (one per ring), entries with a record
	 * twice in one ring, records for no sample of this session on
	 * their CPU (or in its task rings), entries with records
	 */
	uint64_t matched, unmatched, duplicated, strays, recorded;
};

/*
 * Open a sampling event with LEDGER_SAMPLE_TYPE; returns the fd or -errno.
 * @type/@config/@period: the event; @flags: extra attr bits (see below).
 */
#define EV_DEFER_CALLCHAIN	0x1
#define EV_DEFER_OUTPUT		0x2
#define EV_INHERIT		0x4
#define EV_DISABLED		0x8
#define EV_EXCLUDE_KERNEL	0x10
int event_open(uint32_t type, uint64_t config, uint64_t period, int flags,
	       pid_t pid, int cpu, int group_fd);

void ledger_init(struct ledger *l, const char *name);
/*
 * Map a ring of @pages data pages on event @fd, which is bound to @cpu (or
 * -1); returns 0 or -errno.
 */
int ledger_add_ring(struct ledger *l, int fd, int cpu, unsigned int pages);
/* Send event @fd's records to the ring on @ring_fd (same CPU); 0 or -errno. */
int ledger_redirect(struct ledger *l, int fd, int ring_fd);
/* Enable every event of the session (opened with EV_DISABLED). */
int ledger_enable(struct ledger *l);
/* Read everything in the rings; returns the number of bytes read. */
size_t ledger_drain(struct ledger *l);
/*
 * After the last drain: have the kernel report the losses of each CPU's
 * ring that it has not reported yet, and read them; 0 or -errno.
 */
int ledger_flush_lost(struct ledger *l);
/* Unmap the rings and close every event. */
void ledger_close(struct ledger *l);
void ledger_free(struct ledger *l);

/*
 * Match samples with records, ring by ring: a ring with a sample of an
 * entry has its record.  @strays_ok: records for entries not sampled by
 * this ledger on their CPU are expected (another session or user sampled
 * them).
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
/* Call @fn for every key. */
void ledger_for_each_key(const struct ledger *l,
			 void (*fn)(const struct key *k, void *arg),
			 void *arg);

#endif
