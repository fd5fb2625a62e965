#!/bin/bash
# perf record --call-graph sframe (user stacks by SFrame tables)
# SPDX-License-Identifier: GPL-2.0
#
# Builds a small program without frame pointers and with an SFrame table
# (${CC:-cc} -O2 -fomit-frame-pointer -Wa,--gsframe), records it with
# --call-graph sframe, and checks that the attributes are those of
# fp,defer, and that perf script, perf report -g folded and perf inject
# --merge-callchains all show the whole chain: sframe_leaf, sframe_mid,
# sframe_top, main.  Skips when the kernel does not unwind SFrame or the
# compiler cannot emit SFrame version 3.

methods=/sys/kernel/unwind_user/methods
if ! grep -qw sframe "${methods}" 2>/dev/null; then
	echo "Skip: this kernel does not walk SFrame tables (no sframe in ${methods})"
	exit 2
fi

dir=$(mktemp -d /tmp/__perf_test.sframe.XXXXX)
data="${dir}/perf.data"
err=0

cleanup() {
	rm -rf "${dir}"
	trap - EXIT TERM INT
}

trap_cleanup() {
	cleanup
	exit 1
}
trap cleanup EXIT
trap trap_cleanup TERM INT

fail() {
	echo "FAIL: $*"
	err=1
}

# Three frames with no frame pointer, of different sizes, then a loop of
# read(2)s of /dev/zero, so that most samples land in the kernel.  The
# system call is made inline: libc's read() has no SFrame table, and
# without frame pointers in its callers no walk gets past it.
cat > "${dir}/prog.c" <<'PROG'
#include <fcntl.h>
#include <sys/syscall.h>

static char buf[65536];

__attribute__((noinline)) int sframe_leaf(int fd, int n)
{
	volatile char pad[96];
	int i, got = 0;
	long ret;

	pad[n % 96] = (char)n;
	for (i = 0; i < n; i++) {
		asm volatile("syscall"
			     : "=a"(ret)
			     : "0"((long)SYS_read), "D"((long)fd), "S"(buf),
			       "d"(sizeof(buf))
			     : "rcx", "r11", "memory");
		got += ret > 0;
	}
	return got + pad[n % 96];
}

__attribute__((noinline)) int sframe_mid(int fd, int n)
{
	volatile char pad[200];

	pad[n % 200] = 1;
	return sframe_leaf(fd, n) + pad[n % 200];
}

__attribute__((noinline)) int sframe_top(int fd, int n)
{
	volatile long pad[40];

	pad[n % 40] = 2;
	return sframe_mid(fd, n) + (int)pad[n % 40];
}

int main(void)
{
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 1;
	return sframe_top(fd, 4000) > 0 ? 0 : 1;
}
PROG
# shellcheck disable=SC2086
if ! ${CC:-cc} -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls \
	-Wa,--gsframe -o "${dir}/prog" "${dir}/prog.c" 2> "${dir}/cc.log"; then
	echo "Skip: ${CC:-cc} cannot build with -Wa,--gsframe: $(head -1 "${dir}/cc.log")"
	exit 2
fi
# The SFrame header: magic 0xdee2, then the version byte (the kernel
# reads version 3).
version=$(objcopy -O binary --only-section=.sframe "${dir}/prog" "${dir}/sframe" \
	2>/dev/null && od -An -tu1 -j2 -N1 "${dir}/sframe" | tr -d ' ')
if [ "${version}" != 3 ]; then
	echo "Skip: ${CC:-cc} emits SFrame version ${version:-none}; the kernel reads version 3"
	exit 2
fi

if ! perf record -o "${data}" -e cpu-clock --call-graph sframe \
	-- "${dir}/prog" 2> "${dir}/record.log"; then
	cat "${dir}/record.log"
	echo "FAIL: perf record --call-graph sframe"
	exit 1
fi

attrs=$(perf evlist -v -i "${data}")
echo "${attrs}" | grep -q "defer_callchain: 1" ||
	fail "the cpu-clock event does not have defer_callchain"
echo "${attrs}" | grep -q "defer_output: 1" ||
	fail "no event has defer_output"

# Each frame is a tab, spaces and an address, then the symbol.
SEP="[[:space:]]+ [[:xdigit:]]+"
CHAIN="sframe_leaf $SEP sframe_mid $SEP sframe_top $SEP main"
perf script -i "${data}" -F comm,ip,sym 2>/dev/null | tr '\n' ' ' |
	grep -E -q "$CHAIN" ||
	fail "no merged sample shows sframe_leaf, sframe_mid, sframe_top, main"

perf report -i "${data}" --stdio --no-children -g folded,0,caller,count \
	2>/dev/null | grep -q "main;sframe_top;sframe_mid;sframe_leaf" ||
	fail "perf report -g folded has no main;sframe_top;sframe_mid;sframe_leaf"

if perf inject --merge-callchains -i "${data}" -o "${dir}/merged.data"; then
	perf script -i "${dir}/merged.data" -F comm,ip,sym 2>/dev/null | tr '\n' ' ' |
		grep -E -q "$CHAIN" ||
		fail "the injected file has no sframe_leaf, sframe_mid, sframe_top, main chain"
else
	fail "perf inject --merge-callchains"
fi

exit ${err}
