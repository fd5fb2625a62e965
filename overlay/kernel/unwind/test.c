// SPDX-License-Identifier: GPL-2.0
/*
 * Test driver for deferred user unwinding.
 *
 * User space test programs (tools/testing/selftests/unwind/) ask for their
 * own user stack from task, hard IRQ and real NMI context, from the exit and
 * exec paths and from a kernel thread, through 40 registered users, and read
 * back what each request returned and what each callback received; and
 * have a function that BPF programs probe called from those contexts.
 *
 * <debugfs>/unwind_deferred_test/ctl, open by one process at a time.
 *
 * Write: commands separated by ';' or newlines, all run in the writer's
 * current entry context (one syscall):
 *   request task|irq|nmi MASK [N]  ask N times (default 1) for every user
 *                                  (slot) in the hex MASK, from that context
 *   request-at ADDR MASK           ask once for every slot in MASK from the
 *                                  debug exception of a hardware breakpoint
 *                                  on the writer's user instruction at hex
 *                                  ADDR, when it next runs there
 *   request-uprobe ADDR MASK       the same from the handler of a uprobe on
 *                                  the writer's text at hex ADDR
 *   request-uprobe-now ADDR MASK   the same, the handler walking the stack
 *                                  at once first (as a perf sample or BPF
 *                                  program there would), which the
 *                                  requests then get
 *   cancel SLOT                    unwind_deferred_cancel() the slot
 *   init SLOT                      unwind_deferred_init() the slot again
 *   kthread                        ask from a kernel thread (slot 0)
 *   arm-exit MASK                  ask in do_exit() of the writer's next exit
 *   arm-exit-locked MASK           the same, with the writer's mmap lock
 *                                  taken for writing in do_exit() and held
 *                                  until the first callback (as after an
 *                                  oops in a page fault): logged at
 *                                  "exit-locked" when it could be taken
 *   arm-exec MASK                  ask when the writer's next execve starts,
 *                                  at its point of no return, and again once
 *                                  the new image is set up
 *   arm-signal MASK                ask when get_signal() returns a signal to
 *                                  the writer's handler, before the handler's
 *                                  frame is set up
 *   ask-in-callback MASK           each slot in MASK asks again from its own
 *                                  callback (MASK 0 stops it)
 *   bpf task|irq|nmi               call unwind_test_bpf_hook(), for a BPF
 *                                  kprobe program to take the writer's user
 *                                  stack, from that context; its argument
 *                                  is the context it runs in: 0 task,
 *                                  1 IRQ, 2 NMI
 *   sleep MS                       sleep MS milliseconds (at most 1000)
 *   busy-table MS                  keep the writer's per-mm unwind table
 *                                  busy from another CPU for MS
 *                                  milliseconds (at most 1000), as threads
 *                                  that map libraries do (test_table.c);
 *                                  returns once the writer runs
 *   slow-probes US MS              for MS milliseconds (at most 1000),
 *                                  each reading of a file's program
 *                                  headers and each table lookup by a
 *                                  walk of the writer's mm in task
 *                                  context takes US more microseconds
 *                                  (at most 10000), as from a slow disk
 *   migrate CPU                    move the writer to CPU (it stays there)
 *   clear                          forget what was recorded
 *
 * Read: one line per request and per callback, in the order they happened:
 *   req at=WHERE ctx=task|irq|nmi slot=N ret=R cookie=HEX pid=TID
 *   cb slot=N pid=TID cookie=HEX nr=N exiting=0|1 ips=HEX,HEX,...
 * then "lost N" if the log overflowed, and "stray N" if N callbacks came
 * for a slot while it was cancelled (the core promises none).
 *
 * The log is lock free (a slot is claimed with one atomic increment and
 * published with a release store), so NMI handlers and kprobes write to it
 * like everyone else.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hw_breakpoint.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/nmi.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/uprobes.h>
#include <linux/vmalloc.h>
#ifdef CONFIG_X86_LOCAL_APIC
#include <asm/apic.h>
#endif

#include "test.h"

/* A self-NMI needs a local APIC and register_nmi_handler() (x86 with ACPI). */
#if defined(CONFIG_X86_LOCAL_APIC) && defined(NMI_FLAG_FIRST)
#define TEST_HAVE_NMI 1
#endif

