#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""End-to-end tests of our perf with deferred user callchains (TAP).

    perf_e2e.py            the guest tests: record the deep_syscalls workload
                           with --call-graph fp,defer and check what perf
                           script, report and inject make of it
    perf_e2e.py fallback   on a kernel without deferral (the host): perf says
                           so once and records classic callchains, and
                           refuses --call-graph sframe
    perf_e2e.py --deferred the guest tests of this file (-x TEST... leaves
                           those out: the arm64 guest's list)
    perf_e2e.py --tables   the guest tests of e2e_tables.py
    perf_e2e.py TEST...    only the named guest tests

The tests of the walk by unwind tables (--call-graph sframe on SFrame and
.eh_frame) are in e2e_tables.py, mixed in here.

Each test prints "ok N name" or "not ok N name" with '#' lines saying what
was wrong.  Paths come from the repository layout: build/perf/perf (ours),
build/perf-base/perf (base 6.12, unpatched), build/perf-tests/deep_syscalls;
on arm64 (the arm64 guest) build/perf-arm64, build/perf-base-arm64 and
build/perf-tests-arm64 (harness/perf-arm64).
"""
import contextlib
import errno
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import perfdata

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
ARM64 = os.uname().machine == 'aarch64'
_ARCH = '-arm64' if ARM64 else ''
PERF = os.path.join(ROOT, 'build', 'perf' + _ARCH, 'perf')
BASE_PERF = os.path.join(ROOT, 'build', 'perf-base' + _ARCH, 'perf')
WORKLOAD = os.path.join(ROOT, 'build', 'perf-tests' + _ARCH, 'deep_syscalls')
SFRAME_WORKLOAD = os.path.join(ROOT, 'build', 'perf-tests', 'sframe_syscalls')
METHODS = '/sys/kernel/unwind_user/methods'
NO_SFRAME = 'use --call-graph dwarf'

DEPTH = 12


def user_chain(depth):
    """The workload's user frames, from the one that made the call outwards."""
    return ['read_block'] + ['descend'] * depth + ['handle_request', 'serve', 'main']


USER_CHAIN = user_chain(DEPTH)
KERNEL_MIN = 0xffff800000000000
# Where a system call's kernel chain ends, and the system call glibc's
# pause() makes (arm64 has no pause(2): ppoll() with no descriptors).
ENTRY = 'el0t_64_sync' if ARM64 else 'entry_SYSCALL_64_after_hwframe'
PAUSE_NR, PAUSE = ('73', 'ppoll') if ARM64 else ('34', 'pause')
# Reads of 256 KiB the shared recordings sample: a read takes the arm64
# guest (TCG, pointer authentication emulated) several times as long as
# the x86 one, and gets as many more cpu-clock samples (3845 against 720
# for 150 reads in CI); with 60, it still has hundreds in read(2) when
# the host is busy.
READS = '60' if ARM64 else '150'
MISSING = 'no deferred user callchain came for cookie'
DEFERRED = 'user callchain deferred, cookie'


class Failed(Exception):
    """A check failed; the message says what was wrong."""


class Skipped(Exception):
    """The test cannot run here; the message says why."""


def run(cmd, check=True, env=None, timeout=240):
    """Run @cmd (a list); return (stdout, stderr).  Fail on a bad exit."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors='replace', env=env, timeout=timeout)
    if check and p.returncode != 0:
        raise Failed('%s exited %d: %s' % (' '.join(cmd[:4]), p.returncode,
                                           p.stderr.strip()[-600:]))
    return p.stdout, p.stderr


def record(data, callgraph, events, workload_args, extra=('-q',)):
    """perf record the workload; return perf's stderr."""
    cmd = [PERF, 'record', '-o', data, '--call-graph', callgraph]
    for e in events:
        cmd += ['-e', e]
    cmd += list(extra) + ['--', WORKLOAD] + workload_args
    return run(cmd)[1]


def parse_script(text):
    """Samples and records of 'perf script -F comm,tid,time,event,ip,sym'.

    Each is a dict: head (first line), frames [(addr, sym)], notes (other
    indented lines), and for records the cookie.
    """
    items, cur = [], None
    for line in text.splitlines():
        if not line.strip():
            cur = None
            continue
        if not line.startswith('\t'):
            cur = {'head': line, 'frames': [], 'notes': []}
            m = re.search(r'DEFERRED CALLCHAIN cookie (0x[0-9a-f]+) nr (\d+)', line)
            if m:
                cur['record'] = int(m.group(1), 16)
                cur['nr'] = int(m.group(2))
            items.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r'\t\s*([0-9a-f]+) (\S+)', line)
        if m:
            cur['frames'].append((int(m.group(1), 16), m.group(2)))
        else:
            cur['notes'].append(line.strip())
    for it in items:
        for n in it['notes']:
            m = re.search(r'(?:%s|%s) (0x[0-9a-f]+)' % (MISSING, DEFERRED), n)
            if m:
                it['cookie'] = int(m.group(1), 16)
                it['missing'] = n.startswith('(' + MISSING)
    return items


