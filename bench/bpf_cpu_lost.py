#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The CPU a profiled program loses to a BPF profiler, tables on and off.

Debian 12's python3, perl and bash (no frame pointers: .eh_frame only)
each run a CPU-bound loop on a CPU of their own (the last; this script
and the tool run on CPU 0), and print the iterations done so far after
every batch (bash: `while [ $j -lt K ]; do j=$((j + 1)); done`, python3:
`for i in range(K): s += i * i`, perl: `$s += $_ * $_ for 1 .. K`, the
loops of tests/perf/e2e_tables.py's Debian programs). Their rate, in
iterations per second, is the slope from the first to the last line
read within a phase (each line timestamped as it is read), in three
phases:

    none        no profiling: the tool's perf events disabled
    tables-on   Debian 12's bpftrace
                  profile:hz:997 /pid == PID/ { @[ustack(perf, 127)] = count(); }
                with /sys/kernel/unwind_user/bpf_tables 1 (the table walk)
    tables-off  the same with bpf_tables 0 (frame pointers, as 6.12)

One bpftrace per program, started once the program runs and attached
when it has a perf event open on every CPU (tests/bpf/bpf_tools.py's
test) and the helpers walk the program (the unwinder's bpf_walks grows,
where the counters are). Restarting it for every phase would cost more
time than the phases (it starts slowly in the emulated guest); instead
the "none" phases disable its perf events (PERF_EVENT_IOC_DISABLE on
copies of its file descriptors, pidfd_getfd()), so that no sample is
taken and its program never runs, as if it were not attached; a phase
"none" in which a table walk is counted is an error, and the rate with
no tool running at all, before it starts, is printed beside
(iter_per_s_detached). The phases take turns for ROUNDS rounds of
PHASE_S seconds each (odd rounds in the reverse order: trends cancel).
The tool is killed at the end, its map never printed (no symbols read).
The switch is restored.

Prints one tab-separated line per figure, as bench/deferred_bench.c does:

    bpfcpu	PROGRAM	MODE	METRIC	VALUE

    iter_per_s            the median of the rounds' rates
    iter_per_s_detached   (none) the rate before the tool started
    loss_pct              (tables-on, tables-off) 100 * (1 - rate with the
                          tool / rate without it), the median of the
                          rounds' own (the phase "none" of the same round)
    loss_x_off            (tables-on) loss_pct with the tables over
                          loss_pct without them
    walks_per_s           (tables-on) the helpers' table walks per second
                          (bpf_walks): the samples the program took
    unmet_pct             (tables-on) of those, the ones that ended at a
                          rule or mapping not met yet (bpf_unmet)
    warmups_per_s         (tables-on) the warm-up walks they asked for
                          (bpf_warmups), per second

--smoke (harness/bench --smoke, so that it cannot rot): bash alone, one
round of 1 s phases.

usage: bpf_cpu_lost.py [--smoke]
"""
import ctypes
import fcntl
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'tests', 'bpf'))
# the switch, the counters, the perf events a tool holds, bpftrace's run
import bpf_tools  # noqa: E402
from bpf_tools import Failed, Skipped  # noqa: E402

ROUNDS = 6              # even: each order of the phases as often
PHASE_S = 2.0
SETTLE_S = 0.1          # of each phase, before its rate is taken
HZ = 997
# name, argv: a batch (300, 20000, 50000 iterations) takes some 20 to 50 ms
# in the emulated guest
PROGRAMS = (
    ('bash', ['/bin/bash', '-c',
              'i=0; while :; do j=0; while [ $j -lt 300 ]; do j=$((j + 1)); done; '
              'i=$((i + 300)); echo $i; done']),
    ('python3', ['/usr/bin/python3', '-c',
                 'n = 0\nwhile True:\n    s = 0\n    for i in range(20000): s += i * i\n'
                 '    n += 20000\n    print(n, flush=True)']),
    ('perl', ['/usr/bin/perl', '-e',
              '$| = 1; my $n = 0; while (1) { my $s = 0; $s += $_ * $_ for 1 .. 50000; '
              '$n += 50000; print "$n\\n" }']),
)
PHASES = ('none', 'tables-on', 'tables-off')
# bpf_tables in each phase: on in "none" too, where a table walk counted
# would tell that the tool's events still fire
TABLES = {'none': 1, 'tables-on': 1, 'tables-off': 0}
PIDFD_GETFD = 438       # x86_64 and the generic table (arm64)
PERF_EVENT_IOC_ENABLE = 0x2400
PERF_EVENT_IOC_DISABLE = 0x2401
ATTACH_S = 240 * bpf_tools.SCALE


def emit(program, mode, metric, value):
    print('bpfcpu\t%s\t%s\t%s\t%.6g' % (program, mode, metric, value), flush=True)


def note(what):
    print('bpf_cpu_lost: %s' % what, file=sys.stderr, flush=True)


def link(path):
    """Where the symbolic link @path leads; '' if it is gone."""
    try:
        return os.readlink(path)
    except OSError:
        return ''


class Profiler(bpf_tools.Bpftrace):
    """bpftrace's profile of one process at HZ, every stack counted."""
    name = 'bpfcpu-bpftrace'

    def command(self, pids):
        return ['bpftrace', '-e', 'profile:hz:%d /pid == %d/ { @[ustack(perf, 127)] = count(); }'
                % (HZ, pids[0])]

    def events(self):
        """Copies of the tool's perf event descriptors (pidfd_getfd()):
        the profile probe's, one per CPU, and any other it holds."""
        libc = ctypes.CDLL(None, use_errno=True)
        fd_dir = '/proc/%d/fd' % self.proc.pid
        ours = [int(fd) for fd in os.listdir(fd_dir)
                if link(os.path.join(fd_dir, fd)) == 'anon_inode:[perf_event]']
        pidfd = os.pidfd_open(self.proc.pid)
        try:
            copies = [libc.syscall(PIDFD_GETFD, pidfd, fd, 0) for fd in ours]
        finally:
            os.close(pidfd)
        if not copies or min(copies) < 0:
            raise Failed('copying bpftrace\'s perf events (%d): %s' %
                         (len(ours), os.strerror(ctypes.get_errno())))
        return copies


class Loop:
    """A program's loop on its own CPU, and the lines it prints."""

    def __init__(self, argv, cpu):
        def pin():
            if cpu is not None:
                os.sched_setaffinity(0, {cpu})
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     preexec_fn=pin)
        self.fd = self.proc.stdout.fileno()
        self.buf = b''

    def read_until(self, end):
        """(time read, iterations done) of each read that ended a line,
        until the monotonic time @end."""
        got = []
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return got
            if not select.select([self.fd], [], [], left)[0]:
                continue
            chunk = os.read(self.fd, 65536)
            t = time.monotonic()
            if not chunk:
                raise Failed('%s exited (%s)' % (self.proc.args[0], self.proc.wait()))
            self.buf += chunk
            lines = self.buf.split(b'\n')
            self.buf = lines.pop()
            if lines:
                got.append((t, int(lines[-1])))

    def started(self, deadline):
        """Wait for its first line."""
        while not self.read_until(time.monotonic() + 0.1):
            if time.monotonic() > deadline:
                raise Failed('%s printed nothing' % self.proc.args[0])

    def rate(self, seconds, what):
        """Iterations per second over @seconds after SETTLE_S: a line read
        then may be one written before."""
        self.read_until(time.monotonic() + SETTLE_S)
        got = self.read_until(time.monotonic() + seconds)
        if len(got) < 3:
            raise Failed('%s: %d lines in %g s: its batches are too long' %
                         (what, len(got), seconds))
        (t0, n0), (t1, n1) = got[0], got[-1]
        return (n1 - n0) / (t1 - t0)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def walks():
    """The helpers' counters that tell what they walked; {} without them."""
    c = bpf_tools.counters()
    return {k: c[k] for k in ('bpf_walks', 'bpf_unmet', 'bpf_warmups') if k in c}


