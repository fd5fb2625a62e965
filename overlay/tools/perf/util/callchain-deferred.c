// SPDX-License-Identifier: GPL-2.0
/*
 * Put deferred user callchains back into their samples.
 *
 * With attr.defer_callchain, a sample taken in the kernel ends its
 * callchain with PERF_CONTEXT_USER_DEFERRED and a cookie.  The user frames
 * come later, when the task returns to user space, in one
 * PERF_RECORD_CALLCHAIN_DEFERRED with the same cookie for all the samples
 * of that kernel entry.
 *
 * Such samples wait here until their record comes.  They are copied: the
 * event a sample points into lives in a ring buffer or a file mapping that
 * is reused once the tool callback returns.  They wait in one entry per
 * thread and cookie, and a record fills the entry of its thread and cookie.
 *
 * Events come in the order of their timestamps, but the timestamps are
 * taken on different CPUs: a record is written after its samples, but on
 * the samples' CPUs (events bound to a CPU) or on the CPU the task returns
 * to user space from (per-task events), and the thread's next entry may be
 * sampled on yet another CPU.  Where the CPUs' clocks do not agree (a
 * sched_clock marked unstable, as on some virtual machines), a record can
 * come before some of its samples, or after samples of the thread's next
 * kernel entry.  So neither proves a record lost: an entry waits for
 * DEFERRED_SKEW_NS of session time after the order could have told.  A
 * record is kept that long after its own time, for samples that come after
 * it; samples are given up that long after a sample of their thread showed
 * another cookie.  A sample is resolved against its thread's maps when it
 * is delivered: with its record, or at once when the record came first.
 *
 * The bytes of samples held are bounded; past the bound the oldest entry's
 * samples leave without their user part.  What still waits when the
 * session ends (a task that was in the kernel when the recording stopped)
 * leaves the same way.  Every sample is delivered once, merged or not, and
 * the session counts both.  Without timestamps (no PERF_SAMPLE_TIME) there
 * is no order to reason about: samples are given up as soon as a sample of
 * their thread shows another cookie, and records are not kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/zalloc.h>
#include <perf/event.h>

#include "callchain-deferred.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "hashmap.h"
#include "sample.h"

u64 deferred_callchains_hold_limit = 64ULL << 20;

/*
 * How far apart two CPUs' timestamps of one moment may be.  An unstable
 * sched_clock is kept within a tick of the time of day on each CPU.
 */
#define DEFERRED_SKEW_NS	(100ULL * 1000 * 1000)

#define NO_TIME			((u64)-1)

struct deferred_key {
	u64 cookie;
	u32 tid;
};

/* The samples of one kernel entry of one thread, and its record. */
struct deferred_entry {
	struct list_head node;		/* in deferred_callchains.entries */
	struct list_head expiry;	/* in deferred_callchains.expiring */
	struct list_head samples;	/* struct deferred_sample, oldest first */
	struct ip_callchain *record;	/* the record's user frames, once it came */
	struct deferred_key key;
	u64 expires;			/* session time it is given up at, or 0 */
	bool claimed;			/* the record was given to a sample */
};

struct deferred_sample {
	struct list_head node;
	struct machine *machine;
	size_t size;
	u64 event[];			/* copy of the PERF_RECORD_SAMPLE */
};

struct deferred_callchains {
	struct hashmap *by_key;		/* &entry->key -> struct deferred_entry */
	struct hashmap *by_tid;		/* tid -> the thread's newest entry */
	struct list_head entries;	/* oldest first */
	struct list_head expiring;	/* the entries with a time to go */
	u64 bytes;			/* of samples held */
	u64 now;			/* latest session time seen */
};

static size_t key_hash(long key, void *ctx __maybe_unused)
{
	const struct deferred_key *k = (const struct deferred_key *)key;

	return (size_t)(k->cookie ^ (k->cookie >> 32)) ^ k->tid;
}

static bool key_equal(long a, long b, void *ctx __maybe_unused)
{
	const struct deferred_key *ka = (const struct deferred_key *)a;
	const struct deferred_key *kb = (const struct deferred_key *)b;

	return ka->cookie == kb->cookie && ka->tid == kb->tid;
}