#define TEST_SLOTS	40
#define TEST_MAX_REQS	1024
#define TEST_MAX_CBS	96
#define TEST_MAX_IPS	512
#define TEST_CMD_MAX	512
#define TEST_WAIT_NS	(2 * NSEC_PER_SEC)
#define TEST_SLEEP_MAX_MS	1000

struct test_slot {
	struct unwind_work	work;
	bool			registered;
};

struct test_req {
	int		valid;
	const char	*at;
	const char	*ctx;
	int		slot;
	int		ret;
	u64		cookie;
	pid_t		pid;
};

struct test_cb {
	int		valid;
	int		slot;
	pid_t		pid;
	u64		cookie;
	unsigned int	nr;
	bool		exiting;
	unsigned long	ips[TEST_MAX_IPS];
};

static struct test_slot slots[TEST_SLOTS];
static struct test_req reqs[TEST_MAX_REQS];
static struct test_cb *cbs;
static atomic_t nr_reqs, nr_cbs, lost, stray;
static atomic_t ctl_busy;
static struct dentry *test_dir;

/* What the next IRQ, NMI or kprobe request should ask for. */
static struct task_struct *ctx_task;
static unsigned long ctx_mask;
static unsigned int ctx_repeat;
static int irq_done, nmi_armed, nmi_done;
/* The next IRQ or NMI calls unwind_test_bpf_hook() instead of asking. */
static bool ctx_bpf;

static atomic_t exit_pid, exec_pid, signal_pid;
/* arm-exit-locked; the task that holds its mmap lock until its callback. */
static bool exit_locked;
static atomic_t exit_lock_pid;
static unsigned long exit_mask, exec_mask, signal_mask;
static unsigned long callback_mask;

static const char *test_ctx(void)
{
	if (in_nmi())
		return "nmi";
	if (in_hardirq())
		return "irq";
	return "task";
}

static void test_log_req(const char *at, int slot, int ret, u64 cookie)
{
	int n = atomic_inc_return(&nr_reqs) - 1;
	struct test_req *r;

	if (n >= TEST_MAX_REQS) {
		atomic_inc(&lost);
		return;
	}
	r = &reqs[n];
	r->at = at;
	r->ctx = test_ctx();
	r->slot = slot;
	r->ret = ret;
	r->cookie = cookie;
	r->pid = current->pid;
	/* Publish the filled entry to test_ctl_show(). */
	smp_store_release(&r->valid, 1);
}

/* Ask for every slot in @mask, @repeat times. Any context. */
static void test_request(const char *at, unsigned long mask,
			 unsigned int repeat)
{
	unsigned int i;
	int slot;
	u64 cookie;
	int ret;

	for (i = 0; i < repeat; i++) {
		for_each_set_bit(slot, &mask, TEST_SLOTS) {
			ret = unwind_deferred_request(&slots[slot].work, &cookie);
			test_log_req(at, slot, ret, cookie);
		}
	}
}

static void test_callback(struct unwind_work *work,
			  struct unwind_stacktrace *trace, u64 cookie)
{
	struct test_slot *slot = container_of(work, struct test_slot, work);
	int n;
	struct test_cb *cb;

	/* The contract: callbacks may fault and sleep. */
	might_fault();

	/*
	 * "registered" is set before unwind_deferred_init() and cleared
	 * after unwind_deferred_cancel() returned: no callback in between.
	 */
	if (!READ_ONCE(slot->registered))
		atomic_inc(&stray);

