#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Debian's own BPF tools get whole user stacks of Debian's own programs (TAP).

    bpf_tools.py [--first S] [--warm S] [TOOL...]   TOOL: bpftrace bcc libbpf

BPF's stack helpers (bpf_get_stackid() and bpf_get_stack() with
BPF_F_USER_STACK) walk the current task's user stack by its unwind tables
while /sys/kernel/unwind_user/bpf_tables reads 1, and by frame pointers, as
stock 6.12 does, while it reads 0. Here the real tools, unmodified, sample
Debian's own python3, perl and bash (built without frame pointers: they
have .eh_frame only) by cpu-clock at 49 Hz, each program running a small
CPU-bound script with some recursion, and a program of ours with frame
pointers whose main thread spins 30 calls deep while a second thread maps
and unmaps memory in a loop (tests/bpf/churn_spin.c, harness/perf builds
it; "churn"):

    bpftrace  Debian 12's bpftrace 0.17: @s[pid, comm, ustack(perf)] = count()
    bcc       Debian 12's BCC: profile-bpfcc -U, which compiles its program
              with libbcc and clang when it starts, against the kernel's
              own headers (CONFIG_IKHEADERS, /sys/kernel/kheaders.tar.xz)
    libbpf    libbpf-tools' profile -U (CO-RE, the kernel's BTF): Debian 12's
              libbpf-tools 0.26 has no profile, so Debian trixie's 0.31, run
              through its own loader and C library (harness/libbpf-tools)

The tools run at the same time, as several profilers would, each against
the same two waves of Debian's three programs: the first wave with the
switch on, the second with it off; then two waves of the churn program
alone (WAVES), whose two threads would take CPU from the others. A program
is forked before the tools start and execs only once every tool is
attached, so that each sees it from its first instruction. A program's
start-up (ld.so, the interpreter's own start) and its first second of work
(--first, 1 s) give its "first samples": there a walk may need a mapping
or rule the process has not met yet; it ends at that frame and queues a
warm-up walk for the task's return to user space, so that the samples
after it are whole; and start-up code runs once. Then the program renames
itself (/proc/self/comm, on SIGUSR1) and the next seconds (--warm, 6 s)
give the figure. Then it is stopped (SIGSTOP), alive, for the tools to
symbolize its stacks when they print them at their end. The programs run
without address space randomization (personality ADDR_NO_RANDOMIZE):
bpftrace 0.17 keeps user symbols per executable only then
(BPFTRACE_CACHE_USER_SYMBOLS=1); otherwise it reads python3's and libc's
symbol tables anew for every frame it prints, which did not end within 300
s in the emulated guest.

A stack reaches the process's root when its outermost frame is _start,
ld.so's _dl_start_user, libc's start code (__libc_start_call_main,
__libc_start_main), or a thread's clone, clone3 or start_thread; a
stripped program's _start has no name, so a frame just past
__libc_start_main is its _start. Each tool, program and switch is a test
case: with the switch on, at least TARGET of the samples after the first
seconds (weighted by count) must reach the root and the helpers must have
walked by the tables (bpf_walks); with it off the share is the baseline
(Debian builds without frame pointers), must stay under 50 %, and no table
walk may be counted. The churn program keeps frame pointers, so that off
is 6.12's walk, which gets its stacks to main (and no further: libc's
start code keeps no frame pointer), and a stack counts when it holds its
thread's outermost function of the program (holds_thread_entry()): there
the share must be at least FP_BASELINE % off, and on at least what it is
off, less FP_NOISE points (never worse than 6.12, while the mmap lock's
sequence moves all the time). Its mapping thread (named churn-mapper)
counts in the first samples only. Stacks a tool could not keep are counted
apart, and may be 10 % at most: BCC and libbpf-tools print "[Missed User
Stack]" for a stack id error other than EFAULT, which a walk cannot cause
(an empty walk is EFAULT); here it is a hash collision in the stack map, a
few in the thousand different stacks of a run in a map of 2^18 buckets,
and one collision of a program's hottest stack costs it up to 3 % of its
samples. A lost stack is not known to reach the root, so the share that
must reach it, TARGET, counts lost stacks as short ones; bpftrace prints
such a stack without a frame and says "failed to look up stack id -17"
(EEXIST), so with the switch on an empty stack counts as lost where it
said so and the kernel counted no walk without a user frame in that phase
(bpf_no_user); elsewhere it counts as a stack short of the root.
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

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
# harness/install-test puts it elsewhere on the installed system.
LIBBPF_PROFILE = os.environ.get('LIBBPF_PROFILE',
                                os.path.join(ROOT, 'build', 'libbpf-tools', 'bin', 'profile'))
