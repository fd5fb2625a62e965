// SPDX-License-Identifier: GPL-2.0
/*
 * For the test driver (test.c): a writer that keeps the per-mm unwind
 * table of the task that asks busy from another CPU, as threads of a
 * process that map and probe libraries do, so that a test can check that
 * a walk which may fault waits for such writers rather than ending short.
 *
 * The writer holds the table's lock inside its write section for
 * TEST_BUSY_HOLD_US at a time, lets go briefly (long enough for a task
 * queued on the lock to take it), and starts again, for the milliseconds
 * asked. It starts once the mm has a table, so a fresh process's first
 * walk meets it.
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "mm_cache.h"
#include "test.h"

#define TEST_BUSY_HOLD_US	100
#define TEST_BUSY_MAX_MS	1000

struct test_busy {
	struct mm_struct	*mm;
	u64			until_ns;
	struct completion	*started;	/* the asker's, until running */
};

#ifdef CONFIG_UNWIND_USER_SFRAME
static void test_busy_hold(struct sframe_mm *c)
{
	raw_spin_lock(&c->lock);
	write_seqcount_begin(&c->seq);
	udelay(TEST_BUSY_HOLD_US);
	write_seqcount_end(&c->seq);
	raw_spin_unlock(&c->lock);
}

static int test_busy_fn(void *arg)
{
	struct test_busy *b = arg;
	struct sframe_mm *c;

	complete(b->started);
	while (ktime_get_ns() < b->until_ns && !kthread_should_stop()) {
		/* Pairs with the cmpxchg_release() that set the table up. */
		c = smp_load_acquire(&b->mm->sframe_cache);
		if (c)
			test_busy_hold(c);
		/* A window for a waiter on the lock; others may run too. */
		ndelay(200);
		cond_resched();
	}
	mmdrop(b->mm);
	kfree(b);
	/* The module stays until this thread is gone. */
	module_put_and_kthread_exit(0);
}

/**
 * test_busy_table - keep the current mm's unwind table busy for a while
 * @arg: the milliseconds, at most TEST_BUSY_MAX_MS
 *
 * Starts the writer on a CPU other than the caller's and returns once it
 * runs; the writer stops by itself.
 *
 * Context: task context of a user task.
 *
 * Return: 0; -EINVAL for a bad @arg; -EOPNOTSUPP with one CPU online;
 * -ENOMEM, or what starting the thread failed with.
 */
int test_busy_table(const char *arg)
{
	unsigned int ms, cpu, here = raw_smp_processor_id();
	DECLARE_COMPLETION_ONSTACK(started);
	struct task_struct *t;
	struct test_busy *b;

	if (!arg || kstrtouint(arg, 0, &ms) || !ms || ms > TEST_BUSY_MAX_MS ||
	    !current->mm)
		return -EINVAL;
	cpu = cpumask_next_wrap(here, cpu_online_mask, here, false);
	if (cpu >= nr_cpu_ids)
		return -EOPNOTSUPP;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	mmgrab(current->mm);
	b->mm = current->mm;
	b->until_ns = ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;
	b->started = &started;
	__module_get(THIS_MODULE);
	t = kthread_create_on_cpu(test_busy_fn, b, cpu, "unwind_busy/%u");
	if (IS_ERR(t)) {
		module_put(THIS_MODULE);
		mmdrop(b->mm);
		kfree(b);
		return PTR_ERR(t);
	}
	wake_up_process(t);
	wait_for_completion(&started);
	return 0;
}
#else
int test_busy_table(const char *arg)
{
	return -EOPNOTSUPP;
}
#endif