	n = atomic_inc_return(&nr_cbs) - 1;
	if (n >= TEST_MAX_CBS) {
		atomic_inc(&lost);
		return;
	}
	cb = &cbs[n];
	cb->slot = slot - slots;
	cb->pid = current->pid;
	cb->cookie = cookie;
	cb->nr = min(trace->nr, TEST_MAX_IPS);
	cb->exiting = !!(current->flags & PF_EXITING);
	memcpy(cb->ips, trace->entries, cb->nr * sizeof(cb->ips[0]));
	/* Publish the filled entry to test_ctl_show(). */
	smp_store_release(&cb->valid, 1);

	if (READ_ONCE(callback_mask) & BIT(cb->slot))
		test_request("callback", BIT(cb->slot), 1);

	/* The walk is over: the exit may go on to release the mm. */
	if (atomic_read(&exit_lock_pid) == current->pid &&
	    atomic_cmpxchg(&exit_lock_pid, current->pid, 0) == current->pid)
		mmap_write_unlock(current->mm);
}

/*
 * The function a BPF kprobe program attaches to by name, for the writer's
 * user stack from the context that called it (@ctx: 0 task, 1 IRQ, 2 NMI,
 * which the program reads to tell). Neither inlined nor cloned, so that
 * every call reaches the symbol.
 */
static noinline __noclone void unwind_test_bpf_hook(int ctx)
{
	/* The call has an effect the compiler cannot see through. */
	asm volatile("" : : "r"(ctx) : "memory");
}

/* What an IRQ or NMI the writer asked for does: ask, or call the hook. */
static void test_ctx_work(const char *at)
{
	if (READ_ONCE(ctx_bpf))
		unwind_test_bpf_hook(in_nmi() ? 2 : in_hardirq() ? 1 : 0);
	else
		test_request(at, ctx_mask, ctx_repeat);
}

/* Spin (preemption off, interrupts on) until *@flag is set, bounded. */
static int test_wait(int *flag)
{
	u64 end = ktime_get_ns() + TEST_WAIT_NS;

	while (!READ_ONCE(*flag)) {
		if (ktime_get_ns() > end)
			return -ETIMEDOUT;
		cpu_relax();
	}
	return 0;
}

static void test_irq_work_fn(struct irq_work *work)
{
	if (current == READ_ONCE(ctx_task))
		test_ctx_work("irq");
	WRITE_ONCE(irq_done, 1);
}

static struct irq_work test_irq_work = IRQ_WORK_INIT_HARD(test_irq_work_fn);

static int test_request_irq(unsigned long mask, unsigned int repeat)
{
	int ret;

	ctx_mask = mask;
	ctx_repeat = repeat;
	WRITE_ONCE(irq_done, 0);
	WRITE_ONCE(ctx_task, current);
	/* The self-IPI interrupts this task: keep it on this CPU. */
	preempt_disable();
	irq_work_queue(&test_irq_work);
	ret = test_wait(&irq_done);
	preempt_enable();
	irq_work_sync(&test_irq_work);
	WRITE_ONCE(ctx_task, NULL);
	return ret;
}

#ifdef TEST_HAVE_NMI
static int test_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (!READ_ONCE(nmi_armed) || current != READ_ONCE(ctx_task))
		return NMI_DONE;
	WRITE_ONCE(nmi_armed, 0);
	test_ctx_work("nmi");
	WRITE_ONCE(nmi_done, 1);
	return NMI_HANDLED;
}

static int test_request_nmi(unsigned long mask, unsigned int repeat)
{
	int ret;

	ctx_mask = mask;
	ctx_repeat = repeat;
	WRITE_ONCE(nmi_done, 0);
	WRITE_ONCE(ctx_task, current);
	preempt_disable();
	WRITE_ONCE(nmi_armed, 1);
	__apic_send_IPI_self(NMI_VECTOR);
	ret = test_wait(&nmi_done);
	WRITE_ONCE(nmi_armed, 0);
	preempt_enable();
	WRITE_ONCE(ctx_task, NULL);
	return ret;
}
#else
static int test_request_nmi(unsigned long mask, unsigned int repeat)
{
	return -EOPNOTSUPP;
}
#endif

static struct completion kthread_asked;