SWITCH = '/sys/kernel/unwind_user/bpf_tables'
COUNTERS = '/sys/kernel/debug/unwind_deferred/counters'
BTF = '/sys/kernel/btf/vmlinux'
KHEADERS = '/sys/kernel/kheaders.tar.xz'

FREQ = 49                # Hz: BCC's and libbpf-tools' profile's default
# % of the samples after the first seconds that reach the root, switch on.
# A walk in an interrupt looks rules up for at most interrupt_budget's work
# (96 units, about two lookups) and a BPF walk cannot defer: a stack whose
# rules the process does not remember yet stops short, and a warm-up walk
# at its return to user space remembers them for the next samples. bash's
# loop runs through more code than the rule cache holds (86 to 98 % reach
# the root on the emulator; 99 % with interrupt_budget 4096).
TARGET = {'python3': 97.0, 'perl': 97.0, 'bash': 90.0, 'churn': 90.0}
# Programs with frame pointers: the switch off walks them as 6.12 does.
FP_PROGRAMS = {'churn'}
FP_BASELINE = 90.0      # % whole by 6.12's walk (switch off): holds_thread_entry()
FP_NOISE = 2.0          # points the switch on may lose to sampling alone
OFF_LIMIT = 50.0        # % reaching the root by frame pointers: the switch works
MIN_SAMPLES = 50        # per program and switch, after the first seconds
MAX_LOST = 10.0         # % of the samples a tool may lose to its stack map
# Stack map entries of each tool: the kernel rounds the buckets up to the
# next power of two (262144), which keeps hash collisions between the few
# thousand different stacks of a run rare; each map takes some 135 MB.
STACK_STORAGE = 131073
ADDR_NO_RANDOMIZE = 0x0040000
# harness/guest-tests' factor for slower kernels (make debug: 3): every
# deadline below is multiplied by it. Attaching (240 s) and printing after
# SIGINT (300 s) end well inside tests/guest.list's limit (600 s, also
# multiplied), so that a tool that hangs is shown (Tool.stuck), not killed.
SCALE = int(os.environ.get('GUEST_TIMEOUT_SCALE', '1'))

# The process's first frames, as the tools name them.
ROOTS = {'_start', '_dl_start_user', '__libc_start_call_main', '__libc_start_main',
         '__libc_start_main_impl', 'clone', '__clone', 'clone3', '__clone3',
         'start_thread'}
LIBC_START = {'__libc_start_main', '__libc_start_main_impl'}
LOST = '[Missed User Stack]'

PYTHON = r'''
import signal
import sys


def warm(*_):
    with open('/proc/self/comm', 'w') as f:
        f.write(sys.argv[1])


def leaf():
    s = 0
    for i in range(300):
        s += i * i
    return s


def down(n):
    # through a builtin: every level adds C frames (python 3.11 runs a
    # Python-to-Python call in the same C frame)
    return sum(map(down, (n - 1,))) if n else leaf()


signal.signal(signal.SIGUSR1, warm)
print('ready', flush=True)
while True:
    down(8)
'''

PERL = r'''
$SIG{USR1} = sub { open(my $f, '>', '/proc/self/comm') or die; print $f $ARGV[0]; close $f };
sub leaf { my $s = 0; $s += $_ * $_ for 1 .. 300; return $s }
sub down { my $n = shift; return $n ? down($n - 1) : leaf() }
$| = 1;
print "ready\n";
down(8) while 1;
'''

BASH = r'''
warm=$1
trap 'printf %s "$warm" >/proc/$$/comm' USR1
leaf() { local i=0 s=0; while [ $i -lt 40 ]; do s=$((s + i * i)); i=$((i + 1)); done; }
down() { if [ "$1" -gt 0 ]; then down $(($1 - 1)); else leaf; fi; }
echo ready
while :; do down 6; done
'''


def churn_spin_path():
    """tests/bpf/churn_spin.c's program: $CHURN_SPIN, else beside this file
    (harness/install-test puts it there), else harness/perf's build."""
    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'churn_spin')
    if os.environ.get('CHURN_SPIN'):
        return os.environ['CHURN_SPIN']
    if os.access(beside, os.X_OK):
        return beside
    return os.path.join(ROOT, 'build', 'perf-tests', 'churn_spin')


CHURN_SPIN = churn_spin_path()

