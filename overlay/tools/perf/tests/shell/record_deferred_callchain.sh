#!/bin/bash
# perf record --call-graph fp,defer (deferred user callchains)
# SPDX-License-Identifier: GPL-2.0
#
# Records leafloop with its user part deferred (the kernel's
# unwind_deferred_try_first sysctl off for the run, where it can be set),
# then checks that the
# attributes ask for deferral, that perf script puts each record's user
# frames back into the samples (leaf, parent, leafloop, in that order),
# that --no-merge-callchains shows the records with the cookies of the
# samples, and that perf inject --merge-callchains writes a classic file.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_has_symbol.sh
. "${shelldir}"/lib/perf_has_symbol.sh

skip_test_missing_symbol leafloop

data=$(mktemp /tmp/__perf_test.perf.data.XXXXX)
merged=$(mktemp /tmp/__perf_test.perf.data.XXXXX)
log=$(mktemp /tmp/__perf_test.log.XXXXX)
err=0

# leafloop spins in user space, where the kernel takes a resident stack
# at once instead of deferring it: turn that off to test the deferral.
try_first=/proc/sys/kernel/unwind_deferred_try_first
saved_try_first=
if [ -w "${try_first}" ]; then
	saved_try_first=$(cat "${try_first}")
	echo 0 > "${try_first}"
fi

cleanup() {
	rm -f "${data}" "${data}.old" "${merged}" "${merged}.old" "${log}"
	[ -z "${saved_try_first}" ] || echo "${saved_try_first}" > "${try_first}"
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

if ! perf record -o "${data}" -e cpu-clock --call-graph fp,defer \
	-- perf test -w leafloop 2> "${log}"; then
	cat "${log}"
	echo "FAIL: perf record --call-graph fp,defer"
	exit 1
fi
if grep -q "cannot defer user callchains" "${log}"; then
	echo "Skip: this kernel cannot defer user callchains"
	exit 2
fi

attrs=$(perf evlist -v -i "${data}")
echo "${attrs}" | grep -q "defer_callchain: 1" ||
	fail "the cpu-clock event does not have defer_callchain"
echo "${attrs}" | grep -q "defer_output: 1" ||
	fail "no event has defer_output"

records=$(perf report --stats -i "${data}" 2>/dev/null |
	  awk '/CALLCHAIN_DEFERRED events:/ { print $3; exit }')
[ "${records:-0}" -gt 0 ] || fail "no PERF_RECORD_CALLCHAIN_DEFERRED in the file"

# Each frame is a tab, spaces and an address, then the symbol.
SEP="[[:space:]]+ [[:xdigit:]]+"
perf script -i "${data}" -F comm,ip,sym 2>/dev/null | tr '\n' ' ' |
	grep -E -q "perf $SEP leaf $SEP parent $SEP leafloop" ||
	fail "no merged sample shows leaf, parent, leafloop"

raw=$(perf script --no-merge-callchains -i "${data}" -F comm,tid,ip,sym 2>/dev/null)
asked=$(echo "${raw}" | grep -o "user callchain deferred, cookie 0x[[:xdigit:]]*" |
	awk '{ print $NF }' | sort -u)
given=$(echo "${raw}" | grep -o "DEFERRED CALLCHAIN cookie 0x[[:xdigit:]]*" |
	awk '{ print $NF }' | sort -u)
[ -n "${asked}" ] || fail "--no-merge-callchains shows no sample cookie"
[ -n "${given}" ] || fail "--no-merge-callchains shows no DEFERRED CALLCHAIN record"
orphans=$(comm -23 <(echo "${asked}") <(echo "${given}"))
[ -z "${orphans}" ] || fail "samples with cookies no record has: ${orphans}"

if perf inject --merge-callchains -i "${data}" -o "${merged}"; then
	perf report --stats -i "${merged}" 2>/dev/null | grep -q "CALLCHAIN_DEFERRED" &&
		fail "perf inject --merge-callchains kept the records"
	perf evlist -v -i "${merged}" | grep -q "defer_" &&
		fail "perf inject --merge-callchains kept the defer attributes"
	perf script -i "${merged}" -F comm,ip,sym 2>/dev/null | tr '\n' ' ' |
		grep -E -q "perf $SEP leaf $SEP parent $SEP leafloop" ||
		fail "the injected file has no leaf, parent, leafloop chain"
else
	fail "perf inject --merge-callchains"
fi

exit ${err}
