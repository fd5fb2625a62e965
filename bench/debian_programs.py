#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What each perf call-graph mode gets on Debian's own programs.

Records Debian 12's python3, perl and bash (no frame pointers, no SFrame:
.eh_frame only) running a small CPU-bound script, sampled by cpu-clock
every 1 ms, with perf record --call-graph sframe, fp and dwarf (every
4 ms: perf script's libdw unwind of each copied stack is slow in an
emulated guest), and prints one tab-separated line per figure, as
bench/deferred_bench.c does:

    debian	PROGRAM	MODE	METRIC	VALUE

    root_pct		samples of the program whose user chain reaches
			the process's root (libc's start code, _start, or
			ld.so's _dl_start_user before main), in percent
    bytes_per_sample	perf.data bytes over the program's samples
    samples		the program's samples in the file

tests/perf/e2e_tables.py's eh_frame_chains_of_debians_own_programs asserts
the sframe figure; this prints it beside what fp and dwarf get. --smoke
(make check, so that it cannot rot): bash alone, a fiftieth of its loop,
sframe and fp (dwarf's perf script takes most of the time; its mode is
only another argument to the same code).

--modes MODE/... records with those call-graph modes instead (dwarf
every 4 ms, the others every 1 ms): the arm64 guest's run uses
fp,defer, fp and dwarf, its walk being by frame records only.

usage: debian_programs.py [--smoke] [--modes MODE/...] PERF
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'tests', 'perf'))
import perf_e2e  # noqa: E402  (the parser of perf script's output)
from e2e_tables import DEBIAN_PROGRAMS, DEBIAN_ROOTS  # noqa: E402  (the test's)

MODES = (('sframe', '1000000'), ('fp', '1000000'), ('dwarf', '4000000'))


def emit(program, mode, metric, value):
    # A mode's commas ("fp,defer") would split the tables' columns.
    print('debian\t%s\t%s\t%s\t%.6g' % (program, mode.replace(',', '+'), metric, value),
          flush=True)


def main():
    args = sys.argv[1:]
    programs, modes = DEBIAN_PROGRAMS, MODES
    if args[:1] == ['--smoke']:
        modes = MODES[:2]
        args = args[1:]
        programs = (('bash', ['bash', '-c',
                              'i=0; while [ $i -lt 100 ]; do i=$((i + 1)); done']),)
    if args[:1] == ['--modes'] and len(args) > 1:
        modes = tuple((m, '4000000' if m == 'dwarf' else '1000000')
                      for m in args[1].split('/') if m)
        args = args[2:]
    if len(args) != 1 or not modes:
        sys.exit(__doc__.split('\n\n')[-1].strip())
    try:
        measure(args[0], programs, modes)
    except perf_e2e.Failed as e:
        sys.exit('debian_programs: %s' % e)


def measure(perf, programs, modes):
    with tempfile.TemporaryDirectory(prefix='debian_programs.') as tmp:
        for name, argv in programs:
            for mode, period in modes:
                data = os.path.join(tmp, '%s-%s.data' % (name, mode))
                perf_e2e.run([perf, 'record', '-q', '-o', data, '-e', 'cpu-clock', '-c',
                              period, '--call-graph', mode, '--'] + argv, timeout=600)
                items, _ = perf_e2e.script(data, perf=perf)
                samples = [it for it in items if 'record' not in it and
                           it['head'].split()[0] == name[:15]]
                if not samples:
                    sys.exit('debian_programs: %s %s: no samples' % (name, mode))
                rooted = sum(1 for it in samples if any(
                    sym.startswith(DEBIAN_ROOTS) for sym in perf_e2e.user_part(it['frames'])[0]))
                emit(name, mode, 'root_pct', 100.0 * rooted / len(samples))
                emit(name, mode, 'bytes_per_sample', os.path.getsize(data) / len(samples))
                emit(name, mode, 'samples', len(samples))


if __name__ == '__main__':
    main()