# name, argv, the name it takes after its first seconds
PROGRAMS = (
    ('python3', ['/usr/bin/python3', '-c', PYTHON, 'python3-warm'], 'python3-warm'),
    ('perl', ['/usr/bin/perl', '-e', PERL, 'perl-warm'], 'perl-warm'),
    ('bash', ['/bin/bash', '-c', BASH, 'bash', 'bash-warm'], 'bash-warm'),
    ('churn', [CHURN_SPIN, 'churn-warm'], 'churn-warm'),
)
SWITCHES = (1, 0)
# The programs that run together, a wave for each switch: Debian's three,
# then the churn program, whose two threads would take their CPU.
WAVES = (('python3', 'perl', 'bash'), ('churn',))


class Failed(Exception):
    """A check failed; the message says what was wrong."""


class Skipped(Exception):
    """The tool cannot run here; the message says why."""


def counters():
    """The unwinder's debugfs counters, name -> value; {} without them."""
    try:
        with open(COUNTERS) as f:
            return {p[0]: int(p[1]) for p in (l.split() for l in f)
                    if len(p) >= 2 and p[1].lstrip('-').isdigit()}
    except OSError:
        return {}


def bpf_delta(before, after):
    return ' '.join('%s +%d' % (k, after[k] - before.get(k, 0))
                    for k in sorted(after) if k.startswith('bpf_'))


def set_switch(value):
    with open(SWITCH, 'w') as f:
        f.write('%d\n' % value)
    with open(SWITCH) as f:
        got = f.read().strip()
    if got != str(value):
        raise Failed('%s reads %s after writing %d' % (SWITCH, got, value))


class Held:
    """A child that execs @argv, without address space randomization, once
    released, so that the tools watch the program from its first
    instruction."""

    def __init__(self, argv, log):
        r, w = os.pipe()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(w)
                fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                os.dup2(os.open('/dev/null', os.O_RDONLY), 0)
                signal.signal(signal.SIGPIPE, signal.SIG_DFL)
                ctypes.CDLL(None).personality(ADDR_NO_RANDOMIZE)
                if os.read(r, 1) == b'x':
                    os.execv(argv[0], argv)
            finally:
                os._exit(127)
        os.close(r)
        self.pid, self.w, self.log, self.alive = pid, w, log, True

    def release(self):
        os.write(self.w, b'x')
        os.close(self.w)
        self.w = None

    def ready(self):
        """The program has set up its SIGUSR1 handler: it said so."""
        return os.path.getsize(self.log) > 0

    def comm(self):
        try:
            with open('/proc/%d/comm' % self.pid) as f:
                return f.read().strip()
        except OSError:
            return None

    def signal(self, sig):
        os.kill(self.pid, sig)

    def check_running(self, what):
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid:
            self.alive = False
            with open(self.log, errors='replace') as f:
                out = f.read().strip()[-400:]
            raise Failed('%s exited during its run (wait status %#x): %s' % (what, status, out))

    def kill(self):
        if self.w is not None:
            os.close(self.w)
            self.w = None
        if self.alive:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.alive = False


def perf_event_fds(pid):
    n = 0
    try:
        fds = os.listdir('/proc/%d/fd' % pid)
    except OSError:
        return 0
    for fd in fds:
        try:
            if os.readlink('/proc/%d/fd/%s' % (pid, fd)) == 'anon_inode:[perf_event]':
                n += 1
        except OSError:
            pass
    return n


def parse_ustack_map(text, head):
    """A bpftrace map keyed by some fields and a ustack: each entry's first
    line matches @head, whose groups are the key's fields and, last, what
    follows them (']: COUNT' for an entry without a frame); then a line per
    frame, 'ADDR SYM+OFF (FILE)', then ']: COUNT'. [(key fields, [(sym,
    file)], count)], file '' where the line has none."""
    stacks, cur = [], None
    for line in text.splitlines():
        m = re.match(head, line)
        if m:
            cur = (m.groups()[:-1], [])
            rest = re.match(r'^\]: (\d+)$', m.groups()[-1])
            if rest:
                stacks.append(cur + (int(rest.group(1)),))
                cur = None
            continue
        if cur is None:
            continue
        m = re.match(r'^\]: (\d+)$', line)
        if m:
            stacks.append(cur + (int(m.group(1)),))
            cur = None
            continue
        m = re.match(r'^\s+[0-9a-f]+ (.*) \((.*)\)$', line)
        if m:
            cur[1].append((m.group(1), m.group(2)))
        elif line.strip():
            cur[1].append((line.strip(), ''))
    return stacks


