#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The README's checklist, profiling part, in the installed system.

Records the whole machine (perf-deferred record -a, cpu-clock) while
work.sh runs Debian's own programs, once per call-graph mode, and checks:

  - no sample lost its deferred record: a sample shown without its user
    part is allowed only when its thread never came back to user space
    before the recording stopped (it was still in the kernel);
  - no record or sample lost in the ring buffer;
  - the core's counters: errors 0, every request accounted for, every
    walk tried in an interrupt accounted for, no table data that broke a
    rule;
  - the share of samples of Debian's programs whose user chain reaches the
    program's root (libc's start code, _start, a thread's start), with
    --call-graph sframe against --call-graph dwarf on the same work.

Each result is a line "install-test: ok ..." or "install-test: not ok ...",
with "install-test: # ..." notes, in OUT/profile.
"""
import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_e2e import parse_script, user_part  # noqa: E402

PERF = os.environ.get('PERF', 'perf-deferred')
COUNTERS = '/sys/kernel/debug/unwind_deferred/counters'
MODES = ('sframe', 'fp,defer', 'dwarf')
FREQ = '200'
# Where a whole chain ends: libc's start code and the program's _start,
# ld.so's start before main, a thread's start.
ROOTS = ('__libc_start_call_main', '__libc_start_main', '_start', '_dl_start_user',
         'start_thread', 'clone3', '__clone3', '__clone')
# Not Debian's programs: the profiler, and what work.sh compiles.
OURS = ('perf-deferred', 'perf-exec', 'perf', 'prog')
HEAD = re.compile(r'^\s*(.*?)\s+(\d+)\s+(\d+\.\d+):')
# Table data that breaks a rule: on Debian's own files there should be none.
BAD = ('sframe_bad_rows', 'eh_frame_bad_data', 'eh_frame_bad_headers',
       'sframe_bad_sections')
REQUEST_OUTCOMES = ('queued', 'joined', 'already_pending', 'already_run',
                    'rejected', 'busy')

results = []


def say(line):
    results.append('install-test: ' + line)


def counters():
    c = {}
    with open(COUNTERS) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and parts[1].lstrip('-').isdigit():
                c[parts[0]] = int(parts[1])
    return c


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors='replace', **kw)


def samples_of(items):
    """Samples (not records) with comm, tid and time from their head line."""
    out = []
    for it in items:
        if 'record' in it:
            continue
        m = HEAD.match(it['head'])
        if not m:
            continue
        it['comm'], it['tid'], it['time'] = m.group(1), int(m.group(2)), float(m.group(3))
        it['user'] = user_part(it['frames'])[0]
        out.append(it)
    return out


def lost_records(samples):
    """Samples shown without their record whose thread was back in user
    space later: their record should have come."""
    last_user = {}
    for s in samples:
        if s['user'] and not s.get('missing'):
            last_user[s['tid']] = max(last_user.get(s['tid'], 0), s['time'])
    missing = [s for s in samples if s.get('missing')]
    lost = [s for s in missing if last_user.get(s['tid'], 0) > s['time']]
    return missing, lost


def new_image(s):
    """A sample taken in execve() once the new mm is in place: its user
    part is the new image's entry, whose mapping perf learns only later
    (it shows as [unknown])."""
    kernel = user_part(s['frames'])[1]
    return any(k.startswith(('begin_new_exec', 'load_elf_binary')) for k in kernel)


def rooted_shares(samples, ends=None):
    """{comm: (rooted, total)} over samples of Debian's programs with a
    user part, but those of a new image in execve(); the frames where the
    others end are counted in @ends."""
    shares = {}
    for s in samples:
        if s['comm'] in OURS or not s['user'] or new_image(s):
            continue
        r, t = shares.get(s['comm'], (0, 0))
        rooted = any(sym.startswith(ROOTS) for sym in s['user'])
        shares[s['comm']] = (r + rooted, t + 1)
        if not rooted and ends is not None:
            key = '%s: %s' % (s['comm'], s['user'][-1])
            ends[key] = ends.get(key, 0) + 1
    return shares


def pct(r, t):
    return 100.0 * r / t if t else 0.0


def record(mode, out, work):
    data = os.path.join(out, 'perf-%s.data' % mode.replace(',', '-'))
    before = counters()
    t0 = time.time()
    p = run([PERF, 'record', '-q', '-a', '-e', 'cpu-clock', '-F', FREQ,
             '--call-graph', mode, '-o', data, '--', work,
             os.path.join(out, 'scratch-' + mode.replace(',', '-'))], timeout=1800)
    secs = time.time() - t0
    after = counters()
    if p.returncode:
        say('not ok record %s: exit %d: %s' % (mode, p.returncode, p.stderr.strip()[-300:]))
        return None
    st = run([PERF, 'report', '--stats', '-i', data]).stdout
    lost = sum(int(n) for n in re.findall(r'LOST(?:_SAMPLES)? events:\s+(\d+)', st))
    sc = run([PERF, 'script', '-i', data, '-F', 'comm,tid,time,event,ip,sym'], timeout=1800)
    if sc.returncode:
        say('not ok script %s: exit %d: %s' % (mode, sc.returncode, sc.stderr.strip()[-300:]))
        return None
    samples = samples_of(parse_script(sc.stdout))
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    return {'mode': mode, 'data': data, 'secs': secs, 'samples': samples,
            'lost': lost, 'delta': delta, 'after': after,
            'bytes': os.path.getsize(data)}


def check_records(r):
    mode = r['mode']
    if r['lost']:
        say('not ok %s: %d events lost in the ring buffer' % (mode, r['lost']))
    else:
        say('ok %s: no event lost in the ring buffer' % mode)
    if mode == 'dwarf':
        return
    missing, lost = lost_records(r['samples'])
    if lost:
        s = lost[0]
        say('not ok %s: %d of %d samples got no record though their thread ran in '
            'user space later; the first: %s %d at %.6f' %
            (mode, len(lost), len(r['samples']), s['comm'], s['tid'], s['time']))
    else:
        say('ok %s: every sample has its user chain (%d samples; %d still in the '
            'kernel when the recording stopped)' % (mode, len(r['samples']), len(missing)))


def check_counters(r):
    d, a, mode = r['delta'], r['after'], r['mode']
    errs = []
    if a.get('errors', 0):
        errs.append('errors %d' % a['errors'])
    outcomes = sum(a.get(k, 0) for k in REQUEST_OUTCOMES)
    if a.get('requests', 0) != outcomes:
        errs.append('requests %d but outcomes %d' % (a.get('requests', 0), outcomes))
    tried = a.get('try_used', 0) + a.get('try_not_resident', 0) + a.get('try_maps_changed', 0)
    if a.get('try_walks', 0) != tried:
        errs.append('try_walks %d but outcomes %d' % (a.get('try_walks', 0), tried))
    errs += ['%s %d' % (k, d[k]) for k in BAD if d.get(k)]
    if errs:
        say('not ok %s: counters: %s' % (mode, ', '.join(errs)))
    else:
        say('ok %s: counters: errors 0, %d requests and %d interrupt walks all accounted for, '
            'no bad table data' % (mode, d.get('requests', 0), d.get('try_walks', 0)))
    if mode == 'sframe':
        tried = d.get('try_walks', 0) + d.get('try_skipped_sframe', 0)
        say('# sframe: %d frames by .eh_frame, %d by SFrame, %d by frame pointers in '
            'table walks; %.1f %% of user samples walked in the interrupt' %
            (d.get('eh_frame_frames', 0), d.get('sframe_frames', 0),
             d.get('sframe_fp_frames', 0), pct(d.get('try_used', 0), tried)))


def compare(runs):
    ends = {r['mode']: {} for r in runs}
    shares = {r['mode']: rooted_shares(r['samples'], ends[r['mode']]) for r in runs}
    tot = {m: (sum(v[0] for v in s.values()), sum(v[1] for v in s.values()))
           for m, s in shares.items()}
    top = sorted(shares.get('sframe', {}).items(), key=lambda kv: -kv[1][1])[:12]
    say('# chains reaching the root, samples of Debian\'s programs:')
    say('#   %-16s %s' % ('program', '  '.join('%-18s' % m for m in MODES)))
    for comm, _ in top:
        cells = []
        for m in MODES:
            r, t = shares.get(m, {}).get(comm, (0, 0))
            cells.append('%-18s' % ('%5.1f %% of %d' % (pct(r, t), t)))
        say('#   %-16s %s' % (comm, '  '.join(cells)))
    say('#   %-16s %s' % ('all', '  '.join('%-18s' % ('%5.1f %% of %d' % (pct(*tot.get(m, (0, 0))),
                                                                       tot.get(m, (0, 0))[1]))
                                             for m in MODES)))
    for m in MODES:
        short = sorted(ends.get(m, {}).items(), key=lambda kv: -kv[1])[:6]
        if short:
            say('# %s: chains that stop short end in %s' %
                (m, ', '.join('%s (%d)' % kv for kv in short)))
    for r in runs:
        n = max(len(r['samples']), 1)
        say('# %s: %d samples in %.0f s, %d B of perf.data, %d B per sample' %
            (r['mode'], len(r['samples']), r['secs'], r['bytes'], r['bytes'] // n))
    sf, dw = tot.get('sframe', (0, 0)), tot.get('dwarf', (0, 0))
    if sf[1] < 200:
        say('not ok sframe: only %d samples of Debian\'s programs' % sf[1])
    elif pct(*sf) < 95 or pct(*sf) + 2 < pct(*dw):
        say('not ok sframe: %.1f %% of Debian\'s programs\' chains reach the root '
            '(dwarf: %.1f %%)' % (pct(*sf), pct(*dw)))
    else:
        say('ok sframe: %.1f %% of %d chains of Debian\'s programs reach the root '
            '(dwarf: %.1f %%)' % (pct(*sf), sf[1], pct(*dw)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--work', required=True)
    args = ap.parse_args()
    runs = []
    try:
        for mode in MODES:
            r = record(mode, args.out, args.work)
            if r:
                check_records(r)
                check_counters(r)
                runs.append(r)
        if len(runs) == len(MODES):
            compare(runs)
    except Exception as e:  # a crash is a failure with its reason, not silence
        say('not ok profile: %s: %s' % (type(e).__name__, e))
    with open(os.path.join(args.out, 'profile'), 'w') as f:
        f.write('\n'.join(results) + '\n')


if __name__ == '__main__':
    main()
