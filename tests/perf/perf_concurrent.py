#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Several perf record --call-graph fp,defer sessions at once (TAP).

    perf_concurrent.py [-t SECONDS]     (default 5; make stress sets more)

Two deep_syscalls workloads (user chains 12 and 20 deep) run while five
sessions record at the same time, every one with --call-graph fp,defer:

    wide-a     perf record -a, cpu-clock           (system-wide)
    wide-b     perf record -a, cpu-clock, another period
    task-one   perf record -p W12, cpu-clock       (per task)
    task-both  perf record -p W12,W20, task-clock  (per task, two targets)
    own        perf record -- deep_syscalls -d 8   (its own child, inherited)

So each workload thread is sampled by up to four sessions at once, per-task
and CPU-wide events defer into the same entry contexts, and each session
must get its own records. The workloads are killed before the sessions
end, so their last entries are completed by the exit path.

Each file is then checked on its own:
  - every sample of a workload thread got its user part (no sample waits
    for a record), and every sample in read(2) has the kernel part of the
    call followed by exactly that workload's user chain;
  - the session sampled the targets it was given and no other workload;
  - perf inject --merge-callchains leaves no record and every sample.
Samples of other tasks (perf itself, the shell) may miss their record when
they were taken just before the session stopped reading: that cannot be
delivered and is only reported.
"""
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_e2e import (PERF, WORKLOAD, Failed, check_chain, read_samples,  # noqa: E402
                      run, script, stats, tap, user_chain)

DEPTHS = (12, 20)
OWN_DEPTH = 8
READ = ['-n', '100000000000', '-b', '262144']


class Session:
    """One perf record session, started with its events disabled.

    perf record -D -1 --control opens the events and waits; enable() turns
    them on and waits for perf's ack, so that every session records by the
    time the clock starts (starting perf takes seconds under TCG)."""

    def __init__(self, name, tmp, target, event, period, command=()):
        self.name = name
        self.data = os.path.join(tmp, name + '.data')
        ctl, ack = (os.path.join(tmp, name + s) for s in ('.ctl', '.ack'))
        os.mkfifo(ctl)
        os.mkfifo(ack)
        # O_RDWR: neither open waits for perf to open its end.
        self.ctl = os.open(ctl, os.O_RDWR)
        self.ack = os.open(ack, os.O_RDWR)
        cmd = [PERF, 'record', '-q', '-o', self.data, '--call-graph', 'fp,defer',
               '-e', event, '-c', str(period), '-D', '-1',
               '--control', 'fifo:%s,%s' % (ctl, ack)] + target
        if command:
            cmd += ['--'] + list(command)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, errors='replace')
        self.rc, self.err = None, ''

    def enable(self, deadline):
        os.write(self.ctl, b'enable\n')
        while time.monotonic() < deadline:
            if select.select([self.ack], [], [], 1)[0]:
                if os.read(self.ack, 16).startswith(b'ack'):
                    return
            if self.proc.poll() is not None:
                raise Failed('%s: perf record exited %d before it was enabled: %s' %
                             (self.name, self.proc.returncode,
                              self.proc.stderr.read().strip()[-400:]))
        raise Failed('%s: perf record did not ack "enable"' % self.name)

    def end(self, stop, timeout):
        """Stop the session (SIGINT) if @stop, and collect its exit."""
        if stop and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            _, self.err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, self.err = self.proc.communicate()
            self.err += '\n(perf record did not end; killed)'
        self.rc = self.proc.returncode
        os.close(self.ctl)
        os.close(self.ack)


def tid_of(head):
    return int(head.split()[1])


def check_file(name, data, depth_of, wanted):
    """Check one session's file; return a summary line."""
    items, err = script(data)
    samples = [it for it in items if 'record' not in it]
    if any('record' in it for it in items):
        raise Failed('%s: merged output shows DEFERRED CALLCHAIN records' % name)
    work = [it for it in samples if it['head'].startswith('deep_syscalls')]
    others_missing = [it for it in samples if it.get('missing') and
                      not it['head'].startswith('deep_syscalls')]
    missing = [it for it in work if it.get('missing')]
    if missing:
        # Whether the ring buffers dropped anything tells a record lost to
        # a slow reader (reported by the kernel) from one never written.
        st = stats(data)
        raise Failed('%s: %d samples of the workloads got no user part, e.g. %s '
                     '(of %d samples and %d records; LOST %d, LOST_SAMPLES %d)' %
                     (name, len(missing), missing[0]['head'].strip(),
                      st.get('SAMPLE', 0), st.get('CALLCHAIN_DEFERRED', 0),
                      st.get('LOST', 0), st.get('LOST_SAMPLES', 0)))
    per_tid = {}
    for it in read_samples(work):
        tid = tid_of(it['head'])
        depth = depth_of.get(tid)
        if depth is None:
            raise Failed('%s: a deep_syscalls thread %d that no session started' %
                         (name, tid))
        check_chain(it, '%s: %s' % (name, it['head']), user_chain(depth))
        per_tid[depth] = per_tid.get(depth, 0) + 1
    seen = {depth_of.get(tid_of(it['head'])) for it in work}
    if seen - set(wanted):
        raise Failed('%s: samples of workloads %s, asked for %s' %
                     (name, sorted(seen - set(wanted), key=str), sorted(wanted)))
    for depth in wanted:
        if per_tid.get(depth, 0) < 3:
            raise Failed('%s: %d samples in read(2) of the depth-%d workload' %
                         (name, per_tid.get(depth, 0), depth))
    st = stats(data)
    merged = data + '.merged'
    run([PERF, 'inject', '--merge-callchains', '-i', data, '-o', merged])
    mst = stats(merged)
    if mst.get('CALLCHAIN_DEFERRED') or mst.get('SAMPLE') != st.get('SAMPLE'):
        raise Failed('%s: perf inject --merge-callchains: %s samples and %s records '
                     'from %s samples' % (name, mst.get('SAMPLE'),
                                          mst.get('CALLCHAIN_DEFERRED'), st.get('SAMPLE')))
    os.unlink(merged)
    return ('%s: %d samples, %d records; read(2) samples checked by depth %s; '
            '%d samples of other tasks without their record' %
            (name, st.get('SAMPLE', 0), st.get('CALLCHAIN_DEFERRED', 0),
             ' '.join('%d:%d' % kv for kv in sorted(per_tid.items())),
             len(others_missing)))


