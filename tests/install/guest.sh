#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# harness/install-test's side in the installed Debian system: started by
# install-test.service once systemd runs it, it does one boot's part and
# powers the machine off.  Which part is in the SMBIOS serial number QEMU
# gives the machine (harness/install-test sets it per boot):
#
#   setup         on Debian's kernel: GRUB on the disk, then our packages
#                 installed as the README says (apt install ./...deb)
#   check         booted by GRUB on our kernel: the README's checklist,
#                 then BTF and the BPF profilers (bpftrace, libbpf-tools)
#   check-remove  the same, then apt remove of both packages and a reboot
#   after-remove  booted by GRUB again: which kernel, and a running system
#
# Each result is one line on the console: "install-test: ok NAME",
# "install-test: not ok NAME: WHY" or "install-test: # NOTE"; the last
# one is "install-test: done".
set -u
export LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin
DIR=/opt/install-test
OUT=/var/tmp/install-test
RELEASE=$(cat "$DIR/release")	# the packages' kernel release
mkdir -p "$OUT"

say() {
	echo "install-test: $*" >/dev/console
	echo "install-test: $*" >>"$OUT/results"
}
ok() { say "ok $1"; }
fail() { say "not ok $1: $2"; }
note() { say "# $*"; }
# check NAME WHY COMMAND...: ok if COMMAND succeeds, else not ok with WHY
check() {
	local name=$1 why=$2

	shift 2
	if "$@" >>"$OUT/log" 2>&1; then ok "$name"; else fail "$name" "$why"; fi
}
finish() {
	say done
	sync
	if [ "${1:-}" = reboot ]; then systemctl reboot; else systemctl poweroff; fi
	exit 0
}

# multi-user.target reached, no unit failed
system_up() {
	local state failed

	state=$(timeout 600 systemctl is-system-running --wait 2>/dev/null)
	failed=$(systemctl list-units --state=failed --no-legend --plain | awk '{ print $1 }' | xargs)
	note "kernel $(uname -r), $(nproc) CPUs, system $state, $(systemd-analyze 2>/dev/null | head -1)"
	if ! systemctl is-active -q multi-user.target; then
		fail boot "multi-user.target is not active (system $state)"
	elif [ -n "$failed" ]; then
		fail boot "units failed: $failed"
	else
		ok boot
	fi
}

setup() {
	local default

	system_up
	# The machine: GRUB in the MBR, its menu and the kernel's console on
	# the serial line, without "quiet", so that the host sees every
	# kernel warning.
	cat >>/etc/default/grub <<-EOF
	GRUB_TIMEOUT=1
	GRUB_TERMINAL=serial
	GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"
	GRUB_CMDLINE_LINUX="console=ttyS0,115200"
	GRUB_CMDLINE_LINUX_DEFAULT=""
	EOF
	check grub-install "grub-install /dev/vda failed" grub-install /dev/vda
	check update-grub "update-grub failed" update-grub

	# What the README tells a user to do.
	cd /root/debs || { fail install "no packages in /root/debs"; finish; }
	local t0=$SECONDS
	if DEBIAN_FRONTEND=noninteractive apt install -y ./linux-image-"$RELEASE"_*.deb \
		./perf-deferred_*.deb >>"$OUT/log" 2>&1; then
		ok "apt install of linux-image-$RELEASE and perf-deferred ($((SECONDS - t0)) s)"
	else
		fail install "apt install failed: $(grep -E '^E:' "$OUT/log" | tail -1)"
		finish
	fi
	check initramfs "the package's install made no /boot/initrd.img-$RELEASE" \
		test -s "/boot/initrd.img-$RELEASE"
	default=$(grep -m1 -E "^[[:space:]]*linux[[:space:]]" /boot/grub/grub.cfg)
	case $default in
	*"vmlinuz-$RELEASE "*) ok "grub's default entry boots $RELEASE" ;;
	*) fail boot-entry "grub's first entry is not $RELEASE: $default" ;;
	esac
	check perf-deferred "perf-deferred does not run" perf-deferred version
	finish
}