static size_t tid_hash(long key, void *ctx __maybe_unused)
{
	return key;
}

static bool tid_equal(long a, long b, void *ctx __maybe_unused)
{
	return a == b;
}

static struct deferred_callchains *deferred_callchains(struct evlist *evlist)
{
	struct deferred_callchains *dc = evlist->deferred_callchains;

	if (dc)
		return dc;
	dc = zalloc(sizeof(*dc));
	if (!dc)
		return NULL;
	dc->by_key = hashmap__new(key_hash, key_equal, NULL);
	dc->by_tid = hashmap__new(tid_hash, tid_equal, NULL);
	if (IS_ERR(dc->by_key) || IS_ERR(dc->by_tid)) {
		if (!IS_ERR(dc->by_key))
			hashmap__free(dc->by_key);
		if (!IS_ERR(dc->by_tid))
			hashmap__free(dc->by_tid);
		free(dc);
		return NULL;
	}
	INIT_LIST_HEAD(&dc->entries);
	INIT_LIST_HEAD(&dc->expiring);
	evlist->deferred_callchains = dc;
	return dc;
}

/**
 * sample__merge_deferred_callchain - give a sample the user part of its record
 * @sample: a sample whose callchain ends in the deferred marker and cookie
 * @user: the frames of the PERF_RECORD_CALLCHAIN_DEFERRED with that cookie
 *
 * Builds the chain a classic walk would have given: the sample's kernel
 * part, then PERF_CONTEXT_USER and the record's frames.  @sample->callchain
 * then points to memory the caller frees.
 *
 * Return: 0, or -ENOMEM.
 */
int sample__merge_deferred_callchain(struct perf_sample *sample,
				     const struct ip_callchain *user)
{
	u64 nr_kernel = sample->callchain->nr - 2;
	u64 nr_user = user->nr;
	struct ip_callchain *chain;
	u64 nr = nr_kernel + (nr_user ? 1 + nr_user : 0);

	chain = malloc(sizeof(*chain) + nr * sizeof(u64));
	if (!chain)
		return -ENOMEM;
	chain->nr = nr;
	memcpy(chain->ips, sample->callchain->ips, nr_kernel * sizeof(u64));
	if (nr_user) {
		chain->ips[nr_kernel] = PERF_CONTEXT_USER;
		memcpy(&chain->ips[nr_kernel + 1], user->ips,
		       nr_user * sizeof(u64));
	}
	sample->callchain = chain;
	sample->deferred_callchain = false;
	sample->deferred_merged = true;
	return 0;
}

/*
 * Deliver @sample, parsed from @event, merged with @record's frames if
 * given, and count it.
 */
static int deferred_sample__merge_deliver(struct evlist *evlist,
					  const struct perf_tool *tool,
					  union perf_event *event,
					  struct perf_sample *sample,
					  struct evsel *evsel, struct machine *machine,
					  struct ip_callchain *record,
					  deferred_deliver_fn deliver)
{
	int err;

	if (record && sample__merge_deferred_callchain(sample, record) == 0)
		evlist->stats.nr_deferred_merged++;
	else
		evlist->stats.nr_deferred_missing++;

	err = deliver(evlist, tool, event, sample, evsel, machine);
	if (sample->deferred_merged)
		free(sample->callchain);
	return err;
}

/*
 * Deliver one held sample, merged with @record's frames or, without them,
 * with its kernel part only, and free it.
 */
static int deferred_sample__deliver(struct deferred_sample *ds, struct evlist *evlist,
				    const struct perf_tool *tool,
				    struct ip_callchain *record,
				    deferred_deliver_fn deliver, bool evicted)
{
	union perf_event *event = (union perf_event *)ds->event;
	struct perf_sample sample;
	struct evsel *evsel;
	int err;

	err = evlist__parse_sample(evlist, event, &sample);
	evsel = evlist__id2evsel(evlist, sample.id);
	if (err || !evsel || !sample.deferred_callchain) {
		pr_err("deferred callchains: cannot parse a held sample again\n");
		err = err ?: -EINVAL;
		goto out;
	}
	if (evicted)
		evlist->stats.nr_deferred_evicted++;
	err = deferred_sample__merge_deliver(evlist, tool, event, &sample, evsel,
					     ds->machine, record, deliver);
out:
	list_del(&ds->node);
	free(ds);
	return err;
}

