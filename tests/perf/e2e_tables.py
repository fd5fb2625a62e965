#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""perf_e2e's tests of the walk by unwind tables (TAP, run by perf_e2e.py):
--call-graph sframe on a workload built without frame pointers and with
SFrame tables (tests/perf/sframe_syscalls.c), and on Debian's own
programs, which have .eh_frame only.
"""
import os
import re
import subprocess

from perf_e2e import (KERNEL_MIN, METHODS, NO_SFRAME, PERF, SFRAME_WORKLOAD,
                      Failed, Skipped, check_chain, run, script, script_kept,
                      user_part)

# Debian's own programs, which have .eh_frame only, each running a small
# CPU-bound script (bench/debian_programs.py records the same).
DEBIAN_PROGRAMS = (
    ('python3', ['python3', '-c', 's = 0\nfor i in range(150000): s += i * i']),
    ('perl', ['perl', '-e', 'my $s = 0; $s += $_ * $_ for 1 .. 300000']),
    ('bash', ['bash', '-c', 'i=0; while [ $i -lt 5000 ]; do i=$((i + 1)); done']),
)
# The process's first frames: libc's start code and _start, or ld.so's
# _start code (_dl_start_user) while it runs the libraries' constructors
# before main.
DEBIAN_ROOTS = ('__libc_start_call_main', '__libc_start_main', '_start', '_dl_start_user')


def sframe_chain(depth):
    """sframe_syscalls' user frames, from leaf out to main.

    Levels take turns by level % 3; a library step calls step_plain."""
    lib_a, lib_b = [at if at < depth - 2 else -1 for at in (depth // 3, 2 * depth // 3)]
    names = []
    for level in range(depth - 2, -1, -1):
        if level == lib_a:
            names.append('sframe_lib_a_step')
        elif level == lib_b:
            names.append('sframe_lib_b_step')
        elif level - 1 in (lib_a, lib_b):
            names.append('step_plain')
        else:
            names.append(('step_plain', 'step_array', 'step_alloca')[level % 3])
    return ['leaf'] + names + ['serve', 'main']


def sframe_expected(report):
    """The user IP and return addresses sframe_syscalls -r wrote."""
    fields = dict(line.split(None, 1) for line in open(report) if line.strip())
    return (int(fields['syscall_ret'], 16),
            [int(a, 16) for a in fields['chain'].split()])


UNWIND_COUNTERS = '/sys/kernel/debug/unwind_deferred/counters'


def unwind_counters():
    """The unwinder's debugfs counters, name -> value; {} without them."""
    try:
        with open(UNWIND_COUNTERS) as f:
            return {k: int(v) for k, v in (l.split()[:2] for l in f if len(l.split()) >= 2)
                    if v.lstrip('-').isdigit()}
    except OSError:
        return {}


def need_sframe():
    if not os.access(SFRAME_WORKLOAD, os.X_OK):
        raise Skipped('%s is not built (harness/perf with the SFrame toolchain)' %
                      SFRAME_WORKLOAD)
    try:
        methods = open(METHODS).read().split()
    except OSError:
        methods = []
    if 'sframe' not in methods:
        raise Skipped('this kernel does not walk SFrame tables (%s: %s)' %
                      (METHODS, ' '.join(methods) or 'missing'))


class only_methods:
    """Turn the kernel's walk methods other than @methods off for a while
    (the SFrame tests: the programs also have .eh_frame, which would hide
    a broken SFrame walk)."""

    def __init__(self, methods):
        self.methods, self.old = methods, None

    def __enter__(self):
        with open(METHODS) as f:
            self.old = f.read().strip()
        with open(METHODS, 'w') as f:
            f.write(self.methods + '\n')
        return self

    def __exit__(self, *exc):
        with open(METHODS, 'w') as f:
            f.write(self.old + '\n')
        return False


