/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each kind of event that defers (the kind fixture): a syscall
 * tracepoint, context switches, page faults, cpu-clock, a hardware
 * breakpoint and a uprobe, each sampled at the bottom of the chain; the
 * sample and its one record checked.
 *
 * Included once, by deferred_callchain.c.
 */
#include "deferred_callchain_common.h"

/*
 * Leaves for the event kinds: each records its return address, and those
 * whose IP at the sample is known record it as top[0].
 */
static unsigned int bp_target;
static char *fault_page;

static __attribute__((noipa)) void leaf_touch_page(struct chain *c)
{
	c->leaf_ra = (unsigned long)__builtin_return_address(0);
	c->ntop = 1;	/* the IP at the sample: not known, not compared */
	__atomic_store_n(fault_page, 1, __ATOMIC_RELAXED);	/* first touch: a fault */
}

static __attribute__((noipa)) void leaf_write_watched(struct chain *c)
{
	c->leaf_ra = (unsigned long)__builtin_return_address(0);
	c->ntop = 1;	/* the IP at the sample: not known, not compared */
	__atomic_fetch_add(&bp_target, 1, __ATOMIC_RELAXED);	/* a write breakpoint fires */
}

/* The uprobe sits on this function's first instruction. */
static __attribute__((noipa)) void leaf_probed(struct chain *c)
{
	c->leaf_ra = (unsigned long)__builtin_return_address(0);
	c->ntop = 1;	/* the IP at the sample: not known, not compared */
	asm volatile("" ::: "memory");
}

enum kind { TRACEPOINT, CONTEXT_SWITCH, PAGE_FAULT, CPU_CLOCK, BREAKPOINT, UPROBE };

FIXTURE(kind) {
	struct ctx x;
	int saved_try_first;
};

FIXTURE_VARIANT(kind) {
	enum kind kind;
	int kernel_part;	/* the sample has a kernel part */
	int from;		/* the record matches the chain from this frame */
	int try_first;		/* kernel.unwind_deferred_try_first */
};

FIXTURE_SETUP(kind)
{
	if (ctx_setup(_metadata, &self->x))
		return;
	/*
	 * Samples taken in the kernel defer with try-first on; cpu-clock
	 * samples of a task spinning in user space defer with it off.
	 */
	try_first_set(variant->try_first, &self->saved_try_first);
}

FIXTURE_TEARDOWN(kind)
{
	try_first_restore(self->saved_try_first);
	ctx_teardown(&self->x);
}

FIXTURE_VARIANT_ADD(kind, tracepoint) { TRACEPOINT, 0, 0, 1 };
FIXTURE_VARIANT_ADD(kind, context_switch) { CONTEXT_SWITCH, 1, 0, 1 };
FIXTURE_VARIANT_ADD(kind, page_fault) { PAGE_FAULT, 0, 1, 1 };
FIXTURE_VARIANT_ADD(kind, cpu_clock) { CPU_CLOCK, 0, 1, 0 };
FIXTURE_VARIANT_ADD(kind, breakpoint) { BREAKPOINT, 0, 1, 1 };
FIXTURE_VARIANT_ADD(kind, uprobe) { UPROBE, 0, 1, 1 };

/*
 * Set up @kind's event in @attr and its leaf; returns a reason to skip,
 * or NULL.
 */
static const char *event_kind_setup(struct ctx *x, enum kind which,
				    struct perf_event_attr *attr,
				    void (**leaf)(struct chain *c))
{
	static const struct timespec ts = { 0, 1000 * 1000 };
	long type, off;

	*leaf = leaf_syscall;
	switch (which) {
	case TRACEPOINT:
		if (sizeof(long) == 4)
			return "syscall tracepoints do not trace compat tasks";
		if (x->getppid_tp < 0)
			return "no syscalls:sys_enter_getppid tracepoint";
		attr_init(attr, PERF_TYPE_TRACEPOINT, x->getppid_tp);
		x->c->nr = __NR_getppid;
		break;
	case CONTEXT_SWITCH:
		attr_init(attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
		x->c->nr = __NR_nanosleep;
		x->c->a = (long)&ts;
		x->c->b = 0;
		break;
	case PAGE_FAULT:
		attr_init(attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
		fault_page = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fault_page == MAP_FAILED)
			return "mmap failed";
		*leaf = leaf_touch_page;
		break;
	case CPU_CLOCK:
		attr_init(attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
		attr->sample_period = 2000000;	/* 2 ms */
		*leaf = leaf_spin;
		break;
	case BREAKPOINT:
		attr_init(attr, PERF_TYPE_BREAKPOINT, 0);
		attr->bp_type = HW_BREAKPOINT_W;
		attr->bp_addr = (unsigned long)&bp_target;
		attr->bp_len = HW_BREAKPOINT_LEN_4;
		*leaf = leaf_write_watched;
		break;
	case UPROBE:
		type = pmu_type("uprobe");
		off = file_offset((unsigned long)leaf_probed);
		if (type < 0 || off < 0)
			return "no uprobe PMU";
		attr_init(attr, type, 0);
		attr->config1 = (unsigned long)"/proc/self/exe";
		attr->config2 = off;
		*leaf = leaf_probed;
		break;
	}
	return NULL;
}

TEST_F(kind, sample_and_record)
{
	void (*leaf)(struct chain *c);
	struct perf_event_attr attr;
	const char *skip;
	pthread_t timer;

	skip = event_kind_setup(&self->x, variant->kind, &attr, &leaf);
	if (skip)
		SKIP(return, "%s", skip);
	open_mapped(_metadata, &self->x, 0, &attr, 0, -1);

	__atomic_store_n(&spin_stop, 0, __ATOMIC_RELAXED);
	if (variant->kind == CPU_CLOCK)
		ASSERT_EQ(0, pthread_create(&timer, NULL, spin_timer, NULL));
	ioctl(self->x.fd[0], PERF_EVENT_IOC_ENABLE, 0);
	if (variant->kind == CONTEXT_SWITCH)
		chain_run_switched(self->x.c, DEPTH, leaf);
	else
		chain_run(self->x.c, DEPTH, leaf);
	ioctl(self->x.fd[0], PERF_EVENT_IOC_DISABLE, 0);
	if (variant->kind == CPU_CLOCK)
		pthread_join(timer, NULL);

	ASSERT_LE(1, wait_matched(&self->x.rb[0], self->x.recs, gettid(), 1)) {
		TH_LOG("no deferred sample with its record within %d ms", WAIT_MS);
	}
	check_all(_metadata, &self->x, gettid(), variant->kernel_part,
		  variant->from);
}