def frame_name(sym):
    """A symbol as the tools print it, without its offset; None if unnamed."""
    if sym in ('[unknown]', '') or re.fullmatch(r'0x[0-9a-f]+', sym):
        return None
    return re.sub(r'\+(0x[0-9a-f]+|\d+)$', '', sym)


class Tool:
    """A tool's run: its command, its output and how to read it."""
    name = None

    def __init__(self, tmp):
        self.tmp = tmp
        self.out = os.path.join(tmp, '%s.out' % self.name)
        self.err = os.path.join(tmp, '%s.err' % self.name)
        self.proc = None
        self.error = None       # why it failed
        self.notes = []
        self.stacks = []

    def available(self):
        """Raise Skipped with the reason when the tool cannot run here."""

    def cleanup(self):
        """Undo what available() set up."""

    def command(self, pids):
        raise NotImplementedError

    def env(self):
        return None

    def lost_stacks(self):
        """Stacks the tool lost but printed without a frame (bpftrace)."""
        return 0

    def parse(self, text):
        """[(pid, comm, frames innermost first, count)]; a frame is a name,
        None where the tool has none, or LOST for a stack it lost."""
        raise NotImplementedError

    def stderr_tail(self):
        """What the tool said: its error lines, else its last lines."""
        try:
            with open(self.err, errors='replace') as f:
                lines = f.read().strip().splitlines()
        except OSError:
            return ''
        errors = [l for l in lines if re.search(r'\berror\b|Exception|Traceback', l, re.I)]
        said = errors[:6] + lines[-2:] if errors else lines[-8:]
        return '\n'.join(dict.fromkeys(said))

    def diagnose(self):
        """More about a failure, where the tool's own words are not enough."""
        return ''

    def start(self, pids):
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(self.command(pids), stdout=open(self.out, 'w'),
                                     stderr=open(self.err, 'w'), stdin=subprocess.DEVNULL,
                                     env=self.env())

    def attached(self, deadline):
        """True once the tool has a perf event open on every CPU; raises
        Failed if it exited or the deadline passed."""
        if perf_event_fds(self.proc.pid) >= os.cpu_count():
            self.notes.append('attached %.1f s after it started' % (time.monotonic() - self.t0))
            return True
        if self.proc.poll() is not None:
            raise Failed('exited %d before it attached: %s' %
                         (self.proc.returncode, self.stderr_tail()))
        if time.monotonic() > deadline:
            raise Failed('did not attach in %.0f s: %s' %
                         (time.monotonic() - self.t0, self.stderr_tail()))
        return False

    def interrupt(self):
        """SIGINT (Ctrl-C): the tool prints what it counted and exits."""
        self.t0 = time.monotonic()
        self.proc.send_signal(signal.SIGINT)

    def collect(self, deadline):
        try:
            self.proc.wait(max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            where = self.stuck()
            self.kill()
            raise Failed('did not print and exit within %.0f s of SIGINT; %s' %
                         (time.monotonic() - self.t0, where))
        if self.proc.returncode != 0:
            raise Failed('exited %d: %s' % (self.proc.returncode, self.stderr_tail()))
        with open(self.out, errors='replace') as f:
            self.stacks = self.parse(f.read())
        self.notes.append('printed %d stacks %.1f s after SIGINT' %
                          (len(self.stacks), time.monotonic() - self.t0))

    def stuck(self):
        """Where a tool that does not exit is: its threads' states, CPU
        time and kernel stacks, which tell a tool busy in user space from
        one waiting in the kernel."""
        said = []
        tasks = '/proc/%d/task' % self.proc.pid
        try:
            tids = sorted(os.listdir(tasks), key=int)
        except OSError:
            return 'its threads are gone'
        tick = os.sysconf('SC_CLK_TCK')
        for tid in tids:
            try:
                with open('%s/%s/stat' % (tasks, tid)) as f:
                    st = f.read().rsplit(')', 1)[1].split()
                with open('%s/%s/wchan' % (tasks, tid)) as f:
                    wchan = f.read().strip() or '-'
                with open('%s/%s/stack' % (tasks, tid)) as f:
                    stack = [l.split()[-1] for l in f.read().splitlines()[:6]]
            except (OSError, IndexError):
                continue
            said.append('thread %s: state %s, user %.1f s, system %.1f s, wchan %s%s' %
                        (tid, st[0], int(st[11]) / tick, int(st[12]) / tick, wchan,
                         ', kernel stack ' + ' < '.join(stack) if stack else ''))
        return '\n'.join(said) or 'no thread to show'

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Bpftrace(Tool):
    name = 'bpftrace'

    def available(self):
        if not shutil.which('bpftrace'):
            raise Skipped('bpftrace is not installed (harness/deps)')

    def env(self):
        env = dict(os.environ)
        env['BPFTRACE_MAP_KEYS_MAX'] = str(STACK_STORAGE)
        env['BPFTRACE_CACHE_USER_SYMBOLS'] = '1'
        return env

    def command(self, pids):
        pred = ' || '.join('pid == %d' % p for p in pids)
        return ['bpftrace', '-e', 'profile:hz:%d /%s/ { @s[pid, comm, ustack(perf)] = count(); }'
                % (FREQ, pred)]

    def lost_stacks(self):
        """How many of its map's entries bpftrace could not print the stack
        of because bpf_get_stackid() had found the stack's bucket taken
        (-EEXIST); it prints them as stacks without a frame."""
        try:
            with open(self.err, errors='replace') as f:
                return len(re.findall(r'failed to look up stack id -17\b', f.read()))
        except OSError:
            return 0

    def parse(self, text):
        """Entries '@s[PID, COMM, ' then a line per frame, 'ADDR SYM+OFF
        (FILE)', then ']: COUNT'; no frame at all: '@s[PID, COMM, ]: COUNT'."""
        return [(int(key[0]), key[1], [frame_name(sym) for sym, _ in frames], n)
                for key, frames, n in
                parse_ustack_map(text, r'^@s\[(\d+), (.*?), (.*)$')]


class ProfileFormat(Tool):
    """BCC's profile and libbpf-tools' print alike: a stack's frames,
    innermost first, a line each, then "- COMM (PID)" and its count."""

    def parse(self, text):
        stacks, frames = [], []
        lines = iter(text.splitlines())
        for line in lines:
            m = re.match(r'^    -\s+(.*) \((\d+)\)$', line)
            if m:
                count = int(next(lines).strip())
                stacks.append((int(m.group(2)), m.group(1), frames, count))
                frames = []
            elif line.startswith('    '):
                sym = line.strip()
                frames.append(LOST if sym == LOST else frame_name(sym))
            else:
                frames = []
        return stacks


class Bcc(ProfileFormat):
    name = 'bcc'
    path = '/usr/sbin/profile-bpfcc'
    loaded = False

    def available(self):
        if not os.access(self.path, os.X_OK):
            raise Skipped('BCC is not installed (bpfcc-tools, harness/deps)')
        # CONFIG_IKHEADERS=m: the headers come with the module
        if not os.path.exists(KHEADERS):
            cmd = ['modprobe', 'kheaders']
            if os.environ.get('MODDIR'):
                cmd[1:1] = ['-d', os.environ['MODDIR']]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, errors='replace')
            self.loaded = p.returncode == 0
            if not self.loaded:
                print('# %s: %s' % (' '.join(cmd), p.stdout.strip()))
        if not os.path.exists(KHEADERS):
            raise Skipped('no kernel headers for BCC to compile against (%s: '
                          'CONFIG_IKHEADERS)' % KHEADERS)

    def cleanup(self):
        if self.loaded:
            subprocess.run(['rmmod', 'kheaders'])

    def diagnose(self):
        # BCC compiles against its copy of /sys/kernel/kheaders.tar.xz
        d = '/tmp/kheaders-%s' % os.uname().release
        broken = []
        for top, _, files in os.walk(d):
            for f in files:
                p = os.path.join(top, f)
                if os.path.islink(p) and not os.path.exists(p):
                    broken.append(p)
        if not broken:
            return ''
        return ('%s (from the kernel\'s %s) holds %d symbolic links that lead nowhere, e.g. '
                '%s -> %s' % (d, KHEADERS, len(broken), os.path.relpath(broken[0], d),
                              os.readlink(broken[0])))

    def command(self, pids):
        return [self.path, '-U', '-F', str(FREQ), '--stack-storage-size', str(STACK_STORAGE),
                '-p', ','.join(map(str, pids))]