static int test_kthread_fn(void *arg)
{
	test_request("kthread", BIT(0), 1);
	complete(&kthread_asked);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int test_request_kthread(void)
{
	struct task_struct *t;

	init_completion(&kthread_asked);
	t = kthread_run(test_kthread_fn, NULL, "unwind_test");
	if (IS_ERR(t))
		return PTR_ERR(t);
	wait_for_completion(&kthread_asked);
	kthread_stop(t);
	return 0;
}

/* Probes that ask on behalf of an armed task, in the exit and exec paths. */
static int test_exit_pre(struct kprobe *p, struct pt_regs *regs)
{
	pid_t pid = current->pid;

	const char *at = "exit";

	if (atomic_read(&exit_pid) != pid ||
	    atomic_cmpxchg(&exit_pid, pid, 0) != pid)
		return 0;
	/*
	 * A task that dies in the kernel holding its mmap lock (an oops in
	 * a page fault) reaches do_exit() with it held. Only a trylock here
	 * (the probe runs with preemption off), and not from an int3 probe,
	 * which runs as an NMI.
	 */
	if (READ_ONCE(exit_locked) && !in_nmi() && current->mm &&
	    down_write_trylock(&current->mm->mmap_lock)) {
		/* What mmap_write_lock() does once it has the lock. */
		mm_lock_seqcount_begin(current->mm);
		atomic_set(&exit_lock_pid, pid);
		at = "exit-locked";
	}
	test_request(at, exit_mask, 1);
	return 0;
}

static int test_exec_begin_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (atomic_read(&exec_pid) == current->pid)
		test_request("exec-old", exec_mask, 1);
	return 0;
}

static int test_exec_mid_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (atomic_read(&exec_pid) == current->pid)
		test_request("exec-mid", exec_mask, 1);
	return 0;
}

static int test_exec_setup_pre(struct kprobe *p, struct pt_regs *regs)
{
	pid_t pid = current->pid;

	if (atomic_read(&exec_pid) == pid &&
	    atomic_cmpxchg(&exec_pid, pid, 0) == pid)
		test_request("exec-new", exec_mask, 1);
	return 0;
}

static struct kprobe kp_exit = {
	.symbol_name = "do_exit",
	.pre_handler = test_exit_pre,
};

/* Before execve() completes what is pending, takes a lock or a new mm. */
static struct kprobe kp_exec_begin = {
	.symbol_name = "bprm_execve",
	.pre_handler = test_exec_begin_pre,
};

/* The point of no return: tid and mm are about to change. */
static struct kprobe kp_exec_mid = {
	.symbol_name = "begin_new_exec",
	.pre_handler = test_exec_mid_pre,
};

static struct kprobe kp_exec_setup = {
	.symbol_name = "setup_new_exec",
	.pre_handler = test_exec_setup_pre,
};

static struct kprobe *test_kprobes[] = {
	&kp_exit, &kp_exec_begin, &kp_exec_mid, &kp_exec_setup,
};

/*
 * get_signal() returned a signal with a handler: the user registers are
 * still those of the interrupted code, and the signal frame is next.
 */
static int test_signal_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	pid_t pid = current->pid;

	if (regs_return_value(regs) && atomic_read(&signal_pid) == pid &&
	    atomic_cmpxchg(&signal_pid, pid, 0) == pid)
		test_request("signal", signal_mask, 1);
	return 0;
}

static struct kretprobe krp_signal = {
	.kp.symbol_name = "get_signal",
	.handler = test_signal_ret,
	.maxactive = 4,
};

static bool kretprobe_on;

static bool kprobes_on;

static void test_clear(void)
{
	int i;

	for (i = 0; i < TEST_MAX_REQS; i++)
		WRITE_ONCE(reqs[i].valid, 0);
	for (i = 0; i < TEST_MAX_CBS; i++)
		WRITE_ONCE(cbs[i].valid, 0);
	atomic_set(&nr_reqs, 0);
	atomic_set(&nr_cbs, 0);
	atomic_set(&lost, 0);
	atomic_set(&stray, 0);
	WRITE_ONCE(callback_mask, 0);
}

