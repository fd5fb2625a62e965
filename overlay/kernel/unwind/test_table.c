// SPDX-License-Identifier: GPL-2.0
/*
 * For the test driver (test.c): what threads of a process that map and
 * probe libraries do to each other's walks, made to happen on demand, each
 * for a number of milliseconds, by a kernel thread that stops by itself.
 *
 * busy-table: a writer keeps the asker's per-mm unwind table busy from
 * another CPU. It holds the table's lock inside its write section for
 * TEST_BUSY_HOLD_US at a time, lets go briefly (long enough for a task
 * queued on the lock to take it), and starts again. It starts once the mm
 * has a table, so a fresh process's first walk meets it.
 *
 * slow-probes: every reading of a file's program headers and every lookup
 * in its tables by a walk of the asker's mm in task context takes longer
 * (kprobes on unwind_tables_probe() and unwind_tables_lookup() that
 * spin), as a cold file on a slow disk makes them, so that walks of
 * several threads read the same file at the same time and are preempted
 * between reading it and using what they read.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "mm_cache.h"
#include "test.h"

#define TEST_BUSY_HOLD_US	100
#define TEST_TABLE_MAX_MS	1000
#define TEST_SLOW_MAX_US	10000

struct test_table_job {
	struct mm_struct	*mm;
	u64			until_ns;
	struct completion	*started;	/* the asker's, until running */
	int			*ret;		/* the asker's, until running */
};

#ifdef CONFIG_UNWIND_USER_SFRAME
/* The slowed mm, by how much, and whether a job slows it. */
static struct mm_struct *slow_mm;
static unsigned int slow_us;
static atomic_t slow_on;

static bool test_job_running(const struct test_table_job *job)
{
	return ktime_get_ns() < job->until_ns && !kthread_should_stop();
}

/* The end of a job: the asker's mm and the module are let go. */
static void __noreturn test_job_end(struct test_table_job *job)
{
	mmdrop(job->mm);
	kfree(job);
	module_put_and_kthread_exit(0);
}

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
	struct test_table_job *job = arg;
	struct sframe_mm *c;

	*job->ret = 0;
	complete(job->started);
	while (test_job_running(job)) {
		/* Pairs with the cmpxchg_release() that set the table up. */
		c = smp_load_acquire(&job->mm->sframe_cache);
		if (c)
			test_busy_hold(c);
		/* A window for a waiter on the lock; others may run too. */
		ndelay(200);
		cond_resched();
	}
	test_job_end(job);
}

static int test_slow_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (in_task() && current->mm == READ_ONCE(slow_mm))
		udelay(READ_ONCE(slow_us));
	return 0;
}

static int test_slow_fn(void *arg)
{
	struct test_table_job *job = arg;
	/* Registered once per job: a kprobe is not used twice. */
	struct kprobe kp[] = {
		{
			.symbol_name	= "unwind_tables_probe",
			.pre_handler	= test_slow_pre,
		}, {
			.symbol_name	= "unwind_tables_lookup",
			.pre_handler	= test_slow_pre,
		},
	};
	struct kprobe *kps[] = { &kp[0], &kp[1] };
	int ret = register_kprobes(kps, ARRAY_SIZE(kps));

	if (!ret)
		WRITE_ONCE(slow_mm, job->mm);
	*job->ret = ret;
	complete(job->started);
	if (!ret) {
		while (test_job_running(job))
			msleep(20);
		/* No handler runs once this returns. */
		unregister_kprobes(kps, ARRAY_SIZE(kps));
		WRITE_ONCE(slow_mm, NULL);
	}
	atomic_set(&slow_on, 0);
	test_job_end(job);
}

/*
 * Start @fn for @ms milliseconds on the asker's mm, bound to @cpu (or
 * anywhere: nr_cpu_ids), and wait until it runs; *@ran says whether it
 * did. Return: what it says, or why it could not start.
 */
static int test_job_start(int (*fn)(void *), unsigned int ms,
			  unsigned int cpu, const char *name, bool *ran)
{
	DECLARE_COMPLETION_ONSTACK(started);
	struct test_table_job *job;
	struct task_struct *t;
	int ret = 0;

	*ran = false;
	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	mmgrab(current->mm);
	job->mm = current->mm;
	job->until_ns = ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;
	job->started = &started;
	job->ret = &ret;
	__module_get(THIS_MODULE);
	if (cpu < nr_cpu_ids)
		t = kthread_create_on_cpu(fn, job, cpu, name);
	else
		t = kthread_create(fn, job, name);
	if (IS_ERR(t)) {
		module_put(THIS_MODULE);
		mmdrop(job->mm);
		kfree(job);
		return PTR_ERR(t);
	}
	wake_up_process(t);
	wait_for_completion(&started);
	*ran = true;
	return ret;
}

/**
 * test_busy_table - keep the current mm's unwind table busy for a while
 * @arg: the milliseconds, at most TEST_TABLE_MAX_MS
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
	bool ran;

	if (!arg || kstrtouint(arg, 0, &ms) || !ms ||
	    ms > TEST_TABLE_MAX_MS || !current->mm)
		return -EINVAL;
	cpu = cpumask_next_wrap(here, cpu_online_mask, here, false);
	if (cpu >= nr_cpu_ids)
		return -EOPNOTSUPP;
	return test_job_start(test_busy_fn, ms, cpu, "unwind_busy/%u", &ran);
}

/**
 * test_slow_probes - make the current mm's walks read files more slowly
 * @us_arg: the microseconds each reading takes longer, at most
 *	    TEST_SLOW_MAX_US
 * @ms_arg: for how many milliseconds, at most TEST_TABLE_MAX_MS
 *
 * Context: task context of a user task.
 *
 * Return: 0 once probes are slowed; -EINVAL for bad arguments; -EBUSY
 * while another mm's are; -ENOMEM, or what registering the kprobe or
 * starting the thread failed with.
 */
int test_slow_probes(const char *us_arg, const char *ms_arg)
{
	unsigned int us, ms;
	bool ran;
	int ret;

	if (!us_arg || !ms_arg || kstrtouint(us_arg, 0, &us) || !us ||
	    us > TEST_SLOW_MAX_US || kstrtouint(ms_arg, 0, &ms) || !ms ||
	    ms > TEST_TABLE_MAX_MS || !current->mm)
		return -EINVAL;
	if (atomic_cmpxchg(&slow_on, 0, 1))
		return -EBUSY;
	WRITE_ONCE(slow_us, us);
	ret = test_job_start(test_slow_fn, ms, nr_cpu_ids, "unwind_slow", &ran);
	/* A job that ran clears it when it ends. */
	if (!ran)
		atomic_set(&slow_on, 0);
	return ret;
}
#else
int test_busy_table(const char *arg)
{
	return -EOPNOTSUPP;
}

int test_slow_probes(const char *us_arg, const char *ms_arg)
{
	return -EOPNOTSUPP;
}
#endif
