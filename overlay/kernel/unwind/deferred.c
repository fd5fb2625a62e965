// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user space stack unwinding.
 *
 * A profiler interrupt cannot fault in user stack pages, and walking the whole
 * user stack for every sample repeats the same work. Users of this core ask
 * for the user stack from any context, including NMI, and get a cookie naming
 * the current entry context (one stay of the task in the kernel). Before the
 * task returns to user space the stack is walked once, in task context, and
 * every user that asked gets a callback with the stack and that cookie.
 *
 * Per task state lives in task_struct::unwind_info and is only changed by the
 * task itself (in task, IRQ or NMI context on its own CPU), except that
 * unwind_deferred_cancel() clears a departing user's bits in every task.
 */
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/mmap_lock.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/resume_user_mode.h>
#include <linux/rculist.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/sframe.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/uprobes.h>
#include <linux/unwind_user.h>

#include <asm/local64.h>

#include "deferred.h"
#include "stats.h"

/* Core bits at the top of unwind_task_info::mask; users get the rest. */
#define UNWIND_PENDING_BIT	(BITS_PER_LONG - 1)	/* task work queued */
#define UNWIND_RESET_BIT	(BITS_PER_LONG - 2)	/* reset in progress */
#define UNWIND_USED_BIT		(BITS_PER_LONG - 3)	/* cookie handed out */
#define UNWIND_SAMPLED_BIT	(BITS_PER_LONG - 4)	/* a sample asked */
#define UNWIND_MANY_BIT		(BITS_PER_LONG - 5)	/* and another one */
#define UNWIND_PENDING		BIT(UNWIND_PENDING_BIT)
#define UNWIND_RESET		BIT(UNWIND_RESET_BIT)
#define UNWIND_USED		BIT(UNWIND_USED_BIT)
#define UNWIND_SAMPLED		BIT(UNWIND_SAMPLED_BIT)
#define UNWIND_MANY		BIT(UNWIND_MANY_BIT)
#define UNWIND_MAX_USERS	(BITS_PER_LONG - 5)
#define UNWIND_USERS_MASK	(BIT(UNWIND_MAX_USERS) - 1)

#ifdef CONFIG_64BIT
static_assert(UNWIND_MAX_USERS >= 32);
#endif

/*
 * A cookie is a per-CPU sequence number above the CPU number plus one, which
 * takes fls(nr_cpu_ids) bits: non-zero and unique system wide, whatever the
 * number of CPUs.
 */

static DEFINE_MUTEX(unwind_users_lock);
static LIST_HEAD(unwind_users);
static unsigned long unwind_users_bits;	/* under unwind_users_lock */
DEFINE_STATIC_SRCU(unwind_srcu);

static DEFINE_PER_CPU(local64_t, unwind_cookie_seq);

static const char * const unwind_stat_names[NR_UNWIND_STATS] = {
	[UNWIND_STAT_REQUESTS]		= "requests",
	[UNWIND_STAT_REQUESTS_NMI]	= "requests_nmi",
	[UNWIND_STAT_QUEUED]		= "queued",
	[UNWIND_STAT_JOINED]		= "joined",
	[UNWIND_STAT_ALREADY_PENDING]	= "already_pending",
	[UNWIND_STAT_ALREADY_RUN]	= "already_run",
	[UNWIND_STAT_REJECTED]		= "rejected",
	[UNWIND_STAT_BUSY]		= "busy",
	[UNWIND_STAT_WALKS]		= "walks",
	[UNWIND_STAT_CACHE_REUSES]	= "cache_reuses",
	[UNWIND_STAT_CACHED_SAMPLES]	= "cached_after_run",
	[UNWIND_STAT_FRAMES]		= "frames",
	[UNWIND_STAT_WALK_NS]		= "walk_ns",
	[UNWIND_STAT_TIMED_WALKS]	= "timed_walks",
	[UNWIND_STAT_TIMED_FRAMES]	= "timed_frames",
	[UNWIND_STAT_WAITED_WALKS]	= "waited_walks",
	[UNWIND_STAT_STOP_FAULT]	= "stop_fault",
	[UNWIND_STAT_STOP_BAD_FRAME]	= "stop_bad_frame",
	[UNWIND_STAT_TRUNCATED]		= "truncated",
	[UNWIND_STAT_RUNS]		= "runs",
	[UNWIND_STAT_CALLBACKS]		= "callbacks",
	[UNWIND_STAT_EXIT_COMPLETIONS]	= "exit_completions",
	[UNWIND_STAT_EXIT_LOCKED_OUT]	= "exit_locked_out",
	[UNWIND_STAT_EXEC_COMPLETIONS]	= "exec_completions",
	[UNWIND_STAT_ERRORS]		= "errors",
	[UNWIND_STAT_TRY_WALKS]		= "try_walks",
	[UNWIND_STAT_TRY_USED]		= "try_used",
	[UNWIND_STAT_TRY_NOT_RESIDENT]	= "try_not_resident",
	[UNWIND_STAT_TRY_SKIPPED_SFRAME] = "try_skipped_sframe",
	[UNWIND_STAT_TRY_MAPS_CHANGED]	= "try_maps_changed",
	[UNWIND_STAT_BUSY_WALKED]	= "busy_walked",
	[UNWIND_STAT_NOW_WALKS]		= "now_walks",
	[UNWIND_STAT_NOW_USED]		= "now_used",
	[UNWIND_STAT_NOW_PREDICTED]	= "now_predicted",
	[UNWIND_STAT_ENTRIES_ONE]	= "entries_one",
	[UNWIND_STAT_ENTRIES_MANY]	= "entries_many",
	[UNWIND_STAT_BPF_WALKS]		= "bpf_walks",
	[UNWIND_STAT_BPF_COMPLETE]	= "bpf_complete",
	[UNWIND_STAT_BPF_UNMET]		= "bpf_unmet",
	[UNWIND_STAT_BPF_BAD]		= "bpf_bad",
	[UNWIND_STAT_BPF_FAULTABLE]	= "bpf_faultable",
	[UNWIND_STAT_BPF_NO_USER]	= "bpf_no_user",
	[UNWIND_STAT_BPF_WARMUPS_QUEUED] = "bpf_warmups_queued",
	[UNWIND_STAT_BPF_WARMUPS]	= "bpf_warmups",
};

