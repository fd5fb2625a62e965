#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the perf_events and unwind selftest Makefiles on toolchains
# that lack what the deferred-callchain tests need (an ia32 libc, clang's
# bpf target, an x86 compiler): make must still succeed, build the base
# perf_events tests and every program the toolchain can build, and name
# each program it leaves out with what is missing.  Builds out of tree
# against the guest kernel's UAPI headers, like harness/selftests; one case
# builds the SFrame tests with the SFrame toolchain's as and ld alone (the
# host's objdump lists sframe_probe's instructions), where it is unpacked.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
ROOT=$(cd "$here/../.." && pwd)
build=${BUILD:-$ROOT/build}
tree=${TREE:-$build/linux}
hdrs=${OBJ:-$build/obj}/usr/include
st=$tree/tools/testing/selftests

base=(sigtrap_threads remove_on_exec watermark_signal mmap)
bpf=(deferred_callchain_bpf deferred_callchain_bpf.bpf.o)
sframe=(sframe_walk sframe_probe sframe_probe_nopie)
eh=(eh_frame_walk)
eh32=(eh_frame_walk_32)
bpfwalk=(bpf_walk)
sframe_bin=$build/sframe-toolchain/bin
plan=18

tap_plan $plan
if [ ! -d "$hdrs" ] || [ ! -d "$st/unwind" ]; then
	for i in $(seq $plan); do
		echo "ok $i # SKIP needs the materialized tree and the kernel's UAPI headers (harness/tree sync, harness/kernel)"
	done
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset ARCH CROSS_COMPILE LLVM	# gcc of the host, unless a case says otherwise

# A gcc without the ia32 multilib: nothing builds with -m32.
cat >"$tmp/gcc-no-m32" <<'EOF'
#!/bin/sh
for a; do
	[ "$a" = -m32 ] && { echo "gcc-no-m32: -m32 is not supported" >&2; exit 1; }
done
exec gcc "$@"
EOF
# A compiler for arm64, as far as the Makefiles can tell (-dumpmachine);
# it still builds for the host, so that the base tests can be checked,
# and drops the arm64-only options the host's gcc does not know.
cat >"$tmp/gcc-arm64" <<'EOF'
#!/bin/bash
args=()
for a; do
	[ "$a" = -dumpmachine ] && { echo aarch64-linux-gnu; exit 0; }
	case $a in -mbranch-protection=* | -mno-omit-leaf-frame-pointer) ;; *) args+=("$a") ;; esac
done
exec gcc "${args[@]}"
EOF
# And one for an architecture the tests do not support.
cat >"$tmp/gcc-riscv64" <<'EOF'
#!/bin/sh
for a; do
	[ "$a" = -dumpmachine ] && { echo riscv64-linux-gnu; exit 0; }
done
exec gcc "$@"
EOF
chmod +x "$tmp"/gcc-*

# build CASE TARGET MAKE-ARGS...: make TARGET out of tree into
# $tmp/CASE/TARGET, its output in .log and its exit status in .rc.
build() {
	local out=$tmp/$1/$2 t=$2
	shift 2
	mkdir -p "$out"
	make -C "$st/$t" OUTPUT="$out" KHDR_INCLUDES="-isystem $hdrs" \
		-j"$(nproc)" "$@" >"$out.log" 2>&1
	echo $? >"$out.rc"
}

# outcome DIR RC BUILT NOT-BUILT SKIPPED: make exited RC in DIR, built
# each of BUILT (space-separated), none of NOT-BUILT, and said
# "PROG: skipped, ..." exactly once for each PROG of SKIPPED and for no
# other program.
outcome() {
	local d=$1 rc=$2 p n bad=0

	if [ "$(cat "$d.rc")" != "$rc" ]; then
		echo "# make exited $(cat "$d.rc"), not $rc"
		bad=1
	fi
	for p in $3; do
		[ -f "$d/$p" ] || { echo "# $p was not built"; bad=1; }
	done
	for p in $4; do
		[ ! -e "$d/$p" ] || { echo "# $p was built"; bad=1; }
	done
	for p in $5; do
		n=$(grep -c -E "(^|: )$p: skipped, " "$d.log")
		[ "$n" = 1 ] || { echo "# '$p: skipped, ...' said $n times"; bad=1; }
	done
	n=$(grep -c -E ': skipped, ' "$d.log")
	if [ "$n" != "$(wc -w <<<"$5")" ]; then
		echo "# $n skip lines for $(wc -w <<<"$5") programs left out"
		bad=1
	fi
	if [ $bad != 0 ]; then
		tail -15 "$d.log" | sed 's/^/#   /'
	fi
	return $bad
}

# why DIR PATTERN PROG...: the skip line of each PROG names what is
# missing.
why() {
	local d=$1 pat=$2 p
	shift 2
	for p; do
		grep -q -E "(^|: )$p: skipped, .*$pat" "$d.log" && continue
		echo "# the skip line of $p does not match /$pat/:"
		grep -E ': skipped, ' "$d.log" | sed 's/^/#   /'
		return 1
	done
}

# nothing DIR SKIPPED: make exited 0, built nothing at all, and said
# "PROG: skipped, ..." for each PROG of SKIPPED.
nothing() {
	outcome "$1" 0 '' '' "$2" || return 1
	[ -z "$(ls -A "$1")" ] || { ls -A "$1" | sed 's/^/# built: /'; return 1; }
}