class TableTests:
    """Mixed into perf_e2e's Tests: self.path() names a file of the run."""

    def test_sframe_records_what_fp_defer_records(self):
        """--call-graph sframe sets the bits of fp,defer; bad depths are refused."""
        need_sframe()
        data = self.path('sframe-attr.data')
        run([PERF, 'record', '-q', '-o', data, '-e', 'cpu-clock', '--call-graph', 'sframe',
             '--', SFRAME_WORKLOAD, '-n', '1'])
        attrs = run([PERF, 'evlist', '-v', '-i', data])[0]
        if 'defer_callchain: 1' not in attrs or 'defer_output: 1' not in attrs:
            raise Failed('--call-graph sframe: no defer_callchain/defer_output in %s' %
                         attrs.strip())
        for bad, msg in (('sframe,deep', "sframe takes a stack depth, not 'deep'"),
                         ('sframe,8,16', 'sframe takes one stack depth')):
            err = run([PERF, 'record', '-o', self.path('bad.data'), '--call-graph', bad,
                       '--', SFRAME_WORKLOAD, '-n', '1'], check=False)[1]
            if msg not in err:
                raise Failed('--call-graph %s was not refused clearly: %s' % (bad, err[-300:]))

    def test_sframe_samples_match_the_programs_own_return_addresses(self):
        """Every getppid(2) sample's user part, address by address, is the
        chain the program recorded: IP, leaf, 33 steps (two in libraries),
        serve; what fp gets on the same program is printed beside it."""
        need_sframe()
        with only_methods('fp sframe'):
            depth, calls = 35, 200
            got = {}
            for mode in ('sframe', 'fp'):
                data, rep = self.path('sf-tp-%s.data' % mode), self.path('sf-tp-%s.txt' % mode)
                run([PERF, 'record', '-q', '-o', data, '-e', 'syscalls:sys_enter_getppid',
                     '-c', '1', '--call-graph', mode, '--', SFRAME_WORKLOAD, '-d', str(depth),
                     '-n', str(calls), '-s', 'getppid', '-r', rep])
                ip, chain = sframe_expected(rep)
                items, _ = script(data, '--no-inline')
                samples = [it for it in items if 'record' not in it]
                good = 0
                for it in samples:
                    user = [a for a, _ in it['frames'] if a < KERNEL_MIN]
                    if user[:len(chain) + 1] == [ip] + chain:
                        good += 1
                    elif mode == 'sframe':
                        raise Failed('%s: user part %s, expected %s' %
                                     (it['head'], ' '.join('%x' % a for a in user),
                                      ' '.join('%x' % a for a in [ip] + chain)))
                got[mode] = (good, len(samples))
            print('# sframe: %d of %d samples have every return address; fp: %d of %d' %
                  (got['sframe'] + got['fp']))
            if got['sframe'][1] != calls:
                raise Failed('%d getppid samples, expected %d' % (got['sframe'][1], calls))

    def test_sframe_chains_cross_needed_and_dlopened_libraries(self):
        """cpu-clock samples in read(2): script, report -g folded and inject
        --merge-callchains show leaf .. the libraries' steps .. main."""
        need_sframe()
        with only_methods('fp sframe'):
            depth = 20
            want = sframe_chain(depth)
            data, merged = self.path('sf-cpu.data'), self.path('sf-cpu-merged.data')
            run([PERF, 'record', '-q', '-o', data, '-e', 'cpu-clock', '-c', '50000',
                 '--call-graph', 'sframe', '--', SFRAME_WORKLOAD, '-d', str(depth),
                 '-n', '150', '-b', '262144'])
            for f in (data, merged):
                if f == merged:
                    run([PERF, 'inject', '--merge-callchains', '-i', data, '-o', merged])
                items, _ = script(f, '--no-inline')
                # read(2)s of the workload's loop (not ld.so's, at start)
                reads = [it for it in items if 'record' not in it and
                         'ksys_read' in user_part(it['frames'])[1] and
                         user_part(it['frames'])[0][:1] == ['leaf']]
                if len(reads) < 10:
                    raise Failed('%s: only %d samples in read(2)' % (f, len(reads)))
                for it in reads:
                    check_chain(it, it['head'], chain=want)
            folded = run([PERF, 'report', '-i', data, '--stdio', '--no-children', '--no-inline',
                          '-g', 'folded,0,caller,count'])[0]
            line = ';'.join(reversed(want))
            if line not in folded:
                raise Failed('perf report -g folded has no %s' % line)
            print('# %d samples in read(2) with all %d user frames, in both files' %
                  (len(reads), len(want)))

    def test_eh_frame_chains_of_debians_own_programs(self):
        """cpu-clock samples of Debian's python3, perl and bash, which have
        .eh_frame and neither SFrame nor frame pointers: with --call-graph
        sframe nearly every sample's user chain reaches the process's root
        (libc's start code, _start, or ld.so's before main), in perf script,
        inject --merge-callchains and report -g folded alike. Most samples
        are walked in the interrupt by the tables the mm remembers
        (try-first), not deferred. What fp and dwarf get on the same
        programs is bench/debian_programs.py's (harness/bench debian)."""
        methods = open(METHODS).read().split() if os.path.exists(METHODS) else []
        if 'eh_frame' not in methods:
            raise Skipped('this kernel does not walk .eh_frame (%s: %s)' %
                          (METHODS, ' '.join(methods) or 'missing'))
        roots = DEBIAN_ROOTS
        bad = []
        for name, argv in DEBIAN_PROGRAMS:
            data = self.path('deb-%s.data' % name)
            before = unwind_counters()
            run([PERF, 'record', '-q', '-o', data, '-e', 'cpu-clock', '-c', '1000000',
                 '--call-graph', 'sframe', '--'] + argv, timeout=600)
            after = unwind_counters()
            items, _ = script(data)
            samples = [it for it in items if 'record' not in it and
                       it['head'].split()[0] == name[:15]]
            ends = {}
            for it in samples:
                user = user_part(it['frames'])[0]
                if not any(sym.startswith(roots) for sym in user):
                    end = user[-1] if user else '(no user part)'
                    ends[end] = ends.get(end, 0) + 1
            whole = len(samples) - sum(ends.values())
            if ends:
                print('# %s: chains that stop short end in %s' %
                      (name, ', '.join('%s (%d)' % e for e in
                                       sorted(ends.items(), key=lambda e: -e[1])[:5])))
            pct = 100.0 * whole / max(len(samples), 1)
            self.check_merged_views(name, data, samples, roots)
            d = {k: after.get(k, 0) - before.get(k, 0) for k in
                 ('try_walks', 'try_used', 'try_skipped_sframe',
                  'try_not_resident', 'try_maps_changed')}
            tried = d['try_walks'] + d['try_skipped_sframe']
            share = 100.0 * d['try_used'] / max(tried, 1)
            print('# %s: %.1f %% of %d samples reach the root, %d B/sample; walked in the '
                  'interrupt %.1f %% (%s)' %
                  (name, pct, len(samples), os.path.getsize(data) // max(len(samples), 1),
                   share, ', '.join('%s %d' % kv for kv in sorted(d.items()))))
            if after and tried >= 50 and share < 50:
                bad.append('%s: %d of %d user-space samples were walked in the '
                           'interrupt' % (name, d['try_used'], tried))
            # Lazy binding ends a few chains: ld.so's resolver keeps
            # its CFA in %rbx, which the walk does not have.
            if len(samples) < 50 or pct < 95:
                bad.append('%s: %d of %d samples reach the root with --call-graph sframe' %
                           (name, whole, len(samples)))
        if bad:
            raise Failed('\n'.join(bad))

    def test_chains_through_a_signal_handler_reach_the_root(self):
        """getppid(2) samples from a SIGPROF handler of a -O2 program (no
        frame pointers, .eh_frame only) whose timer interrupts it anywhere
        in main -> outer -> middle -> inner (tests/perf/signal_spin.c):
        with --call-graph sframe every sample's user chain goes through
        the handler and the signal frame and on to the process's root,
        from whatever instruction the signal interrupted, the exit path's
        included. Three runs, by a CPU-time timer (SIGPROF) and a wall-time
        one (SIGALRM, which goes on firing while the program exits): a stop
        in one interrupted instruction in a thousand shows in one run."""
        methods = open(METHODS).read().split() if os.path.exists(METHODS) else []
        if 'eh_frame' not in methods:
            raise Skipped('this kernel does not walk .eh_frame (%s: %s)' %
                          (METHODS, ' '.join(methods) or 'missing'))
        prog = os.path.join(os.path.dirname(SFRAME_WORKLOAD), 'signal_spin')
        if not os.access(prog, os.X_OK):
            raise Skipped('%s is not built (harness/perf)' % prog)
        # on_real calls on_alarm, which GCC may inline into it.
        handler = ('handler_leaf', 'handler_mid', 'on_alarm', 'on_real')
        bad, total = [], 0
        for n, timer in enumerate(('prof', 'real', 'prof')):
            data = self.path('signal-spin-%d.data' % n)
            run([PERF, 'record', '-q', '-o', data, '-e', 'syscalls:sys_enter_getppid',
                 '-c', '1', '--call-graph', 'sframe', '--', prog, '2', timer], timeout=300)
            items, _ = script(data)
            samples = [it for it in items if 'record' not in it and
                       it['head'].split()[0] == 'signal_spin']
            short = {}
            for it in samples:
                # GCC's clones keep their name before a dot (.constprop.0).
                user = [f.split('.')[0] for f in user_part(it['frames'])[0]]
                # getppid's libc wrapper, the handler's own chain, then
                # the interrupted one to the root (main's, or exit's).
                mine = [f for f in user if f in handler]
                if (mine[:2] != list(handler[:2]) or len(mine) < 3 or
                        not user[-1].startswith(DEBIAN_ROOTS)):
                    key = ' '.join(user[-4:]) if user else '(no user part)'
                    short[key] = short.get(key, 0) + 1
            total += len(samples)
            print('# run %d (%s timer): %d of %d samples reach the root through the '
                  'handler' % (n, timer, len(samples) - sum(short.values()), len(samples)))
            if len(samples) < 100:
                bad.append('run %d: only %d getppid samples of signal_spin' %
                           (n, len(samples)))
            if short:
                bad.append('run %d: %d of %d samples stop short; their last frames: %s' %
                           (n, sum(short.values()), len(samples),
                            ', '.join('%s (%d)' % e for e in
                                      sorted(short.items(), key=lambda e: -e[1])[:5])))
        if bad:
            raise Failed('\n'.join(bad))

    def check_merged_views(self, name, data, samples, roots):
        """inject --merge-callchains and report -g folded show the chains
        perf script showed: as many samples reach the root in each."""
        def rooted_outside_exec(items):
            # A sample taken in execve() after the new image's registers
            # were set has that image's entry as its user part; read from
            # a merged file, it sorts before the new image's mappings are
            # known and its symbol does not resolve. Such samples are left
            # out of the comparison.
            got = [it for it in items if 'record' not in it and
                   it['head'].split()[0] == name[:15] and
                   not any(s.startswith('do_execveat') for s in user_part(it['frames'])[1])]
            return len(got), sum(1 for it in got if any(
                sym.startswith(roots) for sym in user_part(it['frames'])[0]))

        merged = data + '.merged'
        run([PERF, 'inject', '--merge-callchains', '-i', data, '-o', merged])
        want = rooted_outside_exec(samples)
        got = rooted_outside_exec(script(merged)[0])
        if got != want:
            raise Failed('%s: inject --merge-callchains: %d of %d samples reach the root, '
                         'perf script of the recording: %d of %d' %
                         (name, got[1], got[0], want[1], want[0]))
        folded = run([PERF, 'report', '-i', data, '--stdio', '--no-children', '--comm', name[:15],
                      '-g', 'folded,0,caller,count'])[0]
        total = rooted = 0
        for line in folded.splitlines():
            m = re.match(r'\s*(\d+) (\S+)$', line)
            if not m:
                continue
            total += int(m.group(1))
            if any(f.startswith(roots) for f in m.group(2).split(';')):
                rooted += int(m.group(1))
        if not total or rooted * 100 < total * 95:
            raise Failed('%s: perf report -g folded: %d of %d samples reach the root' %
                         (name, rooted, total))

    def test_execve_samples_of_a_shell_reach_its_root(self):
        """cpu-clock samples of Debian's bash (no frame pointers) taken
        while it replaces its image in execve(), before the new mm is in
        place: they cannot defer, and their user chain is walked in the
        interrupt by the tables the old mm remembers, and reaches the root.
        Only where that walk cannot stand in (a table page not yet mapped
        in a child just forked, or an mm that has not met its tables) is
        the walk classic, which stops after the call: [execve]; those are
        the refused requests (busy) not counted in busy_walked."""
        methods = open(METHODS).read().split() if os.path.exists(METHODS) else []
        if 'eh_frame' not in methods:
            raise Skipped('this kernel does not walk .eh_frame (%s: %s)' %
                          (METHODS, ' '.join(methods) or 'missing'))
        roots = ('__libc_start_call_main', '__libc_start_main', '_start')
        data = self.path('execve.data')
        before = unwind_counters()
        run([PERF, 'record', '-q', '-o', data, '-e', 'cpu-clock', '-c', '100000',
             '--call-graph', 'sframe', '--', 'bash', '-c',
             'for i in $(seq 10); do /bin/true; done'], timeout=600)
        after = unwind_counters()
        busy = after.get('busy', 0) - before.get('busy', 0)
        walked = after.get('busy_walked', 0) - before.get('busy_walked', 0)
        failed = busy - walked
        # The old image's samples in execve() before the switch of mm
        # (exec_mmap() and what follows it are the new image's); about a
        # thousand of all the samples, kept as perf script prints them.
        old = script_kept(data, lambda it: (
            'record' not in it and it['head'].split()[0] == 'bash' and
            any(s.startswith('bprm_execve') for s in user_part(it['frames'])[1]) and
            not any(s.startswith(('exec_mmap', 'begin_new_exec'))
                    for s in user_part(it['frames'])[1])))
        short = [it for it in old if not any(
            sym.startswith(roots) for sym in user_part(it['frames'])[0])]
        print('# %d samples of bash in execve() before the new mm, %d of them short; '
              '%d requests refused busy, %d walks in the interrupt could not stand in' %
              (len(old), len(short), busy, failed))
        if len(old) < 20:
            raise Failed('only %d samples of bash in execve() before the new mm' % len(old))
        if len(short) > failed or len(short) * 2 > len(old):
            raise Failed('%d of %d samples in execve() do not reach the root, and only %d '
                         'walks in the interrupt failed; the first ends %s' %
                         (len(short), len(old), failed, user_part(short[0]['frames'])[0][-3:]))

    def test_sframe_refused_without_an_sframe_unwinder(self):
        """A kernel that defers but does not list sframe (the methods file
        replaced in a private mount namespace): one line naming dwarf, no
        file written."""
        need_sframe()
        fake = self.path('methods')
        with open(fake, 'w') as f:
            f.write('fp\n')
        data = self.path('refused.data')
        p = subprocess.run(['unshare', '-m', 'sh', '-c',
                            'mount --bind "$1" %s && exec "$2" record -q -o "$3" '
                            '--call-graph sframe -e cpu-clock -- "$4" -n 1' % METHODS,
                            'sh', fake, PERF, data, SFRAME_WORKLOAD],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors='replace', timeout=120)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        if p.returncode == 0:
            raise Failed('perf record succeeded: %s' % p.stderr.strip()[-300:])
        if len(lines) != 1 or NO_SFRAME not in lines[0] or 'eh_frame' not in lines[0]:
            raise Failed('expected one line naming --call-graph dwarf, got: %s' %
                         p.stderr.strip()[-400:])
        if os.path.exists(data):
            raise Failed('the refused recording wrote %s' % data)