class Libbpf(ProfileFormat):
    name = 'libbpf'

    def available(self):
        if not os.access(LIBBPF_PROFILE, os.X_OK):
            raise Skipped('%s is not unpacked (harness/libbpf-tools)' % LIBBPF_PROFILE)
        if not os.path.exists(BTF):
            raise Skipped('the kernel has no BTF for libbpf-tools (%s: '
                          'CONFIG_DEBUG_INFO_BTF)' % BTF)

    def command(self, pids):
        return [LIBBPF_PROFILE, '-U', '-F', str(FREQ), '--stack-storage-size',
                str(STACK_STORAGE), '-p', ','.join(map(str, pids))]


TOOLS = (Bpftrace, Bcc, Libbpf)


def reaches_root(frames):
    if not frames:
        return False
    if frames[-1] in ROOTS:
        return True
    # a stripped program's _start: the caller of libc's start code
    return len(frames) >= 2 and frames[-2] in LIBC_START


def holds_thread_entry(frames):
    """A churn_spin stack is whole when it holds its thread's outermost
    function: past main, libc's start code keeps no frame pointer, so that
    6.12's walk ends right after it, in a frame the tools may not name
    (libbpf-tools names no local symbol of a stripped libc)."""
    return 'main' in frames or 'map_unmap' in frames


