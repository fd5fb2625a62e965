#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""User callchains of JIT runtimes: node, java and python under perf, node under
bpftrace (TAP).

    jit_runtimes.py [--perf PERF] [--seconds S] [--freq HZ] [--dwarf]
                    [--require-sframe] [--java-jit] [RUNTIME...]

    RUNTIME         node, java, python, bpftrace (default: all four)
    --perf PERF     the perf to run (default $BUILD/perf/perf, $BUILD being
                    build/ under the repository root unless set)
    --seconds S     how long each workload spins (default 3)
    --freq HZ       sampling frequency, perf -F and bpftrace's profile:hz
                    (default 499)
    --dwarf         also record --call-graph dwarf (figures only, no
                    assertion; off by default: perf script unwinds node's
                    dwarf samples for some 40 s on the host, which is far
                    too long under emulation)
    --require-sframe  a perf record --call-graph sframe that fails is a
                    failure (the guest run passes it); without it, the
                    sframe tests are skipped, as on a kernel without the
                    table walk (the host)
    --java-jit      java with its JIT (C1/C2) instead of -Xint

What it measures. Each runtime runs a small CPU-bound program written to a
temporary folder (under /tmp, which is tmpfs in the guest): a recursive
function 20 deep that spins at the bottom, for S seconds.

    node   node --perf-basic-prof --interpreted-frames-native-stack: V8
           writes /tmp/perf-PID.map, which perf reads by itself; with
           --interpreted-frames-native-stack each interpreted JS function
           gets a frame (and a name, "JS:~down ...") of its own.
    java   javac compiles it to the folder; java -XX:+PreserveFramePointer
           -Xint -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit, which
           writes /tmp/perf-PID.map as the JVM exits. -Xint keeps the frames
           stable: every Java frame is an "Interpreter" frame, and no code
           the map names is freed or recompiled before the map is written
           (with --java-jit, C2 inlines part of the recursion, when it gets
           to it, and code replaced before exit is missing from the map).
    python Debian testing's python3.13 (harness/python-testing unpacks it
           on the host, with its own loader and C library; Debian 12's 3.11
           has no perf trampolines) -X perf: each Python function is
           entered through a trampoline of its own, a copy in anonymous
           memory that /tmp/perf-PID.map names ("py::down:/tmp/.../spin.py").
           The trampolines keep a frame pointer (push %rbp; mov %rsp,%rbp)
           and have no table; the interpreter has tables (.eh_frame) and no
           frame pointers, so by frame pointers a chain goes wrong at the
           interpreter's first frame.

