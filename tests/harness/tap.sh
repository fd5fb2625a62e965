# SPDX-License-Identifier: GPL-2.0
# Minimal TAP producer for the harness self-tests.  Sourced.

_tap_n=0
_tap_failed=0

tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

# ok COND DESCRIPTION: COND is a command; its status decides.
tap_ok() {
	local desc=$1
	shift
	_tap_n=$((_tap_n + 1))
	if "$@"; then
		echo "ok $_tap_n $desc"
	else
		echo "not ok $_tap_n $desc"
		_tap_failed=1
	fi
}

# expect_fail PATTERN CMD...: CMD must fail and say PATTERN on stderr/stdout.
expect_fail() {
	local pat=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "# expected failure, command succeeded: $*"
		echo "$out" | sed 's/^/#   /'
		return 1
	fi
	if ! grep -q -E -- "$pat" <<<"$out"; then
		echo "# failure message lacks /$pat/:"
		echo "$out" | sed 's/^/#   /'
		return 1
	fi
}

tap_done() {
	exit $_tap_failed
}
