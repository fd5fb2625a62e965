#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of harness/tap-report: what counts as passed, failed, skipped.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
report=$here/../../harness/tap-report

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# prog DIR NAME RC: TAP text on stdin.
prog() {
	mkdir -p "$1"
	echo "$2" >>"$1/index"
	cat >"$1/${2//\//__}.tap"
	echo "$3" >"$1/${2//\//__}.rc"
}

# summary DIR RC LINE: tap-report exits RC and ends with LINE.
summary() {
	local out rc=0
	out=$("$report" "$1" 2>&1) || rc=$?
	if [ "$rc" != "$2" ] || [ "$(tail -1 <<<"$out")" != "$3" ]; then
		echo "# wanted exit $2 and '$3', got exit $rc:"
		sed 's/^/#   /' <<<"$out"
		return 1
	fi
}

tap_plan 8

prog "$tmp/green" suite/a 0 <<'EOT'
TAP version 13
1..3
# Starting 3 tests
ok 1 f.one
ok 2 f.two # SKIP no PMU
ok 3 - f.three
# Totals: pass:2 fail:0 skip:1
EOT
tap_ok "all ok with one skip is green" summary "$tmp/green" 0 "2 passed, 0 failed, 1 skipped"

prog "$tmp/red" suite/b 1 <<'EOT'
1..2
ok 1 f.one
not ok 2 f.two
EOT
tap_ok "a 'not ok' line turns the run red" summary "$tmp/red" 1 "1 passed, 1 failed, 0 skipped"

prog "$tmp/crash" suite/c 139 <<'EOT'
1..3
ok 1 f.one
EOT
tap_ok "a program dying before its plan is complete fails" summary "$tmp/crash" 1 "1 passed, 1 failed, 0 skipped"

prog "$tmp/timeout" suite/d 124 <<'EOT'
1..1
EOT
tap_ok "a timed-out program fails" summary "$tmp/timeout" 1 "0 passed, 1 failed, 0 skipped"

prog "$tmp/lying" suite/e 1 <<'EOT'
1..1
ok 1 f.one
EOT
tap_ok "a non-zero exit with no failed case fails" summary "$tmp/lying" 1 "1 passed, 1 failed, 0 skipped"

prog "$tmp/skipall" suite/f 4 <<'EOT'
1..0 # SKIP no hardware
EOT
tap_ok "a program that skips as a whole counts as skipped" summary "$tmp/skipall" 0 "0 passed, 0 failed, 1 skipped"

prog "$tmp/notap" suite/g 2 </dev/null
tap_ok "a program with no TAP and a failing exit fails" summary "$tmp/notap" 1 "0 passed, 1 failed, 0 skipped"

prog "$tmp/nested" suite/h 0 <<'EOT'
1..1
# not ok 1 inner.case
ok 1 outer
EOT
tap_ok "indented or commented result lines are not counted" summary "$tmp/nested" 0 "1 passed, 0 failed, 0 skipped"

tap_done
