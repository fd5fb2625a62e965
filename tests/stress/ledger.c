// SPDX-License-Identifier: GPL-2.0
/*
 * Ring buffers of a stress session and the accounting of deferred
 * callchains in them; see ledger.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ledger.h"

/* Lowest address that is not user space on x86-64 (and for ia32). */
#define USER_END	0x0000800000000000ULL

int event_open(uint32_t type, uint64_t config, uint64_t period, int flags,
	       pid_t pid, int cpu, int group_fd)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.sample_period = period;
	attr.sample_type = LEDGER_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.disabled = !!(flags & EV_DISABLED);
	attr.exclude_kernel = !!(flags & EV_EXCLUDE_KERNEL);
	attr.inherit = !!(flags & EV_INHERIT);
	attr.defer_callchain = !!(flags & EV_DEFER_CALLCHAIN);
	attr.defer_output = !!(flags & EV_DEFER_OUTPUT);
	fd = syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd,
		     PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void ledger_init(struct ledger *l, const char *name)
{
	memset(l, 0, sizeof(*l));
	l->name = name;
}

static int ledger_add_fd(struct ledger *l, int fd)
{
	if (l->nr_fds == LEDGER_MAX_FDS)
		return -ENOSPC;
	l->fds[l->nr_fds++] = fd;
	return 0;
}

int ledger_add_ring(struct ledger *l, int fd, int cpu, unsigned int pages)
{
	size_t page = sysconf(_SC_PAGESIZE);
	struct ring *r;
	void *base;

	if (l->nr_rings == LEDGER_MAX_RINGS || l->nr_fds == LEDGER_MAX_FDS)
		return -ENOSPC;
	base = mmap(NULL, (pages + 1) * page, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	r = &l->rings[l->nr_rings];
	r->copy = malloc(1 << 16);
	if (!r->copy) {
		munmap(base, (pages + 1) * page);
		return -ENOMEM;
	}
	r->fd = fd;
	r->cpu = cpu;
	r->base = base;
	r->data_size = pages * page;
	l->nr_rings++;
	return ledger_add_fd(l, fd);
}

int ledger_redirect(struct ledger *l, int fd, int ring_fd)
{
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd))
		return -errno;
	return ledger_add_fd(l, fd);
}

