#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of harness/series-order on small synthetic series: a series
# in order passes both tests, and each kind of disorder fails the test
# that names it, saying which step and file.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
order=$here/../../harness/series-order

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# new_series DIR: a git repository whose base has a kernel Makefile.
new_series() {
	git init -q "$1"
	mkdir -p "$1/kernel/foo" "$1/include/linux"
	echo 'obj-y += foo/' >"$1/kernel/Makefile"
	echo 'int base;' >"$1/kernel/base.c"
	git -C "$1" add -A
	git -C "$1" -c user.name=t -c user.email=t@t commit -q -m base
	git -C "$1" tag base
}

# step DIR SUBJECT: commit everything as one step.
step() {
	git -C "$1" add -A
	git -C "$1" -c user.name=t -c user.email=t@t commit -q -m "$2"
}

foo_c() {	# DIR: foo.c, defining foo_walk() and calling it
	cat >"$1/kernel/foo/foo.c" <<-'EOF'
	#include "foo.h"

	int foo_walk(int n)
	{
		return n + 1;
	}

	static int __init foo_init(void)
	{
		return foo_walk(0);
	}
	EOF
}

tap_plan 6

# In order: the header and its user in one step, a caller with the next.
new_series "$tmp/good"
printf '#define FOO 1\nint foo_walk(int n);\n' >"$tmp/good/kernel/foo/foo.h"
foo_c "$tmp/good"
echo 'obj-y += foo.o' >"$tmp/good/kernel/foo/Makefile"
step "$tmp/good" "foo: walk"
cat >"$tmp/good/kernel/foo/bar.c" <<-'EOF'
	#include "foo.h"

	int bar_use(void)
	{
		return foo_walk(FOO);
	}

	static int __init bar_init(void)
	{
		return bar_use();
	}
EOF
echo 'obj-y += foo.o bar.o' >"$tmp/good/kernel/foo/Makefile"
step "$tmp/good" "foo: bar"
tap_ok "a series in order passes both tests" \
	bash -c "'$order' --functions '$tmp/good' >'$tmp/good.tap' && grep -c '^ok' '$tmp/good.tap' | grep -qx 2"

# A file that includes a header a later patch brings.
new_series "$tmp/late"
foo_c "$tmp/late"
echo 'obj-y += foo.o' >"$tmp/late/kernel/foo/Makefile"
step "$tmp/late" "foo: walk"
printf 'int foo_walk(int n);\n' >"$tmp/late/kernel/foo/foo.h"
step "$tmp/late" "foo: header"
tap_ok "a file that includes a header of a later patch fails test 1, naming both" \
	expect_fail '# step 1 \(foo: walk\): kernel/foo/foo.c needs kernel/foo/foo.h' "$order" "$tmp/late"

# A Makefile that builds an object a later patch brings, under a Kconfig
# symbol of that step: needed; under one not there yet: not yet.
new_series "$tmp/obj"
printf 'config FOO\n\tbool "foo"\n' >"$tmp/obj/kernel/foo/Kconfig"
printf 'obj-$(CONFIG_FOO) += foo.o\nobj-$(CONFIG_BAR) += bar.o\n' >"$tmp/obj/kernel/foo/Makefile"
step "$tmp/obj" "foo: build"
foo_c "$tmp/obj"
printf 'int foo_walk(int n);\n' >"$tmp/obj/kernel/foo/foo.h"
echo 'int bar;' >"$tmp/obj/kernel/foo/bar.c"
step "$tmp/obj" "foo: code"
tap_ok "a Makefile that builds an object of a later patch fails test 1" \
	expect_fail 'kernel/foo/Makefile needs kernel/foo/foo.c' "$order" "$tmp/obj"
tap_ok "an object whose Kconfig symbol comes later is not needed yet" \
	bash -c "! '$order' '$tmp/obj' | grep -q 'needs kernel/foo/bar.c'"

# A function with no caller in its step, nor later.
new_series "$tmp/unused"
printf 'int foo_walk(int n);\nint foo_spare(void);\n' >"$tmp/unused/include/linux/foo.h"
foo_c "$tmp/unused"
sed -i 's|"foo.h"|<linux/foo.h>|' "$tmp/unused/kernel/foo/foo.c"
cat >>"$tmp/unused/kernel/foo/foo.c" <<-'EOF'

	/* foo_spare() is only named in this comment. */
	int foo_spare(void)
	{
		return 2;
	}
EOF
echo 'obj-y += foo.o' >"$tmp/unused/kernel/foo/Makefile"
step "$tmp/unused" "foo: spare"
tap_ok "a function nothing calls fails test 2 (a comment or declaration is no call)" \
	expect_fail 'foo_spare\(\) \(kernel/foo/foo.c, step 1: foo: spare\) is never called' \
	"$order" --functions "$tmp/unused"

# An internal function whose first caller comes a patch later.
new_series "$tmp/early"
printf 'int foo_walk(int n);\n' >"$tmp/early/kernel/foo/foo.h"
cat >"$tmp/early/kernel/foo/foo.c" <<-'EOF'
	#include "foo.h"

	int foo_walk(int n)
	{
		return n + 1;
	}
EOF
echo 'obj-y += foo.o' >"$tmp/early/kernel/foo/Makefile"
step "$tmp/early" "foo: walk"
foo_c "$tmp/early"
step "$tmp/early" "foo: use"
tap_ok "an internal function used only by the next patch fails test 2" \
	expect_fail 'foo_walk\(\) \(kernel/foo/foo.c\) comes at step 1 \(foo: walk\), its first user at step 2' \
	"$order" --functions "$tmp/early"