class Tally:
    """Samples of one program, switch and phase."""

    def __init__(self, whole=reaches_root):
        self.whole = whole
        self.samples = self.rooted = self.lost = 0
        self.ends = collections.Counter()
        self.short = []         # a few stacks that stop short

    def add(self, frames, count, empty_is_lost=False):
        if LOST in frames or (empty_is_lost and not frames):
            self.lost += count
            return
        self.samples += count
        if self.whole(frames):
            self.rooted += count
        else:
            self.ends[(frames[-1] or '[unknown]') if frames else '(no frame)'] += count
            if len(self.short) < 3:
                self.short.append((frames, count))

    def pct(self):
        return 100.0 * self.rooted / self.samples if self.samples else 0.0

    def pct_known(self):
        """The share known to reach the root: lost stacks count as short."""
        n = self.samples + self.lost
        return 100.0 * self.rooted / n if n else 0.0

    def describe(self):
        s = '%d samples, %.1f %% reach the root' % (self.samples, self.pct())
        if self.lost:
            s += ', %d lost by the tool' % self.lost
        return s

    def short_ends(self):
        return ', '.join('%s (%d)' % e for e in self.ends.most_common(5))


def run_wave(sw, wave, first, warm):
    """Release the programs of @wave ((name, warm name, Held)) with the
    switch at @sw; @first s later they take their warm names, and @warm s
    after that they are stopped. Returns the counters at the start, after
    the first samples, after the renaming and at the end."""
    set_switch(sw)
    c0 = counters()
    t0 = time.monotonic()
    for _, _, h in wave:
        h.release()
    started = []
    for name, _, h in wave:
        while not h.ready():
            h.check_running(name)
            if time.monotonic() > t0 + 120 * SCALE:
                raise Failed('%s did not start within %d s' % (name, 120 * SCALE))
            time.sleep(0.02)
        started.append('%s %.1f s' % (name, time.monotonic() - t0))
    print('# bpf_tables=%d: the programs started in %s' % (sw, ', '.join(started)))
    time.sleep(first)
    c1 = counters()
    for _, _, h in wave:
        h.signal(signal.SIGUSR1)
    t1 = time.monotonic()
    for name, warm_name, h in wave:
        while h.comm() != warm_name:
            h.check_running(name)
            if time.monotonic() > t1 + 10 * SCALE:
                raise Failed('%s did not take the name %s on SIGUSR1 (it is %s)' %
                             (name, warm_name, h.comm()))
            time.sleep(0.02)
    c2 = counters()
    time.sleep(warm)
    for name, _, h in wave:
        h.check_running(name)
        h.signal(signal.SIGSTOP)
    c3 = counters()
    return c0, c1, c2, c3