Each is recorded with perf record -e cpu-clock -F HZ --call-graph MODE for
MODE fp, sframe (the kernel's table walk: SFrame, then .eh_frame, then frame
pointers) and, with --dwarf, dwarf; then perf script -F
comm,pid,tid,ip,sym,dso. The samples counted are those of the thread that
runs the program: node's and python's main thread (tid == pid), java's
busiest thread (the launcher runs the JVM's main in a thread of its own).
For each mode: the samples, the share whose user chain reaches the root,
and the JIT frames per sample: user frames whose symbol came from
/tmp/perf-PID.map (its dso), or that carry a JIT name ("JS:",
"LazyCompile:", "Function:", "*", "~", "py::" first).

A user chain reaches the root as tests/bpf/bpf_tools.py defines it (its
reaches_root(), used here): its outermost frame is _start, ld.so's
_dl_start_user, libc's start code (__libc_start_call_main,
__libc_start_main), or a thread's clone, clone3 or start_thread; or the
frame before it is __libc_start_main (it is a stripped program's _start).
The user chain is what comes after the last kernel frame.

    bpftrace  Debian 12's bpftrace 0.17 samples one node process running
              the same program: profile:hz:HZ /pid == PID/ {
              @[comm, ustack(perf, 127)] = count(); }. The process takes a
              new name (its comm, which the map's key holds) for each phase:
              /sys/kernel/unwind_user/bpf_tables at 1 (the BPF stack helpers
              walk by the unwind tables), then at 0 (frame pointers, as
              stock 6.12), S seconds each, with a name of its own between,
              whose samples are not counted. The switch is restored at the
              end. The process runs without address space randomization and
              with BPFTRACE_CACHE_USER_SYMBOLS=1 (see bpf_tools.py), and is
              stopped (SIGSTOP), alive, while bpftrace symbolizes its stacks.
              Stacks are weighted by their counts.

What it asserts (one TAP line each):

    node_fp_resolves_jit_frames, java_..., python_...
              the fp recording has at least 100 samples of the program's
              thread, and at least 10 of them have a frame named from
              /tmp/perf-PID.map (else the comparisons below would compare
              nothing). python's: a skip, not a failure, when fewer do, as
              with Debian's python3.13, whose interpreter keeps no frame
              pointer; then python_sframe_keeps_jit_frames checks the map
    node_sframe_reaches_root_as_often_as_fp, java_..., python_...
              the share of sframe's samples (100 at least) that reach the
              root is at least fp's minus 3 percentage points (TOLERANCE)
    node_sframe_keeps_jit_frames, java_..., python_...
              sframe's JIT frames per sample are at least 90 % of fp's;
              python's: and at least 10 of its samples have one
    bpftrace_node_tables_reach_root_as_often_as_fp
              with bpf_tables at 1 the share of samples (weighted by count,
              50 at least per phase) reaching the root is at least the share
              at 0 minus 3 percentage points

A runtime (node, java and javac, python that harness/python-testing could
not prepare, bpftrace, or the switch) missing from the machine makes its
tests "ok N name # SKIP reason"; so does a perf record --call-graph sframe
that fails, unless --require-sframe. Figures are '#' lines. Each
recording spins S seconds (3) at HZ (499): at the emulator's speed the
whole run takes a few minutes of guest time, most of it the runtimes'
start-up, javac, perf script and bpftrace's own start.

On the host (a kernel without the table walk) the distribution's perf can
check the rest: jit_runtimes.py --perf /usr/bin/perf --dwarf node java python
"""
import collections
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'bpf'))

from perf_e2e import KERNEL_MIN, Failed, Skipped, tap  # noqa: E402
from bpf_tools import (ADDR_NO_RANDOMIZE, SWITCH, bpf_delta, counters,  # noqa: E402
                       frame_name, parse_ustack_map, perf_event_fds,
                       reaches_root, set_switch)

BUILD = os.environ.get('BUILD', os.path.join(ROOT, 'build'))
PERF = os.path.join(BUILD, 'perf', 'perf')
NODE = '/usr/bin/node'
JAVA = '/usr/bin/java'
JAVAC = '/usr/bin/javac'
# Prints the folder of a python3 with -X perf: Debian testing's (Debian 12's
# 3.11 has no perf trampolines), unpacked by the host before the guest runs
PYTHON_TESTING = os.path.join(ROOT, 'harness', 'python-testing')
# harness/guest-tests' factor for slower kernels (make debug: 3)
SCALE = int(os.environ.get('GUEST_TIMEOUT_SCALE', '1'))

DEPTH = 20
TOLERANCE = 3.0         # percentage points of sampling noise
JIT_KEEP = 0.9          # sframe's JIT frames per sample, at least, of fp's
MIN_SAMPLES = 100       # per mode, of the program's thread (perf)
MIN_BPF_SAMPLES = 50    # per switch (bpftrace)
MIN_JIT_SAMPLES = 10    # fp samples with a JIT frame: the map was read
JIT_PREFIXES = ('JS:', 'LazyCompile:', 'Function:', '*', '~', 'py::')
PERF_MAP = re.compile(r'(?:^|/)perf-(\d+)\.map$')

NODE_PROGRAM = r'''
'use strict';
// argv: SECONDS, or PHASE_FILE: then spin until it reads "exit", taking
// the name it reads (the comm of the main thread) each time it changes.
const fs = require('fs');
const DEPTH = %d;

function leaf() {
  let s = 0;
  for (let i = 0; i < 200000; i++) s = (s + i * i) %% 1000003;
  return s;
}

function down(n) {
  return n > 0 ? down(n - 1) + 1 : leaf();
}

let total = 0;
const arg = process.argv[2];
if (/^[0-9.]+$/.test(arg)) {
  const end = Date.now() + Number(arg) * 1000;
  while (Date.now() < end) total += down(DEPTH);
} else {
  let phase = '', next = 0;
  console.log('ready');
  for (;;) {
    total += down(DEPTH);
    if (Date.now() < next) continue;
    next = Date.now() + 20;
    const p = fs.readFileSync(arg, 'utf8').trim();
    if (p === phase) continue;
    if (p === 'exit') break;
    fs.writeFileSync('/proc/self/comm', p);
    phase = p;
  }
}
console.log('done', total);
''' % DEPTH

JAVA_PROGRAM = r'''
public class Spin {
    static long leaf() {
        long s = 0;
        for (int i = 0; i < 200000; i++) s = (s + (long) i * i) %% 1000003;
        return s;
    }

    static long down(int n) {
        return n > 0 ? down(n - 1) + 1 : leaf();
    }

    public static void main(String[] args) {
        long end = System.currentTimeMillis() + (long) (Double.parseDouble(args[0]) * 1000);
        long total = 0;
        while (System.currentTimeMillis() < end)
            total += down(%d);
        System.out.println("done " + total);
    }
}
''' % DEPTH

PYTHON_PROGRAM = r'''
import sys
import time

DEPTH = %d


def leaf():
    s = 0
    for i in range(200000):
        s = (s + i * i) %% 1000003
    return s


def down(n):
    return down(n - 1) + 1 if n > 0 else leaf()


end = time.monotonic() + float(sys.argv[1])
total = 0
while time.monotonic() < end:
    total += down(DEPTH)
print('done', total)
''' % DEPTH


def run(cmd, timeout, cwd=None, env=None, check=True):
    """Run @cmd (a list); return (returncode, stdout, stderr)."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors='replace', timeout=timeout, cwd=cwd, env=env,
                       stdin=subprocess.DEVNULL)
    if check and p.returncode:
        raise Failed('%s exited %d: %s' % (' '.join(cmd[:6]), p.returncode,
                                           p.stderr.strip()[-600:]))
    return p.returncode, p.stdout, p.stderr


def is_jit(sym, dso):
    """A frame named from /tmp/perf-PID.map, or by a JIT's naming."""
    return bool(PERF_MAP.search(dso)) or (sym or '').startswith(JIT_PREFIXES)


def parse_script(text):
    """Samples of 'perf script -F comm,pid,tid,ip,sym,dso': dicts of comm,
    pid, tid and frames [(addr, sym, dso)], innermost first. Other indented
    lines (a deferred chain that did not come, say) are left out."""
    samples, cur = [], None
    for line in text.splitlines():
        if not line.strip():
            cur = None
            continue
        if not line[0].isspace():
            m = re.match(r'^(.*?)\s+(\d+)/(\d+)\s*$', line)
            cur = None
            if m:
                cur = {'comm': m.group(1).strip(), 'pid': int(m.group(2)),
                       'tid': int(m.group(3)), 'frames': []}
                samples.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r'^\s+([0-9a-f]+) (.*) \((.*)\)$', line)
        if m:
            cur['frames'].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return samples