static int test_parse_slot(const char *arg)
{
	unsigned int slot;

	if (!arg || kstrtouint(arg, 0, &slot) || slot >= TEST_SLOTS)
		return -EINVAL;
	return slot;
}

static int test_parse_mask(const char *arg, unsigned long *mask)
{
	if (!arg || kstrtoul(arg, 16, mask) || !*mask ||
	    (*mask & ~(BIT_ULL(TEST_SLOTS) - 1)))
		return -EINVAL;
	return 0;
}

/*
 * A hardware breakpoint that asks once, from its debug exception: it stops
 * the task at any user instruction, where a system call can only stop it
 * right after the syscall instruction.
 */
static DEFINE_MUTEX(arm_lock);
static struct perf_event *bp_event;	/* under arm_lock */
static unsigned long bp_mask;
static atomic_t bp_fired;

static void test_bp_handler(struct perf_event *bp,
			    struct perf_sample_data *data,
			    struct pt_regs *regs)
{
	if (!user_mode(regs) || atomic_xchg(&bp_fired, 1))
		return;
	test_request("bp", READ_ONCE(bp_mask), 1);
}

static void test_bp_disarm_locked(void)
{
	lockdep_assert_held(&arm_lock);
	if (bp_event) {
		unregister_hw_breakpoint(bp_event);
		bp_event = NULL;
	}
}

static int test_request_at(const char *addr_arg, const char *mask_arg)
{
	struct perf_event_attr attr;
	struct perf_event *bp;
	unsigned long addr, mask;
	int ret = 0;

	if (!addr_arg || kstrtoul(addr_arg, 16, &addr) ||
	    !access_ok((void __user *)addr, 1) ||
	    test_parse_mask(mask_arg, &mask))
		return -EINVAL;
	if (!IS_ENABLED(CONFIG_HAVE_HW_BREAKPOINT))
		return -EOPNOTSUPP;

	hw_breakpoint_init(&attr);
	attr.bp_addr = addr;
	attr.bp_len = sizeof(long);
	attr.bp_type = HW_BREAKPOINT_X;
	attr.exclude_kernel = 1;

	mutex_lock(&arm_lock);
	test_bp_disarm_locked();
	WRITE_ONCE(bp_mask, mask);
	atomic_set(&bp_fired, 0);
	bp = register_user_hw_breakpoint(&attr, test_bp_handler, NULL, current);
	if (IS_ERR(bp))
		ret = PTR_ERR(bp);
	else
		bp_event = bp;
	mutex_unlock(&arm_lock);
	return ret;
}

/*
 * A uprobe that asks once, from its handler: the task then returns to user
 * space with the probed instruction emulated, or about to run a copy of it
 * out of line, and its text holds the breakpoint in place of that
 * instruction's first byte.
 */
static struct uprobe *probe;		/* under arm_lock, with probe_file */
static struct file *probe_file;
static pid_t probe_pid;
static unsigned long probe_mask;
static bool probe_now;
static atomic_t probe_fired;

static int test_uprobe_handler(struct uprobe_consumer *self,
			       struct pt_regs *regs)
{
	if (current->pid != READ_ONCE(probe_pid) ||
	    atomic_xchg(&probe_fired, 1))
		return 0;
	if (READ_ONCE(probe_now))
		unwind_deferred_walk_now(TEST_MAX_IPS);
	test_request("uprobe", READ_ONCE(probe_mask), 1);
	return 0;
}

static struct uprobe_consumer test_uprobe_consumer = {
	.handler = test_uprobe_handler,
};

static void test_uprobe_disarm_locked(void)
{
	lockdep_assert_held(&arm_lock);
	if (probe) {
		uprobe_unregister_nosync(probe, &test_uprobe_consumer);
		uprobe_unregister_sync();
		fput(probe_file);
		probe = NULL;
		probe_file = NULL;
	}
}