def run_waves(tools, first, warm, tmp):
    """Start @tools against the waves of the programs (WAVES, one for each
    switch); returns the table walks, {switch: bpf_walks during its waves}
    (None without the counters). Each tool's stacks, notes or error are
    left in it."""
    held, walks, no_user = {}, {}, {}
    warm_names = {name: warm_name for name, _, warm_name in PROGRAMS}
    try:
        for sw in SWITCHES:
            for name, argv, _ in PROGRAMS:
                held[sw, name] = Held(argv, os.path.join(tmp, '%s-%d.log' % (name, sw)))
        pids = sorted(h.pid for h in held.values())
        for t in tools:
            t.start(pids)
        waiting, deadline = list(tools), time.monotonic() + 240 * SCALE
        while waiting:
            for t in list(waiting):
                try:
                    if t.attached(deadline):
                        waiting.remove(t)
                except Failed as e:
                    t.error = str(e)
                    t.kill()
                    waiting.remove(t)
            time.sleep(0.05)
        running = [t for t in tools if not t.error]
        if not running:
            return walks
        # a program is attached to its events right after they open
        time.sleep(0.3)
        for group in WAVES:
            for sw in SWITCHES:
                c0, c1, c2, c3 = run_wave(
                    sw, [(name, warm_names[name], held[sw, name]) for name in group], first, warm)
                if 'bpf_walks' in c3:
                    walks[sw] = walks.get(sw, 0) + c3['bpf_walks'] - c0.get('bpf_walks', 0)
                else:
                    walks[sw] = None
                for name in group if 'bpf_no_user' in c3 else ():
                    no_user[sw, 'first', name] = c1['bpf_no_user'] - c0.get('bpf_no_user', 0)
                    no_user[sw, 'warm', name] = c3['bpf_no_user'] - c2.get('bpf_no_user', 0)
                if c3:
                    print('# bpf_tables=%d: counters in the first samples: %s' %
                          (sw, bpf_delta(c0, c1)))
                    print('# bpf_tables=%d: counters after them: %s' % (sw, bpf_delta(c2, c3)))
        for t in running:
            t.interrupt()
        deadline = time.monotonic() + 300 * SCALE
        for t in running:
            try:
                t.collect(deadline)
            except Failed as e:
                t.error = str(e)
    except Failed as e:
        for t in tools:
            t.error = t.error or str(e)
    finally:
        for t in tools:
            t.kill()
        for h in held.values():
            h.kill()
    # a program's stacks, by switch and phase
    key_of = {h.pid: key for key, h in held.items()}
    for t in tools:
        t.results = {key: {phase: Tally(holds_thread_entry if key[1] in FP_PROGRAMS
                                        else reaches_root)
                           for phase in ('first', 'warm')} for key in held}
        stray = 0
        # A stack without a frame is one the tool lost where it said it
        # lost some and every table walk of the phase (switch on) found
        # user frames: bpf_get_stackid() fails with -EFAULT only for a
        # walk that found none, which the kernel counts (bpf_no_user).
        lost = t.lost_stacks() if t.stacks else 0
        if lost:
            t.notes.append('reported %d stacks lost to its stack map; it prints them '
                           'without a frame' % lost)
        for pid, comm, frames, count in t.stacks:
            key = key_of.get(pid)
            if key is None:
                stray += count
                continue
            phase = 'warm' if comm == warm_names[key[1]] else 'first'
            t.results[key][phase].add(frames, count, lost and key[0] == 1 and
                                      no_user.get((key[0], phase, key[1])) == 0)
        if stray:
            t.notes.append('%d samples of other processes' % stray)
    return walks


def check(tool, sw, name, res, walks, first, off=None):
    """@off: the same tool's and program's samples with the switch off,
    for a program with frame pointers checked with it on."""
    f, w = res['first'], res['warm']
    print('# %s %s bpf_tables=%d: after the first samples: %s; the first samples '
          '(start-up and %g s): %s' % (tool, name, sw, w.describe(), first, f.describe()))
    if w.ends:
        print('# %s %s bpf_tables=%d: stacks that stop short end in %s' %
              (tool, name, sw, w.short_ends()))
    if f.ends and sw:
        print('# %s %s bpf_tables=%d: the first samples that stop short end in %s' %
              (tool, name, sw, f.short_ends()))
    for frames, count in w.short if sw else ():
        print('# %s %s bpf_tables=%d: short stack (%d), outermost frames last: %s%s' %
              (tool, name, sw, count, '... ' if len(frames) > 8 else '',
               ' '.join(f or '[unknown]' for f in frames[-8:]) or '(no frame)'))
    bad = []
    if w.samples < MIN_SAMPLES:
        bad.append('only %d samples after the first ones' % w.samples)
    if w.lost * 100.0 > MAX_LOST * max(w.samples + w.lost, 1):
        bad.append('%s lost %d of %d stacks to its stack map' %
                   (tool, w.lost, w.samples + w.lost))
    if sw and w.pct_known() < TARGET[name]:
        bad.append('%d of %d samples (%.1f %%, the %d the tool lost counted as short) '
                   'reach the root; at least %g %% should' %
                   (w.rooted, w.samples + w.lost, w.pct_known(), w.lost, TARGET[name]))
    if name in FP_PROGRAMS:
        if not sw and w.pct() < FP_BASELINE:
            bad.append('%.1f %% of the samples reach the root by frame pointers (6.12\'s '
                       'walk); at least %g %% should: the program lost its frame pointers?' %
                       (w.pct(), FP_BASELINE))
        if sw and off is not None and off['warm'].samples and \
                w.pct_known() < off['warm'].pct() - FP_NOISE:
            bad.append('%.1f %% of the samples reach the root by the tables, %.1f %% with '
                       'them off (6.12\'s walk): worse than 6.12' %
                       (w.pct_known(), off['warm'].pct()))
    elif not sw and w.pct() >= OFF_LIMIT:
        bad.append('%.1f %% of the samples reach the root by frame pointers: did the '
                   'switch switch?' % w.pct())
    if walks is not None and sw and not walks:
        bad.append('the helpers made no table walk (bpf_walks) with the switch on')
    if walks is not None and not sw and walks:
        bad.append('the helpers made %d table walks (bpf_walks) with the switch off' % walks)
    if bad:
        raise Failed('\n'.join(bad))


