#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The tests' reference SFrame v3 decoder (tests/sframe/sframe_decode.py)
# reads what the SFrame toolchain writes exactly as binutils' readelf
# does: every function's start and size, and every row's start, CFA, FP
# and RA rule, PC-mask rows of the .plt included.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../harness/tap.sh"
ROOT=$(cd "$here/../.." && pwd)

tap_plan 3
if ! bin=$("$ROOT/harness/sframe-toolchain" 2>"${TMPDIR:-/tmp}/sframe-tc.$$"); then
	why=$(grep -m1 error: "${TMPDIR:-/tmp}/sframe-tc.$$")
	rm -f "${TMPDIR:-/tmp}/sframe-tc.$$"
	for i in 1 2 3; do
		echo "not ok $i # the SFrame toolchain is not available: $why"
	done
	exit 1
fi
rm -f "${TMPDIR:-/tmp}/sframe-tc.$$"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

built() {
	gcc -B "$bin/" -O2 -fomit-frame-pointer -Wa,--gsframe \
		-o "$tmp/chain" "$here/chain.c" 2>"$tmp/gcc.log"
}

# readelf's table, without its headings, one space between fields.
readelf_rows() {
	"$bin/readelf" --sframe "$tmp/chain" |
		awk '/func idx/ { $1 = $1; print; next }
		     /STARTPC/ { print $1; next }
		     /^ *[0-9a-f]+ / { $1 = $1; print }'
}

same() {
	python3 "$here/sframe_decode.py" "$tmp/chain" >"$tmp/ours" || return 1
	readelf_rows >"$tmp/theirs"
	if ! diff -u "$tmp/theirs" "$tmp/ours" >"$tmp/diff"; then
		sed 's/^/# /' "$tmp/diff"
		return 1
	fi
}

# The program has an FP-based row, an FP save and .plt PC-mask rows.
kinds() {
	grep -q " fp+" "$tmp/ours" && grep -q " c-16 " "$tmp/ours" &&
		grep -q "^STARTPC\[m\]" "$tmp/ours"
}

tap_ok "a program builds with SFrame v3" built
tap_ok "the reference decoder reads it as readelf does" same
tap_ok "its table has FP-based CFA rows, a saved FP and .plt PC-mask rows" kinds
tap_done