DEFINE_PER_CPU(struct unwind_stats, unwind_stats);

/*
 * Time every walk (debugfs unwind_deferred/time_walks), for the walk_ns
 * counter. Off, only walks an NMI sample asked for are timed: two clock
 * reads per walk are a tenth of a short walk's task work.
 */
static bool unwind_time_walks;

/*
 * Called with interrupts disabled (or from NMI) on the current task. The
 * first request of an entry context also notes the user state to walk
 * from: the kernel may rewrite the saved user registers before the walk
 * (a signal frame set up after the request, a restarted system call), and
 * the walk must give the stack the request was made on. An NMI that
 * comes in between notes the same registers.
 */
static u64 unwind_get_cookie(struct unwind_task_info *info)
{
	u64 old = READ_ONCE(info->cookie);
	u64 new;

	if (old)
		return old;

	unwind_user_save_regs(&info->regs);

	new = (u64)local64_inc_return(this_cpu_ptr(&unwind_cookie_seq));
	new = (new << fls(nr_cpu_ids)) | (smp_processor_id() + 1);

	/* An NMI may have handed out a cookie since the read above. */
	old = cmpxchg64_local(&info->cookie, 0, new);
	return old ?: new;
}

/*
 * The bits a sample adds to a mask of @old: the first sample of an entry
 * context marks it sampled, a second one marks it as having many. What
 * __unwind_reset_info() learns from at the end of the entry context.
 */
static unsigned long unwind_sample_bits(unsigned long old)
{
	return old & UNWIND_SAMPLED ? UNWIND_MANY : UNWIND_SAMPLED;
}

/*
 * The walk of this entry context must keep at least @nr entries. Only the
 * task itself writes the field, from task, IRQ or NMI context on its own
 * CPU: a CPU-local cmpxchg is enough.
 */
static void unwind_want_entries(struct unwind_task_info *info,
				unsigned int nr)
{
	unsigned int old = READ_ONCE(info->max_entries);

	nr = min_t(unsigned int, nr, UNWIND_MAX_ENTRIES);
	do {
		if (old >= nr)
			return;
	} while (!try_cmpxchg_local(&info->max_entries, &old, nr));
}

/**
 * __unwind_deferred_request - unwind_deferred_request_max(), for a sample
 * or not
 * @work: as for unwind_deferred_request_max()
 * @cookie: as for unwind_deferred_request_max()
 * @max_entries: as for unwind_deferred_request_max()
 * @sample: the request is a sample's, and counts towards how many samples
 *	    the entry context got (the walk for BPF's warm-up is none)
 *
 * Context: as unwind_deferred_request_max().
 *
 * Return: as unwind_deferred_request_max().
 */