static int test_request_uprobe(const char *addr_arg, const char *mask_arg,
			       bool now)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct file *file = NULL;
	unsigned long addr, mask;
	struct uprobe *up;
	loff_t off = 0;
	int ret = 0;

	if (!addr_arg || kstrtoul(addr_arg, 16, &addr) ||
	    test_parse_mask(mask_arg, &mask))
		return -EINVAL;
	if (!IS_ENABLED(CONFIG_UPROBES))
		return -EOPNOTSUPP;

	/* The file and offset of the writer's text at @addr. */
	mmap_read_lock(mm);
	vma = vma_lookup(mm, addr);
	if (vma && vma->vm_file && (vma->vm_flags & VM_EXEC)) {
		file = get_file(vma->vm_file);
		off = ((loff_t)vma->vm_pgoff << PAGE_SHIFT) + addr - vma->vm_start;
	}
	mmap_read_unlock(mm);
	if (!file)
		return -EINVAL;

	mutex_lock(&arm_lock);
	test_uprobe_disarm_locked();
	WRITE_ONCE(probe_mask, mask);
	WRITE_ONCE(probe_now, now);
	WRITE_ONCE(probe_pid, current->pid);
	atomic_set(&probe_fired, 0);
	up = uprobe_register(file_inode(file), off, 0, &test_uprobe_consumer);
	if (IS_ERR(up)) {
		ret = PTR_ERR(up);
		fput(file);
	} else {
		probe = up;
		probe_file = file;
	}
	mutex_unlock(&arm_lock);
	return ret;
}

static void test_disarm(void)
{
	mutex_lock(&arm_lock);
	test_bp_disarm_locked();
	test_uprobe_disarm_locked();
	mutex_unlock(&arm_lock);
}

/* bpf CTX: call unwind_test_bpf_hook() from context @ctx. */
static int test_bpf(const char *ctx)
{
	int ret = -EINVAL;

	if (!ctx)
		return -EINVAL;
	if (!strcmp(ctx, "task")) {
		unwind_test_bpf_hook(0);
		return 0;
	}
	WRITE_ONCE(ctx_bpf, true);
	if (!strcmp(ctx, "irq"))
		ret = test_request_irq(0, 0);
	else if (!strcmp(ctx, "nmi"))
		ret = test_request_nmi(0, 0);
	WRITE_ONCE(ctx_bpf, false);
	return ret;
}

static int test_sleep(const char *arg)
{
	unsigned int ms;

	if (!arg || kstrtouint(arg, 0, &ms) || ms > TEST_SLEEP_MAX_MS)
		return -EINVAL;
	return msleep_interruptible(ms) ? -EINTR : 0;
}

/* "migrate CPU": move the writer to @arg's CPU now, in this entry context. */
static int test_migrate(const char *arg)
{
	unsigned int cpu;

	if (!arg || kstrtouint(arg, 0, &cpu) || cpu >= nr_cpu_ids ||
	    !cpu_online(cpu))
		return -EINVAL;
	return set_cpus_allowed_ptr(current, cpumask_of(cpu));
}