def user_frames(frames):
    """The frames after the last kernel frame."""
    last = max((i for i, f in enumerate(frames) if f[0] >= KERNEL_MIN), default=-1)
    return frames[last + 1:]


class Tally:
    """Samples of one runtime and mode: how many, how many reach the root,
    their JIT frames; and where those that stop short end."""

    def __init__(self):
        self.samples = self.rooted = self.jit = self.with_jit = self.empty = 0
        self.ends = collections.Counter()

    def add(self, frames, count=1):
        """@frames: the user chain as [(sym, dso)], innermost first."""
        self.samples += count
        names = [frame_name(s) for s, _ in frames]
        n = sum(1 for s, d in frames if is_jit(s, d))
        self.jit += n * count
        if n:
            self.with_jit += count
        if not frames:
            self.empty += count
        if reaches_root(names):
            self.rooted += count
        else:
            end = '(no user frame)'
            if frames:
                s, d = frames[-1]
                end = '%s (%s)' % (names[-1] or '[unknown]', os.path.basename(d) or '?')
            self.ends[end] += count

    def pct(self):
        return 100.0 * self.rooted / self.samples if self.samples else 0.0

    def jit_per_sample(self):
        return self.jit / self.samples if self.samples else 0.0

    def describe(self):
        return ('%d samples, %.1f %% reach the root, %.2f JIT frames per sample '
                '(%d samples with one), %d without a user frame' %
                (self.samples, self.pct(), self.jit_per_sample(), self.with_jit,
                 self.empty))

    def short_ends(self):
        return ', '.join('%s %d' % e for e in self.ends.most_common(4))