def perf_enable(rec, ctl, ack, limit):
    """Enable the events of @rec (perf record -D -1 --control fifo:@ctl,@ack)
    and wait for perf to acknowledge it, within @limit seconds."""
    deadline = time.monotonic() + limit

    def check(what):
        if rec.poll() is not None or time.monotonic() > deadline:
            raise Failed('perf record did not %s within %d s' % (what, limit))
        time.sleep(0.02)

    while True:
        try:
            fd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as e:
            # ENXIO: perf has not opened its end yet
            if e.errno != errno.ENXIO:
                raise
            check('open its control fifo')
    # Read end first, without blocking: perf's open of its end waits for it.
    afd = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
    try:
        os.write(fd, b'enable\n')
        os.close(fd)
        got = b''
        while b'ack' not in got:
            try:
                chunk = os.read(afd, 16)
            except BlockingIOError:
                chunk = b''
            got += chunk
            if not chunk:
                check('acknowledge the enable command')
    finally:
        os.close(afd)


def in_pause(pid):
    """Whether task @pid is blocked in pause() (PAUSE_NR)."""
    try:
        with open('/proc/%d/syscall' % pid) as f:
            return f.read().split()[:1] == [PAUSE_NR]
    except OSError:
        return False


def script(data, *args, perf=PERF, env=None):
    out, err = run([perf, 'script', '-i', data, '-F', 'comm,tid,time,event,ip,sym']
                   + list(args), env=env)
    return parse_script(out), err


def script_kept(data, keep, perf=PERF, timeout=600):
    """As script(), for files too large to hold as text (a debug kernel's
    slow workloads take many more samples): perf script's output is parsed
    as it comes, and only the items @keep accepts are kept."""
    with tempfile.TemporaryFile(mode='w+') as err:
        p = subprocess.Popen([perf, 'script', '-i', data, '-F',
                              'comm,tid,time,event,ip,sym'],
                             stdout=subprocess.PIPE, stderr=err, text=True,
                             errors='replace')
        deadline = time.monotonic() + timeout
        items, block = [], []
        for line in p.stdout:
            if line.strip():
                block.append(line.rstrip('\n'))
                continue
            items += [it for it in parse_script('\n'.join(block)) if keep(it)]
            block = []
            if time.monotonic() > deadline:
                p.kill()
                raise Failed('perf script ran over %d s' % timeout)
        items += [it for it in parse_script('\n'.join(block)) if keep(it)]
        if p.wait() != 0:
            err.seek(0)
            raise Failed('perf script exited %d: %s' % (p.returncode,
                                                        err.read().strip()[-600:]))
    return items


def stats(data, perf=PERF):
    """Record counts from 'perf report --stats' (the aggregated table)."""
    out = run([perf, 'report', '--stats', '-i', data])[0]
    counts = {}
    for line in out.split('Aggregated stats:')[-1].splitlines():
        m = re.match(r'\s*(\S+) events:\s+(\d+)', line)
        if m and m.group(1) not in counts:
            counts[m.group(1)] = int(m.group(2))
    return counts


def user_part(frames):
    """The symbols after the last kernel frame."""
    last = max((i for i, (a, _) in enumerate(frames) if a >= KERNEL_MIN), default=-1)
    return [s for _, s in frames[last + 1:]], [s for a, s in frames if a >= KERNEL_MIN]


def read_samples(items):
    """Samples in the workload's read(2): ksys_read under read_block."""
    return [it for it in items if 'record' not in it and
            'ksys_read' in user_part(it['frames'])[1] and
            'read_block' in user_part(it['frames'])[0]]


def check_chain(it, what, chain=USER_CHAIN, kernel_part=True):
    """@it's chain is a kernel part from the syscall entry, then exactly @chain.

    Syscall tracepoints sample the user registers: no kernel part
    (@kernel_part False).
    """
    user, kernel = user_part(it['frames'])
    if kernel_part and (not kernel or kernel[-1] != ENTRY):
        raise Failed('%s: the kernel part does not end in %s: %s' % (what, ENTRY, kernel))
    if user[:len(chain)] != chain:
        raise Failed('%s: after the kernel frames come %s, expected %s' %
                     (what, user[:len(chain) + 1], chain))


TRY_FIRST = '/proc/sys/kernel/unwind_deferred_try_first'


@contextlib.contextmanager
def try_first(bits):
    """kernel.unwind_deferred_try_first set to @bits meanwhile (bit 0:
    samples of user space walked at once, bit 1: the first sample of a stay
    in the kernel, bit 2: that only where the task's stays have one sample
    each), where the kernel has it."""
    try:
        with open(TRY_FIRST) as f:
            saved = f.read().strip()
    except OSError:
        yield
        return
    with open(TRY_FIRST, 'w') as f:
        f.write('%d\n' % bits)
    try:
        yield
    finally:
        with open(TRY_FIRST, 'w') as f:
            f.write(saved + '\n')


def tap(i, name, fn):
    """Run test @i, @name, by calling @fn(); print its TAP line (its '#'
    lines first). Return 1 if it failed, else 0."""
    t0 = time.monotonic()
    try:
        fn()
        print('# %.1f s' % (time.monotonic() - t0))
        print('ok %d %s' % (i, name))
    except Skipped as e:
        print('ok %d %s # SKIP %s' % (i, name, e))
    except (Failed, subprocess.TimeoutExpired) as e:
        for line in str(e).splitlines():
            print('# %s' % line)
        print('not ok %d %s' % (i, name))
        return 1
    finally:
        sys.stdout.flush()
    return 0


