#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What each perf call-graph mode costs and gets on code without frame pointers.

Records tests/perf/sframe_syscalls (no frame pointers, SFrame tables; a
getppid(2) at the bottom of a chain of DEPTH frames) with perf record
--call-graph fp, dwarf (8 KiB and 64 KiB stack dumps) and sframe, sampled
by K tracepoints per system call (k=1: syscalls:sys_enter_getppid; k=4:
also its exit and raw_syscalls' enter and exit, filtered to getppid), and
prints one tab-separated line per figure, as bench/deferred_bench.c does:

    callgraph	depth=D,k=K	MODE	METRIC	VALUE

    bytes_per_sample	perf.data bytes over samples
    complete_pct	samples whose user chain is the one the program
			recorded itself (every return address up to main's
			call of serve), in percent
    cost_ns_per_sample	the workload's time per call under perf, minus its
			time alone, over K
    slowdown		the workload's time per call under perf over alone
    report_ms_per_1k	perf report --stdio, milliseconds per 1000 samples,
			beyond its time on a recording without callchains
    report_s		perf report --stdio on the whole file, seconds
    samples		samples in the file (calls * K unless some were lost)

usage: perf_callgraph.py [--smoke] PERF WORKLOAD
"""
import os
import subprocess
import sys
import tempfile
import time

DEPTHS = (8, 32, 128)
KS = (1, 4)
MODES = (("fp", "fp"), ("dwarf-8K", "dwarf,8192"), ("dwarf-64K", "dwarf,65528"),
         ("sframe", "sframe"))
SAMPLES = 400		# per run: calls = SAMPLES / k
MMAP = "32M"		# per CPU: 64 KiB samples must not outrun perf
MAX_STACK = 1024	# deeper than any chain here, for the kernel and perf
GETPPID = 110		# x86_64

EVENTS = {
    1: ["-e", "syscalls:sys_enter_getppid"],
    4: ["-e", "syscalls:sys_enter_getppid", "-e", "syscalls:sys_exit_getppid",
        "-e", "raw_syscalls:sys_enter", "--filter", "id == %d" % GETPPID,
        "-e", "raw_syscalls:sys_exit", "--filter", "id == %d" % GETPPID],
}


def run_workload(cmd, report):
    """Run the workload (maybe under perf); return its expected chain and ns/call."""
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    fields = {}
    for line in open(report):
        key, *vals = line.split()
        fields[key] = vals
    chain = [int(v, 16) for v in fields["chain"]]
    return int(fields["syscall_ret"][0], 16), chain, float(fields["ns_per_call"][0])


def user_chains(perf, data):
    """Each sample's user frames (addresses, innermost first), from perf script."""
    out = subprocess.run([perf, "script", "--no-inline", "-i", data, "-F", "ip", "--max-stack",
                          str(MAX_STACK)], check=True, capture_output=True,
                         text=True, errors="replace").stdout
    for block in out.split("\n\n"):
        addrs = []
        for line in block.split("\n"):
            w = line.split()
            if w:
                try:
                    addrs.append(int(w[0], 16))
                except ValueError:
                    pass
        if addrs:
            yield [a for a in addrs if a < 1 << 47]


def complete(user, ip, chain):
    """The sample's user part starts at the syscall and has every recorded RA.

    perf's DWARF unwinder reports return addresses minus one."""
    if not user or user[0] != ip or len(user) < 1 + len(chain):
        return False
    return all(a in (ra, ra - 1) for a, ra in zip(user[1:], chain))


def record(perf, data, callgraph, k, workload):
    """The perf record command line: K events, every hit sampled."""
    cg = ["--call-graph", callgraph] if callgraph else []
    return ([perf, "record", "-q", "-o", data, "-m", MMAP, "-c", "1"] + cg + EVENTS[k] +
            ["--"] + workload)


def report_seconds(perf, data):
    t0 = time.monotonic()
    subprocess.run([perf, "report", "-i", data, "--stdio", "--max-stack", str(MAX_STACK)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0


def emit(case, mode, metric, value):
    print("callgraph\t%s\t%s\t%s\t%.6g" % (case, mode, metric, value), flush=True)


def main():
    args = sys.argv[1:]
    smoke = args and args[0] == "--smoke"
    if smoke:
        args = args[1:]
    if len(args) != 2:
        sys.exit(__doc__.split("\n\n")[-1].strip())
    perf, workload = args
    # --smoke: keeps it alive in make check; the two modes that must be complete
    depths, ks, samples, modes = DEPTHS, KS, SAMPLES, MODES
    if smoke:
        depths, ks, samples = (8,), (1,), 20
        modes = [m for m in MODES if m[0] in ("dwarf-8K", "sframe")]

    knob = "/proc/sys/kernel/perf_event_max_stack"
    old_max = open(knob).read().strip()
    with open(knob, "w") as f:
        f.write(str(MAX_STACK))
    tmp = tempfile.mkdtemp(prefix="perf_callgraph.")
    data, report = os.path.join(tmp, "perf.data"), os.path.join(tmp, "report")
    try:
        for depth in depths:
            for k in ks:
                case = "depth=%d,k=%d" % (depth, k)
                calls = samples // k
                wl = [workload, "-d", str(depth), "-n", str(calls), "-s", "getppid",
                      "-r", report]
                # the workload alone, best of three
                base = min(run_workload(wl, report)[2] for _ in range(3))
                # perf report's time on the same samples without callchains
                run_workload(record(perf, data, None, k, wl), report)
                plain = report_seconds(perf, data)
                for mode, arg in modes:
                    ip, chain, ns = run_workload(record(perf, data, arg, k, wl), report)
                    users = list(user_chains(perf, data))
                    n = len(users)
                    if not n:
                        sys.exit("perf_callgraph: %s %s: no samples" % (case, mode))
                    good = sum(complete(u, ip, chain) for u in users)
                    secs = report_seconds(perf, data)
                    emit(case, mode, "bytes_per_sample", os.path.getsize(data) / n)
                    emit(case, mode, "complete_pct", 100.0 * good / n)
                    emit(case, mode, "cost_ns_per_sample", (ns - base) / k)
                    emit(case, mode, "slowdown", ns / base)
                    emit(case, mode, "report_ms_per_1k", max(0.0, secs - plain) * 1e6 / n)
                    emit(case, mode, "report_s", secs)
                    emit(case, mode, "samples", n)
    finally:
        with open(knob, "w") as f:
            f.write(old_max)
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
