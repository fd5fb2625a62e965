#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of harness/splat-scan on captured and hand-written logs.
# warning.log and oops.log were captured from real guest runs (lkdtm),
# clean-boot.log is a real clean boot of the guest kernel.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
scan=$here/../../harness/splat-scan
s=$here/samples

red=(warning oops lockdep atomic-sleep rcu-stall kasan hung-task kmemleak ubsan kfence soft-lockup)
tap_plan $((${#red[@]} + 3))

tap_ok "a clean guest boot log has no splat" "$scan" "$s/clean-boot.log"
tap_ok "messages that merely mention bugs or warnings are not splats" "$scan" "$s/near-miss.log"
for r in "${red[@]}"; do
	tap_ok "$r report is a splat" expect_fail 'kernel splat in' "$scan" "$s/$r.log"
done
tap_ok "a splat anywhere among several logs fails the scan" \
	expect_fail "kernel splat in .*lockdep.log" "$scan" "$s/clean-boot.log" "$s/lockdep.log"
tap_done