int __unwind_deferred_request(struct unwind_work *work, u64 *cookie,
			      unsigned int max_entries, bool sample)
{
	struct unwind_task_info *info = &current->unwind_info;
	unsigned long flags, old, new, bit;
	int nr, ret;

	*cookie = 0;
	unwind_stat_inc(UNWIND_STAT_REQUESTS);
	if (in_nmi())
		unwind_stat_inc(UNWIND_STAT_REQUESTS_NMI);

	if ((current->flags & (PF_KTHREAD | PF_USER_WORKER | PF_EXITING)) ||
	    !current->mm || !user_mode(task_pt_regs(current))) {
		unwind_stat_inc(UNWIND_STAT_REJECTED);
		return -EINVAL;
	}

	/* unwind_deferred_cancel() waits for this section (synchronize_rcu). */
	local_irq_save(flags);

	/* Set and read by this task only; an NMI runs to its end. */
	if (READ_ONCE(info->in_exec)) {
		unwind_stat_inc(UNWIND_STAT_BUSY);
		ret = -EBUSY;
		goto out;
	}

	nr = READ_ONCE(work->bit);
	if (nr < 0) {
		unwind_stat_inc(UNWIND_STAT_REJECTED);
		ret = -EINVAL;
		goto out;
	}
	bit = BIT(nr);

	old = READ_ONCE(info->mask);
	for (;;) {
		if (old & UNWIND_RESET) {
			unwind_stat_inc(UNWIND_STAT_BUSY);
			ret = -EBUSY;
			goto out;
		}
		new = old | (sample ? unwind_sample_bits(old) : 0);
		if (!(old & bit))
			new |= bit | UNWIND_PENDING | UNWIND_USED;
		if (new == old || try_cmpxchg(&info->mask, &old, new))
			break;
	}
	if (old & bit) {
		/*
		 * The callback sets its done bit before it starts: what it
		 * hands out from then on cannot include this request.
		 */
		if (test_bit(nr, &info->done)) {
			unwind_stat_inc(UNWIND_STAT_ALREADY_RUN);
			ret = -EALREADY;
			goto out;
		}
		unwind_stat_inc(UNWIND_STAT_ALREADY_PENDING);
		*cookie = unwind_get_cookie(info);
		unwind_want_entries(info, max_entries);
		ret = 1;
		goto out;
	}

	*cookie = unwind_get_cookie(info);
	unwind_want_entries(info, max_entries);
	ret = 0;

	/* Another request queued the task work; it will see our bit. */
	if (old & UNWIND_PENDING) {
		unwind_stat_inc(UNWIND_STAT_JOINED);
		goto out;
	}

	/*
	 * TWA_RESUME takes effect in the exit-to-user loop; a request made
	 * after the loop last looked (on the way out, interrupts off) is
	 * caught by __unwind_reset_info(). NMI cannot set the flag itself:
	 * TWA_NMI_CURRENT does it from a self-IPI. With interrupts off,
	 * allocate nothing.
	 */
	if (in_nmi())
		ret = task_work_add(current, &info->work, TWA_NMI_CURRENT);
	else if (irqs_disabled_flags(flags))
		ret = task_work_add(current, &info->work,
				    TWA_RESUME | TWAF_NO_ALLOC);
	else
		ret = task_work_add(current, &info->work, TWA_RESUME);
	if (ret) {
		/*
		 * Only a task past exit_task_work() fails here, and exiting
		 * tasks were refused above; an NMI request that piggy-backed
		 * on this one in between would lose its callback.
		 */
		old = READ_ONCE(info->mask);
		while (!try_cmpxchg(&info->mask, &old,
				    old & ~(bit | UNWIND_PENDING)))
			;
		unwind_stat_inc(UNWIND_STAT_ERRORS);
		*cookie = 0;
		goto out;
	}
	unwind_stat_inc(UNWIND_STAT_QUEUED);
out:
	/* The requester's throttle will want to know what the walk cost. */
	if (ret >= 0 && in_nmi())
		WRITE_ONCE(info->time_walk, true);
	local_irq_restore(flags);
	return ret;
}

/**
 * unwind_deferred_request_max - ask for the current task's user stack
 * @work: a user registered with unwind_deferred_init()
 * @cookie: set to the cookie of the current entry context, 0 on error
 * @max_entries: the most entries this request needs (the walk goes as deep
 *		 as the deepest request of the entry context, at most the
 *		 per-task cache)
 *
 * Before the task returns to user space, @work's callback runs once with the
 * user stack and the same cookie. Every request in one entry context gets
 * the same cookie; the next entry context gets another. Context: task, IRQ
 * or NMI context of the current task; nothing is allocated or locked.
 *
 * Return: 0 when the callback was queued by this call; 1 when it was already
 * queued in this entry context and has not run yet; -EALREADY when it has
 * already run in this entry context (the request came from an interrupt
 * during the callbacks or later on the way out), so no callback comes for
 * this request; -EINVAL for kernel threads, exiting tasks, a cancelled @work
 * or registers that are not user mode; -EBUSY in the few instructions in
 * which the task is leaving the kernel, and while it replaces its image in
 * execve() (between unwind_deferred_exec_begin() and _end()); -ESRCH if
 * the task work could not be queued.
 */
int unwind_deferred_request_max(struct unwind_work *work, u64 *cookie,
				unsigned int max_entries)
{
	return __unwind_deferred_request(work, cookie, max_entries, true);
}
EXPORT_SYMBOL_GPL(unwind_deferred_request_max);