static int test_command(char *cmd)
{
	char *argv[4] = { };
	unsigned long mask;
	unsigned int repeat = 1;
	int argc = 0, slot, ret;
	char *tok;

	while ((tok = strsep(&cmd, " \t")) && argc < ARRAY_SIZE(argv)) {
		if (*tok)
			argv[argc++] = tok;
	}
	if (tok)
		return -E2BIG;
	if (!argc)
		return 0;

	if (!strcmp(argv[0], "request")) {
		if (argc < 3 || test_parse_mask(argv[2], &mask))
			return -EINVAL;
		if (argv[3] && (kstrtouint(argv[3], 0, &repeat) || !repeat ||
				repeat > 16))
			return -EINVAL;
		if (!strcmp(argv[1], "task")) {
			test_request("task", mask, repeat);
			return 0;
		}
		if (!strcmp(argv[1], "irq"))
			return test_request_irq(mask, repeat);
		if (!strcmp(argv[1], "nmi"))
			return test_request_nmi(mask, repeat);
		return -EINVAL;
	}
	if (!strcmp(argv[0], "request-at"))
		return test_request_at(argv[1], argv[2]);
	if (!strcmp(argv[0], "request-uprobe"))
		return test_request_uprobe(argv[1], argv[2], false);
	if (!strcmp(argv[0], "request-uprobe-now"))
		return test_request_uprobe(argv[1], argv[2], true);
	if (!strcmp(argv[0], "bpf"))
		return test_bpf(argv[1]);
	if (!strcmp(argv[0], "sleep"))
		return test_sleep(argv[1]);
	if (!strcmp(argv[0], "busy-table"))
		return test_busy_table(argv[1]);
	if (!strcmp(argv[0], "slow-probes"))
		return test_slow_probes(argv[1], argv[2]);
	if (!strcmp(argv[0], "migrate"))
		return test_migrate(argv[1]);
	if (!strcmp(argv[0], "cancel")) {
		slot = test_parse_slot(argv[1]);
		if (slot < 0)
			return slot;
		unwind_deferred_cancel(&slots[slot].work);
		WRITE_ONCE(slots[slot].registered, false);
		return 0;
	}
	if (!strcmp(argv[0], "init")) {
		slot = test_parse_slot(argv[1]);
		if (slot < 0)
			return slot;
		if (slots[slot].registered)
			return -EBUSY;
		WRITE_ONCE(slots[slot].registered, true);
		ret = unwind_deferred_init(&slots[slot].work, test_callback);
		if (ret)
			WRITE_ONCE(slots[slot].registered, false);
		return ret;
	}
	if (!strcmp(argv[0], "kthread"))
		return test_request_kthread();
	if (!strcmp(argv[0], "arm-exit") || !strcmp(argv[0], "arm-exec") ||
	    !strcmp(argv[0], "arm-exit-locked")) {
		if (!kprobes_on)
			return -EOPNOTSUPP;
		if (test_parse_mask(argv[1], &mask))
			return -EINVAL;
		if (strcmp(argv[0], "arm-exec")) {
			WRITE_ONCE(exit_locked, !strcmp(argv[0], "arm-exit-locked"));
			exit_mask = mask;
			atomic_set(&exit_pid, current->pid);
		} else {
			exec_mask = mask;
			atomic_set(&exec_pid, current->pid);
		}
		return 0;
	}
	if (!strcmp(argv[0], "arm-signal")) {
		if (!kretprobe_on)
			return -EOPNOTSUPP;
		if (test_parse_mask(argv[1], &mask))
			return -EINVAL;
		signal_mask = mask;
		atomic_set(&signal_pid, current->pid);
		return 0;
	}
	if (!strcmp(argv[0], "ask-in-callback")) {
		if (!argv[1] || kstrtoul(argv[1], 16, &mask))
			return -EINVAL;
		WRITE_ONCE(callback_mask, mask);
		return 0;
	}
	if (!strcmp(argv[0], "clear")) {
		test_clear();
		return 0;
	}
	return -EINVAL;
}

static ssize_t test_ctl_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char *buf, *cmds, *cmd;
	int ret = 0;

	if (!count || count >= TEST_CMD_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	cmds = buf;
	while (!ret && (cmd = strsep(&cmds, ";\n")))
		ret = test_command(cmd);
	kfree(buf);
	return ret ?: count;
}

