// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for where a path's instructions go: counts, per guest
 * virtual address in [lo, hi) (the kernel's text and modules by default),
 * how often each instruction ran, and writes "addr count" lines to out= at
 * QEMU's exit. harness/insnprof/report.py turns them into instructions per
 * call of a function, by function and by inlined source line, for two
 * kernels to be compared (issue 64's per-call cost of the BPF helper).
 * Declares the few calls of QEMU 7.2's plugin API it uses (Debian 12's
 * qemu ships no header); counters are inline adds, exact under -icount,
 * where the vCPUs run in turn.
 *
 * Built and loaded by hand so far (not yet run against a guest):
 *   gcc -O2 -shared -fPIC -fvisibility=hidden -o insnprof.so insnprof.c
 *   qemu-system-x86_64 -plugin ./insnprof.so,out=prof.txt ...
 * with bench/bpf.c's BPFPROF=MODE:DEPTH:SLICES to run one case alone.
 */
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*udata_cb)(qemu_plugin_id_t, void *);

extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, tb_trans_cb);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *, size_t);
extern uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *);
extern void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *,
		enum qemu_plugin_op, void *, uint64_t);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, udata_cb, void *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define NSLOT (1u << 22)
static uint64_t keys[NSLOT], counts[NSLOT];
static uint64_t lo = 0xffffffff80000000ull, hi = 0xffffffffc0000000ull;
static const char *out = "insnprof.out";

static uint64_t *slot(uint64_t va)
{
	uint64_t h = (va * 0x9e3779b97f4a7c15ull) >> 42;

	for (;; h = (h + 1) & (NSLOT - 1)) {
		if (keys[h] == va)
			return &counts[h];
		if (!keys[h]) {
			keys[h] = va;
			return &counts[h];
		}
	}
}

static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);

		if (va < lo || va >= hi)
			continue;
		qemu_plugin_register_vcpu_insn_exec_inline(insn,
				QEMU_PLUGIN_INLINE_ADD_U64, slot(va), 1);
	}
}

static void done(qemu_plugin_id_t id, void *p)
{
	FILE *f = fopen(out, "w");

	if (!f)
		return;
	for (size_t i = 0; i < NSLOT; i++)
		if (keys[i] && counts[i])
			fprintf(f, "%llx %llu\n", (unsigned long long)keys[i],
				(unsigned long long)counts[i]);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
		else if (!strncmp(argv[i], "lo=", 3))
			lo = strtoull(argv[i] + 3, NULL, 16);
		else if (!strncmp(argv[i], "hi=", 3))
			hi = strtoull(argv[i] + 3, NULL, 16);
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
	qemu_plugin_register_atexit_cb(id, done, NULL);
	return 0;
}