/* unwind_fixup_uretprobes() where the task has a pending uretprobe. */
void __unwind_fixup_uretprobes(struct unwind_stacktrace *trace)
{
#ifdef CONFIG_UPROBES
	struct return_instance *ri = current->utask->return_instances;
	unsigned long tramp = uprobe_get_trampoline_vaddr();
	unsigned int i;

	for (i = 0; ri && i < trace->nr; i++) {
		if (trace->entries[i] == tramp) {
			trace->entries[i] = ri->orig_ret_vaddr;
			ri = ri->next;
		}
	}
#endif
}

/* The times the current task left the CPU, voluntarily or not. */
static unsigned long unwind_task_switches(void)
{
	return READ_ONCE(current->nvcsw) + READ_ONCE(current->nivcsw);
}

/*
 * Account a timed walk that started at @start on @cpu, the task having
 * left the CPU @switches times. Its time is CPU time only where it never
 * left the CPU: a fault that waited for I/O (a cold table page, a file on
 * NFS or FUSE), a contended lock or a reschedule between frames lets other
 * tasks run, and after a migration two CPUs' clocks are compared. Such a
 * walk says so (@trace->walk_waited) and gives no time: perf's sample-time
 * throttle, which lowers every user's sample rate, must not count it.
 */
static void unwind_deferred_timed(struct unwind_stacktrace *trace, u64 start,
				  unsigned int cpu, unsigned long switches)
{
	u64 ns = local_clock() - start;

	if (raw_smp_processor_id() != cpu ||
	    unwind_task_switches() != switches) {
		trace->walk_waited = true;
		unwind_stat_inc(UNWIND_STAT_WAITED_WALKS);
		return;
	}
	trace->walk_ns = ns;
	unwind_stat_add(UNWIND_STAT_WALK_NS, ns);
	unwind_stat_inc(UNWIND_STAT_TIMED_WALKS);
	unwind_stat_add(UNWIND_STAT_TIMED_FRAMES, trace->nr);
}

/*
 * The user stack of this entry context: walked once, as deep as the deepest
 * request, then reused (walked again only when a later request needs more
 * than a walk that was cut short).
 */
static void unwind_deferred_trace(struct unwind_task_info *info,
				  struct unwind_stacktrace *trace)
{
	struct unwind_cache *cache = info->cache;
	unsigned long switches = 0;
	unsigned int want, cpu = 0;
	u64 start = 0;
	bool timed;
	int stop;

	trace->nr = 0;
	trace->entries = NULL;
	trace->walk_ns = 0;
	trace->walk_waited = false;

	if (!cache) {
		cache = kmalloc(SZ_4K, GFP_KERNEL);
		if (!cache) {
			unwind_stat_inc(UNWIND_STAT_ERRORS);
			return;
		}
		cache->valid = false;
		/* unwind_deferred_cached() reads it from interrupts. */
		barrier();
		WRITE_ONCE(info->cache, cache);
	}

	want = READ_ONCE(info->max_entries) ?: UNWIND_MAX_ENTRIES;
	trace->entries = cache->entries;
	if (cache->valid && (!cache->truncated || cache->nr_entries >= want)) {
		trace->nr = min(cache->nr_entries, want);
		unwind_stat_inc(UNWIND_STAT_CACHE_REUSES);
		return;
	}

	/* Once per new executable mapping: may the walk skip the tables? */
	if (unwind_user_methods() & unwind_user_table_types(info->regs.ws))
		sframe_mm_settle();

	/*
	 * unwind_deferred_cached() may look from an interrupt of this task,
	 * on this CPU: the entries are only read while valid is set.
	 */
	WRITE_ONCE(cache->valid, false);
	barrier();

	timed = READ_ONCE(unwind_time_walks) || READ_ONCE(info->time_walk);
	if (timed) {
		cpu = raw_smp_processor_id();
		switches = unwind_task_switches();
		start = local_clock();
	}
	stop = unwind_user(trace, want, &info->regs);
	unwind_fixup_uretprobes(trace);
	unwind_stat_inc(UNWIND_STAT_WALKS);
	unwind_stat_add(UNWIND_STAT_FRAMES, trace->nr);
	if (timed)
		unwind_deferred_timed(trace, start, cpu, switches);

	switch (stop) {
	case UNWIND_USER_END:
		break;
	case UNWIND_USER_FAULT:
		unwind_stat_inc(UNWIND_STAT_STOP_FAULT);
		break;
	case UNWIND_USER_BAD_FRAME:
		unwind_stat_inc(UNWIND_STAT_STOP_BAD_FRAME);
		break;
	case UNWIND_USER_TRUNCATED:
		unwind_stat_inc(UNWIND_STAT_TRUNCATED);
		break;
	case UNWIND_USER_BUDGET:
		break;		/* counted by the tables' stop_budget */
	default:
		unwind_stat_inc(UNWIND_STAT_ERRORS);
		break;
	}