/*
 * Deliver the samples @e holds: merged with its record if it came, else
 * without their user part (@evicted: to bound the bytes held).
 */
static int deferred_entry__deliver(struct deferred_callchains *dc,
				   struct deferred_entry *e, struct evlist *evlist,
				   const struct perf_tool *tool,
				   deferred_deliver_fn deliver, bool evicted)
{
	struct deferred_sample *ds, *tmp;
	int err = 0;

	list_for_each_entry_safe(ds, tmp, &e->samples, node) {
		int ret;

		dc->bytes -= ds->size;
		if (e->record)
			e->claimed = true;
		ret = deferred_sample__deliver(ds, evlist, tool, e->record, deliver,
					       evicted);
		if (ret && !err)
			err = ret;
	}
	return err;
}

/* Deliver what @e still holds, count its record if no sample got it, free it. */
static int deferred_entry__finish(struct deferred_callchains *dc,
				  struct deferred_entry *e, struct evlist *evlist,
				  const struct perf_tool *tool,
				  deferred_deliver_fn deliver, bool evicted)
{
	struct deferred_entry *newest = NULL;
	int err;

	err = deferred_entry__deliver(dc, e, evlist, tool, deliver, evicted);
	if (e->record && !e->claimed)
		evlist->stats.nr_deferred_unmatched++;
	hashmap__delete(dc->by_key, &e->key, NULL, NULL);
	if (hashmap__find(dc->by_tid, e->key.tid, &newest) && newest == e)
		hashmap__delete(dc->by_tid, e->key.tid, NULL, NULL);
	list_del(&e->node);
	if (e->expires)
		list_del(&e->expiry);
	free(e->record);
	free(e);
	return err;
}

/* Give @e up at session time @when. */
static void deferred_entry__expire_at(struct deferred_callchains *dc,
				      struct deferred_entry *e, u64 when)
{
	struct deferred_entry *pos;

	if (e->expires)
		list_del(&e->expiry);
	e->expires = when ?: 1;
	/* Nearly always the latest: look from the tail. */
	list_for_each_entry_reverse(pos, &dc->expiring, expiry) {
		if (pos->expires <= e->expires) {
			list_add(&e->expiry, &pos->expiry);
			return;
		}
	}
	list_add(&e->expiry, &dc->expiring);
}

/* Give up the entries whose time has come: the session reached @now. */
static int deferred_callchains__expire(struct deferred_callchains *dc,
				       struct evlist *evlist, const struct perf_tool *tool,
				       u64 now, deferred_deliver_fn deliver)
{
	int err = 0;

	if (now == NO_TIME)
		return 0;
	if (now > dc->now)
		dc->now = now;
	while (!list_empty(&dc->expiring)) {
		struct deferred_entry *e;
		int ret;

		e = list_first_entry(&dc->expiring, struct deferred_entry, expiry);
		if (e->expires > dc->now)
			break;
		ret = deferred_entry__finish(dc, e, evlist, tool, deliver, false);
		if (ret && !err)
			err = ret;
	}
	return err;
}

/* The entry of @tid's kernel entry @cookie, or NULL. */
static struct deferred_entry *deferred_entry__find(struct deferred_callchains *dc,
						   u64 cookie, u32 tid)
{
	struct deferred_key key = { .cookie = cookie, .tid = tid };
	struct deferred_entry *e;

	return hashmap__find(dc->by_key, &key, &e) ? e : NULL;
}

/*
 * The entry of @tid's kernel entry @cookie, made if there is none yet.
 * Made for a sample (@newest), it is the thread's newest: the previous
 * newest waits at most DEFERRED_SKEW_NS more, or not at all without
 * timestamps. A record, which may be a late copy of an older entry's,
 * moves nothing.
 */
