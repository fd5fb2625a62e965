#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A BPF profiler of a program whose walks never complete still ends (TAP).

    warmup_storm.py [--seconds S] [--limit L]

bash's loop (`while [ $i -lt 100000000 ]`) runs through more code than
the 256 rules a process remembers hold, so that a BPF walk of it in an
interrupt often ends at a rule not at hand and asks for a warm-up walk on
the task's return to user space. Before warm-ups that do not help were
spaced out (bpf_warmups_spaced), each sampled kernel entry of bash queued
another faulting warm-up that did not converge, and Debian 12's bpftrace
sampling it at 997 Hz did not end within 14 minutes of guest time, under
`timeout 60`, with both guest CPUs saturated.

Here, for /sys/kernel/unwind_user/bpf_tables at 1 and then 0: bash runs
its loop (without address space randomization: bpftrace 0.17 then keeps
its symbols, see bpf_tools.py), and Debian 12's bpftrace runs

    profile:hz:997 /pid == PID/ { @[ustack(perf, 127)] = count(); }
    interval:s:S { exit(); }

under `timeout L` (S 4, L 60). One TAP line each:

    bpftrace_ends_with_tables_on, ..._off
              bpftrace exited 0 before timeout's L seconds, with at least
              50 stacks of bash
    tables_on_reach_the_root_at_least_as_often_as_off
              the share of samples (weighted by count) whose stack reaches
              the process's root (bpf_tools.reaches_root()) with the
              tables on is at least the share with them off

Figures ('#' lines): the time each run took, the samples and the share
reaching the root, and the BPF counters that moved (bpf_walks,
bpf_unmet, bpf_warmups, bpf_warmups_spaced, ...).
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpf_tools import (COUNTERS, SWITCH, frame_name,  # noqa: E402
                       parse_ustack_map, reaches_root)

MIN_SAMPLES = 50
BASH_LOOP = 'i=0; while [ $i -lt 100000000 ]; do i=$((i + 1)); done'
SCALE = int(os.environ.get('GUEST_TIMEOUT_SCALE', '1'))


def counters():
    """The deferral core's debugfs counters, name -> value."""
    out = {}
    with open(COUNTERS) as f:
        for line in f:
            p = line.split()
            if len(p) >= 2 and p[1].lstrip('-').isdigit():
                out[p[0]] = int(p[1])
    return out


def profile(sw, seconds, limit):
    """bpftrace on bash's loop with the switch at @sw: (exit status, time
    taken, samples, samples reaching the root, counters that moved)."""
    with open(SWITCH, 'w') as f:
        f.write('%d\n' % sw)
    bash = subprocess.Popen(['setarch', '-R', 'bash', '-c', BASH_LOOP])
    try:
        time.sleep(0.5)
        before = counters()
        env = dict(os.environ, BPFTRACE_CACHE_USER_SYMBOLS='1')
        prog = ('profile:hz:997 /pid == %d/ { @[ustack(perf, 127)] = count(); } '
                'interval:s:%d { exit(); }' % (bash.pid, seconds))
        t0 = time.monotonic()
        # timeout's own limit, and a later one of ours should timeout hang
        p = subprocess.run(['timeout', str(limit), 'bpftrace', '-e', prog],
                           capture_output=True, text=True, env=env,
                           timeout=limit * 3)
        took = time.monotonic() - t0
        after = counters()
    finally:
        bash.kill()
        bash.wait()
    stacks = parse_ustack_map(p.stdout, r'^@\[(.*)$')
    total = sum(c for _, _, c in stacks)
    whole = sum(c for _, fr, c in stacks
                if reaches_root([frame_name(s) for s, _ in fr]))
    moved = {k: after[k] - before.get(k, 0) for k in after
             if k.startswith('bpf_') and after[k] != before.get(k, 0)}
    if p.returncode:
        print('# bpftrace said: %s' % p.stderr.strip()[-300:].replace('\n', '\n# '))
    return p.returncode, took, total, whole, moved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seconds', type=int, default=4)
    ap.add_argument('--limit', type=int, default=60)
    args = ap.parse_args()
    limit = args.limit * SCALE
    print('1..3')
    for path, what in ((SWITCH, 'the bpf_tables switch'), (COUNTERS, 'the counters')):
        if not os.path.exists(path):
            for i, n in enumerate(('bpftrace_ends_with_tables_on', 'bpftrace_ends_with_tables_off',
                                   'tables_on_reach_the_root_at_least_as_often_as_off'), 1):
                print('ok %d %s # SKIP no %s (%s)' % (i, n, what, path))
            return 0
    if not os.access('/usr/bin/bpftrace', os.X_OK):
        for i in range(1, 4):
            print('ok %d # SKIP no bpftrace (/usr/bin/bpftrace)' % i)
        return 0
    with open(SWITCH) as f:
        saved = f.read().strip()
    share = {}
    failed = 0
    try:
        for i, sw in enumerate((1, 0), 1):
            rc, took, total, whole, moved = profile(sw, args.seconds, limit)
            share[sw] = 100.0 * whole / max(total, 1)
            print('# bpf_tables %d: bpftrace exited %d after %.1f s; %d of %d samples '
                  'reach the root (%.1f %%); %s' %
                  (sw, rc, took, whole, total, share[sw],
                   ' '.join('%s %d' % kv for kv in sorted(moved.items())) or 'no BPF counter moved'))
            ok = rc == 0 and total >= MIN_SAMPLES
            failed += not ok
            print('%sok %d bpftrace_ends_with_tables_%s%s' %
                  ('' if ok else 'not ', i, 'on' if sw else 'off',
                   '' if ok else ' # exit %d (124: timeout) after %.1f s, %d samples' %
                   (rc, took, total)))
    finally:
        with open(SWITCH, 'w') as f:
            f.write(saved + '\n')
    ok = share.get(1, 0) >= share.get(0, 0)
    failed += not ok
    print('# the root: %.1f %% of the samples with the tables on, %.1f %% off' %
          (share.get(1, 0), share.get(0, 0)))
    print('%sok 3 tables_on_reach_the_root_at_least_as_often_as_off' % ('' if ok else 'not '))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