	cache->nr_entries = trace->nr;
	cache->truncated = stop == UNWIND_USER_TRUNCATED;
	barrier();
	WRITE_ONCE(cache->valid, true);
}

/*
 * How many samples the task's entry contexts get, from the last few: a
 * saturating count raised by an entry context with two samples or more
 * and lowered by one with one sample, so that a single odd entry context
 * in a steady stream changes nothing and a change of pattern is followed
 * within two entry contexts. Entry contexts with no sample do not count.
 * Written only by __unwind_reset_info() on the task's way out, read by its
 * first sample of the next: no other CPU touches it.
 */
#define UNWIND_MANY_MAX		3	/* the count saturates here */
#define UNWIND_MANY_PREDICT	2	/* from here on, more samples will come */

static void unwind_deferred_learn(struct unwind_task_info *info, bool many)
{
	u8 n = READ_ONCE(info->many_score);

	if (many && n < UNWIND_MANY_MAX)
		n++;
	else if (!many && n)
		n--;
	WRITE_ONCE(info->many_score, n);
	unwind_stat_inc(many ? UNWIND_STAT_ENTRIES_MANY :
			UNWIND_STAT_ENTRIES_ONE);
}

/* Will this entry context, as the last ones, get more than one sample? */
static bool unwind_deferred_many(struct unwind_task_info *info)
{
	return READ_ONCE(info->many_score) >= UNWIND_MANY_PREDICT;
}

/**
 * unwind_deferred_claim - take the current entry context's walk on now
 * @predict: not where the task's recent entry contexts had more than one
 *	     sample each (unwind_deferred_many())
 *
 * For a walk made at the first sample of an entry context
 * (unwind_deferred_walk_now()): marks the entry context used, so that the
 * way out forgets the walk, and empties the per-task cache for it. Later
 * requests in the entry context are queued as usual, and their callback
 * gets the walk stored by unwind_deferred_claimed().
 *
 * Context: the current task, interrupts disabled; not NMI.
 *
 * Return: the cache, or NULL when a request was made in this entry context
 * already (an NMI's, too), the task is in execve(), it has no cache yet
 * (its first walk allocates it), or @predict says more samples will come.
 */
struct unwind_cache *unwind_deferred_claim(bool predict)
{
	struct unwind_task_info *info = &current->unwind_info;
	struct unwind_cache *cache = info->cache;
	unsigned long old = 0;

	lockdep_assert_irqs_disabled();
	/* Later samples of the entry context see the mask set: no locked op. */
	if (!cache || READ_ONCE(info->in_exec) || READ_ONCE(info->mask))
		return NULL;
	if (predict && unwind_deferred_many(info)) {
		unwind_stat_inc(UNWIND_STAT_NOW_PREDICTED);
		return NULL;
	}
	/* The walk is this sample's: unwind_deferred_claimed() if it fails. */
	if (!try_cmpxchg(&info->mask, &old, UNWIND_USED | UNWIND_SAMPLED))
		return NULL;
	WRITE_ONCE(cache->valid, false);
	barrier();
	return cache;
}

/**
 * unwind_deferred_claimed - keep a walk as the entry context's
 * @cache: the cache unwind_deferred_claim() returned
 * @trace: the walk, stored in @cache->entries; NULL when it failed
 * @truncated: it stopped at its entry limit with frames left
 *
 * Context: as unwind_deferred_claim(), in the same section with
 * interrupts disabled.
 */
void unwind_deferred_claimed(struct unwind_cache *cache,
			     struct unwind_stacktrace *trace, bool truncated)
{
	struct unwind_task_info *info = &current->unwind_info;
	unsigned long old;

	lockdep_assert_irqs_disabled();
	if (!trace) {
		/*
		 * The sample requests next, and counts then. A request an
		 * NMI made since the claim was a second sample: it marked
		 * the stay as having many, which stays.
		 */
		old = READ_ONCE(info->mask);
		while (!try_cmpxchg(&info->mask, &old, old & ~UNWIND_SAMPLED))
			;
		return;
	}
	unwind_fixup_uretprobes(trace);
	unwind_stat_add(UNWIND_STAT_FRAMES, trace->nr);
	cache->nr_entries = trace->nr;
	cache->truncated = truncated;
	barrier();
	WRITE_ONCE(cache->valid, true);
}

/**
 * unwind_deferred_cached - the walk of the current entry context, if made
 * @entries: set to the walk, innermost first
 *
 * For a user whose request got -EALREADY: the callbacks of this entry
 * context have run, so its walk is done and is the user stack of the
 * sample at hand too (the task has not been back in user space since).
 * Also for the sample whose unwind_deferred_walk_now() made the walk.
 *
 * Context: any context of the current task while it is in the kernel,
 * NMI included. The entries stay valid until the task returns to user
 * space, or until the context this interrupted returns.
 *
 * Return: the number of entries (at most the deepest request of the entry
 * context asked for), 0 when there is no walk to give.
 */