int ledger_enable(struct ledger *l)
{
	int i;

	for (i = 0; i < l->nr_fds; i++) {
		if (ioctl(l->fds[i], PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
	}
	return 0;
}

static uint64_t hash(uint32_t tid, uint64_t cookie)
{
	uint64_t h = cookie * 0x9e3779b97f4a7c15ULL ^ tid;

	return h ^ (h >> 29);
}

static struct key *keytab_get(struct keytab *t, uint32_t tid, uint64_t cookie,
			      bool add);

static void keytab_grow(struct keytab *t)
{
	struct keytab n = { .size = t->size ? t->size * 2 : 1024 };
	size_t i;

	n.slot = calloc(n.size, sizeof(*n.slot));
	if (!n.slot) {
		perror("defer_stress: calloc");
		exit(2);
	}
	for (i = 0; i < t->size; i++) {
		if (t->slot[i].cookie)
			*keytab_get(&n, t->slot[i].tid, t->slot[i].cookie,
				    true) = t->slot[i];
	}
	free(t->slot);
	*t = n;
}

/* Cookies are never 0: an empty slot has cookie 0. */
static struct key *keytab_get(struct keytab *t, uint32_t tid, uint64_t cookie,
			      bool add)
{
	size_t i;

	if (add && (t->used + 1) * 2 > t->size)
		keytab_grow(t);
	if (!t->size)
		return NULL;
	for (i = hash(tid, cookie) & (t->size - 1);; i = (i + 1) & (t->size - 1)) {
		struct key *k = &t->slot[i];

		if (k->cookie == cookie && k->tid == tid)
			return k;
		if (!k->cookie) {
			if (!add)
				return NULL;
			k->cookie = cookie;
			k->tid = tid;
			t->used++;
			return k;
		}
	}
}

const struct key *ledger_find(const struct ledger *l, uint32_t tid,
			      uint64_t cookie)
{
	return keytab_get((struct keytab *)&l->keys, tid, cookie, false);
}

void ledger_for_each_sampled(const struct ledger *l,
			     void (*fn)(const struct key *k, void *arg),
			     void *arg)
{
	size_t i;

	for (i = 0; i < l->keys.size; i++) {
		if (l->keys.slot[i].cookie && l->keys.slot[i].samples)
			fn(&l->keys.slot[i], arg);
	}
}

void ledger_for_each_key(const struct ledger *l,
			 void (*fn)(const struct key *k, void *arg),
			 void *arg)
{
	size_t i;

	for (i = 0; i < l->keys.size; i++) {
		if (l->keys.slot[i].cookie)
			fn(&l->keys.slot[i], arg);
	}
}

/* A cookie names one entry of one task: the same cookie, another tid? */
static void note_cookie(struct ledger *l, uint32_t tid, uint64_t cookie)
{
	/* Across ledgers, which threads of a program may drain at once. */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct keytab cookies;	/* cookies are global */
	struct key *k;

	pthread_mutex_lock(&lock);
	k = keytab_get(&cookies, 0, cookie, true);
	if (!k->pid)
		k->pid = tid;
	else if (k->pid != tid)
		l->cookie_tid_clash++;
	pthread_mutex_unlock(&lock);
}

/* A sample or record written on @cpu into ring @r: is it the ring's CPU? */
static void check_cpu(struct ledger *l, const struct ring *r, uint32_t cpu)
{
	if (r->cpu >= 0 && cpu != (uint32_t)r->cpu)
		l->wrong_cpu++;
}

static void take_sample(struct ledger *l, const struct ring *r,
			const uint64_t *p, size_t words)
{
	uint32_t pid, tid, cpu;
	uint64_t nr, i;
	struct key *k;

	/* TID, TIME, CPU (cpu, res), CALLCHAIN */
	if (words < 4) {
		l->malformed++;
		return;
	}
	pid = (uint32_t)p[0];
	tid = (uint32_t)(p[0] >> 32);
	cpu = (uint32_t)p[2];
	nr = p[3];
	if (nr > words - 4) {
		l->malformed++;
		return;
	}
	if (l->only_pid > 0 && pid != (uint32_t)l->only_pid)
		return;
	l->samples++;
	check_cpu(l, r, cpu);
	p += 4;
	if (nr >= 2 && p[nr - 2] == PERF_CONTEXT_USER_DEFERRED) {
		if (!p[nr - 1]) {
			l->malformed++;
			return;
		}
		l->deferred++;
		note_cookie(l, tid, p[nr - 1]);
		k = keytab_get(&l->keys, tid, p[nr - 1], true);
		k->pid = pid;
		k->samples++;
		if (r->cpu < 0)
			k->task_samples++;
		if (cpu >= LEDGER_MASK_CPUS) {
			l->cpus_over_mask++;
			return;
		}
		k->sample_cpus |= 1ULL << cpu;
		if (r->cpu >= 0)
			k->ring_sample_cpus |= 1ULL << cpu;
		return;
	}
	for (i = 0; i < nr; i++) {
		if (p[i] == PERF_CONTEXT_USER) {
			l->classic_user++;
			return;
		}
	}
	l->no_user++;
}

static void take_deferred(struct ledger *l, const struct ring *r,
			  const uint64_t *p, size_t words)
{
	uint64_t cookie, nr, i;
	uint32_t pid, tid, cpu;
	struct key *k;

	/* cookie, nr, ips[nr], sample_id: TID, TIME, CPU (cpu, res) */
	if (words < 5 || p[1] != words - 5 || !p[0]) {
		l->malformed++;
		return;
	}
	cookie = p[0];
	nr = p[1];
	pid = (uint32_t)p[2 + nr];
	tid = (uint32_t)(p[2 + nr] >> 32);
	cpu = (uint32_t)p[2 + nr + 2];
	if (l->only_pid > 0 && pid != (uint32_t)l->only_pid)
		return;
	l->records++;
	check_cpu(l, r, cpu);
	l->record_frames += nr;
	if (l->on_record)
		l->on_record(l, tid, p + 2, nr);
	for (i = 0; i < nr; i++) {
		if (!p[2 + i] || p[2 + i] >= USER_END) {
			l->records_bad_ip++;
			break;
		}
	}
	note_cookie(l, tid, cookie);
	k = keytab_get(&l->keys, tid, cookie, true);
	k->pid = pid;
	k->records++;
	if (cpu >= LEDGER_MASK_CPUS) {
		l->cpus_over_mask++;
		if (r->cpu < 0)
			k->task_records++;
		return;
	}
	if (r->cpu < 0) {
		k->task_records++;
		k->task_record_cpus |= 1ULL << cpu;
	} else {
		k->ring_records++;
		k->ring_record_cpus |= 1ULL << cpu;
	}
}

static void take(struct ledger *l, const struct ring *r,
		 const struct perf_event_header *h)
{
	const uint64_t *p = (const uint64_t *)(h + 1);
	size_t words = (h->size - sizeof(*h)) / 8;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		take_sample(l, r, p, words);
		break;
	case PERF_RECORD_CALLCHAIN_DEFERRED:
		take_deferred(l, r, p, words);
		break;
	case PERF_RECORD_LOST:
		/* id, lost */
		if (words < 2)
			l->malformed++;
		else
			l->lost += p[1];
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (words < 1)
			l->malformed++;
		else
			l->lost_samples += p[0];
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		l->throttles++;
		break;
	default:
		l->others++;
		break;
	}
}

static size_t ring_drain(struct ledger *l, struct ring *r)
{
	struct perf_event_mmap_page *pc = r->base;
	unsigned char *data = (unsigned char *)r->base + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pc->data_tail, start = tail;

	while (tail < head) {
		size_t off = tail % r->data_size;
		struct perf_event_header *h = (void *)(data + off);
		size_t size;

		if (off + sizeof(*h) > r->data_size) {
			size_t first = r->data_size - off;

			memcpy(r->copy, data + off, first);
			memcpy(r->copy + first, data, sizeof(*h) - first);
			h = (void *)r->copy;
		}
		size = h->size;
		if (size < sizeof(*h) || size % 8 || tail + size > head) {
			/* A broken stream: count it and skip what is left. */
			l->malformed++;
			tail = head;
			break;
		}
		if (off + size > r->data_size) {
			size_t first = r->data_size - off;

			memcpy(r->copy, data + off, first);
			memcpy(r->copy + first, data, size - first);
			h = (void *)r->copy;
		}
		take(l, r, h);
		tail += size;
	}
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
	return tail - start;
}

size_t ledger_drain(struct ledger *l)
{
	size_t n = 0;
	int i;

	for (i = 0; i < l->nr_rings; i++)
		n += ring_drain(l, &l->rings[i]);
	return n;
}

/*
 * The kernel reports a ring's losses (PERF_RECORD_LOST) only in front of
 * the next record it manages to write there.  Losses just before the
 * workload's end would so go unreported and their records look missing.
 * Write one more record into each CPU's ring after the last drain: a
 * PERF_RECORD_COMM of this thread, through a dummy event bound to that
 * CPU, with this thread running there.  Rings of per-task events cannot
 * take an event of this thread; their late losses stay unknown.
 */
int ledger_flush_lost(struct ledger *l)
{
	struct perf_event_attr attr;
	cpu_set_t old, one;
	char comm[16];
	int i, fd, err = 0;

	if (sched_getaffinity(0, sizeof(old), &old) ||
	    prctl(PR_GET_NAME, comm))
		return -errno;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = LEDGER_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.comm = 1;
	for (i = 0; i < l->nr_rings && !err; i++) {
		const struct ring *r = &l->rings[i];

		if (r->cpu < 0)
			continue;
		fd = syscall(SYS_perf_event_open, &attr, 0, r->cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			return -errno;
		CPU_ZERO(&one);
		CPU_SET(r->cpu, &one);
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) ||
		    sched_setaffinity(0, sizeof(one), &one) ||
		    prctl(PR_SET_NAME, comm))
			err = -errno;
		close(fd);
	}
	sched_setaffinity(0, sizeof(old), &old);
	if (!err) {
		uint64_t lost = l->lost;

		ledger_drain(l);
		l->lost_late = l->lost - lost;
	}
	return err;
}

