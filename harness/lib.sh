# SPDX-License-Identifier: GPL-2.0
# Common settings and helpers for the harness scripts.  Sourced, not run.
#
# Every path can be overridden from the environment so that the harness
# self-tests can drive the same code on a small synthetic base.

set -euo pipefail
export LC_ALL=C

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
case $ROOT in
*[[:space:],:]*) echo "error: the repository path '$ROOT' contains a space, comma or colon, which kbuild and QEMU cannot take; clone it elsewhere" >&2; exit 1 ;;
esac
BUILD=${BUILD:-$ROOT/build}
PATCHES=${PATCHES:-$ROOT/patches}
CONFIGS=${CONFIGS:-$ROOT/config}

# The base: Debian's linux-source-6.12, pinned by package version and by
# the checksum of the tarball it ships.
BASE_PKG=linux-source-6.12
BASE_PIN=${BASE_PIN:-6.12.118-1~deb12u1}
BASE_SHA256=${BASE_SHA256:-c93391b6a4884e6428ffbfbb8ce6340229ad28dc421e9f19bc081740b1ab34b2}

TREE=${TREE:-$BUILD/linux}		# materialized source tree (git)
# Kernel objects (O=): the arm64 guest's have their own folder.
[ "${KARCH:-}" != arm64 ] || OBJ=${OBJ:-$BUILD/obj-arm64}
OBJ=${OBJ:-$BUILD/obj}
STATE=${STATE:-$BUILD/state}		# what the tooling last did
RUNS=${RUNS:-$BUILD/runs}		# guest runs: console, output, status

# The files the series adds to the base, as paths in the materialized
# tree, one per line (its commits only: "harness/tree check" finds the
# rest).
series_files() {
	git -C "$TREE" diff --name-only --diff-filter=A base HEAD -- "$@"
}

# What outlives a clone, like ccache: the verified base tarball and what
# the KVM probe found on this host.  Shared by every clone of the user.
CACHE=${DEFERRED_UNWIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deferred-unwind}

JOBS=${JOBS:-$(nproc)}

# Reproducible builds keep ccache hits across clones and days.
export KBUILD_BUILD_TIMESTAMP=${KBUILD_BUILD_TIMESTAMP:-"Thu Jan  1 00:00:00 UTC 2026"}
export KBUILD_BUILD_USER=${KBUILD_BUILD_USER:-unwind}
export KBUILD_BUILD_HOST=${KBUILD_BUILD_HOST:-deferred}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
export CCACHE_NOHASHDIR=1
export CCACHE_COMPILERCHECK=content
# Depend mode: a miss does not run the preprocessor a second time to hash
# its output; the hash comes from the compiler's own -MD list. Measured on
# the reference machine (kernel/ and mm/ of the guest kernel, -j2, empty
# cache): 120 s without ccache, 171 s with ccache's default mode, 120 s
# in depend mode; hits as fast in both.
export CCACHE_DEPEND=${CCACHE_DEPEND:-1}

# make in the kernel tree, the same way everywhere (the compiler is part of
# every object's command line: a different CC rebuilds everything).
# KTOOLCHAIN picks the compiler: gcc (Debian's default), or clang, the
# newest LLVM in Debian 12's archive (LLVM=1 with its version suffix).
# KARCH picks the architecture: x86_64, i386, or arm64 with Debian's
# cross gcc (harness/cross-gcc unpacks it).
KTOOLCHAIN=${KTOOLCHAIN:-gcc}
KARCH=${KARCH:-x86_64}
CLANG_VER=19
case $KTOOLCHAIN/$KARCH in
gcc/x86_64 | gcc/i386)
	KMAKE=(make -C "$TREE" ARCH="$KARCH" CC="ccache gcc" HOSTCC="ccache gcc") ;;
gcc/arm64)
	# Unpacked by harness/cross-gcc: it conflicts with gcc-multilib.
	KMAKE=(make -C "$TREE" ARCH=arm64
	       CROSS_COMPILE="$BUILD/cross-arm64/usr/bin/aarch64-linux-gnu-"
	       CC="ccache $BUILD/cross-arm64/usr/bin/aarch64-linux-gnu-gcc"
	       HOSTCC="ccache gcc") ;;