unsigned int unwind_deferred_cached(const unsigned long **entries)
{
	struct unwind_cache *cache = READ_ONCE(current->unwind_info.cache);
	unsigned int nr;

	if (!cache || !READ_ONCE(cache->valid))
		return 0;
	barrier();
	nr = cache->nr_entries;
	*entries = cache->entries;
	unwind_stat_inc(UNWIND_STAT_CACHED_SAMPLES);
	return nr;
}
EXPORT_SYMBOL_GPL(unwind_deferred_cached);

/*
 * Walk the stack (or reuse this entry context's walk) and run the callback
 * of every user that asked and has not had it yet. Task context.
 */
static bool unwind_deferred_run(struct unwind_task_info *info)
{
	struct unwind_stacktrace trace;
	struct unwind_work *work;
	unsigned long old, todo, flags;
	u64 cookie;
	int idx;

	old = READ_ONCE(info->mask);
	do {
		if (!(old & UNWIND_PENDING))
			return false;
	} while (!try_cmpxchg(&info->mask, &old, old & ~UNWIND_PENDING));
	unwind_stat_inc(UNWIND_STAT_RUNS);

	todo = old & UNWIND_USERS_MASK & ~READ_ONCE(info->done);
	if (!todo)
		return false;

	/* Every request set it; a missing one is made as a request would. */
	cookie = READ_ONCE(info->cookie);
	if (unlikely(!cookie)) {
		local_irq_save(flags);
		cookie = unwind_get_cookie(info);
		local_irq_restore(flags);
	}

	unwind_deferred_trace(info, &trace);

	idx = srcu_read_lock(&unwind_srcu);
	list_for_each_entry_srcu(work, &unwind_users, list,
				 srcu_read_lock_held(&unwind_srcu)) {
		int nr = READ_ONCE(work->bit);

		if (nr < 0 || !(todo & BIT(nr)))
			continue;
		/*
		 * The walk may have slept: a user cancelled meanwhile has its
		 * bit cleared (and the slot may have a new owner that did not
		 * ask). Run each asking user once.
		 */
		if (!test_bit(nr, &info->mask) ||
		    test_and_set_bit(nr, &info->done))
			continue;
		work->func(work, &trace, cookie);
		unwind_stat_inc(UNWIND_STAT_CALLBACKS);
	}
	srcu_read_unlock(&unwind_srcu, idx);
	return true;
}

static void unwind_deferred_task_work(struct callback_head *head)
{
	unwind_deferred_run(container_of(head, struct unwind_task_info, work));
}

/*
 * The self-IPI that brings a task back into the kernel right after it
 * returned to user space with the task work still queued: the return from
 * the IPI goes through the exit-to-user loop, which runs it.
 */
static void unwind_kick_func(struct irq_work *work)
{
	set_notify_resume(current);
}

static DEFINE_PER_CPU(struct irq_work, unwind_kick) =
	IRQ_WORK_INIT_HARD(unwind_kick_func);

/**
 * __unwind_reset_info - start a new entry context
 *
 * Called through unwind_reset_info() on the way to user space, interrupts
 * disabled, after the last point where a perf event can fire (only NMIs
 * come after it). Keeps everything while the task work is still queued: it
 * was asked for after the exit-to-user loop last looked for work (by code
 * running with interrupts off on the way out, or by an NMI). A self-IPI
 * then brings the task straight back in, with the same user state, and the
 * exit-to-user loop runs the work under the same cookie.
 *
 * Return: false when the state was kept because the task work is pending.
 */
bool __unwind_reset_info(void)
{
	struct unwind_task_info *info = &current->unwind_info;
	unsigned long old = READ_ONCE(info->mask);

	do {
		if (!old)
			return true;
		if (old & UNWIND_PENDING) {
			irq_work_queue(this_cpu_ptr(&unwind_kick));
			return false;
		}
		if (old & UNWIND_RESET)
			return false;
	} while (!try_cmpxchg(&info->mask, &old, UNWIND_RESET));

	/* Not an execve(): its new image starts an entry context of its own. */
	if ((old & UNWIND_SAMPLED) && !READ_ONCE(info->in_exec))
		unwind_deferred_learn(info, old & UNWIND_MANY);
	/* NMI requests see RESET and back off until the mask is clear. */
	WRITE_ONCE(info->cookie, 0);
	WRITE_ONCE(info->done, 0);
	WRITE_ONCE(info->max_entries, 0);
	WRITE_ONCE(info->time_walk, false);
	if (info->cache)
		WRITE_ONCE(info->cache->valid, false);
	/* Order the clearing above before requests may start again. */
	smp_store_release(&info->mask, 0);
	return true;
}

