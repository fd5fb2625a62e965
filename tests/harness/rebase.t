#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of harness/rebase on small synthetic bases: a base the series
# applies to is built; a conflicting hunk is reported by patch and file,
# with build/linux and patches/ as they were; a resolved conflict goes on;
# --adopt pins the new base; --check tells a newer 6.12 in the archive.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
harness=$here/../../harness

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export BUILD=$tmp/build PATCHES=$tmp/patches
export TREE=$BUILD/linux STATE=$BUILD/state BASE_TARBALL=$tmp/base.tar.xz
export DEFERRED_UNWIND_CACHE=$tmp/cache
cp "$harness/lib.sh" "$tmp/lib.sh"
export REBASE_LIBSH=$tmp/lib.sh REBASE_KERNEL_CMD=$tmp/build-kernel

# A base of two files; "building" it compiles both.
mkbase() {	# tarball a.c-line
	rm -rf "$tmp/src" && mkdir -p "$tmp/src/linux"
	printf 'VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\n' >"$tmp/src/linux/Makefile"
	printf '%s\nint b;\n' "$2" >"$tmp/src/linux/a.c"
	echo 'int c;' >"$tmp/src/linux/c.c"
	tar -C "$tmp/src" -cJf "$1" linux
	rm -f "$1.sha256"
}
cat >"$REBASE_KERNEL_CMD" <<'EOS'
#!/bin/bash
set -e
mkdir -p "$OBJ"
gcc -c -o "$OBJ/a.o" "$TREE/a.c"
gcc -c -o "$OBJ/c.o" "$TREE/c.c"
EOS
chmod +x "$REBASE_KERNEL_CMD"

mkbase "$BASE_TARBALL" 'int a;'
mkdir -p "$PATCHES"
cat >"$PATCHES/a-set-a.patch" <<'EOP'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: T <t@t>
Date: Thu, 1 Jan 2026 00:00:00 +0000
Subject: [PATCH] a: set a

Why and what.
---
diff --git a/a.c b/a.c
--- a/a.c
+++ b/a.c
@@ -1,2 +1,2 @@
-int a;
+int a = 1;
 int b;
EOP
echo a-set-a.patch >"$PATCHES/series"
"$harness/tree" sync 2>/dev/null
# The patch as harness/tree writes it, with the base's blob ids.
git -C "$TREE" format-patch -q --zero-commit --no-signature --abbrev=12 \
	--stdout base..HEAD >"$PATCHES/a-set-a.patch"
