#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the guest side of the harness on real guest runs: a failing
# test program and an injected kernel warning each turn a run red, exit
# statuses come back, and a panic and a hang are failures with a reason;
# two guests that share a list run each program once.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
h=$here/../../harness
ROOT=$(cd "$here/../.." && pwd)
runs=${RUNS:-$ROOT/build/runs}
cd "$ROOT"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tap_plan 7

# The hang takes its whole timeout: it runs beside the other guests.
expect_fail 'error: guest timed out after 25s' \
	"$h/vm" --quiet --name selftest-timeout --timeout 25 -- 'sleep 600' \
	>"$tmp/hang.out" 2>&1 &
hang=$!

rc=0
"$h/vm" --quiet --name selftest-red -- \
	"harness/guest-tests tests/harness/red.list /run/results/tap; exit 7" >"$tmp/vm.out" 2>&1 || rc=$?
tap_ok "the guest command's exit status comes back to the host" test "$rc" = 7
"$h/judge" "$runs/selftest-red" "$tmp/res" tests/harness/red.list
rrc=0
"$h/tap-report" "$tmp/res" >"$tmp/report" 2>&1 || rrc=$?
sed 's/^/# /' "$tmp/report"
tap_ok "a failing test case turns the run red" \
	bash -c "[ $rrc != 0 ] && grep -q 'FAIL.*selftest/fails-a-case: selftest.fails_on_purpose' '$tmp/report'"
tap_ok "an injected kernel warning turns the run red" \
	bash -c "grep -q 'FAIL.*kernel-log/selftest-red' '$tmp/report' && grep -q 'WARNING:' '$tmp/res/kernel-log__selftest-red.tap'"
tap_ok "the report ends with the failure count" \
	bash -c "tail -1 '$tmp/report' | grep -qx '[0-9]* passed, 3 failed, 0 skipped'"

tap_ok "a guest kernel panic is a failure with a reason" \
	expect_fail 'error: guest died before reporting a status: .*Oops' \
	"$h/vm" --quiet --name selftest-panic -- \
	'modprobe -d $MODDIR lkdtm && echo BUG >/sys/kernel/debug/provoke-crash/DIRECT'
# Two guests sharing a list (harness/check): each program runs once, in
# one of them. The list and the shared folder are under build/, which the
# guests see (their /tmp is their own).
shared=$runs/selftest-claims
rm -rf "$shared" "$shared.list"
mkdir -p "$shared"
for i in 1 2 3 4 5 6; do
	echo "claims/p$i 60 echo 1..1; sleep 0.$i; echo ok 1 p$i"
done >"$shared.list"
pids=()
for g in 1 2; do
	"$h/vm" --quiet --name "selftest-claims-$g" --share "$shared" -- \
		harness/guest-tests --claims /run/shared "$(realpath --relative-to="$ROOT" "$shared.list")" \
		/run/results/tap >/dev/null 2>&1 &
	pids+=($!)
done
wait "${pids[@]}" || true
ran=$(cat "$runs"/selftest-claims-[12]/tap/index 2>/dev/null | sort | tr '\n' ' ')
echo "# ran: $ran (guest 1: $(xargs <"$runs/selftest-claims-1/tap/index" 2>/dev/null); guest 2: $(xargs <"$runs/selftest-claims-2/tap/index" 2>/dev/null))"
tap_ok "two guests sharing a list run each of its programs once" \
	test "$ran" = "claims/p1 claims/p2 claims/p3 claims/p4 claims/p5 claims/p6 "
rm -rf "$shared" "$shared.list"

hang_rc=0
wait "$hang" || hang_rc=$?
cat "$tmp/hang.out"
tap_ok "a hanging guest is stopped at its timeout" test "$hang_rc" = 0
tap_done