/**
 * unwind_deferred_task_exit - complete requests of an exiting task
 * @task: the current task, with PF_EXITING set and its mm still present
 *
 * Runs the callbacks of a pending request now, with the real user stack,
 * instead of leaving them to the task work that would run after the mm is
 * gone. No new request can be made once PF_EXITING is set. A task that
 * cannot take its mmap lock (it may hold it itself, after an oops) is
 * walked without page faults.
 */
void unwind_deferred_task_exit(struct task_struct *task)
{
	struct unwind_task_info *info = &task->unwind_info;
	struct mm_struct *mm = task->mm;
	bool locked_out;
	bool ran;

	if (!(READ_ONCE(info->mask) & UNWIND_PENDING))
		return;
	task_work_cancel(task, &info->work);
	/*
	 * A task that dies in the kernel may hold its own mmap lock (an oops
	 * in a page fault): a page fault, or a lookup of the tables, would
	 * wait for it forever. When the lock cannot be had now, walk without
	 * faults, which also leaves the tables out (frame pointers only).
	 * Held for reading, the trylock succeeds and the walk may take the
	 * lock again for reading, as exit_mm() does next: only a writer
	 * waiting for it makes that wait, and then exit_mm() waits too.
	 */
	locked_out = mm && !mmap_read_trylock(mm);
	if (mm && !locked_out)
		mmap_read_unlock(mm);
	if (locked_out) {
		unwind_stat_inc(UNWIND_STAT_EXIT_LOCKED_OUT);
		pagefault_disable();
	}
	ran = unwind_deferred_run(info);
	if (locked_out)
		pagefault_enable();
	if (ran)
		unwind_stat_inc(UNWIND_STAT_EXIT_COMPLETIONS);
}

/*
 * Whether requests of the current task are refused with -EBUSY now: it is
 * replacing its image in execve(), or leaving the kernel. For the walk in
 * an interrupt, which then stands in for a classic walk, not a deferral.
 */
bool unwind_deferred_refusing(void)
{
	const struct unwind_task_info *info = &current->unwind_info;

	return READ_ONCE(info->in_exec) || (READ_ONCE(info->mask) & UNWIND_RESET);
}

/**
 * unwind_deferred_exec_begin - complete requests before execve() starts
 *
 * Called by execve() before it takes any lock. Runs pending callbacks
 * against the old image, under the old cookie and the task's own tid (a
 * non-leader thread takes the leader's tid in de_thread()), then starts a
 * new entry context. Until unwind_deferred_exec_end(), requests get -EBUSY,
 * so that their users take the stack at once: no deferred walk may straddle
 * the tid change or the switch to the new mm. Page faults and callbacks
 * thus run with no execve() lock held (cred_guard_mutex is taken later).
 *
 * Context: process context of the current task, may sleep.
 */
void unwind_deferred_exec_begin(void)
{
	struct unwind_task_info *info = &current->unwind_info;
	bool reset;

	WRITE_ONCE(info->in_exec, true);
	WRITE_ONCE(info->exec_new_mm, false);
	/* Requests from interrupts on this CPU see the flag from here on. */
	barrier();

	for (;;) {
		if (READ_ONCE(info->mask) & UNWIND_PENDING) {
			task_work_cancel(current, &info->work);
			if (unwind_deferred_run(info))
				unwind_stat_inc(UNWIND_STAT_EXEC_COMPLETIONS);
			continue;
		}
		local_irq_disable();
		reset = __unwind_reset_info();
		local_irq_enable();
		if (reset)
			return;
	}
}

/**
 * unwind_deferred_exec_end - let requests be deferred again after execve()
 *
 * Called once the new mm is in place, or when execve() fails: requests from
 * then on are walked on the return to user space, in the new image (or the
 * old one, if execve() failed before its point of no return).
 *
 * Context: process context of the current task.
 */
void unwind_deferred_exec_end(void)
{
	struct unwind_task_info *info = &current->unwind_info;

	/*
	 * Called by begin_new_exec() with the new mm in place (in_execve is
	 * set): the registers are the old image's until the loader sets the
	 * new ones. A failure after that point leaves them so, and the task
	 * dies.
	 */
	if (current->in_execve)
		WRITE_ONCE(info->exec_new_mm, true);
	WRITE_ONCE(info->in_exec, false);
}

/**
 * unwind_deferred_exec_new_regs - walk the new image from its entry
 *
 * Called by a successful execve() once the binary loader has set the new
 * image's user registers, which it does last: requests made since
 * unwind_deferred_exec_end() (page faults while the image was loaded)
 * noted the old image's registers. Their walk on the way out starts where
 * the task will start, at the new image's entry. A request from an NMI in
 * between notes the same registers: only the first request of an entry
 * context writes them, and this one only after it.
 *
 * Context: process context of the current task.
 */
