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
 * is reused once the tool callback returns.  They are grouped by thread,
 * one group per thread: a sample with a new cookie means the thread went
 * back to user space since the group's samples, so their record is not
 * coming (it was lost) and they leave without their user part.  The bytes
 * held are bounded; past the bound the oldest group leaves without its
 * user part.  What still waits when the session ends (a task that was in
 * the kernel when the recording stopped) leaves the same way.  Every
 * sample is delivered once, merged or not, and the session counts both.
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

/* The samples of one thread that wait for the record with this cookie. */
struct deferred_group {
	struct list_head node;		/* in deferred_callchains.groups */
	struct list_head samples;	/* struct deferred_sample, oldest first */
	u64 cookie;
	int tid;
};

struct deferred_sample {
	struct list_head node;
	struct machine *machine;
	size_t size;
	u64 event[];			/* copy of the PERF_RECORD_SAMPLE */
};

struct deferred_callchains {
	struct hashmap *by_tid;		/* tid -> struct deferred_group */
	struct list_head groups;	/* oldest first */
	u64 bytes;
};

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
	dc->by_tid = hashmap__new(tid_hash, tid_equal, NULL);
	if (IS_ERR(dc->by_tid)) {
		free(dc);
		return NULL;
	}
	INIT_LIST_HEAD(&dc->groups);
	evlist->deferred_callchains = dc;
	return dc;
}

/**
 * sample__merge_deferred_callchain - give a sample the user part of its record
 * @sample: a sample whose callchain ends in the deferred marker and cookie
 * @record: the PERF_RECORD_CALLCHAIN_DEFERRED with the same cookie, parsed
 *
 * Builds the chain a classic walk would have given: the sample's kernel
 * part, then PERF_CONTEXT_USER and the record's frames.  @sample->callchain
 * then points to memory the caller frees.
 *
 * Return: 0, or -ENOMEM.
 */
int sample__merge_deferred_callchain(struct perf_sample *sample,
				     const struct perf_sample *record)
{
	u64 nr_kernel = sample->callchain->nr - 2;
	u64 nr_user = record->callchain->nr;
	struct ip_callchain *chain;
	u64 nr = nr_kernel + (nr_user ? 1 + nr_user : 0);

	chain = malloc(sizeof(*chain) + nr * sizeof(u64));
	if (!chain)
		return -ENOMEM;
	chain->nr = nr;
	memcpy(chain->ips, sample->callchain->ips, nr_kernel * sizeof(u64));
	if (nr_user) {
		chain->ips[nr_kernel] = PERF_CONTEXT_USER;
		memcpy(&chain->ips[nr_kernel + 1], record->callchain->ips,
		       nr_user * sizeof(u64));
	}
	sample->callchain = chain;
	sample->deferred_callchain = false;
	sample->deferred_merged = true;
	return 0;
}

/*
 * Deliver one held sample, merged with @record or, without one, with its
 * kernel part only, and free it.
 */
static int deferred_sample__deliver(struct deferred_sample *ds, struct evlist *evlist,
				    const struct perf_tool *tool,
				    const struct perf_sample *record,
				    deferred_deliver_fn deliver)
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
	if (record && sample__merge_deferred_callchain(&sample, record) == 0)
		evlist->stats.nr_deferred_merged++;
	else
		evlist->stats.nr_deferred_missing++;

	err = deliver(evlist, tool, event, &sample, evsel, ds->machine);
	if (sample.deferred_merged)
		free(sample.callchain);
out:
	list_del(&ds->node);
	free(ds);
	return err;
}