"$harness/tree" sync 2>/dev/null
tree_head=$(git -C "$TREE" rev-parse HEAD)
patches_sum=$(sha256sum "$PATCHES"/* | sha256sum)
unchanged() {
	[ "$(git -C "$TREE" rev-parse HEAD)" = "$tree_head" ] &&
		[ -z "$(git -C "$TREE" status --porcelain)" ] &&
		[ "$(sha256sum "$PATCHES"/* | sha256sum)" = "$patches_sum" ]
}

tap_plan 12

# A newer base that changed another line: the patch applies, it builds.
mkbase "$tmp/clean.tar.xz" 'int a;'
sed -i 's/int c;/int c = 3;/' "$tmp/src/linux/c.c"
tar -C "$tmp/src" -cJf "$tmp/clean.tar.xz" linux
tap_ok "a base the series applies to: every patch applies and the tree builds" \
	bash -c "REBASE_TARBALL='$tmp/clean.tar.xz' '$harness/rebase' 6.12.900-1 --no-test 2>'$tmp/clean.out' &&
		grep -q 'every patch applies to 6.12.900-1' '$tmp/clean.out' &&
		grep -qx 'int a = 1;' '$BUILD/rebase/linux/a.c' && grep -qx 'int c = 3;' '$BUILD/rebase/linux/c.c' &&
		[ -f '$BUILD/rebase/obj/a.o' ]"

# A patch changed after a clean rebase: applied again, from that patch on.
cp "$PATCHES/a-set-a.patch" "$tmp/a-set-a.orig"
sed -i 's/^+int a = 1;$/+int a = 5;/' "$PATCHES/a-set-a.patch"
tap_ok "a patch changed since is applied again" \
	bash -c "REBASE_TARBALL='$tmp/clean.tar.xz' '$harness/rebase' 6.12.900-1 --no-test 2>/dev/null &&
		grep -qx 'int a = 5;' '$BUILD/rebase/linux/a.c' &&
		[ \"\$(git -C '$BUILD/rebase/linux' rev-list --count base..HEAD)\" = 1 ]"
cp "$tmp/a-set-a.orig" "$PATCHES/a-set-a.patch"

# A newer base that changed the patched line: a conflict.
mkbase "$tmp/conflict.tar.xz" 'int a = 2;'
tap_ok "a conflicting hunk is reported by patch and file" \
	expect_fail 'conflict: patches/a-set-a.patch does not apply to 6.12.901-1' \
	env REBASE_TARBALL="$tmp/conflict.tar.xz" "$harness/rebase" 6.12.901-1 --no-test
tap_ok "the report names the file and its hunks" \
	expect_fail 'a.c: 1 conflicting hunk' \
	env REBASE_TARBALL="$tmp/conflict.tar.xz" "$harness/rebase" 6.12.901-1 --no-test
tap_ok "build/linux and patches/ are as they were" unchanged
tap_ok "a conflict cannot be adopted" \
	expect_fail 'no clean rebase' "$harness/rebase" --adopt

# Resolved by hand: it goes on from there.
printf 'int a = 1;\nint b;\n' >"$BUILD/rebase/linux/a.c"
git -C "$BUILD/rebase/linux" add a.c
tap_ok "a resolved conflict goes on, and builds" \
	bash -c "REBASE_TARBALL='$tmp/conflict.tar.xz' '$harness/rebase' 6.12.901-1 --no-test 2>/dev/null &&
		[ -f '$BUILD/rebase/obj/a.o' ]"
tap_ok "--adopt pins the new base and writes the rebased patch" \
	bash -c "'$harness/rebase' --adopt 2>/dev/null &&
		grep -q 'BASE_PIN=\${BASE_PIN:-6.12.901-1}' '$REBASE_LIBSH' &&
		grep -q \"BASE_SHA256=\\\${BASE_SHA256:-\$(sha256sum '$tmp/conflict.tar.xz' | cut -d' ' -f1)}\" '$REBASE_LIBSH' &&
		grep -q '^-int a = 2;' '$PATCHES/a-set-a.patch' && [ ! -d '$BUILD/rebase' ]"

# A patch whose old blobs are nowhere (no three-way merge): rebased by
# hand and committed, then taken as it is.
tap_ok "a patch that cannot be merged is left to a rebase by hand" \
	expect_fail 'rebase patches/a-set-a.patch by hand' \
	env REBASE_TARBALL="$BASE_TARBALL" "$harness/rebase" 6.12.902-1 --no-test
printf 'int a = 1;\nint b;\n' >"$BUILD/rebase/linux/a.c"
git -C "$BUILD/rebase/linux" -c user.name=t -c user.email=t@t commit -q -a -m "a: set a"
tap_ok "the commit made by hand is taken as the patch" \
	bash -c "REBASE_TARBALL='$BASE_TARBALL' '$harness/rebase' 6.12.902-1 --no-test 2>'$tmp/hand.out' &&
		grep -q 'taking the commit on top as patches/a-set-a.patch' '$tmp/hand.out' &&
		[ \"\$(git -C '$BUILD/rebase/linux' rev-list --count base..HEAD)\" = 1 ]"

# The staleness check, on lists of the archive.
printf '6.12.117-1~deb12u1\n6.12.999-1~deb12u1\n6.12.95-1~bpo12+1\n' >"$tmp/newer"
printf '6.12.95-1~bpo12+1\n6.12.117-1~deb12u1\n' >"$tmp/same"
tap_ok "--check: a newer 6.12 in the archive is a skip naming both versions" \
	bash -c "REBASE_VERSIONS='$tmp/newer' BASE_PIN=6.12.117-1~deb12u1 '$harness/rebase' --check |
		grep -qx 'ok 1 the base is the newest 6.12 in the archive # SKIP the base is 6.12.117-1~deb12u1; the archive has 6.12.999-1~deb12u1: harness/rebase 6.12.999'"
tap_ok "--check: no newer one passes" \
	bash -c "REBASE_VERSIONS='$tmp/same' BASE_PIN=6.12.117-1~deb12u1 '$harness/rebase' --check |
		grep -qx 'ok 1 the base 6.12.117-1~deb12u1 is the newest linux-source-6.12 in the archive'"
exit $_tap_failed