static int test_ctl_show(struct seq_file *m, void *v)
{
	int n, i, j;

	n = min(atomic_read(&nr_reqs), TEST_MAX_REQS);
	for (i = 0; i < n; i++) {
		struct test_req *r = &reqs[i];

		/* Pairs with the release in test_log_req(). */
		if (!smp_load_acquire(&r->valid))
			continue;
		seq_printf(m, "req at=%s ctx=%s slot=%d ret=%d cookie=%llx pid=%d\n",
			   r->at, r->ctx, r->slot, r->ret, r->cookie, r->pid);
	}

	n = min(atomic_read(&nr_cbs), TEST_MAX_CBS);
	for (i = 0; i < n; i++) {
		struct test_cb *cb = &cbs[i];

		/* Pairs with the release in test_callback(). */
		if (!smp_load_acquire(&cb->valid))
			continue;
		seq_printf(m, "cb slot=%d pid=%d cookie=%llx nr=%u exiting=%d ips=",
			   cb->slot, cb->pid, cb->cookie, cb->nr, cb->exiting);
		for (j = 0; j < cb->nr; j++)
			seq_printf(m, "%s%lx", j ? "," : "", cb->ips[j]);
		seq_putc(m, '\n');
	}
	if (atomic_read(&lost))
		seq_printf(m, "lost %d\n", atomic_read(&lost));
	if (atomic_read(&stray))
		seq_printf(m, "stray %d\n", atomic_read(&stray));
	return 0;
}

static int test_ctl_open(struct inode *inode, struct file *file)
{
	int ret;

	if (atomic_cmpxchg(&ctl_busy, 0, 1))
		return -EBUSY;
	ret = single_open_size(file, test_ctl_show, NULL, SZ_64K);
	if (ret)
		atomic_set(&ctl_busy, 0);
	return ret;
}

static int test_ctl_release(struct inode *inode, struct file *file)
{
	test_disarm();
	atomic_set(&ctl_busy, 0);
	return single_release(inode, file);
}

static const struct file_operations test_ctl_fops = {
	.owner		= THIS_MODULE,
	.open		= test_ctl_open,
	.read		= seq_read,
	.write		= test_ctl_write,
	.llseek		= seq_lseek,
	.release	= test_ctl_release,
};

static void test_cancel_slots(void)
{
	int i;

	for (i = 0; i < TEST_SLOTS; i++) {
		if (slots[i].registered)
			unwind_deferred_cancel(&slots[i].work);
		slots[i].registered = false;
	}
}

static int __init test_unwind_deferred_init(void)
{
	int i, ret;

	cbs = vzalloc(array_size(TEST_MAX_CBS, sizeof(*cbs)));
	if (!cbs)
		return -ENOMEM;

	for (i = 0; i < TEST_SLOTS; i++) {
		ret = unwind_deferred_init(&slots[i].work, test_callback);
		if (ret) {
			pr_err("unwind_test: user %d of %d: %d\n", i,
			       TEST_SLOTS, ret);
			goto err;
		}
		slots[i].registered = true;
	}

#ifdef TEST_HAVE_NMI
	ret = register_nmi_handler(NMI_LOCAL, test_nmi_handler, 0,
				   "unwind_test");
	if (ret)
		goto err;
#endif

	ret = register_kprobes(test_kprobes, ARRAY_SIZE(test_kprobes));
	kprobes_on = !ret;
	if (ret)
		pr_info("unwind_test: no kprobes (%d): exit and exec tests off\n",
			ret);
	ret = register_kretprobe(&krp_signal);
	kretprobe_on = !ret;
	if (ret)
		pr_info("unwind_test: no kretprobe (%d): signal test off\n",
			ret);

	test_dir = debugfs_create_dir("unwind_deferred_test", NULL);
	debugfs_create_file("ctl", 0600, test_dir, NULL, &test_ctl_fops);
	return 0;
err:
	test_cancel_slots();
	vfree(cbs);
	return ret;
}

static void __exit test_unwind_deferred_exit(void)
{
	debugfs_remove_recursive(test_dir);
	if (kprobes_on)
		unregister_kprobes(test_kprobes, ARRAY_SIZE(test_kprobes));
	if (kretprobe_on)
		unregister_kretprobe(&krp_signal);
#ifdef TEST_HAVE_NMI
	unregister_nmi_handler(NMI_LOCAL, "unwind_test");
#endif
	test_cancel_slots();
	vfree(cbs);
}

module_init(test_unwind_deferred_init);
module_exit(test_unwind_deferred_exit);
MODULE_DESCRIPTION("Test driver for deferred user space stack unwinding");
MODULE_LICENSE("GPL");