/* Deliver a group's samples, each merged with @record if given, and free it. */
static int deferred_group__deliver(struct deferred_group *group, struct evlist *evlist,
				   const struct perf_tool *tool,
				   const struct perf_sample *record,
				   deferred_deliver_fn deliver)
{
	struct deferred_callchains *dc = evlist->deferred_callchains;
	struct deferred_sample *ds, *tmp;
	int err = 0;

	hashmap__delete(dc->by_tid, group->tid, NULL, NULL);
	list_del(&group->node);
	list_for_each_entry_safe(ds, tmp, &group->samples, node) {
		int ret;

		dc->bytes -= ds->size;
		ret = deferred_sample__deliver(ds, evlist, tool, record, deliver);
		if (ret && !err)
			err = ret;
	}
	free(group);
	return err;
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
 * May deliver older samples without their user part: the thread's group for
 * another cookie, and the oldest groups while the queue is over
 * deferred_callchains_hold_limit.
 *
 * Return: 0 or the first error of a delivery or allocation.
 */
int deferred_callchains__hold(struct evlist *evlist, const struct perf_tool *tool,
			      union perf_event *event, struct perf_sample *sample,
			      struct machine *machine, deferred_deliver_fn deliver)
{
	struct deferred_callchains *dc = deferred_callchains(evlist);
	struct deferred_group *group = NULL;
	struct deferred_sample *ds;
	int err = 0;

	if (!dc)
		return -ENOMEM;

	if (hashmap__find(dc->by_tid, sample->tid, &group) &&
	    group->cookie != sample->deferred_cookie) {
		err = deferred_group__deliver(group, evlist, tool, NULL, deliver);
		group = NULL;
		if (err)
			return err;
	}
	if (!group) {
		group = zalloc(sizeof(*group));
		if (!group)
			return -ENOMEM;
		group->tid = sample->tid;
		group->cookie = sample->deferred_cookie;
		INIT_LIST_HEAD(&group->samples);
		if (hashmap__add(dc->by_tid, group->tid, group)) {
			free(group);
			return -ENOMEM;
		}
		list_add_tail(&group->node, &dc->groups);
	}

	ds = malloc(sizeof(*ds) + event->header.size);
	if (!ds)
		return -ENOMEM;
	ds->machine = machine;
	ds->size = sizeof(*ds) + event->header.size;
	memcpy(ds->event, event, event->header.size);
	list_add_tail(&ds->node, &group->samples);
	dc->bytes += ds->size;

	while (dc->bytes > deferred_callchains_hold_limit && !err) {
		struct deferred_group *oldest;

		oldest = list_first_entry(&dc->groups, struct deferred_group, node);
		list_for_each_entry(ds, &oldest->samples, node)
			evlist->stats.nr_deferred_evicted++;
		err = deferred_group__deliver(oldest, evlist, tool, NULL, deliver);
	}
	return err;
}

/* The group waiting for @cookie, for a record that has no tid. */
static struct deferred_group *
deferred_group__find_cookie(struct deferred_callchains *dc, u64 cookie)
{
	struct deferred_group *group;

	list_for_each_entry(group, &dc->groups, node) {
		if (group->cookie == cookie)
			return group;
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
 * A record with no waiting samples (a second defer_output event, or samples
 * that were lost) is counted and dropped.
 *
 * Return: 0 or the first error of a delivery.
 */
int deferred_callchains__record(struct evlist *evlist, const struct perf_tool *tool,
				struct perf_sample *record, deferred_deliver_fn deliver)
{
	struct deferred_callchains *dc = evlist->deferred_callchains;
	struct deferred_group *group = NULL;
	int err;

	if (dc && record->tid != (u32)-1)
		hashmap__find(dc->by_tid, record->tid, &group);
	else if (dc)
		group = deferred_group__find_cookie(dc, record->deferred_cookie);

	if (!group) {
		evlist->stats.nr_deferred_unmatched++;
		return 0;
	}
	if (group->cookie != record->deferred_cookie) {
		/* The thread's samples are older than this record: theirs is lost. */
		evlist->stats.nr_deferred_unmatched++;
		return deferred_group__deliver(group, evlist, tool, NULL, deliver);
	}
	err = deferred_group__deliver(group, evlist, tool, record, deliver);
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

	while (dc && !list_empty(&dc->groups)) {
		struct deferred_group *group;
		int ret;

		group = list_first_entry(&dc->groups, struct deferred_group, node);
		ret = deferred_group__deliver(group, evlist, tool, NULL, deliver);
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
	struct deferred_group *group, *gtmp;
	struct deferred_sample *ds, *stmp;

	if (!dc)
		return;
	list_for_each_entry_safe(group, gtmp, &dc->groups, node) {
		list_for_each_entry_safe(ds, stmp, &group->samples, node)
			free(ds);
		free(group);
	}
	hashmap__free(dc->by_tid);
	zfree(&evlist->deferred_callchains);
}