def keep(data):
    """Copy a failing session's file to the run folder ($RESULTS), where
    it outlives the guest, and say where."""
    dest = os.environ.get('RESULTS')
    if not dest or not os.path.isdir(dest) or not os.path.exists(data):
        return ''
    dest = os.path.join(dest, 'concurrent-' + os.path.basename(data))
    shutil.copyfile(data, dest)
    return ' (file kept as %s)' % dest


def check_session(se, depth_of, wanted):
    # timeout(1) ends the own session's workload and perf record exits
    # with its status (124); the others are stopped by SIGINT, which perf
    # record dies of once it wrote its file.
    if se.rc not in (0, 124, -signal.SIGINT) or re.search(r'error|killed', se.err, re.I):
        raise Failed('%s: perf record exited %d: %s' % (se.name, se.rc, se.err.strip()[-400:]))
    try:
        print('# ' + check_file(se.name, se.data, depth_of, wanted))
    except Failed as e:
        raise Failed(str(e) + keep(se.data)) from None


def main():
    secs = 5
    if sys.argv[1:2] == ['-t'] and len(sys.argv) == 3 and sys.argv[2].isdigit():
        secs = max(2, int(sys.argv[2]))
    elif sys.argv[1:]:
        print('usage: perf_concurrent.py [-t SECONDS]', file=sys.stderr)
        return 2
    for f in (PERF, WORKLOAD):
        if not os.access(f, os.X_OK):
            print('1..0 # SKIP %s is not built (harness/perf)' % f)
            return 0
    with open('/proc/sys/kernel/kptr_restrict', 'w') as f:
        f.write('0\n')
    names = ['wide-a', 'wide-b', 'task-one', 'task-both', 'own']
    print('1..%d' % len(names))
    sys.stdout.flush()
    with tempfile.TemporaryDirectory() as tmp:
        work = [subprocess.Popen([WORKLOAD, '-d', str(d)] + READ, stderr=subprocess.PIPE,
                                 text=True, errors='replace') for d in DEPTHS]
        w12, w20 = (str(p.pid) for p in work)
        time.sleep(0.5)
        for p in work:
            if p.poll() is not None:
                print('Bail out! %s exited %d at once: %s' %
                      (' '.join(p.args[1:3]), p.returncode, p.stderr.read().strip()))
                return 1
        sessions = [
            Session('wide-a', tmp, ['-a'], 'cpu-clock', 2000000),
            Session('wide-b', tmp, ['-a'], 'cpu-clock', 3000000),
            Session('task-one', tmp, ['-p', w12], 'cpu-clock', 1000000),
            Session('task-both', tmp, ['-p', w12 + ',' + w20], 'task-clock', 1500000),
            Session('own', tmp, [], 'cpu-clock', 1000000,
                    ['timeout', '-s', 'INT', str(secs), WORKLOAD, '-d', str(OWN_DEPTH)] + READ),
        ]
        try:
            deadline = time.monotonic() + 300
            for se in sessions:
                se.enable(deadline)
        except Failed as e:
            print('Bail out! %s' % e)
            for p in work:
                p.kill()
            for se in sessions:
                se.end(True, 60)
            return 1
        time.sleep(secs)
        # The workloads end first: their exit completes their last entries
        # while every session still reads.
        for p in work:
            p.send_signal(signal.SIGKILL)
            p.wait()
        own = sessions[-1]
        own.end(False, secs * 10 + 300)
        for se in sessions[:-1]:
            se.end(True, secs * 10 + 300)
        depth_of = {int(w12): DEPTHS[0], int(w20): DEPTHS[1]}
        own_tids = set()
        if os.path.exists(own.data):
            for it in script(own.data)[0]:
                if it['head'].startswith('deep_syscalls'):
                    own_tids.add(tid_of(it['head']))
        for tid in own_tids:
            depth_of.setdefault(tid, OWN_DEPTH)
        wanted = {'wide-a': DEPTHS + (OWN_DEPTH,), 'wide-b': DEPTHS + (OWN_DEPTH,),
                  'task-one': DEPTHS[:1], 'task-both': DEPTHS, 'own': (OWN_DEPTH,)}
        failed = 0
        for i, se in enumerate(sessions, 1):
            failed += tap(i, se.name, lambda se=se: check_session(se, depth_of, wanted[se.name]))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
