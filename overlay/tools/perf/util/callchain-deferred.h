/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_CALLCHAIN_DEFERRED_H
#define __PERF_CALLCHAIN_DEFERRED_H

#include <linux/types.h>

struct evlist;
struct evsel;
struct ip_callchain;
struct machine;
struct perf_sample;
struct perf_tool;
union perf_event;

/* How the session hands a sample to the tool (evlist__deliver_sample). */
typedef int (*deferred_deliver_fn)(struct evlist *evlist, const struct perf_tool *tool,
				   union perf_event *event, struct perf_sample *sample,
				   struct evsel *evsel, struct machine *machine);

/* Most bytes of samples held for their user part (call-graph.defer-hold-size). */
extern u64 deferred_callchains_hold_limit;

int deferred_callchains__hold(struct evlist *evlist, const struct perf_tool *tool,
			      union perf_event *event, struct perf_sample *sample,
			      struct machine *machine, deferred_deliver_fn deliver);
int deferred_callchains__record(struct evlist *evlist, const struct perf_tool *tool,
				struct perf_sample *record, deferred_deliver_fn deliver);
int deferred_callchains__flush(struct evlist *evlist, const struct perf_tool *tool,
			       deferred_deliver_fn deliver);
void deferred_callchains__delete(struct evlist *evlist);

int sample__merge_deferred_callchain(struct perf_sample *sample,
				     const struct ip_callchain *user);

#endif /* __PERF_CALLCHAIN_DEFERRED_H */