def main():
    args = sys.argv[1:]
    first, warm = 1.0, 6.0
    while len(args) >= 2 and args[0] in ('--first', '--warm'):
        if args[0] == '--first':
            first = float(args[1])
        else:
            warm = float(args[1])
        args = args[2:]
    known = [t.name for t in TOOLS]
    if any(a not in known for a in args):
        print('usage: bpf_tools.py [--first S] [--warm S] [TOOL...]; tools: %s' %
              ' '.join(known), file=sys.stderr)
        return 2
    if not os.path.exists(SWITCH):
        print('1..0 # SKIP this kernel has no %s: its BPF helpers walk by frame '
              'pointers only' % SWITCH)
        return 0
    if not os.access(CHURN_SPIN, os.X_OK):
        print('Bail out! %s is not built: harness/perf builds it (or set CHURN_SPIN)' %
              CHURN_SPIN)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        tools = [t(tmp) for t in TOOLS if not args or t.name in args]
        print('1..%d' % (len(tools) * len(PROGRAMS) * len(SWITCHES)))
        skips, walks = {}, {}
        with open(SWITCH) as f:
            saved = f.read().strip()
        t0 = time.monotonic()
        try:
            for t in tools:
                try:
                    t.available()
                except Skipped as e:
                    skips[t.name] = str(e)
            walks = run_waves([t for t in tools if t.name not in skips], first, warm, tmp)
        finally:
            with open(SWITCH, 'w') as f:
                f.write(saved + '\n')
            for t in tools:
                t.cleanup()
        print('# %.1f s in all' % (time.monotonic() - t0))
        failed = n = 0
        for t in tools:
            for line in t.notes:
                print('# %s: %s' % (t.name, line))
            if t.error:
                why = t.diagnose()
                for line in ('%s: %s\n%s' % (t.name, t.error, why)).strip().splitlines():
                    print('# %s' % line)
            for name, _, _ in PROGRAMS:
                for sw in SWITCHES:
                    n += 1
                    case = '%s %s bpf_tables=%d' % (t.name, name, sw)
                    if t.name in skips:
                        print('ok %d %s # SKIP %s' % (n, case, skips[t.name]))
                        continue
                    try:
                        if t.error:
                            raise Failed('%s failed (above)' % t.name)
                        check(t.name, sw, name, t.results[sw, name], walks.get(sw), first,
                              t.results.get((0, name)))
                        print('ok %d %s' % (n, case))
                    except Failed as e:
                        for line in str(e).splitlines():
                            print('# %s' % line)
                        print('not ok %d %s' % (n, case))
                        failed += 1
        ran = [t for t in tools if t.name not in skips and not t.error]
        if ran:
            print('# %-9s %-8s %-6s %8s %7s %8s %7s' % ('tool', 'program', 'tables', 'samples',
                                                       'root %', 'first', 'root %'))
            for t in ran:
                for name, _, _ in PROGRAMS:
                    for sw in SWITCHES:
                        r = t.results[sw, name]
                        print('# %-9s %-8s %-6d %8d %7.1f %8d %7.1f' %
                              (t.name, name, sw, r['warm'].samples, r['warm'].pct(),
                               r['first'].samples, r['first'].pct()))
        results_dir = os.environ.get('RESULTS')
        if failed and results_dir and os.path.isdir(results_dir):
            dst = os.path.join(results_dir, 'bpf_tools')
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(tmp, dst)
            print('# the tools\' output and the programs\' logs: %s' % dst)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