static int deferred_entry__get(struct deferred_callchains *dc, struct evlist *evlist,
			       const struct perf_tool *tool, u64 cookie, u32 tid,
			       u64 now, bool newest, deferred_deliver_fn deliver,
			       struct deferred_entry **entry)
{
	struct deferred_entry *e, *prev = NULL;

	e = deferred_entry__find(dc, cookie, tid);
	if (e) {
		*entry = e;
		return 0;
	}
	e = zalloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->key.cookie = cookie;
	e->key.tid = tid;
	INIT_LIST_HEAD(&e->samples);
	if (hashmap__add(dc->by_key, &e->key, e)) {
		free(e);
		return -ENOMEM;
	}
	list_add_tail(&e->node, &dc->entries);
	*entry = e;

	/* Without a thread, or memory for it, the older entry waits longer. */
	if (!newest || tid == (u32)-1 ||
	    hashmap__set(dc->by_tid, tid, e, NULL, &prev) || !prev)
		return 0;
	if (now == NO_TIME)
		return deferred_entry__finish(dc, prev, evlist, tool, deliver, false);
	if (!prev->expires || prev->expires > now + DEFERRED_SKEW_NS)
		deferred_entry__expire_at(dc, prev, now + DEFERRED_SKEW_NS);
	return 0;
}

/**
 * deferred_callchains__hold - keep a sample until its user part comes
 * @evlist: the session's evlist, which owns the queue
 * @tool: the tool the sample goes to
 * @event: the sample's event, copied here
 * @sample: the parsed sample, with deferred_callchain set
 * @machine: the machine the sample belongs to
 * @deliver: how samples are handed to @tool
 *
 * A sample whose record came already is merged and delivered at once.
 * May deliver older samples without their user part: those given up (see
 * above), and the oldest while the queue is over
 * deferred_callchains_hold_limit.
 *
 * Return: 0 or the first error of a delivery or allocation.
 */
int deferred_callchains__hold(struct evlist *evlist, const struct perf_tool *tool,
			      union perf_event *event, struct perf_sample *sample,
			      struct machine *machine, deferred_deliver_fn deliver)
{
	struct deferred_callchains *dc = deferred_callchains(evlist);
	struct deferred_entry *e, *tmp;
	struct deferred_sample *ds;
	int err;

	if (!dc)
		return -ENOMEM;

	err = deferred_callchains__expire(dc, evlist, tool, sample->time, deliver);
	if (!err)
		err = deferred_entry__get(dc, evlist, tool, sample->deferred_cookie,
					  sample->tid, sample->time, true, deliver, &e);
	if (err)
		return err;

	if (e->record) {
		struct evsel *evsel = evlist__id2evsel(evlist, sample->id);

		e->claimed = true;
		return deferred_sample__merge_deliver(evlist, tool, event, sample, evsel,
						      machine, e->record, deliver);
	}

	ds = malloc(sizeof(*ds) + event->header.size);
	if (!ds)
		return -ENOMEM;
	ds->machine = machine;
	ds->size = sizeof(*ds) + event->header.size;
	memcpy(ds->event, event, event->header.size);
	list_add_tail(&ds->node, &e->samples);
	dc->bytes += ds->size;

	list_for_each_entry_safe(e, tmp, &dc->entries, node) {
		if (dc->bytes <= deferred_callchains_hold_limit || err)
			break;
		if (!list_empty(&e->samples))
			err = deferred_entry__finish(dc, e, evlist, tool, deliver, true);
	}
	return err;
}

/* The entry waiting for @cookie, for a record that has no tid. */
static struct deferred_entry *
deferred_entry__find_cookie(struct deferred_callchains *dc, u64 cookie)
{
	struct deferred_entry *e;

	list_for_each_entry(e, &dc->entries, node) {
		if (e->key.cookie == cookie)
			return e;
	}
	return NULL;
}