void ledger_close(struct ledger *l)
{
	size_t page = sysconf(_SC_PAGESIZE);
	int i;

	for (i = 0; i < l->nr_rings; i++) {
		struct ring *r = &l->rings[i];

		if (!r->base)
			continue;
		munmap(r->base, r->data_size + page);
		free(r->copy);
		r->base = NULL;
	}
	for (i = 0; i < l->nr_fds; i++)
		close(l->fds[i]);
	l->nr_rings = l->nr_fds = 0;
}

void ledger_free(struct ledger *l)
{
	ledger_close(l);
	free(l->keys.slot);
	l->keys.slot = NULL;
	l->keys.size = l->keys.used = 0;
}

const char *ledger_check(struct ledger *l, bool strays_ok, char *buf,
			 size_t len)
{
	size_t i;

	l->matched = l->unmatched = l->duplicated = l->strays = 0;
	l->recorded = 0;
	for (i = 0; i < l->keys.size; i++) {
		struct key *k = &l->keys.slot[i];
		uint64_t missing, stray;

		if (!k->cookie)
			continue;
		if (k->records)
			l->recorded++;
		if (k->task_records > 1 ||
		    k->ring_records > (uint32_t)__builtin_popcountll(k->ring_record_cpus))
			l->duplicated++;
		/* A ring with a sample and without the record. */
		missing = __builtin_popcountll(k->ring_sample_cpus &
					       ~k->ring_record_cpus) +
			(k->task_samples && !k->task_records);
		/*
		 * A record in the ring of a CPU the entry was not sampled on
		 * (by this session), or in a task ring without a sample.
		 */
		stray = __builtin_popcountll(k->ring_record_cpus &
					     ~ledger_record_cpus(k->sample_cpus)) +
			(k->task_records && !k->samples);
		if (k->samples && !missing)
			l->matched++;
		l->unmatched += missing;
		l->strays += stray;
	}

	if (l->malformed)
		snprintf(buf, len, "%s: %llu malformed records", l->name,
			 (unsigned long long)l->malformed);
	else if (l->wrong_cpu)
		snprintf(buf, len, "%s: %llu samples or records in the ring of another CPU",
			 l->name, (unsigned long long)l->wrong_cpu);
	else if (l->cookie_tid_clash)
		snprintf(buf, len, "%s: %llu cookies came with two tids", l->name,
			 (unsigned long long)l->cookie_tid_clash);
	else if (l->duplicated)
		snprintf(buf, len, "%s: %llu entries got their record twice in one ring",
			 l->name, (unsigned long long)l->duplicated);
	else if (l->records_bad_ip)
		snprintf(buf, len, "%s: %llu records hold a non-user address",
			 l->name, (unsigned long long)l->records_bad_ip);
	else if (l->unmatched > l->lost)
		snprintf(buf, len,
			 "%s: %llu records missing for sampled entries, more than the %llu records lost",
			 l->name, (unsigned long long)l->unmatched,
			 (unsigned long long)l->lost);
	else if (!strays_ok && l->strays > l->lost)
		snprintf(buf, len,
			 "%s: %llu records for entries not sampled on their CPU, more than the %llu records lost",
			 l->name, (unsigned long long)l->strays,
			 (unsigned long long)l->lost);
	else if (!l->deferred || !l->records)
		snprintf(buf, len, "%s: nothing was deferred (%llu samples, %llu records)",
			 l->name, (unsigned long long)l->samples,
			 (unsigned long long)l->records);
	else
		return NULL;
	return buf;
}

void ledger_print(const struct ledger *l)
{
	printf("# %s: %llu samples (%llu deferred, %llu classic, %llu kernel only), %llu records (%.1f frames each) of %llu entries; %llu entries matched, %llu records missing, %llu records without a sample on their CPU; lost %llu records (%llu reported only at the end), %llu samples; %llu throttle\n",
	       l->name, (unsigned long long)l->samples,
	       (unsigned long long)l->deferred,
	       (unsigned long long)l->classic_user,
	       (unsigned long long)l->no_user,
	       (unsigned long long)l->records,
	       l->records ? (double)l->record_frames / l->records : 0.0,
	       (unsigned long long)l->recorded,
	       (unsigned long long)l->matched,
	       (unsigned long long)l->unmatched,
	       (unsigned long long)l->strays,
	       (unsigned long long)l->lost,
	       (unsigned long long)l->lost_late,
	       (unsigned long long)l->lost_samples,
	       (unsigned long long)l->throttles);
}
