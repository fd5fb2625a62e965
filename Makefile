# SPDX-License-Identifier: GPL-2.0
# Deferred user-space stack unwinding for Linux 6.12: top-level commands.
# Everything generated goes to build/ (ignored).

.PHONY: demo check arm64 bench-arm64 debug clang rt matrix deb install-test rebase series steps stress fuzz bench mainline kernel tree tree-check export tree-reset selftests vm clean help

demo:			## build, boot the guest, show the main job
	harness/demo

check:			## every test; last line "N passed, N failed, N skipped"
	harness/check

arm64:			## the arm64 kernel cross-built, its selftests in a qemu-system-aarch64 guest (part of make check)
	harness/arm64

debug:			## the guest tests on a KASAN/KFENCE/UBSAN/kmemleak kernel
	harness/debug

clang:			## the guest tests and a short stress run on a clang (LLVM=1) kernel
	harness/variant clang

rt:			## the guest tests and a short stress run on a PREEMPT_RT kernel
	harness/variant rt

stress:			## long stress and fuzzing: make stress [STRESS_SECONDS=60] [CPUS=2] [DEBUG=1]
	harness/stress $(if $(STRESS_SECONDS),--seconds $(STRESS_SECONDS)) $(if $(CPUS),--cpus $(CPUS)) $(if $(DEBUG),--debug)

fuzz:			## fuzz the unwind table readers in user space (libFuzzer): make fuzz [FUZZ_SECONDS=600] [FUZZ_JOBS=1]
	harness/fuzz $(if $(FUZZ_SECONDS),--seconds $(FUZZ_SECONDS)) $(if $(FUZZ_JOBS),--jobs $(FUZZ_JOBS))

bench:			## benchmarks, classic vs deferred: a table in build/bench/
	harness/bench

bench-arm64:		## the same on arm64 (overflow, bytes, cost): a table in build/bench-arm64/
	harness/bench-arm64

mainline:		## mainline 7.2 (Debian's linux-source-7.2) beside this tree: overflow and cost, a table in build/mainline/
	harness/mainline

kernel: tree		## configure and build the guest kernel
	harness/kernel

matrix:			## build matrix: configs without SFrame/deferral/perf, i386, arm64, Debian's config, every step of the series
	harness/matrix

deb:			## Debian packages of the kernel (Debian's config, fewer modules) and of our perf, in build/deb/; ARCH=arm64: cross-built, in build/deb-arm64/
	harness/deb $(if $(ARCH),--arch $(ARCH)) $(if $(SUITE),--suite $(SUITE))

install-test:		## make deb's packages installed on a Debian 12 image (SUITE=trixie: 13), booted by GRUB, profiling itself (about 2 hours on a fresh machine)
	harness/install-test --suite $(or $(SUITE),bookworm)

series:			## git format-patch series with a cover letter in build/series/
	harness/tree sync
	harness/series write

steps:			## every step of the series built, and its own tests run in the guest: make steps [STEPS="5 9-14"]
	harness/steps $(STEPS)

rebase:			## the series on another 6.12 of Debian's: make rebase VERSION=6.12.N (conflicts by patch and file, build, selftests); ADOPT=1 pins it
	$(if $(ADOPT),harness/rebase --adopt,harness/rebase $(or $(VERSION),$(error VERSION=6.12.N is needed)))

tree:			## materialize build/linux: the base and patches/
	harness/tree sync

tree-check:		## fail if build/linux holds edits not in the repo
	harness/tree check

export:			## write commits made in build/linux back to patches/
	harness/tree export

tree-reset:		## drop edits in build/linux and materialize again
	harness/tree reset

selftests:		## build the kselftest programs against our headers
	harness/selftests perf_events unwind

vm:			## run CMD in the guest: make vm CMD='uname -a'
	harness/vm -- "$${CMD:-uname -a}"

clean:			## remove build/ except the downloaded base (refuses over unexported edits)
	harness/tree check
	[ ! -d build ] || find build -mindepth 1 -maxdepth 1 ! -name base -exec rm -rf {} +

help:			## every target, one line each
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'