def attach(tool, loop):
    """Start @tool on @loop's process, tables on; return once it samples
    it (without the counters, half a second after its events are open)."""
    bpf_tools.set_switch(1)
    tool.start([loop.proc.pid])
    deadline = time.monotonic() + ATTACH_S
    while not tool.attached(deadline):
        loop.read_until(time.monotonic() + 0.05)
    c0 = walks()
    if not c0:
        loop.read_until(time.monotonic() + 0.5)
    while c0 and walks()['bpf_walks'] == c0['bpf_walks']:
        if tool.proc.poll() is not None or time.monotonic() > deadline:
            raise Failed('bpftrace has its events open but made no table walk: %s' %
                         tool.stderr_tail())
        loop.read_until(time.monotonic() + 0.2)
    note('bpftrace attached %.1f s after it started' % (time.monotonic() - tool.t0))


def measure(name, argv, cpu, rounds, phase_s, tmp):
    loop, tool = Loop(argv, cpu), Profiler(tmp)
    rate = {p: [] for p in PHASES}
    loss = {p: [] for p in PHASES[1:]}
    per_s = {k: [] for k in ('walks', 'unmet', 'warmups')}
    try:
        loop.started(time.monotonic() + 60 * bpf_tools.SCALE)
        detached = loop.rate(phase_s, '%s, no tool' % name)
        attach(tool, loop)
        events = tool.events()
        for r in range(rounds):
            got = {}
            for p in PHASES if r % 2 == 0 else PHASES[::-1]:
                bpf_tools.set_switch(TABLES[p])
                for fd in events:
                    fcntl.ioctl(fd, PERF_EVENT_IOC_DISABLE if p == 'none' else
                                PERF_EVENT_IOC_ENABLE, 0)
                c0, t0 = walks(), time.monotonic()
                got[p] = loop.rate(phase_s, '%s, %s' % (name, p))
                c1, t1 = walks(), time.monotonic()
                if tool.proc.poll() is not None:
                    raise Failed('bpftrace exited: %s' % tool.stderr_tail())
                if not c1:
                    continue
                d = {k: c1[k] - c0.get(k, 0) for k in c1}
                if p != 'tables-on' and d['bpf_walks']:
                    raise Failed('%s, %s: %d table walks' % (name, p, d['bpf_walks']))
                if p == 'tables-on':
                    if not d['bpf_walks']:
                        raise Failed('%s, tables on: no table walk' % name)
                    per_s['walks'].append(d['bpf_walks'] / (t1 - t0))
                    per_s['unmet'].append(100.0 * d.get('bpf_unmet', 0) / d['bpf_walks'])
                    per_s['warmups'].append(d.get('bpf_warmups', 0) / (t1 - t0))
            for p in PHASES:
                rate[p].append(got[p])
            for p in loss:
                loss[p].append(100.0 * (1 - got[p] / got['none']))
            note('%s round %d: %s' % (name, r, ', '.join(
                '%s %.0f/s' % (p, got[p]) for p in PHASES)))
        for fd in events:
            os.close(fd)
    finally:
        tool.kill()
        loop.kill()
    med = {p: statistics.median(v) for p, v in loss.items()}
    emit(name, 'none', 'iter_per_s', statistics.median(rate['none']))
    emit(name, 'none', 'iter_per_s_detached', detached)
    for p in loss:
        emit(name, p, 'iter_per_s', statistics.median(rate[p]))
        emit(name, p, 'loss_pct', med[p])
    if med['tables-off'] > 0:
        emit(name, 'tables-on', 'loss_x_off', med['tables-on'] / med['tables-off'])
    else:
        note('%s: no loss with the tables off (%.3g %%): no ratio' % (name, med['tables-off']))
    for k, metric in (('walks', 'walks_per_s'), ('unmet', 'unmet_pct'),
                      ('warmups', 'warmups_per_s')):
        if per_s[k]:
            emit(name, 'tables-on', metric, statistics.median(per_s[k]))


