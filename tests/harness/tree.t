#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of harness/tree on a small synthetic base: materialize, the
# edit/export round trip, incremental updates and every refusal.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
harness=$here/../../harness

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export BUILD=$tmp/build PATCHES=$tmp/patches
export TREE=$BUILD/linux STATE=$BUILD/state BASE_TARBALL=$tmp/base.tar.xz
export DEFERRED_UNWIND_CACHE=$tmp/cache
mkdir -p "$tmp/src/linux/b" "$PATCHES"
printf 'VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\n' >"$tmp/src/linux/Makefile"
echo 'int a;' >"$tmp/src/linux/a.c"
echo 'int c;' >"$tmp/src/linux/b/c.c"
tar -C "$tmp/src" -cJf "$BASE_TARBALL" linux

tree() { "$harness/tree" "$@"; }
g() { git -C "$TREE" -c user.name=t -c user.email=t@t "$@"; }
mtime() { stat -c %Y.%y "$1"; }
lmtime() { stat -c %y "$1"; }

# The header of a hand-written patch in git format-patch form.
patch_head() {	# name file
	cat <<EOP
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: T <t@t>
Date: Thu, 1 Jan 2026 00:00:00 +0000
Subject: [PATCH] $1

Why and what.
---
diff --git a/$2 b/$2
EOP
}

# A patch that changes one line of a file.
mkpatch() {	# name file old new
	{ patch_head "$1" "$2"; printf -- '--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-%s\n+%s\n' "$2" "$2" "$3" "$4"; } \
		>"$PATCHES/$1"
}

# A patch that creates a file of one line.
mknew() {	# name file line
	{ patch_head "$1" "$2"; printf -- 'new file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1 @@\n+%s\n' "$2" "$3"; } \
		>"$PATCHES/$1"
}

tap_plan 18

tap_ok "an empty series materializes the base" \
	bash -c "'$harness/tree' sync 2>/dev/null && cmp -s '$TREE/a.c' '$tmp/src/linux/a.c'"
tap_ok "a fresh tree passes the check" tree check

mknew n.patch kernel/new/n.c 'int n;'
mkpatch n2.patch kernel/new/n.c 'int n;' 'int n2;'
printf 'n.patch\nn2.patch\n' >"$PATCHES/series"
tree sync 2>/dev/null
tap_ok "a patch creates a file and a later one grows it: a regular file in the tree" \
	bash -c "[ -f '$TREE/kernel/new/n.c' ] && [ ! -L '$TREE/kernel/new/n.c' ] && grep -qx 'int n2;' '$TREE/kernel/new/n.c' && [ \"\$(git -C '$TREE' log --format=%s base..HEAD | wc -l)\" = 2 ]"
tap_ok "the file's first version is the first patch's" \
	bash -c "[ \"\$(git -C '$TREE' show HEAD~1:kernel/new/n.c)\" = 'int n;' ]"

echo 'int a = 1;' >"$TREE/a.c"
tap_ok "an uncommitted edit of a base file fails the check" \
	expect_fail 'modified, not committed: a.c' tree check
tap_ok "sync refuses to run over unexported edits" \
	expect_fail 'error: .*export' tree sync
g commit -q -a -m "a: set a" -m "Because." -m "Signed-off-by: T <t@t>"
tap_ok "a commit not yet exported fails the check" \
	expect_fail 'commit not exported to patches/: .* a: set a' tree check
tree export 2>/dev/null
tap_ok "export writes the commit as a patch named in series" \
	bash -c "grep -qx 'a-set-a.patch' '$PATCHES/series' && grep -q '^+int a = 1;' '$PATCHES/a-set-a.patch' && '$harness/tree' check"

rm -rf "$BUILD"
tree sync >"$tmp/sync.out" 2>&1
tap_ok "a fresh materialization reproduces the exported edit" \
	grep -qx 'int a = 1;' "$TREE/a.c"
tap_ok "a second tree of the same base is checked out of the cache, not extracted" \
	bash -c "grep -q 'checking the base out' '$tmp/sync.out' && ! grep -q extracting '$tmp/sync.out' && cmp -s '$TREE/b/c.c' '$tmp/src/linux/b/c.c'"

a_before=$(mtime "$TREE/a.c")
sleep 1.1
mkpatch c.patch b/c.c 'int c;' 'int c = 2;'
echo c.patch >>"$PATCHES/series"
tree sync 2>/dev/null
tap_ok "appending a patch applies only it (earlier files keep their mtime)" \
	bash -c "grep -qx 'int c = 2;' '$TREE/b/c.c' && [ '$a_before' = \"\$(stat -c %Y.%y '$TREE/a.c')\" ]"

mkpatch bad.patch b/c.c 'int nothing;' 'int c = 3;'
echo bad.patch >>"$PATCHES/series"
tap_ok "a patch that does not apply stops with one clear line" \
	expect_fail 'error: patches/bad.patch does not apply to 6.12.0' tree sync
sed -i '/bad.patch/d' "$PATCHES/series"
rm "$PATCHES/bad.patch"
tree sync 2>/dev/null

echo 'int x;' >"$TREE/b/x.c"
tap_ok "a new file not committed in the tree fails the check" \
	expect_fail 'new file, not committed: b/x.c' tree check
g add b/x.c
g commit -q -m "b: add x" -m "Because." -m "Signed-off-by: T <t@t>"
tree export 2>/dev/null
tap_ok "export writes a commit that adds a file as a patch that creates it" \
	bash -c "grep -qx 'b-add-x.patch' '$PATCHES/series' && grep -q '^new file mode' '$PATCHES/b-add-x.patch' && '$harness/tree' check"
rm -rf "$BUILD"
tree sync 2>/dev/null
tap_ok "a fresh materialization creates the exported file" \
	grep -qx 'int x;' "$TREE/b/x.c"

# A tree made when new files were symlinks into the repository: they go,
# and the patches bring the files.
rm "$TREE/b/x.c"
ln -s ../../elsewhere/x.c "$TREE/b/x.c"
g reset -q --hard HEAD~1 2>/dev/null || true
ln -sfn ../../elsewhere/x.c "$TREE/b/x.c"
echo b/x.c >"$STATE/tree/overlay"
sed -i '$d' "$STATE/tree/applied"
git -C "$TREE" rev-parse HEAD >"$STATE/tree/head"
tap_ok "a tree of symlinked new files is brought to the patches" \
	bash -c "'$harness/tree' sync 2>/dev/null && [ -f '$TREE/b/x.c' ] && [ ! -L '$TREE/b/x.c' ] && '$harness/tree' check"

g commit -q --allow-empty -m "local work"
mkpatch e.patch b/c.c 'int c = 2;' 'int c = 5;'
echo e.patch >>"$PATCHES/series"
tap_ok "export refuses when patches/ and the tree both changed" \
	expect_fail 'error: patches/ changed since build/linux was materialized' tree export

# Another base (same name, new contents) is extracted, not taken from
# the copy the cache keeps of the old one.
echo 'int z;' >"$tmp/src/linux/z.c"
rm -f "$BASE_TARBALL.sha256"
tar -C "$tmp/src" -cJf "$BASE_TARBALL" linux
mkdir -p "$tmp/empty"
BUILD=$tmp/build2 TREE=$tmp/build2/linux STATE=$tmp/build2/state PATCHES=$tmp/empty \
	"$harness/tree" sync >"$tmp/sync2.out" 2>&1
tap_ok "a changed base tarball is extracted again" \
	bash -c "grep -q extracting '$tmp/sync2.out' && [ -f '$tmp/build2/linux/z.c' ]"

tap_done