build no-m32 perf_events CC="$tmp/gcc-no-m32"
build no-m32 unwind CC="$tmp/gcc-no-m32"
build no-clang perf_events CLANG=false
# The SFrame toolchain's as and ld, without its objdump.
if [ -x "$sframe_bin/as" ] && [ -x "$sframe_bin/ld" ]; then
	mkdir -p "$tmp/sframe-bin"
	ln -s "$sframe_bin/as" "$sframe_bin/ld" "$tmp/sframe-bin/"
	build sframe-no-objdump unwind CC="$tmp/gcc-no-m32" SFRAME_BIN="$tmp/sframe-bin"
fi
build arm64 perf_events ARCH=arm64 CC="$tmp/gcc-arm64"
build arm64 unwind ARCH=arm64 CC="$tmp/gcc-arm64"
build riscv64 perf_events ARCH=riscv CC="$tmp/gcc-riscv64"
build riscv64 unwind ARCH=riscv CC="$tmp/gcc-riscv64"

d=$tmp/no-m32/perf_events
tap_ok "without -m32, perf_events builds all but deferred_callchain_32 and exits 0" \
	outcome "$d" 0 "${base[*]} deferred_callchain ${bpf[*]}" \
	deferred_callchain_32 deferred_callchain_32
tap_ok "without -m32, deferred_callchain_32 says it needs -m32 -static" \
	why "$d" '-m32 -static cannot link' deferred_callchain_32
d=$tmp/no-m32/unwind
tap_ok "without -m32 and SFRAME_BIN, unwind builds unwind_deferred and eh_frame_walk alone and exits 0" \
	outcome "$d" 0 "unwind_deferred ${eh[*]}" "unwind_deferred_32 ${eh32[*]} ${sframe[*]}" \
	"unwind_deferred_32 ${eh32[*]} ${sframe[*]}"
tap_ok "without -m32, unwind_deferred_32 and eh_frame_walk_32 say they need -m32 -static" \
	why "$d" '-m32 -static cannot link' unwind_deferred_32 "${eh32[@]}"
tap_ok "without SFRAME_BIN, sframe_walk says it needs an SFrame v3 toolchain" \
	why "$d" 'no SFrame v3 toolchain' sframe_walk
tap_ok "without SFRAME_BIN, sframe_probe and sframe_probe_nopie say they need an SFrame v3 toolchain" \
	why "$d" 'no SFrame v3 toolchain' sframe_probe sframe_probe_nopie

d=$tmp/sframe-no-objdump/unwind
if [ -f "$d.rc" ]; then
	tap_ok "with SFRAME_BIN but no objdump in it, unwind builds all but the ia32 programs and exits 0" \
		outcome "$d" 0 "unwind_deferred ${eh[*]} ${sframe[*]}" "unwind_deferred_32 ${eh32[*]}" \
		"unwind_deferred_32 ${eh32[*]}"
else
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n # SKIP no SFrame toolchain unpacked in $sframe_bin (harness/sframe-toolchain)"
fi

d=$tmp/no-clang/perf_events
tap_ok "without clang, perf_events builds all but deferred_callchain_bpf and exits 0" \
	outcome "$d" 0 "${base[*]} deferred_callchain deferred_callchain_32" \
	"${bpf[*]}" deferred_callchain_bpf
tap_ok "without clang, deferred_callchain_bpf says it needs clang's bpf target" \
	why "$d" 'cannot compile for the bpf target' deferred_callchain_bpf

d=$tmp/arm64/perf_events
tap_ok "on arm64, perf_events builds the base tests and deferred_callchain and exits 0" \
	outcome "$d" 0 "${base[*]} deferred_callchain" "deferred_callchain_32 ${bpf[*]}" \
	"deferred_callchain_32 deferred_callchain_bpf"
tap_ok "on arm64, deferred_callchain_32 and deferred_callchain_bpf say they are x86 only" \
	why "$d" 'x86 only' deferred_callchain_32 deferred_callchain_bpf
d=$tmp/arm64/unwind
tap_ok "on arm64, unwind builds unwind_deferred alone and exits 0" \
	outcome "$d" 0 unwind_deferred "unwind_deferred_32 ${eh[*]} ${eh32[*]} ${sframe[*]} ${bpfwalk[*]}" \
	"unwind_deferred_32 ${eh[*]} ${eh32[*]} ${sframe[*]} ${bpfwalk[*]}"
tap_ok "on arm64, the compat programs say the compat walk is ia32's" \
	why "$d" 'x86 only: the compat walk is ia32' unwind_deferred_32 "${eh32[@]}"
tap_ok "on arm64, the table programs say arm64 walks frame records" \
	why "$d" 'x86 only: arm64 walks frame records' "${eh[@]}" "${sframe[@]}" "${bpfwalk[@]}"
d=$tmp/riscv64/perf_events
deferred=(deferred_callchain deferred_callchain_32 deferred_callchain_bpf)
tap_ok "on riscv64, perf_events builds the base tests alone and exits 0" \
	outcome "$d" 0 "${base[*]}" "${deferred[*]} ${bpf[1]}" "${deferred[*]}"
tap_ok "on riscv64, each deferred_callchain program says it needs x86 or arm64" \
	why "$d" 'x86 and arm64 only, and .* builds for riscv64-linux-gnu' "${deferred[@]}"
d=$tmp/riscv64/unwind
tap_ok "on riscv64, unwind builds nothing and exits 0" \
	nothing "$d" "unwind_deferred unwind_deferred_32 ${eh[*]} ${eh32[*]} ${sframe[*]} ${bpfwalk[*]}"
tap_ok "on riscv64, each unwind program says it needs x86 or arm64" \
	why "$d" 'x86 and arm64 only, and .* builds for riscv64-linux-gnu' unwind_deferred unwind_deferred_32 "${eh[@]}" "${eh32[@]}" "${sframe[@]}" "${bpfwalk[@]}"

tap_done