clang/x86_64)
	KMAKE=(make -C "$TREE" ARCH=x86_64 LLVM=-$CLANG_VER
	       CC="ccache clang-$CLANG_VER" HOSTCC="ccache clang-$CLANG_VER") ;;
*)
	echo "error: no kernel build for KTOOLCHAIN=$KTOOLCHAIN KARCH=$KARCH" >&2
	exit 1 ;;
esac

if [ -t 1 ]; then
	_c_red=$'\e[31m' _c_yel=$'\e[33m' _c_bold=$'\e[1m' _c_off=$'\e[0m'
else
	_c_red='' _c_yel='' _c_bold='' _c_off=''
fi

# One line saying what went wrong and what to do; then stop.
die() {
	echo "${_c_red}error:${_c_off} $*" >&2
	exit 1
}

warn() {
	echo "${_c_yel}warning:${_c_off} $*" >&2
}

# Progress line for a long step, with the time since the outermost
# harness command started (m:ss), so that a log shows where time goes.
export HARNESS_T0=${HARNESS_T0:-$(date +%s)}
step() {
	local t=$(($(date +%s) - HARNESS_T0))

	printf '%s==>%s [%d:%02d] %s\n' "$_c_bold" "$_c_off" $((t / 60)) $((t % 60)) "$*" >&2
}

# Path relative to the repository root, for messages.
rel() {
	local p=$1

	case $p in
	"$ROOT"/*) echo "${p#"$ROOT"/}" ;;
	*) echo "$p" ;;
	esac
}

# Write a file only when its content changes, so that make does not see
# a new timestamp for an unchanged file.
write_if_changed() {
	local dst=$1 tmp

	tmp=$(mktemp "$dst.XXXXXX")
	cat >"$tmp"
	if [ -f "$dst" ] && cmp -s "$tmp" "$dst"; then
		rm -f "$tmp"
	else
		mv -f "$tmp" "$dst"
	fi
}

# Kernel version of the materialized tree, e.g. 6.12.117.
tree_version() {
	awk '/^(VERSION|PATCHLEVEL|SUBLEVEL) =/ { v = v sep $3; sep = "." } END { print v }' "$TREE/Makefile"
}

# First word of each line of a list file (series, test lists), with
# comments and blank lines dropped.  A missing file is an empty list.
list_names() {
	[ -f "$1" ] || return 0
	sed -e 's/#.*//' "$1" | awk 'NF { print $1 }'
}

sha256() {
	sha256sum "$1" | cut -d' ' -f1
}

# A private apt state in folder $1 for suite $3 of the Debian archive $2
# (with both empty: every archive and suite the host's apt reads), for
# architecture $4 (amd64 if not given): sets APT_OPTS, with which apt-get
# update, apt-cache and apt-get download fetch another release's or
# architecture's packages and leave the host's sources, lists and status
# as they are (harness/sframe-toolchain, libbpf-tools, python-testing,
# mainline, debian-config).
apt_private() {
	local dir=$1 mirror=$2 suite=$3 arch=${4:-amd64}
	local key=/usr/share/keyrings/debian-archive-keyring.gpg

	mkdir -p "$dir/state/lists/partial" "$dir/cache/archives/partial"
	if [ -n "$mirror" ]; then
		echo "deb [signed-by=$key] $mirror $suite main" >"$dir/sources.list"
	else
		# shellcheck disable=SC2016	# apt's own $(FIELD)s
		apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null | sort -u |
			while read -r mirror suite; do
				echo "deb [signed-by=$key] $mirror $suite main"
			done >"$dir/sources.list"
	fi
	: >"$dir/status"
	APT_OPTS=(-o "Dir::State=$dir/state" -o "Dir::State::status=$dir/status"
		-o "Dir::Cache=$dir/cache" -o "Dir::Etc::SourceList=$dir/sources.list"
		-o "Dir::Etc::SourceParts=$dir/none" -o "APT::Architecture=$arch"
		-o "APT::Sandbox::User=root" -q)
}

# The Debian archive the host's apt reads its own release from, e.g.
# http://mirror/debian/ (the security archive is another); nothing if none.
host_debian_mirror() {
	local codename

	codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	# shellcheck disable=SC2016	# apt's own $(FIELD)s
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk -v c="$codename" '$2 == c { print $1; exit }'
}