checklist() {
	system_up
	[ "$(uname -r)" = "$RELEASE" ] || { fail kernel "booted $(uname -r), not $RELEASE"; finish; }
	ok "booted $RELEASE by GRUB's default entry"
	check initramfs-modules "the root's driver did not come from the initramfs" \
		grep -q '^virtio_blk ' /proc/modules
	local taint
	taint=$(cat /proc/sys/kernel/tainted)
	[ "$taint" = 0 ] && ok "kernel not tainted (signed modules loaded: $(wc -l </proc/modules))" ||
		fail taint "kernel tainted $taint"
	local methods
	methods=$(cat /sys/kernel/unwind_user/methods 2>&1)
	[ "$methods" = "fp sframe eh_frame" ] && ok "methods: $methods" ||
		fail methods "/sys/kernel/unwind_user/methods says '$methods'"

	python3 "$DIR/profile.py" --out "$OUT" --work "$DIR/work.sh" >>"$OUT/log" 2>&1
	grep -a '^install-test: ' "$OUT/profile" | sed 's/^install-test: //' | while read -r line; do
		say "$line"
	done
	[ -s "$OUT/profile" ] || fail profile "profile.py wrote nothing: $(tail -1 "$OUT/log")"
	bpf_profilers

	if dmesg | grep -E -q 'WARNING:|BUG:|Oops|lockdep|possible recursive|inconsistent lock|INFO: task'; then
		fail splat "$(dmesg | grep -E -m1 'WARNING:|BUG:|Oops|lockdep|possible recursive|inconsistent lock|INFO: task')"
	else
		ok "no kernel splat in dmesg"
	fi
}

# BTF, which libbpf-tools and bpftrace need, and the BPF profilers' stacks:
# tests/bpf/bpf_tools.py with bpftrace and libbpf-tools' profile, each
# case a result; a tool that cannot run fails here (no skip).
bpf_profilers() {
	local btf=/sys/kernel/btf plan line n=0 rc=0

	if [ -s "$btf/vmlinux" ]; then
		ok "BTF: $btf/vmlinux ($(stat -c %s "$btf/vmlinux") bytes), and of $(find "$btf" -mindepth 1 ! -name vmlinux | wc -l) modules"
	else
		fail btf "no $btf/vmlinux: the package lost BTF"
	fi
	LIBBPF_PROFILE=$(cat "$DIR/libbpf-profile") timeout 1200 \
		python3 "$DIR/bpf_tools.py" bpftrace libbpf >"$OUT/bpf.tap" 2>>"$OUT/log" || rc=$?
	plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$OUT/bpf.tap")
	while IFS= read -r line; do
		case $line in
		"# "*) note "bpf: ${line#\# }" ;;
		"not ok "*) n=$((n + 1)); fail "bpf: $(echo "${line#not ok }" | cut -d' ' -f2-)" "see above" ;;
		"ok "*"# SKIP"*) n=$((n + 1)); fail "bpf: $(echo "${line#ok }" | cut -d' ' -f2-)" "skipped" ;;
		"ok "*) n=$((n + 1)); ok "bpf: $(echo "${line#ok }" | cut -d' ' -f2-)" ;;
		esac
	done <"$OUT/bpf.tap"
	[ -n "$plan" ] && [ "$plan" = "$n" ] && [ "$plan" -gt 0 ] ||
		fail bpf-tools "bpf_tools.py ran ${n} of ${plan:-no} cases (exit $rc): $(tail -1 "$OUT/log")"
}

remove() {
	if DEBIAN_FRONTEND=noninteractive apt remove -y "linux-image-$RELEASE" perf-deferred \
		>>"$OUT/log" 2>&1; then
		ok "apt remove of linux-image-$RELEASE and perf-deferred"
	else
		fail remove "apt remove failed: $(grep -E '^E:' "$OUT/log" | tail -1)"
	fi
	check boot-entry-gone "grub.cfg still names $RELEASE" \
		sh -c "! grep -q 'vmlinuz-$RELEASE' /boot/grub/grub.cfg"
	check files-gone "/boot still has files of $RELEASE" \
		sh -c "! ls /boot | grep -q -F '$RELEASE'"
	check perf-gone "perf-deferred is still on PATH" sh -c '! command -v perf-deferred'
}

after_remove() {
	system_up
	case $(uname -r) in
	"$RELEASE") fail kernel "still booted $RELEASE after apt remove" ;;
	*) ok "booted Debian's kernel $(uname -r) after apt remove" ;;
	esac
}

phase=$(cat /sys/class/dmi/id/product_serial 2>/dev/null)
note "phase ${phase:-none}"
case $phase in
setup) setup ;;
check) checklist; finish ;;
check-remove) checklist; remove; finish reboot ;;
after-remove) after_remove; finish ;;
*) fail phase "no phase in the SMBIOS serial number ('$phase')"; finish ;;
esac
