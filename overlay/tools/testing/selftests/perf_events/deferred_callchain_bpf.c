// SPDX-License-Identifier: GPL-2.0
/*
 * BPF stack helpers never defer: a perf_event BPF program attached to an
 * event whose samples defer their user part (attr.defer_callchain, and a
 * ring buffer that gets the records: attr.defer_output, mapped) still gets
 * the whole user stack from bpf_get_stack(), checked against the return
 * addresses the program records itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "../unwind/chain.h"

#define MAX_FRAMES	64
#define DEPTH		6

struct user_stack {
	__u32 tid;
	__s32 len;
	__u64 ips[MAX_FRAMES];
};

static struct chain chain;

/* The BPF object sits next to this program. */
static void object_path(char *path, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	snprintf(path, len, "%s/deferred_callchain_bpf.bpf.o", dirname(self));
}

/*
 * PERF_RECORD_CALLCHAIN_DEFERRED records in the buffer: the sample asked for
 * a deferred unwind (the program returns 0, so the sample itself is not
 * written).
 */
static int deferred_records(struct perf_event_mmap_page *pg, size_t size)
{
	const char *data = (const char *)pg + getpagesize();
	__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), off;
	const struct perf_event_header *h;
	int n = 0;

	for (off = 0; off + sizeof(*h) <= head && off + sizeof(*h) <= size; off += h->size) {
		h = (const void *)(data + off);
		if (!h->size || off + h->size > size)
			break;
		n += h->type == PERF_RECORD_CALLCHAIN_DEFERRED;
	}
	return n;
}

TEST(bpf_get_stack_does_not_defer)
{
	static const struct timespec ts = { 0, 1000 * 1000 };
	unsigned long want[MAX_TOP + 1 + MAX_DEPTH];
	struct perf_event_mmap_page *rb;
	struct perf_event_attr attr;
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_link *link;
	struct user_stack s;
	char path[PATH_MAX];
	__u32 key = 0, tid = gettid();
	int fd, i, n;

	object_path(path, sizeof(path));
	obj = bpf_object__open_file(path, NULL);
	ASSERT_EQ(0, libbpf_get_error(obj)) TH_LOG("cannot open %s", path);
	ASSERT_EQ(0, bpf_object__load(obj)) TH_LOG("cannot load %s", path);
	prog = bpf_object__find_program_by_name(obj, "get_user_stack");
	ASSERT_TRUE(!!prog);
	ASSERT_EQ(0, bpf_map_update_elem(bpf_object__find_map_fd_by_name(obj, "target"),
					 &key, &tid, BPF_ANY));

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_CALLCHAIN;
	attr.defer_callchain = 1;
	attr.defer_output = 1;
	attr.disabled = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(errno));
	/* Samples defer only into a buffer the records reach. */
	rb = mmap(NULL, 9 * getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, rb) TH_LOG("mmap: %s", strerror(errno));
	link = bpf_program__attach_perf_event(prog, fd);
	ASSERT_EQ(0, libbpf_get_error(link)) TH_LOG("cannot attach to the event");

	/*
	 * The first sleep's sample defers (the task has no walk cache yet);
	 * the next ones are walked at once where the kernel walks the first
	 * sample of a stay in the kernel at once. The program keeps the last
	 * stack: it must be the same either way. The helper's own walk by the
	 * tables gives a new process its interrupted IP alone until the
	 * return to user space has walked it once (a warm-up): sleep until
	 * the stack is whole, a few times at most.
	 */
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < 8; i++) {
		chain_syscall(&chain, DEPTH, __NR_nanosleep, (long)&ts, 0, 0);
		n = chain_frames(&chain, want);
		ASSERT_EQ(0, bpf_map_lookup_elem(bpf_object__find_map_fd_by_name(obj, "stacks"),
						 &key, &s));
		if (i && s.len / 8 >= n)
			break;
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	ASSERT_EQ(tid, s.tid) TH_LOG("the program did not run for this task");
	ASSERT_LT(0, s.len) TH_LOG("bpf_get_stack() returned %d", s.len);
	ASSERT_LE(n, s.len / 8) {
		TH_LOG("bpf_get_stack() gave %d frames; the program has %d",
		       s.len / 8, n);
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ((unsigned long long)want[i], s.ips[i]) {
			TH_LOG("frame %d: bpf_get_stack() has %#llx, the program recorded %#lx",
			       i, (unsigned long long)s.ips[i], want[i]);
		}
	}
	EXPECT_LE(1, deferred_records(rb, 8 * getpagesize())) {
		TH_LOG("no sample deferred its user part: the helper was not put to the test");
	}
	munmap(rb, 9 * getpagesize());
	bpf_link__destroy(link);
	close(fd);
	bpf_object__close(obj);
}

TEST_HARNESS_MAIN