void unwind_deferred_exec_new_regs(void)
{
	struct unwind_task_info *info = &current->unwind_info;

	WRITE_ONCE(info->exec_new_mm, false);
	if (READ_ONCE(info->cookie))
		unwind_user_save_regs(&info->regs);
}

/**
 * unwind_task_init - initialize a new task's deferred unwind state
 * @task: the task being created, before it can run
 */
void unwind_task_init(struct task_struct *task)
{
	struct unwind_task_info *info = &task->unwind_info;

	memset(info, 0, sizeof(*info));
	init_task_work(&info->work, unwind_deferred_task_work);
}

/**
 * unwind_task_free - release a task's deferred unwind state
 * @task: the task being freed
 */
void unwind_task_free(struct task_struct *task)
{
	kfree(task->unwind_info.cache);
	task->unwind_info.cache = NULL;
}

/**
 * unwind_deferred_init - register a user of deferred unwinding
 * @work: the user's descriptor, valid until unwind_deferred_cancel()
 * @func: the callback that receives the stacks
 *
 * Context: process context, may sleep.
 *
 * Return: 0, or -EBUSY when all UNWIND_MAX_USERS (BITS_PER_LONG - 5) user
 * slots are taken.
 */
int unwind_deferred_init(struct unwind_work *work, unwind_callback_t func)
{
	int nr;

	memset(work, 0, sizeof(*work));
	work->bit = -1;

	mutex_lock(&unwind_users_lock);
	nr = find_first_zero_bit(&unwind_users_bits, UNWIND_MAX_USERS);
	if (nr >= UNWIND_MAX_USERS) {
		mutex_unlock(&unwind_users_lock);
		return -EBUSY;
	}
	__set_bit(nr, &unwind_users_bits);
	work->func = func;
	WRITE_ONCE(work->bit, nr);
	list_add_rcu(&work->list, &unwind_users);
	mutex_unlock(&unwind_users_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(unwind_deferred_init);

/**
 * unwind_deferred_cancel - unregister a user of deferred unwinding
 * @work: a user registered with unwind_deferred_init()
 *
 * After this returns, @work's callback is not running and never runs again,
 * and requests with @work fail with -EINVAL. Requests still pending for
 * @work are dropped. Calling it again after it returned is harmless; two
 * concurrent calls for the same @work are not allowed.
 *
 * The users mutex is only held to take @work off the list: the grace
 * periods and the walk over every thread run without it, so that
 * registering other users does not wait for them.
 *
 * Context: process context, may sleep; not from @work's own callback.
 */
void unwind_deferred_cancel(struct unwind_work *work)
{
	struct task_struct *g, *t;
	int nr;

	mutex_lock(&unwind_users_lock);
	nr = work->bit;
	if (nr < 0) {
		mutex_unlock(&unwind_users_lock);
		return;
	}
	WRITE_ONCE(work->bit, -1);
	list_del_rcu(&work->list);
	/* The slot stays taken (unwind_users_bits) until it is clean. */
	mutex_unlock(&unwind_users_lock);

	/* Requests run with interrupts off; callbacks under SRCU. */
	synchronize_rcu();
	synchronize_srcu(&unwind_srcu);

	/* Let the slot's next owner start clean in every task. */
	rcu_read_lock();
	for_each_process_thread(g, t) {
		clear_bit(nr, &t->unwind_info.mask);
		clear_bit(nr, &t->unwind_info.done);
	}
	rcu_read_unlock();

	mutex_lock(&unwind_users_lock);
	__clear_bit(nr, &unwind_users_bits);
	mutex_unlock(&unwind_users_lock);
}
EXPORT_SYMBOL_GPL(unwind_deferred_cancel);

static int unwind_counters_show(struct seq_file *m, void *v)
{
	unwind_stats_show(m, unwind_stat_names, unwind_stats.val,
			  NR_UNWIND_STATS);
	mutex_lock(&unwind_users_lock);
	seq_printf(m, "users %u\n",
		   bitmap_weight(&unwind_users_bits, UNWIND_MAX_USERS));
	mutex_unlock(&unwind_users_lock);
	seq_printf(m, "max_users %u\n", UNWIND_MAX_USERS);
	seq_printf(m, "max_entries %zu\n", UNWIND_MAX_ENTRIES);
	unwind_try_first_show(m);
	sframe_counters_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(unwind_counters);

static int __init unwind_deferred_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("unwind_deferred", NULL);

	debugfs_create_file("counters", 0444, dir, NULL, &unwind_counters_fops);
	debugfs_create_bool("time_walks", 0644, dir, &unwind_time_walks);
	return 0;
}
late_initcall(unwind_deferred_debugfs_init);