def new_perf_maps(before):
    """/tmp/perf-PID.map files not in @before."""
    try:
        now = {f for f in os.listdir('/tmp') if PERF_MAP.search(f)}
    except OSError:
        return set()
    return now - before


def perf_maps():
    return new_perf_maps(set())


def remove_perf_maps(names):
    """Remove those of the /tmp/perf-PID.map @names whose process is gone
    (the runtimes run here have exited, or been killed, by then)."""
    for f in names:
        if not os.path.exists('/proc/%s' % PERF_MAP.search(f).group(1)):
            try:
                os.unlink(os.path.join('/tmp', f))
            except OSError:
                pass


class Runtime:
    """A runtime's recordings, once per mode; its figures are printed by
    the first test that needs them."""
    name = None
    comm = None

    def __init__(self, opts, tmp):
        self.opts, self.tmp = opts, tmp
        self.results = None     # mode -> Tally, or the exception it met
        self.skip = None

    def available(self):
        """Raise Skipped when the runtime is not here."""

    def prepare(self):
        """Write (and build) the program."""

    def argv(self):
        raise NotImplementedError

    def pick(self, samples):
        """The samples of the thread that runs the program."""
        raise NotImplementedError

    def modes(self):
        return ('fp', 'sframe') + (('dwarf',) if self.opts.dwarf else ())

    def record(self, mode):
        data = os.path.join(self.tmp, '%s-%s.data' % (self.name, mode))
        before = perf_maps()
        t0 = time.monotonic()
        try:
            rc, _, err = run([self.opts.perf, 'record', '-q', '-e', 'cpu-clock', '-F',
                              str(self.opts.freq), '--call-graph', mode, '-o', data, '--']
                             + self.argv(), timeout=(180 + self.opts.seconds) * SCALE,
                             cwd=self.tmp, check=False)
            if rc:
                said = [l for l in err.strip().splitlines() if l.strip()]
                if mode == 'sframe' and not os.path.exists(data):
                    why = 'perf record --call-graph sframe failed (exit %d): %s' % (
                        rc, said[0] if said else 'no message')
                    if self.opts.require_sframe:
                        raise Failed(why)
                    raise Skipped(why + '; --require-sframe makes this a failure')
                raise Failed('perf record --call-graph %s exited %d: %s' %
                             (mode, rc, '\n'.join(said[-6:])))
            t1 = time.monotonic()
            _, out, err = run([self.opts.perf, 'script', '-i', data, '-F',
                               'comm,pid,tid,ip,sym,dso'], timeout=600 * SCALE, cwd=self.tmp)
            samples = parse_script(out)
            t2 = time.monotonic()
        finally:
            maps = new_perf_maps(before)
            remove_perf_maps(maps)
        mine = self.pick(samples)
        tally = Tally()
        for s in mine:
            tally.add([(sym, dso) for _, sym, dso in user_frames(s['frames'])])
        print('# %s %s: %s; %d samples in all (record %.1f s, script %.1f s, %d kB)' %
              (self.name, mode, tally.describe(), len(samples), t1 - t0, t2 - t1,
               os.path.getsize(data) // 1024))
        if tally.ends:
            print('# %s %s: chains that stop short end in %s' %
                  (self.name, mode, tally.short_ends()))
        if not maps:
            print('# %s %s: the runtime wrote no /tmp/perf-PID.map' % (self.name, mode))
        os.unlink(data)
        return tally

    def measure(self):
        if self.results is not None:
            return self.results
        self.results = {}
        try:
            self.available()
            self.prepare()
        except (Skipped, Failed, subprocess.TimeoutExpired) as e:
            self.skip = e
            return self.results
        for mode in self.modes():
            try:
                self.results[mode] = self.record(mode)
            except (Skipped, Failed, subprocess.TimeoutExpired) as e:
                self.results[mode] = e
        ok = [m for m in self.modes() if isinstance(self.results[m], Tally)]
        if ok:
            print('# %-6s %-7s %8s %8s %10s' % ('', 'mode', 'samples', 'root %', 'JIT/sample'))
            for m in ok:
                t = self.results[m]
                print('# %-6s %-7s %8d %8.1f %10.2f' %
                      (self.name, m, t.samples, t.pct(), t.jit_per_sample()))
        return self.results

    def tally(self, mode):
        """The mode's Tally; raises what its recording met."""
        res = self.measure()
        if self.skip is not None:
            raise self.skip
        got = res[mode]
        if isinstance(got, Exception):
            if isinstance(got, Skipped) or mode != 'fp':
                raise got
            raise Failed('fp: %s' % got)
        return got

    # the tests

    # Why fp may name no JIT frame in this runtime (a skip, not a failure):
    # None where the runtime keeps frame pointers and fp must name them.
    FP_WITHOUT_JIT = None

    def fp_resolves_jit_frames(self):
        fp = self.tally('fp')
        if fp.samples < MIN_SAMPLES:
            raise Failed('fp: only %d samples of the program\'s thread; expected %d' %
                         (fp.samples, MIN_SAMPLES))
        if fp.with_jit < MIN_JIT_SAMPLES:
            what = 'fp: only %d of %d samples have a frame named from /tmp/perf-PID.map' % (
                fp.with_jit, fp.samples)
            if self.FP_WITHOUT_JIT:
                raise Skipped('%s: %s' % (what, self.FP_WITHOUT_JIT))
            raise Failed(what)

    def sframe_reaches_root_as_often_as_fp(self):
        fp = self.tally('fp')
        sf = self.tally('sframe')
        print('# reach the root: sframe %.1f %% of %d, fp %.1f %% of %d' %
              (sf.pct(), sf.samples, fp.pct(), fp.samples))
        if sf.samples < MIN_SAMPLES:
            raise Failed('sframe: only %d samples of the program\'s thread' % sf.samples)
        if sf.pct() < fp.pct() - TOLERANCE:
            raise Failed('sframe: %.1f %% reach the root, fp %.1f %% (tolerance %g points); '
                         'sframe\'s stop short in %s' %
                         (sf.pct(), fp.pct(), TOLERANCE, sf.short_ends()))

    def sframe_keeps_jit_frames(self):
        fp = self.tally('fp')
        sf = self.tally('sframe')
        print('# JIT frames per sample: sframe %.2f, fp %.2f' %
              (sf.jit_per_sample(), fp.jit_per_sample()))
        if sf.samples < MIN_SAMPLES:
            raise Failed('sframe: only %d samples of the program\'s thread' % sf.samples)
        if sf.jit_per_sample() < JIT_KEEP * fp.jit_per_sample():
            raise Failed('sframe: %.2f JIT frames per sample, fp %.2f: fewer than %d %%' %
                         (sf.jit_per_sample(), fp.jit_per_sample(), JIT_KEEP * 100))


class Node(Runtime):
    name = 'node'
    comm = 'node'

    def available(self):
        if not os.access(NODE, os.X_OK):
            raise Skipped('%s is not installed' % NODE)

    def prepare(self):
        self.js = os.path.join(self.tmp, 'spin.js')
        with open(self.js, 'w') as f:
            f.write(NODE_PROGRAM)

    def argv(self, arg=None):
        return [NODE, '--perf-basic-prof', '--interpreted-frames-native-stack', self.js,
                arg or '%g' % self.opts.seconds]

    def pick(self, samples):
        return [s for s in samples if s['comm'] == self.comm and s['tid'] == s['pid']]


class Java(Runtime):
    name = 'java'
    comm = 'java'

    def available(self):
        for p in (JAVA, JAVAC):
            if not os.access(p, os.X_OK):
                raise Skipped('%s is not installed' % p)

    def prepare(self):
        src = os.path.join(self.tmp, 'Spin.java')
        with open(src, 'w') as f:
            f.write(JAVA_PROGRAM)
        t0 = time.monotonic()
        # the compiler's start-up is most of its work: C1 only is quicker
        run([JAVAC, '-J-XX:TieredStopAtLevel=1', '-J-XX:-UsePerfData', '-g:none',
             '-d', self.tmp, src], timeout=300 * SCALE, cwd=self.tmp)
        print('# javac: %.1f s' % (time.monotonic() - t0))

    def argv(self):
        return ([JAVA, '-XX:+PreserveFramePointer'] + ([] if self.opts.java_jit else ['-Xint'])
                + ['-XX:+UnlockDiagnosticVMOptions', '-XX:+DumpPerfMapAtExit',
                   '-XX:-UsePerfData', '-XX:+UseSerialGC', '-Xmx64m', '-cp', self.tmp,
                   'Spin', '%g' % self.opts.seconds])

    def pick(self, samples):
        threads = collections.Counter((s['pid'], s['tid']) for s in samples
                                      if s['comm'] == self.comm)
        if not threads:
            return []
        busiest = threads.most_common(1)[0][0]
        return [s for s in samples if (s['pid'], s['tid']) == busiest]


class Python(Runtime):
    name = 'python'
    comm = 'python'     # a prefix: python3.13, the wrapper's python3 before

    def __init__(self, opts, tmp):
        super().__init__(opts, tmp)
        self.python = None

    def available(self):
        """harness/python-testing's python3: unpacked (on the host, which
        can download; in the guest, which cannot, it only finds it there)."""
        try:
            p = subprocess.run([PYTHON_TESTING], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, errors='replace',
                               timeout=300 * SCALE, stdin=subprocess.DEVNULL,
                               env=dict(os.environ, BUILD=BUILD))
        except (OSError, subprocess.TimeoutExpired) as e:
            raise Skipped('harness/python-testing: %s' % e)
        said = [l for l in p.stderr.strip().splitlines() if l.strip()]
        if p.returncode or not p.stdout.strip():
            why = [l for l in said if 'error:' in l] or said[-1:] or ['no message']
            raise Skipped('Debian testing\'s python is not prepared (harness/python-testing, '
                          'exit %d): %s' % (p.returncode, why[-1].strip()))
        python = os.path.join(p.stdout.strip().splitlines()[-1], 'python3')
        if not os.access(python, os.X_OK):
            raise Skipped('harness/python-testing made no %s' % python)
        _, out, _ = run([python, '-c', 'import sys; print(sys.version.split()[0])'],
                        timeout=60 * SCALE)
        print('# python: %s %s -X perf' % (python, out.strip()))
        self.python = python

    def prepare(self):
        self.py = os.path.join(self.tmp, 'spin.py')
        with open(self.py, 'w') as f:
            f.write(PYTHON_PROGRAM)

    def argv(self):
        return [self.python, '-X', 'perf', self.py, '%g' % self.opts.seconds]

    def pick(self, samples):
        return [s for s in samples if s['comm'].startswith(self.comm) and
                s['tid'] == s['pid']]

    # The interpreter keeps no frame pointer of its own (Debian's
    # python3.13), so its first frame's caller is garbage by fp (node's and
    # java's runtimes keep them); sframe_keeps_jit_frames then checks that
    # perf read the map.
    FP_WITHOUT_JIT = ('the interpreter keeps no frame pointer, only its trampolines do '
                      '(python_sframe_keeps_jit_frames asks %d of sframe\'s)' % MIN_JIT_SAMPLES)

    def sframe_keeps_jit_frames(self):
        """And, fp's being none perhaps, at least MIN_JIT_SAMPLES of
        sframe's samples have a frame named from /tmp/perf-PID.map."""
        super().sframe_keeps_jit_frames()
        sf = self.tally('sframe')
        if sf.with_jit < MIN_JIT_SAMPLES:
            raise Failed('sframe: only %d of %d samples have a frame named from '
                         '/tmp/perf-PID.map' % (sf.with_jit, sf.samples))


def no_aslr():
    ctypes.CDLL(None).personality(ADDR_NO_RANDOMIZE)


def parse_bpftrace(text):
    """Entries '@[COMM, ' then a line per frame 'ADDR SYM+OFF (FILE)', then
    ']: COUNT' (or '@[COMM, ]: COUNT' without a frame): [(comm, [(sym,
    file)], count)]."""
    return [(key[0], frames, n) for key, frames, n in
            parse_ustack_map(text, r'^@\[(.*?), (.*)$')]


class Bpftrace:
    """One node process, sampled by one bpftrace, in a phase per switch."""
    name = 'bpftrace'
    PHASES = {1: 'jit-tables1', 0: 'jit-tables0'}

    def __init__(self, opts, tmp, node):
        self.opts, self.tmp, self.node = opts, tmp, node
        self.results = None
        self.skip = None

    def available(self):
        if not shutil.which('bpftrace'):
            raise Skipped('bpftrace is not installed (harness/deps)')
        if not os.path.exists(SWITCH):
            raise Skipped('this kernel has no %s: its BPF helpers walk by frame '
                          'pointers only' % SWITCH)
        self.node.available()

    def phase(self, proc, phasefile, name, deadline):
        """Tell the program to take @name; wait till it has."""
        with open(phasefile + '.new', 'w') as f:
            f.write(name + '\n')
        os.rename(phasefile + '.new', phasefile)
        while True:
            try:
                with open('/proc/%d/comm' % proc.pid) as f:
                    if f.read().strip() == name:
                        return
            except OSError:
                pass
            if proc.poll() is not None:
                raise Failed('node exited (%d) before it took the name %s' %
                             (proc.returncode, name))
            if time.monotonic() > deadline:
                raise Failed('node did not take the name %s in time' % name)
            time.sleep(0.02)

    def measure(self):
        if self.results is not None or self.skip is not None:
            return
        try:
            self.available()
        except Skipped as e:
            self.skip = e
            return
        self.node.prepare()
        phasefile = os.path.join(self.tmp, 'phase')
        log = os.path.join(self.tmp, 'node-bpftrace.log')
        out = os.path.join(self.tmp, 'bpftrace.out')
        err = os.path.join(self.tmp, 'bpftrace.err')
        with open(phasefile, 'w') as f:
            f.write('jit-start\n')
        with open(SWITCH) as f:
            saved = f.read().strip()
        before = perf_maps()
        node = tool = None
        c = {}
        try:
            t0 = time.monotonic()
            node = subprocess.Popen(self.node.argv(phasefile), stdout=open(log, 'w'),
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=self.tmp, preexec_fn=no_aslr)
            self.phase(node, phasefile, 'jit-start', t0 + 120 * SCALE)
            print('# node started in %.1f s' % (time.monotonic() - t0))
            env = dict(os.environ, BPFTRACE_CACHE_USER_SYMBOLS='1',
                       BPFTRACE_MAP_KEYS_MAX='65536')
            prog = ('profile:hz:%d /pid == %d/ { @[comm, ustack(perf, 127)] = count(); }' %
                    (self.opts.freq, node.pid))
            t0 = time.monotonic()
            tool = subprocess.Popen(['bpftrace', '-e', prog], stdout=open(out, 'w'),
                                    stderr=open(err, 'w'), stdin=subprocess.DEVNULL,
                                    cwd=self.tmp, env=env)
            while perf_event_fds(tool.pid) < os.cpu_count():
                if tool.poll() is not None:
                    raise Failed('bpftrace exited %d before it attached: %s' %
                                 (tool.returncode, open(err).read().strip()[-400:]))
                if time.monotonic() > t0 + 240 * SCALE:
                    raise Failed('bpftrace did not attach in %d s' % (240 * SCALE))
                time.sleep(0.05)
            print('# bpftrace attached in %.1f s' % (time.monotonic() - t0))
            for n, sw in enumerate((1, 0)):
                self.phase(node, phasefile, 'jit-gap%d' % n, time.monotonic() + 30 * SCALE)
                set_switch(sw)
                self.phase(node, phasefile, self.PHASES[sw], time.monotonic() + 30 * SCALE)
                c0 = counters()
                time.sleep(self.opts.seconds)
                c[sw] = bpf_delta(c0, counters())
            self.phase(node, phasefile, 'jit-end', time.monotonic() + 30 * SCALE)
            node.send_signal(signal.SIGSTOP)
            t0 = time.monotonic()
            tool.send_signal(signal.SIGINT)
            try:
                tool.wait(300 * SCALE)
            except subprocess.TimeoutExpired:
                raise Failed('bpftrace did not print and exit within %d s of SIGINT' %
                             (300 * SCALE))
            if tool.returncode:
                raise Failed('bpftrace exited %d: %s' %
                             (tool.returncode, open(err).read().strip()[-400:]))
            print('# bpftrace printed its map %.1f s after SIGINT' % (time.monotonic() - t0))
            with open(out, errors='replace') as f:
                stacks = parse_bpftrace(f.read())
        except (Failed, subprocess.TimeoutExpired) as e:
            self.skip = e if isinstance(e, Failed) else Failed(str(e))
            return
        finally:
            with open(SWITCH, 'w') as f:
                f.write(saved + '\n')
            for p in (tool, node):
                if p and p.poll() is None:
                    p.kill()
                    p.wait()
            remove_perf_maps(new_perf_maps(before))
        self.results = {sw: Tally() for sw in self.PHASES}
        names = {v: k for k, v in self.PHASES.items()}
        for comm, frames, count in stacks:
            if comm in names:
                self.results[names[comm]].add(frames, count)
        for sw in (1, 0):
            t = self.results[sw]
            print('# bpftrace node bpf_tables=%d: %s' % (sw, t.describe()))
            if t.ends:
                print('# bpftrace node bpf_tables=%d: stacks that stop short end in %s' %
                      (sw, t.short_ends()))
            if c.get(sw):
                print('# bpftrace node bpf_tables=%d: counters %s' % (sw, c[sw]))

    def tables_reach_root_as_often_as_fp(self):
        self.measure()
        if self.skip is not None:
            raise self.skip
        on, off = self.results[1], self.results[0]
        for sw, t in ((1, on), (0, off)):
            if t.samples < MIN_BPF_SAMPLES:
                raise Failed('bpf_tables=%d: only %d samples; expected %d' %
                             (sw, t.samples, MIN_BPF_SAMPLES))
        if on.pct() < off.pct() - TOLERANCE:
            raise Failed('bpf_tables=1: %.1f %% reach the root, bpf_tables=0 %.1f %% '
                         '(tolerance %g points); stacks stop short in %s' %
                         (on.pct(), off.pct(), TOLERANCE, on.short_ends()))


class Options:
    perf = PERF
    seconds = 3.0
    freq = 499
    dwarf = False
    require_sframe = False
    java_jit = False


USAGE = ('usage: jit_runtimes.py [--perf PERF] [--seconds S] [--freq HZ] [--dwarf] '
         '[--require-sframe] [--java-jit] [node|java|python|bpftrace...]')


def parse_args(args):
    opts, which = Options(), []
    while args:
        a = args.pop(0)
        if a in ('--perf', '--seconds', '--freq') and args:
            v = args.pop(0)
            try:
                if a == '--perf':
                    opts.perf = v
                elif a == '--seconds':
                    opts.seconds = float(v)
                else:
                    opts.freq = int(v)
            except ValueError:
                return None, None
        elif a in ('--dwarf', '--require-sframe', '--java-jit'):
            setattr(opts, a[2:].replace('-', '_'), True)
        elif a in ('node', 'java', 'python', 'bpftrace'):
            which.append(a)
        else:
            return None, None
    return opts, which or ['node', 'java', 'python', 'bpftrace']


def guarded(fn):
    """@fn, with what went wrong outside its checks (an OSError, say) made a
    failure of its test, not the end of the run."""
    def call():
        try:
            fn()
        except (Failed, Skipped, subprocess.TimeoutExpired):
            raise
        except Exception as e:  # noqa: BLE001
            raise Failed('%s: %s' % (type(e).__name__, e))
    return call


def main():
    opts, which = parse_args(sys.argv[1:])
    if opts is None:
        print(USAGE, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix='jit-runtimes-') as tmp:
        node, java, python = Node(opts, tmp), Java(opts, tmp), Python(opts, tmp)
        bpf = Bpftrace(opts, tmp, Node(opts, tmp))
        tests = []
        for rt in (node, java, python):
            if rt.name in which:
                tests += [('%s_fp_resolves_jit_frames' % rt.name, rt.fp_resolves_jit_frames),
                          ('%s_sframe_reaches_root_as_often_as_fp' % rt.name,
                           rt.sframe_reaches_root_as_often_as_fp),
                          ('%s_sframe_keeps_jit_frames' % rt.name, rt.sframe_keeps_jit_frames)]
        if 'bpftrace' in which:
            tests.append(('bpftrace_node_tables_reach_root_as_often_as_fp',
                          bpf.tables_reach_root_as_often_as_fp))
        perf_ok = os.access(opts.perf, os.X_OK)
        print('1..%d' % len(tests))
        print('# perf: %s; %g s per recording at %d Hz, cpu-clock' %
              (opts.perf if perf_ok else '%s (missing)' % opts.perf, opts.seconds, opts.freq))
        t0 = time.monotonic()
        failed = 0
        for i, (name, fn) in enumerate(tests, 1):
            if not perf_ok and not name.startswith('bpftrace'):
                print('ok %d %s # SKIP %s is not built (harness/perf)' % (i, name, opts.perf))
                continue
            failed += tap(i, name, guarded(fn))
        print('# %.1f s in all' % (time.monotonic() - t0))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