/**
 * deferred_callchains__record - merge a record into the samples waiting for it
 * @evlist: the session's evlist
 * @tool: the tool the samples go to
 * @record: the parsed PERF_RECORD_CALLCHAIN_DEFERRED
 * @deliver: how samples are handed to @tool
 *
 * The record's frames are kept DEFERRED_SKEW_NS of session time, for
 * samples that come after it.  A record no sample gets (a second
 * defer_output event, samples that were lost or given up) is counted when
 * it goes.
 *
 * Return: 0 or the first error of a delivery or allocation.
 */
int deferred_callchains__record(struct evlist *evlist, const struct perf_tool *tool,
				struct perf_sample *record, deferred_deliver_fn deliver)
{
	struct deferred_callchains *dc = deferred_callchains(evlist);
	struct ip_callchain *chain = record->callchain;
	struct deferred_entry *e = NULL;
	size_t size;
	int err;

	if (!dc)
		return -ENOMEM;

	err = deferred_callchains__expire(dc, evlist, tool, record->time, deliver);
	if (err)
		return err;
	if (record->tid == (u32)-1) {
		/* A linear search: records without a thread are rare. */
		e = deferred_entry__find_cookie(dc, record->deferred_cookie);
	} else if (record->time == NO_TIME) {
		e = deferred_entry__find(dc, record->deferred_cookie, record->tid);
	} else {
		/* Made if need be: kept for samples that sort after it. */
		err = deferred_entry__get(dc, evlist, tool, record->deferred_cookie,
					  record->tid, record->time, false, deliver, &e);
		if (err)
			return err;
	}
	if (!e) {
		evlist->stats.nr_deferred_unmatched++;
		return 0;
	}
	if (e->record) {
		/* Another event's copy of the same record. */
		evlist->stats.nr_deferred_unmatched++;
		return 0;
	}

	size = sizeof(*chain) + chain->nr * sizeof(u64);
	e->record = malloc(size);
	if (!e->record)
		return -ENOMEM;
	memcpy(e->record, chain, size);
	err = deferred_entry__deliver(dc, e, evlist, tool, deliver, false);

	if (record->time == NO_TIME) {
		int ret = deferred_entry__finish(dc, e, evlist, tool, deliver, false);

		return err ?: ret;
	}
	/* Kept at least that long, also when given up earlier meanwhile. */
	if (!e->expires || e->expires < record->time + DEFERRED_SKEW_NS)
		deferred_entry__expire_at(dc, e, record->time + DEFERRED_SKEW_NS);
	return err;
}

/**
 * deferred_callchains__flush - deliver what still waits, without user parts
 * @evlist: the session's evlist
 * @tool: the tool the samples go to
 * @deliver: how samples are handed to @tool
 *
 * Called when the session has delivered its last event.
 *
 * Return: 0 or the first error of a delivery.
 */
int deferred_callchains__flush(struct evlist *evlist, const struct perf_tool *tool,
			       deferred_deliver_fn deliver)
{
	struct deferred_callchains *dc = evlist->deferred_callchains;
	int err = 0;

	while (dc && !list_empty(&dc->entries)) {
		struct deferred_entry *e;
		int ret;

		e = list_first_entry(&dc->entries, struct deferred_entry, node);
		ret = deferred_entry__finish(dc, e, evlist, tool, deliver, false);
		if (ret && !err)
			err = ret;
	}
	return err;
}

/**
 * deferred_callchains__delete - free the queue and what it still holds
 * @evlist: the evlist that owns it
 */
void deferred_callchains__delete(struct evlist *evlist)
{
	struct deferred_callchains *dc = evlist->deferred_callchains;
	struct deferred_entry *e, *etmp;
	struct deferred_sample *ds, *stmp;

	if (!dc)
		return;
	list_for_each_entry_safe(e, etmp, &dc->entries, node) {
		list_for_each_entry_safe(ds, stmp, &e->samples, node)
			free(ds);
		free(e->record);
		free(e);
	}
	hashmap__free(dc->by_key);
	hashmap__free(dc->by_tid);
	zfree(&evlist->deferred_callchains);
}
