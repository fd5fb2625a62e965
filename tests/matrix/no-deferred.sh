#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In a guest booted on a kernel without CONFIG_UNWIND_DEFERRED (make matrix,
# entry no-deferred): what users of the defer bits see there.
#
#  1. the kernel lists no deferred-walk methods;
#  2. perf_event_open() refuses defer_callchain with EINVAL, so the
#     deferred_callchain selftests skip with that reason and none fails;
#  3. perf record --call-graph fp,defer says it cannot defer, records
#     classic callchains, and their user part holds the workload's frames.
#
# usage: tests/matrix/no-deferred.sh   (TAP on stdout; run from the repo root)

BUILD=${BUILD:-build}
PERF=$BUILD/perf/perf
WORKLOAD=$BUILD/perf-tests/deep_syscalls
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=1
	fi
}

echo "1..3"

if [ -e /sys/kernel/unwind_user/methods ]; then
	echo "# /sys/kernel/unwind_user/methods exists: $(cat /sys/kernel/unwind_user/methods)"
	result 1 "no deferred-walk methods are listed"
else
	result 0 "no deferred-walk methods are listed"
fi

out=$("$BUILD/selftests/perf_events/deferred_callchain" 2>&1)
rc=$?
skips=$(echo "$out" | grep -c '^ok .*# SKIP no CONFIG_UNWIND_DEFERRED: defer_callchain gets EINVAL')
bad=$(echo "$out" | grep -c '^not ok')
echo "# deferred_callchain: exit $rc, $skips skipped for lack of deferral, $bad failed"
echo "$out" | grep -E '^(not ok|# (Totals|FAIL))' | sed 's/^/# /'
[ $rc = 0 ] && [ "$skips" -ge 1 ] && [ "$bad" = 0 ]
result $? "deferred_callchain skips: defer_callchain gets EINVAL"

data=$tmp/perf.data
rec=$("$PERF" record -o "$data" -e cpu-clock -c 50000 --call-graph fp,defer -- \
	"$WORKLOAD" -d 8 -n 150 -b 262144 2>&1)
rc=$?
attrs=$("$PERF" evlist -v -i "$data" 2>&1)
chains=$("$PERF" script -i "$data" -F ip,sym 2>&1)
user=$(echo "$chains" | grep -c 'descend')
echo "$rec" | sed 's/^/# perf record: /'
echo "# perf record exit $rc; $user callchain entries in descend()"
ok=0
[ $rc = 0 ] || ok=1
echo "$rec" | grep -q 'cannot defer user callchains' || { echo "# no warning that perf cannot defer"; ok=1; }
echo "$attrs" | grep -q 'defer_callchain: 1\|defer_output: 1' && { echo "# the file's events ask for deferral"; ok=1; }
[ "$user" -ge 8 ] || { echo "# the classic chains lack the workload's frames"; ok=1; }
result $ok "perf record --call-graph fp,defer falls back to classic callchains with user frames"

exit $failed
