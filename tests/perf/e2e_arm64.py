#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""End-to-end tests of our perf that only the arm64 guest runs (TAP).

    e2e_arm64.py     every test below

An AArch32 (compat) task is not walked by the deferred walker: its
requests are refused and counted (rejected_arch), and perf records its
samples with classic chains, walked in the interrupt by perf's compat
walker, as on a kernel without deferral. The compat task is Debian's
armhf busybox, which harness/arm64-root puts into the guest's root.
"""
import os
import sys

import perf_e2e
from e2e_tables import unwind_counters
from perf_e2e import Failed, Skipped, run, script, user_part

BUSYBOX = '/usr/local/lib/armhf/busybox'
LOOP = 'i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); done'


class Arm64Tests:
    def __init__(self, tmp):
        self.tmp = tmp

    def test_compat_task_gets_classic_chains(self):
        if not os.access(BUSYBOX, os.X_OK):
            raise Skipped('no armhf busybox at %s (harness/arm64-root)' % BUSYBOX)
        out, _ = run([BUSYBOX, 'uname', '-m'], check=False)
        if not out.strip():
            raise Skipped('AArch32 programs do not run here (no compat EL0)')
        data = os.path.join(self.tmp, 'compat.data')
        before = unwind_counters().get('rejected_arch')
        if before is None:
            raise Failed('no rejected_arch in the unwinder counters')
        run([perf_e2e.PERF, 'record', '-q', '-o', data, '-e', 'cpu-clock', '-c', '100000',
             '--call-graph', 'fp,defer', '--', BUSYBOX, 'sh', '-c', LOOP])
        refused = unwind_counters()['rejected_arch'] - before
        items, _ = script(data, '--no-merge-callchains')
        # The AArch32 task's samples: of user space, or of the kernel
        # entered from AArch32 (el0t_32_*). Those in the execve() that
        # made it, and on its way out, are the 64-bit task's still.
        samples = [it for it in items if 'record' not in it and
                   it['head'].split()[0] == 'busybox' and
                   (not user_part(it['frames'])[1] or
                    any(s.startswith('el0t_32') for s in user_part(it['frames'])[1]))]
        if not samples:
            raise Failed('no sample of the compat task')
        deferred = [it for it in samples if 'cookie' in it]
        if deferred:
            raise Failed('%d of %d compat samples deferred, e.g. %s' %
                         (len(deferred), len(samples), deferred[0]['head']))
        bare = [it for it in samples if not user_part(it['frames'])[0]]
        if bare:
            raise Failed('%d of %d compat samples have no user frame, e.g. %s' %
                         (len(bare), len(samples), bare[0]['head']))
        # Each sample asks and is refused, but for the odd one that asks
        # for nothing (perf_callchain_defer() does not ask where the
        # sample's ring buffer has no defer_output event, or its CPU no
        # slot): at most 4 in 13,000 samples.
        if refused < len(samples) - len(samples) // 100:
            raise Failed('rejected_arch grew by %d for %d compat samples' %
                         (refused, len(samples)))
        print('# %d compat samples, each with a classic user chain; rejected_arch +%d' %
              (len(samples), refused))


def main():
    names = sorted(n for n in dir(Arm64Tests) if n.startswith('test_'))
    if os.uname().machine != 'aarch64':
        print('1..0 # SKIP arm64 only')
        return 0
    if not os.access(perf_e2e.PERF, os.X_OK):
        print('1..0 # SKIP %s is not built (harness/perf-arm64)' % perf_e2e.PERF)
        return 0
    return perf_e2e.run_tap(Arm64Tests, names)


if __name__ == '__main__':
    sys.exit(main())
