#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py VMLINUX PROF NORM_SYM [--lines FUNC,...] -> per-function insns per call"""
import bisect, collections, re, subprocess, sys
vml, prof, norm = sys.argv[1:4]
lines_for = set(sys.argv[5].split(',')) if len(sys.argv) > 5 and sys.argv[4] == '--lines' else set()
syms = []
for l in subprocess.run(['nm', '-n', vml], capture_output=True, text=True).stdout.splitlines():
    p = l.split()
    if len(p) == 3 and p[1] in 'tTwW':
        syms.append((int(p[0], 16), p[2]))
addrs = [a for a, _ in syms]
counts = {}
for l in open(prof):
    a, c = l.split()
    counts[int(a, 16)] = int(c)
def sym(a):
    i = bisect.bisect_right(addrs, a) - 1
    return syms[i][1] if i >= 0 and a - addrs[i] < 0x10000 else '?'
nsym = dict((n, a) for a, n in syms)
calls = counts.get(nsym.get(norm, -1), 0)
if not calls:
    sys.exit('no calls of ' + norm)
per = collections.Counter()
byaddr = collections.defaultdict(list)
for a, c in counts.items():
    s = sym(a)
    per[s] += c
    byaddr[s].append(a)
print('calls', calls)
tot = 0
for s, c in per.most_common():
    v = c / calls
    if v < 0.5:
        break
    tot += v
    print('%8.1f %s' % (v, s))
print('%8.1f total (functions >= 0.5)' % tot)
for f in lines_for:
    ads = sorted(byaddr.get(f, []))
    if not ads:
        continue
    out = subprocess.run(['addr2line', '-e', vml, '-i', '-a'] + ['%x' % a for a in ads],
                         capture_output=True, text=True).stdout.splitlines()
    # parse: 0xaddr line, then one or more file:line (inline chain innermost first)
    cur = None; chain = {}
    for l in out:
        if l.startswith('0x'):
            cur = int(l, 16); chain[cur] = []
        else:
            chain[cur].append(re.sub(r'^.*/build/linux[^/]*/', '', l.split(' (')[0]))
    bl = collections.Counter()
    for a in ads:
        c = chain.get(a, ['?'])
        bl[' <- '.join(x.rsplit('/',1)[-1] for x in c[:3])] += counts[a]
    print('== lines of', f)
    for k, c in sorted(bl.items(), key=lambda x: -x[1]):
        if c / calls >= 0.2:
            print('%8.1f %s' % (c / calls, k))