class Tests:
    def __init__(self, tmp):
        self.tmp = tmp
        self.data = os.path.join(tmp, 'defer.data')
        self.classic = os.path.join(tmp, 'classic.data')
        self.recorded = False

    def path(self, name):
        return os.path.join(self.tmp, name)

    def deferred_file(self):
        """cpu-clock samples of long reads: several samples per kernel entry."""
        if not self.recorded:
            args = ['-d', str(DEPTH), '-n', READS, '-b', '262144']
            record(self.data, 'fp,defer', ['cpu-clock'], args, ['-q', '-c', '50000'])
            record(self.classic, 'fp', ['cpu-clock'], args, ['-q', '-c', '50000'])
            self.recorded = True
        return self.data

    def test_record_sets_defer_bits_only_when_asked(self):
        for cg, want in (('fp,defer', True), ('fp', False)):
            data = self.path('attr-%s.data' % cg.replace(',', '-'))
            record(data, cg, ['cpu-clock'], ['-n', '1'])
            attrs = run([PERF, 'evlist', '-v', '-i', data])[0]
            has = 'defer_callchain: 1' in attrs and 'defer_output: 1' in attrs
            if has != want:
                raise Failed('--call-graph %s: defer_callchain/defer_output %s in %s' %
                             (cg, 'missing' if want else 'set', attrs.strip()))
        out = run([PERF, 'record', '-o', self.path('bad.data'), '--call-graph',
                   'fp,sideways', '--', WORKLOAD, '-n', '1'], check=False)[1]
        if "fp takes a stack depth or 'defer'" not in out:
            raise Failed('--call-graph fp,sideways was not refused clearly: %s' % out[-300:])

    def test_merged_chains_put_user_frames_under_kernel_frames(self):
        items, err = script(self.deferred_file())
        reads = read_samples(items)
        if len(reads) < 10:
            raise Failed('only %d samples in read(2); expected at least 10' % len(reads))
        for it in reads:
            check_chain(it, it['head'])
        missing = [it for it in items if it.get('missing')]
        if missing or 'samples got no deferred' in err:
            raise Failed('%d samples of a workload that exited got no user part: %s' %
                         (len(missing), err.strip()[-300:]))
        if any('record' in it for it in items):
            raise Failed('merged output shows DEFERRED CALLCHAIN records')
        st = stats(self.data)
        print('# %d samples, %d PERF_RECORD_CALLCHAIN_DEFERRED (%.2f samples per record), '
              '%d samples in read(2) checked' %
              (st.get('SAMPLE', 0), st.get('CALLCHAIN_DEFERRED', 0),
               st.get('SAMPLE', 0) / max(1, st.get('CALLCHAIN_DEFERRED', 0)), len(reads)))
        if st.get('CALLCHAIN_DEFERRED', 0) >= st.get('SAMPLE', 0):
            raise Failed('no kernel entry shared its record between samples')

    def test_kernel_only_event_gets_its_user_frames(self):
        """cpu-clock:k is exclude_user: its samples are in the kernel, and
        perf record makes it the event that receives the records."""
        data = self.path('kernel-only.data')
        record(data, 'fp,defer', ['cpu-clock:k'],
               ['-d', str(DEPTH), '-n', '60', '-b', '262144'], ['-q', '-c', '50000'])
        attrs = run([PERF, 'evlist', '-v', '-i', data])[0]
        if 'exclude_user: 1' not in attrs or 'defer_output: 1' not in attrs:
            raise Failed('cpu-clock:k is not an exclude_user event that receives records: %s' %
                         attrs.strip())
        items, err = script(data)
        reads = read_samples(items)
        missing = [it for it in items if it.get('missing')]
        st = stats(data)
        print('# %d samples, %d records, %d in read(2), %d without a record' %
              (st.get('SAMPLE', 0), st.get('CALLCHAIN_DEFERRED', 0), len(reads), len(missing)))
        if missing or 'samples got no deferred' in err:
            raise Failed('%d exclude_user samples got no user part: %s' %
                         (len(missing), err.strip()[-300:]))
        if len(reads) < 5:
            raise Failed('only %d samples in read(2) with their user frames' % len(reads))
        for it in reads:
            check_chain(it, it['head'])

    def test_cpu_limited_recording_keeps_its_records(self):
        """perf record -C 0 of a workload that sleeps in read(2) of a fifo
        and is moved to the other CPU while it sleeps: every sample taken on
        CPU 0 gets its record, written to CPU 0's buffer. (perf record -C
        adds a tracking event on every CPU, so a record written on the CPU
        the task returns to user space on still reached the file, from CPU
        1's buffer; the CPU of each record is what tells.) Each stay has
        one sample, which would be walked at once and make no record: the
        first sample of a stay in the kernel defers here too."""
        if os.cpu_count() < 2:
            raise Skipped('needs two CPUs')
        data = self.path('cpu0.data')
        fifo = self.path('feed')
        os.mkfifo(fifo)
        job = ('%s -i -d %d -n 1000 < %s & r=$!; exec 3> %s; i=0; '
               'while [ $i -lt 24 ]; do taskset -p -c $((i %% 2)) $r > /dev/null; '
               'sleep 0.01; echo x >&3; i=$((i + 1)); done; exec 3>&-; wait $r' %
               (WORKLOAD, DEPTH, fifo, fifo))
        with try_first(1):
            run([PERF, 'record', '-o', data, '--call-graph', 'fp,defer', '-q', '-C', '0',
                 '-e', 'context-switches', '-c', '1', '--', 'sh', '-c', job])
        items, _ = script(data, '--no-merge-callchains', '-F',
                          'comm,tid,cpu,time,event,ip,sym')
        cpu_of = {}
        for it in items:
            if 'record' in it:
                cpu_of.setdefault(it['record'], set()).add(it['head'].split()[2])
        mine = [it for it in items if 'record' not in it and 'cookie' in it and
                it['head'].startswith('deep_syscalls')]
        missing = [it for it in mine if it['cookie'] not in cpu_of]
        elsewhere = [it for it in mine if it['cookie'] in cpu_of and
                     '[000]' not in cpu_of[it['cookie']]]
        print('# %d deferred samples of the workload on CPU 0: %d without a record, '
              '%d whose record was written on another CPU only' %
              (len(mine), len(missing), len(elsewhere)))
        if len(mine) < 5:
            raise Failed('only %d deferred samples of the workload on CPU 0' % len(mine))
        if missing or elsewhere:
            raise Failed('of the samples on CPU 0, %d have no record and %d have theirs '
                         'on another CPU only, e.g. %s' %
                         (len(missing), len(elsewhere), (missing + elsewhere)[0]['head']))
        merged = read_samples(script(data)[0])
        for it in merged:
            if it['head'].startswith('deep_syscalls'):
                check_chain(it, it['head'])

    def test_no_merge_shows_records_with_the_samples_cookies(self):
        items, _ = script(self.deferred_file(), '--no-merge-callchains')
        samples = [it for it in items if 'record' not in it]
        records = {}
        for it in items:
            if 'record' in it:
                records.setdefault(it['record'], []).append(it)
        if not records:
            raise Failed('no DEFERRED CALLCHAIN line')
        # A sample taken after the entry's record was written (in the
        # callbacks or later on the way out) falls back to a classic walk.
        classic = [it for it in samples if 'cookie' not in it]
        bad = [it['head'] for it in classic if not user_part(it['frames'])[0]]
        if bad:
            raise Failed('%d samples have neither a cookie nor user frames, e.g. %s' %
                         (len(bad), bad[0]))
        samples = [it for it in samples if 'cookie' in it]
        for it in samples:
            recs = records.get(it['cookie'])
            if not recs:
                raise Failed('no record has cookie %#x of %s' % (it['cookie'], it['head']))
            tid = it['head'].split()[1]
            if recs[0]['head'].split()[1] != tid:
                raise Failed('cookie %#x: sample of tid %s, record of %s' %
                             (it['cookie'], tid, recs[0]['head']))
            if any(a >= KERNEL_MIN for a, _ in recs[0]['frames']):
                raise Failed('record %#x holds kernel addresses' % it['cookie'])
        asked = {it['cookie'] for it in samples}
        unasked = set(records) - asked
        if unasked:
            raise Failed('records nobody asked for: %s' % sorted(unasked)[:5])
        for it in samples:
            if user_part(it['frames'])[0]:
                raise Failed('a sample with a cookie has user frames: %s' % it['head'])
        # Every record of a read(2) sample is the stack of a read(2) call:
        # the workload's own (read_block and its exact chain) or the
        # dynamic loader's, through libc's read. How many reads get a
        # sample depends on timing (one read may hold dozens of samples
        # under a loaded TCG host, on PREEMPT_RT), not how they look.
        in_read = {it['cookie'] for it in samples if 'ksys_read' in user_part(it['frames'])[1]}
        reads = []
        for c in sorted(in_read):
            syms = [s for _, s in records[c][0]['frames']]
            if 'read_block' in syms:
                if syms[:len(USER_CHAIN)] != USER_CHAIN:
                    raise Failed('record %#x holds %s' % (c, syms))
                reads.append(c)
            elif not syms or ('read' not in syms[0] and
                              not any(s.startswith('_dl_') for s in syms)):
                # The loader's: libc's read, or (arm64) ld.so's own,
                # which has no symbol, under the loader's _dl_ functions.
                raise Failed('record %#x of a read(2) sample holds no read: %s' % (c, syms))
        if len(reads) < 3:
            raise Failed('only %d records of read(2) hold read_block' % len(reads))
        print('# %d deferred samples, %d records, every cookie matched; %d samples taken '
              'after their entry\'s record have classic chains; %d records of read(2) '
              'calls hold the chain' % (len(samples), len(records), len(classic), len(reads)))

    def test_report_stdio_shows_the_stitched_chain(self):
        out = run([PERF, 'report', '--stdio', '--no-children', '-G', '-g', 'folded',
                   '--percent-limit', '0', '-i', self.deferred_file()])[0]
        want = ';'.join(list(reversed(USER_CHAIN)) + [ENTRY]) + ';'
        lines = [ln for ln in out.splitlines() if want in ln]
        if not lines:
            raise Failed('no folded chain "...%s..." in perf report --stdio' % want[-120:])
        if not any('ksys_read' in ln.split(want)[1] for ln in lines):
            raise Failed('the stitched chains do not continue into ksys_read')
        print('# %d folded chains hold main..read_block;%s' % (len(lines), ENTRY))

    def test_report_dump_shows_records_and_cookies(self):
        out = run([PERF, 'report', '-D', '-i', self.deferred_file()])[0]
        recs = re.findall(r'PERF_RECORD_CALLCHAIN_DEFERRED: (\d+)/(\d+): cookie (0x[0-9a-f]+)', out)
        asked = set(re.findall(r'\.\.\. user part deferred: cookie (0x[0-9a-f]+)', out))
        if not recs:
            raise Failed('perf report -D shows no PERF_RECORD_CALLCHAIN_DEFERRED with a cookie')
        if not asked:
            raise Failed('perf report -D shows no sample with a deferred cookie')
        if not asked <= {c for _, _, c in recs}:
            raise Failed('sample cookies without a record in the dump: %s' %
                         sorted(asked - {c for _, _, c in recs})[:5])
        if 'defer_callchain: 1' not in run([PERF, 'evlist', '-v', '-i', self.data])[0]:
            raise Failed('the attributes do not show defer_callchain')

    def test_inject_passes_records_through(self):
        out = self.path('passed.data')
        run([PERF, 'inject', '-i', self.deferred_file(), '-o', out])
        a, b = stats(self.data), stats(out)
        for kind in ('SAMPLE', 'CALLCHAIN_DEFERRED'):
            if a.get(kind) != b.get(kind):
                raise Failed('%s: %s in, %s out' % (kind, a.get(kind), b.get(kind)))
        if script(self.data)[0] != script(out)[0]:
            raise Failed('perf script shows the injected file differently')

    def test_inject_merge_output_reads_in_unpatched_perf(self):
        if not os.access(BASE_PERF, os.X_OK):
            raise Failed('no unpatched perf at %s (harness/perf builds it)' % BASE_PERF)
        out = self.path('merged.data')
        run([PERF, 'inject', '--merge-callchains', '-i', self.deferred_file(), '-o', out])
        st = stats(out)
        if st.get('CALLCHAIN_DEFERRED'):
            raise Failed('the merged file still has %d records' % st['CALLCHAIN_DEFERRED'])
        if st.get('SAMPLE') != stats(self.data).get('SAMPLE'):
            raise Failed('inject changed the number of samples')
        if 'defer_' in run([PERF, 'evlist', '-v', '-i', out])[0]:
            raise Failed('the merged file still asks for deferral')
        items, err = script(out, perf=BASE_PERF)
        reads = read_samples(items)
        if len(reads) < 10:
            raise Failed('unpatched perf shows %d read(2) samples: %s' % (len(reads), err[-300:]))
        for it in reads:
            check_chain(it, 'unpatched perf: ' + it['head'])
        raw = run([BASE_PERF, 'script', '-i', self.data, '-F', 'comm,tid,ip,sym'],
                  check=False)[0]
        print('# unpatched perf reads %d read(2) samples with whole chains from the merged '
              'file; on the raw file it shows read_block %d times' %
              (len(reads), raw.count('read_block')))

    def test_missing_record_sample_keeps_its_kernel_part(self):
        # Every sample defers (try-first off): a walk at once would give
        # the pause() sample its user chain and no record to miss, as it
        # does where frame pointers reach the root in the interrupt (arm64).
        with try_first(0):
            self.missing_record_sample()

    def missing_record_sample(self):
        data, go = self.path('missing.data'), self.path('go')
        ctl, ack = self.path('missing.ctl'), self.path('missing.ack')
        os.mkfifo(ctl)
        os.mkfifo(ack)
        # Once perf's events are enabled (it acknowledges the enable
        # command: on a loaded machine, attaching and synthesizing can take
        # longer than the workload's reads), the workload reads, then blocks
        # in pause(2) until killed: its last sample is taken in the kernel,
        # and the task is still there when the recording stops. The
        # recording stops (SIGINT) once the workload is seen blocked in
        # pause(2), however long its reads took.
        wl = subprocess.Popen([WORKLOAD, '-d', str(DEPTH), '-n', '50', '-b', '4096',
                               '-g', go, '-p'])
        rec = subprocess.Popen([PERF, 'record', '-q', '-o', data, '--call-graph', 'fp,defer',
                                '-e', 'syscalls:sys_enter_read', '-e',
                                'syscalls:sys_enter_' + PAUSE, '-D', '-1',
                                '--control', 'fifo:%s,%s' % (ctl, ack), '-p', str(wl.pid)],
                               stderr=subprocess.PIPE, text=True)
        try:
            perf_enable(rec, ctl, ack, 60)
            open(go, 'w').close()
            deadline = time.monotonic() + 60
            while not in_pause(wl.pid):
                if time.monotonic() > deadline or wl.poll() is not None:
                    raise Failed('the workload did not block in pause(2) within 60 s')
                time.sleep(0.05)
            time.sleep(0.5)
            rec.send_signal(signal.SIGINT)
            _, err = rec.communicate(timeout=60)
            # perf record ends by the signal that stopped it, once written.
            if rec.returncode not in (0, -signal.SIGINT):
                raise Failed('perf record -p exited %d: %s' % (rec.returncode, err[-300:]))
        finally:
            wl.kill()
            wl.wait()
            if rec.poll() is None:
                rec.kill()
        items, err = script(data)
        pause = [it for it in items if 'sys_enter_' + PAUSE in it['head']]
        if len(pause) != 1:
            # What was written, and what perf script made of it: a sample
            # never recorded, or one that perf script did not print.
            raw = run([PERF, 'script', '-D', '-i', data], check=False)[0]
            keep = os.environ.get('RESULTS')
            if keep:
                with open(os.path.join(keep, 'missing-record.dump'), 'w') as f:
                    f.write(raw)
            raise Failed('expected one sys_enter_' + PAUSE + ' sample, got %d; the file holds %d '
                         'PERF_RECORD_SAMPLE and %d deferred records (%s); perf script '
                         'said: %s; its last items: %s' %
                         (len(pause), raw.count('PERF_RECORD_SAMPLE'),
                          raw.count('CALLCHAIN_DEFERRED'), stats(data), err.strip()[-300:],
                          [it['head'] for it in items[-3:]]))
        if not pause[0].get('missing'):
            raise Failed('the pause(2) sample does not say its user part never came: %s' %
                         pause[0]['notes'])
        if user_part(pause[0]['frames'])[0]:
            raise Failed('the pause(2) sample has user frames it cannot have')
        reads = [it for it in items if 'sys_enter_read' in it['head'] and
                 'deep_syscalls' in it['head']]
        if len(reads) < 50:
            raise Failed('only %d read samples of the workload' % len(reads))
        for it in reads[-50:]:
            if it.get('missing') or [s for _, s in it['frames']][:len(USER_CHAIN)] != USER_CHAIN:
                raise Failed('a read(2) sample lost its user part: %s' % it['frames'][:3])
        m = re.search(r'(\d+) of (\d+) samples got no deferred user callchain', err)
        if not m or m.group(1) != '1':
            raise Failed('perf did not say that 1 sample got no user part: %s' % err.strip())
        print('# perf said: %s' % m.group(0))

    def test_lost_records_do_not_lose_samples(self):
        data = self.path('lost.data')
        p = subprocess.Popen([PERF, 'record', '-q', '-m', '2', '-o', data,
                              '--call-graph', 'fp,defer', '-e', 'syscalls:sys_enter_read',
                              '-e', 'syscalls:sys_exit_read', '--', WORKLOAD,
                              '-d', '64', '-n', '2000', '-b', '1'],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Stop the reader so that the small buffer overflows.
        time.sleep(0.5)
        p.send_signal(signal.SIGSTOP)
        time.sleep(1.5)
        p.send_signal(signal.SIGCONT)
        _, err = p.communicate(timeout=240)
        if p.returncode:
            raise Failed('perf record exited %d: %s' % (p.returncode, err[-300:]))
        st = stats(data)
        if not st.get('LOST'):
            raise Skipped('no ring-buffer loss this time (%s)' % st)
        items, err = script(data)
        samples = [it for it in items if 'record' not in it]
        if len(samples) != st.get('SAMPLE'):
            raise Failed('perf script delivered %d of %d samples' %
                         (len(samples), st.get('SAMPLE')))
        missing = [it for it in samples if it.get('missing')]
        m = re.search(r'(\d+) of (\d+) samples got no deferred user callchain', err)
        if missing and (not m or int(m.group(1)) != len(missing)):
            raise Failed('%d samples without a user part, perf said: %s' %
                         (len(missing), err.strip()[-300:]))
        merged = [it for it in samples if not it.get('missing')]
        for it in merged:
            if 'serve' in [s for _, s in it['frames']]:
                check_chain(it, it['head'], user_chain(64), kernel_part=False)
        print('# %d LOST records; %d samples: %d merged, %d without a user part' %
              (st['LOST'], len(samples), len(merged), len(missing)))

    def test_held_samples_are_bounded(self):
        cfg = self.path('perfconfig')
        with open(cfg, 'w') as f:
            f.write('[call-graph]\n\tdefer-hold-size = 1\n')
        env = dict(os.environ, PERF_CONFIG=cfg)
        raw, _ = script(self.deferred_file(), '--no-merge-callchains')
        deferred = len([it for it in raw if 'record' not in it and 'cookie' in it])
        items, err = script(self.data, env=env)
        samples = [it for it in items if 'record' not in it]
        if len(samples) != stats(self.data).get('SAMPLE'):
            raise Failed('with a 1-byte bound, %d samples came out of %d' %
                         (len(samples), stats(self.data).get('SAMPLE')))
        missing = len([it for it in samples if it.get('missing')])
        if missing != deferred:
            raise Failed('with a 1-byte bound %d of %d deferred samples were merged' %
                         (deferred - missing, deferred))
        if 'defer-hold-size' not in err:
            raise Failed('perf did not say why samples lost their user part: %s' % err[-300:])

    def test_merging_survives_clocks_that_disagree(self):
        """A file made here, with the orders of events that CPU clocks that
        disagree give: every sample gets its own record's frames, and a
        lost record costs only its samples, given up 100 ms on."""
        us = 1000
        a, b, c, d, e = 0x401000, 0x402000, 0x403000, 0x404000, 0x405000
        events = [
            # 178: the record goes to CPU 6 and, later by CPU 5's clock, to
            # CPU 5; the next entry's first sample, on CPU 6, sorts between.
            ('sample', 178, 178, 1 * us, 6, 0xe7a6),
            ('sample', 178, 178, 2 * us, 6, 0xe7a6),
            ('deferred', 178, 178, 5 * us, 6, 0xe7a6, [a, a + 8]),
            ('sample', 178, 178, 5 * us, 6, 0x4ded7),
            ('deferred', 178, 178, 6 * us, 5, 0xe7a6, [a, a + 8]),
            ('sample', 178, 178, 9 * us, 6, 0x4ded7),
            ('deferred', 178, 178, 10 * us, 6, 0x4ded7, [b]),
            # 200: a per-task record written on CPU 1 sorts before its
            # sample, taken on CPU 0.
            ('deferred', 200, 200, 20 * us, 1, 0x200, [c, c + 8, c + 16]),
            ('sample', 200, 200, 21 * us, 0, 0x200),
            # 300: the record sorts after the next entry's first sample.
            ('sample', 300, 300, 30 * us, 0, 0x300),
            ('sample', 300, 300, 31 * us, 1, 0x301),
            ('deferred', 300, 300, 32 * us, 0, 0x300, [d]),
            ('deferred', 300, 300, 33 * us, 1, 0x301, [d + 8]),
            # 400: the record was lost; the next entry's came.
            ('sample', 400, 400, 40 * us, 0, 0x400),
            ('sample', 400, 400, 41 * us, 0, 0x401),
            ('deferred', 400, 400, 42 * us, 0, 0x401, [e]),
            # 500, 150 ms on: by then 400's first sample was given up.
            ('sample', 500, 500, 150000 * us, 1, 0x500),
            ('deferred', 500, 500, 150001 * us, 1, 0x500, [e + 8]),
            # 600: a copy of an old record comes after its entry was given
            # up; it must not cut short the wait of the thread's entry in a
            # long system call, whose record comes 229 ms after its sample.
            ('sample', 600, 600, 200000 * us, 0, 0x600),
            ('deferred', 600, 600, 200001 * us, 0, 0x600, [a + 16]),
            ('sample', 600, 600, 201000 * us, 0, 0x601),
            ('sample', 700, 700, 310000 * us, 1, 0x700),
            ('deferred', 700, 700, 310001 * us, 1, 0x700, [c]),
            ('deferred', 600, 600, 311000 * us, 5, 0x600, [a + 16]),
            ('sample', 700, 700, 420000 * us, 1, 0x701),
            ('deferred', 600, 600, 430000 * us, 0, 0x601, [b + 8]),
            ('deferred', 700, 700, 430001 * us, 1, 0x701, [c + 8]),
        ]
        comms = [('comm', t, t, 1, 0, 'skewed')
                 for t in (178, 200, 300, 400, 500, 600, 700)]
        data = self.path('skewed.data')
        perfdata.write(data, comms + events)
        frames = {(ev[2], ev[5]): [hex(ip) for ip in ev[6]]
                  for ev in events if ev[0] == 'deferred'}
        want = {(ev[2], ev[3] // us): frames.get((ev[2], ev[5]))
                for ev in events if ev[0] == 'sample'}
        items, err = script(data)
        got = {}
        for it in items:
            m = re.match(r'\s*\S+\s+(\d+)\s+(\d+)\.(\d{6}):', it['head'])
            if not m:
                raise Failed('unexpected perf script line: %s' % it['head'])
            key = (int(m.group(1)), int(m.group(2)) * 1000000 + int(m.group(3)))
            got[key] = None if it.get('missing') else \
                [hex(ip) for ip, _ in it['frames'] if ip < KERNEL_MIN]
        if got != want:
            bad = sorted(k for k in set(got) | set(want) if got.get(k, 0) != want.get(k, 0))
            raise Failed('samples (tid, us) %s got %s, want %s; perf said: %s' %
                         (bad, [got.get(k, 'nothing') for k in bad],
                          [want.get(k, 'nothing') for k in bad], err.strip()[-300:]))
        order = [k for k in got]
        if order.index((400, 40)) > order.index((500, 150000)):
            raise Failed('the sample whose record was lost waited to the end: %s' % order)
        m = re.search(r'(\d+) of (\d+) samples got no deferred user callchain', err)
        if not m or m.group(1) != '1':
            raise Failed('perf did not say 1 sample went without: %s' % err.strip()[-300:])
        print('# %d samples, each with its own record; perf said: %s' % (len(got), m.group(0)))

    def test_records_out_of_clock_order_still_merge(self):
        """CPU clocks that disagree: a record timed before some of its own
        samples, or after the thread's next kernel entry, still merges."""
        def chains(samples):
            return sorted((it['head'], tuple(it['frames'])) for it in samples)

        recorded = [it for it in script(self.deferred_file())[0] if 'record' not in it]
        unmerged = {it['head'] for it in recorded if it.get('missing')}
        for how in ('early', 'late'):
            data = self.path('skew-%s.data' % how)
            moved = perfdata.skew_records(self.data, data, how)
            # How many records the workload gets depends on the machine's
            # speed (21 on a cold CI run, where the last has no next entry
            # to move after); ten moved exercise the merging.
            if moved < 10:
                raise Failed('%s: only %d records could be moved' % (how, moved))
            items, err = script(data)
            samples = [it for it in items if 'record' not in it]
            missing = [it for it in samples
                       if it.get('missing') and it['head'] not in unmerged]
            if missing:
                raise Failed('%s by up to a kernel entry: %d of %d samples got no user '
                             'part, e.g. %s; perf said: %s' %
                             (how, len(missing), len(samples), missing[0]['head'].strip(),
                              err.strip()[-300:]))
            if chains(samples) != chains(recorded):
                was = dict(chains(recorded))
                wrong = [(h, f) for h, f in chains(samples) if was.get(h) != f]
                h, f = wrong[0] if wrong else ('', ())
                raise Failed('%s: %d samples, %d as recorded; %d chains differ, e.g. %s:\n'
                             '  now %s\n  was %s' %
                             (how, len(samples), len(recorded), len(wrong), h.strip(),
                              [sym for _, sym in f], [sym for _, sym in was.get(h, ())]))
            print('# %s: %d records moved; %d samples, merged as recorded' %
                  (how, moved, len(samples)))

    def test_perf_data_sizes(self):
        """Not a size assertion: the bytes each mode wrote, for the record."""
        self.deferred_file()
        d, c = os.path.getsize(self.data), os.path.getsize(self.classic)
        sd, sc = stats(self.data).get('SAMPLE', 0), stats(self.classic).get('SAMPLE', 0)
        print('# perf.data: classic %d bytes for %d samples (%.0f B/sample), '
              'deferred %d bytes for %d samples (%.0f B/sample)' %
              (c, sc, c / max(1, sc), d, sd, d / max(1, sd)))
        if not sd or not sc:
            raise Failed('a recording has no samples')


def fallback():
    """On a kernel without deferral: one message, classic callchains."""
    print('1..1')
    name = 'fallback_without_kernel_support_records_classic_chains'
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, 'f.data')
        try:
            # 2000 small reads gave the host only about 10 samples, and
            # on a busy machine none of them in read_block: 20000 reads of
            # 16 KiB give about 70, half of them in the read.
            err = record(data, 'fp,defer', ['cpu-clock', 'task-clock'],
                         ['-d', str(DEPTH), '-n', '20000', '-b', '16384'], extra=())
            attrs = run([PERF, 'evlist', '-v', '-i', data])[0]
            if 'cannot defer user callchains' not in err:
                if 'defer_callchain: 1' in attrs:
                    raise Skipped('this kernel defers user callchains')
                raise Failed('no message about the missing feature: %s' % err.strip())
            if err.count('cannot defer user callchains') != 1:
                raise Failed('the message came %d times' % err.count('cannot defer'))
            if 'defer_' in attrs:
                raise Failed('the file still asks for deferral: %s' % attrs)
            items, _ = script(data)
            chains = [it for it in items if 'read_block' in [s for _, s in it['frames']]]
            if not chains:
                # What there was instead, to tell a starved workload from
                # chains that stop short.
                seen = ['/'.join(sym for _, sym in it['frames'][:8])
                        for it in items[:5]]
                raise Failed('no classic user chain reaches read_block: %d samples; '
                             'the first: %s' % (len(items), seen))
            # --call-graph sframe is refused, with the alternative, and
            # writes nothing
            data = os.path.join(tmp, 's.data')
            p = subprocess.run([PERF, 'record', '-o', data, '--call-graph', 'sframe',
                                '--', WORKLOAD, '-n', '1'], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, errors='replace')
            lines = [l for l in p.stderr.splitlines() if l.strip()]
            if p.returncode == 0 or len(lines) != 1 or NO_SFRAME not in lines[0]:
                raise Failed('--call-graph sframe: exit %d, %s' % (p.returncode, p.stderr))
            if os.path.exists(data):
                raise Failed('the refused --call-graph sframe recording wrote %s' % data)
            print('ok 1 %s' % name)
        except Skipped as e:
            print('ok 1 %s # SKIP %s' % (name, e))
        except (Failed, subprocess.TimeoutExpired) as e:
            print('# %s' % e)
            print('not ok 1 %s' % name)
            return 1
    return 0


def all_tests():
    """Tests with the unwind-table tests of e2e_tables.py mixed in, in the
    order of their files, then of their lines; and the names of the
    latter."""
    # e2e_tables imports this module by name: let it be this one.
    sys.modules.setdefault('perf_e2e', sys.modules[__name__])
    from e2e_tables import TableTests

    class AllTests(Tests, TableTests):
        pass

    def order(n):
        fn = getattr(AllTests, n)
        return (n not in Tests.__dict__, fn.__code__.co_firstlineno)

    names = sorted((n for n in dir(AllTests) if n.startswith('test_')), key=order)
    return AllTests, names, [n for n in names if n not in Tests.__dict__]


def run_tap(cls, names):
    """Runs CLS's test methods NAMES in order, one TAP line each, in a
    fresh folder; returns the exit status (1 if any failed)."""
    with open('/proc/sys/kernel/kptr_restrict', 'w') as f:
        f.write('0\n')
    print('1..%d' % len(names))
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        t = cls(tmp)
        for i, n in enumerate(names, 1):
            failed += tap(i, n[len('test_'):], getattr(t, n))
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ['fallback']:
        return fallback()
    cls, every, tables = all_tests()
    known = [n[len('test_'):] for n in every]
    # -x TEST leaves TEST out (a list may run some tests apart); the
    # groups name the tests of each file, so that two guests can share
    # them.
    args, left_out = sys.argv[1:], []
    if args[:1] == ['--deferred'] and (len(args) == 1 or args[1] == '-x'):
        left_out = [n[len('test_'):] for n in tables]
        args = args[1:]
    elif args == ['--tables']:
        args = [n[len('test_'):] for n in tables]
    while len(args) >= 2 and args[0] == '-x':
        left_out.append(args[1])
        args = args[2:]
    unknown = [a for a in args + left_out if a not in known]
    if unknown or (args and left_out):
        print('usage: perf_e2e.py [fallback | --deferred [-x TEST...] | --tables | TEST... | '
              '-x TEST...]; '
              'unknown: %s; tests: %s' %
              (' '.join(unknown), ' '.join(sorted(known))), file=sys.stderr)
        return 2
    for f in (PERF, WORKLOAD):
        if not os.access(f, os.X_OK):
            print('1..0 # SKIP %s is not built (harness/perf)' % f)
            return 0
    names = [n for n in every if (not args or n[len('test_'):] in args) and
             n[len('test_'):] not in left_out]
    return run_tap(cls, names)


if __name__ == '__main__':
    sys.exit(main())