def main():
    args = sys.argv[1:]
    programs, rounds, phase_s = PROGRAMS, ROUNDS, PHASE_S
    if args[:1] == ['--smoke']:
        programs, rounds, phase_s = PROGRAMS[:1], 1, 1.0
        args = args[1:]
    if args:
        sys.exit(__doc__.split('\n\n')[-1].strip())
    if not os.path.exists(bpf_tools.SWITCH):
        note('skipped: no %s: this kernel\'s helpers walk by frame pointers only' %
             bpf_tools.SWITCH)
        return
    try:
        Profiler(tempfile.gettempdir()).available()
    except Skipped as e:
        note('skipped: %s' % e)
        return
    # this script and the tool on CPU 0, the loops on the last CPU
    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[-1] if len(cpus) > 1 else None
    if cpu is None:
        note('one CPU: the loops share it with the tool')
    else:
        os.sched_setaffinity(0, {cpus[0]})
    with open(bpf_tools.SWITCH) as f:
        saved = f.read().strip()
    try:
        with tempfile.TemporaryDirectory(prefix='bpf_cpu_lost.') as tmp:
            for name, argv in programs:
                measure(name, argv, cpu, rounds, phase_s, tmp)
    except Failed as e:
        sys.exit('bpf_cpu_lost: %s' % e)
    finally:
        with open(bpf_tools.SWITCH, 'w') as f:
            f.write(saved + '\n')


if __name__ == '__main__':
    main()
