# SPDX-License-Identifier: GPL-2.0
"""Read the records of a perf.data file and move deferred records in time.

Only what the tests need: the file header, the attributes' sample_type,
and per record its type, time, thread, and for samples with a deferred
user part and for PERF_RECORD_CALLCHAIN_DEFERRED the cookie.  Files made
by perf record into a file (not a pipe), uncompressed.

skew_records() rewrites the timestamps of the deferred records as CPU
clocks that disagree would have: before some of their own samples, or
after samples of the thread's next kernel entry.
"""
import bisect
import shutil
import struct

MAGIC = b'PERFILE2'
RECORD_SAMPLE = 9
RECORD_CALLCHAIN_DEFERRED = 22
USER_TYPE_START = 64
CONTEXT_USER_DEFERRED = (1 << 64) - 640

# sample_type bits, in the order a sample carries them
IP, TID, TIME, ADDR, READ, CALLCHAIN, ID, CPU, PERIOD, STREAM_ID = \
    (1 << n for n in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9))
IDENTIFIER = 1 << 16
SAMPLE_ID_ALL = 1 << 18     # in the attribute's flags word


class Record:
    """One record: @offset of its header in the file, @type, @time (None
    without PERF_SAMPLE_TIME), @time_at (file offset of the time field),
    @tid, and @cookie for deferred samples and records (else None)."""

    def __init__(self, offset, type_):
        self.offset, self.type = offset, type_
        self.time = self.time_at = self.tid = self.cookie = None


class PerfData:
    def __init__(self, path):
        with open(path, 'rb') as f:
            self.buf = f.read()
        magic, _, attr_size, a_off, a_size, d_off, d_size = \
            struct.unpack_from('<8sQQQQQQ', self.buf)
        if magic != MAGIC:
            raise ValueError('%s is not a perf.data file (magic %r)' % (path, magic))
        self.sample_id_all = True
        self.by_id = {}
        types = set()
        for off in range(a_off, a_off + a_size, attr_size):
            sample_type, _, flags = struct.unpack_from('<QQQ', self.buf, off + 24)
            if sample_type & READ:
                raise ValueError('%s: PERF_SAMPLE_READ is not handled' % path)
            types.add(sample_type)
            self.sample_id_all &= bool(flags & SAMPLE_ID_ALL)
            ids_off, ids_size = struct.unpack_from('<QQ', self.buf, off + attr_size - 16)
            for i in range(ids_off, ids_off + ids_size, 8):
                self.by_id[self._u64(i)] = sample_type
        # Events that differ in sample_type tell theirs by PERF_SAMPLE_IDENTIFIER.
        if len(types) > 1 and not all(t & IDENTIFIER for t in types):
            raise ValueError('%s: events with different sample_type and no '
                             'PERF_SAMPLE_IDENTIFIER' % path)
        self.first_type = struct.unpack_from('<Q', self.buf, a_off + 24)[0]
        self.sample_type = types.pop() if len(types) == 1 else None
        self.data = (d_off, d_size)

    def _u64(self, off):
        return struct.unpack_from('<Q', self.buf, off)[0]

    def _type_of(self, type_, off, size):
        if self.sample_type is not None:
            return self.sample_type
        at = off + 8 if type_ == RECORD_SAMPLE else off + size - 8
        # perf's own synthesized records carry id 0: the first event's, to perf.
        return self.by_id.get(self._u64(at), self.first_type)

    def _tid_time(self, r, st, p):
        """Read the TID and TIME fields at @p into @r; return what follows."""
        if st & TID:
            r.tid = struct.unpack_from('<I', self.buf, p + 4)[0]
            p += 8
        if st & TIME:
            r.time_at, r.time = p, self._u64(p)
            p += 8
        return p

    def records(self):
        off, end = self.data[0], self.data[0] + self.data[1]
        while off < end:
            type_, _, size = struct.unpack_from('<IHH', self.buf, off)
            if size < 8:
                raise ValueError('record of size %d at %#x' % (size, off))
            r = Record(off, type_)
            st = 0
            if type_ == RECORD_SAMPLE or (type_ < USER_TYPE_START and self.sample_id_all):
                st = self._type_of(type_, off, size)
            if type_ == RECORD_SAMPLE:
                p = self._tid_time(r, st, off + 8 + 8 * bool(st & IDENTIFIER) +
                                   8 * bool(st & IP))
                p += 8 * sum(bool(st & b) for b in (ADDR, ID, STREAM_ID, CPU, PERIOD))
                if st & CALLCHAIN:
                    nr = self._u64(p)
                    if nr >= 2 and self._u64(p + 8 * (nr - 1)) == CONTEXT_USER_DEFERRED:
                        r.cookie = self._u64(p + 8 * nr)
            elif type_ < USER_TYPE_START and self.sample_id_all:
                if type_ == RECORD_CALLCHAIN_DEFERRED:
                    r.cookie = self._u64(off + 8)
                # The sample_id trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER.
                self._tid_time(r, st, off + size - 8 * sum(
                    bool(st & b) for b in (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER)))
            yield r
            off += size


def skew_records(src, dst, how):
    """Copy @src to @dst with each deferred record's time moved.

    how='late':  just after the first later sample of the same thread with
                 another cookie (its next kernel entry);
    how='early': just before the first sample that waits for it.
    A record is left where it is when a side-band record of its thread
    (MMAP2 and COMM of an exec) lies on the way: perf resolves a merged
    sample against the thread's maps when it delivers it, and the test of
    the merging must not depend on that.  Return the number of records
    moved."""
    pd = PerfData(src)
    if not pd.sample_id_all:
        raise ValueError('%s: records have no time' % src)
    recs = sorted((r for r in pd.records() if r.time is not None),
                  key=lambda r: (r.time, r.offset))
    side = {}
    for r in recs:
        if r.type not in (RECORD_SAMPLE, RECORD_CALLCHAIN_DEFERRED) and \
                r.type < USER_TYPE_START and r.tid is not None:
            side.setdefault(r.tid, []).append(r.time)

    def clear(r, t):
        times = side.get(r.tid, [])
        lo, hi = min(r.time, t), max(r.time, t)
        i = bisect.bisect_left(times, lo)
        return i == len(times) or times[i] > hi

    moved = {}
    if how == 'early':
        first = {}
        for r in recs:
            if r.type == RECORD_SAMPLE and r.cookie is not None:
                first.setdefault((r.tid, r.cookie), r.time)
        for r in recs:
            t = first.get((r.tid, r.cookie))
            if r.type == RECORD_CALLCHAIN_DEFERRED and t is not None and clear(r, t - 1):
                moved[r.time_at] = t - 1
    elif how == 'late':
        waiting = {}        # tid -> its records still looking for a next entry
        for r in recs:
            if r.type == RECORD_CALLCHAIN_DEFERRED:
                waiting.setdefault(r.tid, []).append(r)
            elif r.type == RECORD_SAMPLE and r.cookie is not None:
                keep = []
                for w in waiting.pop(r.tid, []):
                    if w.cookie != r.cookie:
                        if clear(w, r.time + 1):
                            moved[w.time_at] = r.time + 1
                    else:
                        keep.append(w)
                if keep:
                    waiting[r.tid] = keep
    else:
        raise ValueError('how is early or late, not %r' % how)
    shutil.copyfile(src, dst)
    with open(dst, 'r+b') as f:
        for at, t in moved.items():
            f.seek(at)
            f.write(struct.pack('<Q', t))
    return len(moved)


# A file made here: one software event with deferred callchains, records
# given as ('comm', pid, tid, time, cpu, name), ('sample', pid, tid, time,
# cpu, cookie), ('deferred', pid, tid, time, cpu, cookie, [user ips]), in
# file order.  No feature sections: perf script reads it as it is.
WRITE_TYPE = IP | TID | TIME | CPU | CALLCHAIN
CONTEXT_KERNEL = (1 << 64) - 128
KERNEL_IP = 0xffffffff81000000
RECORD_COMM = 3


def _sample_id(pid, tid, time, cpu):
    return struct.pack('<IIQII', pid, tid, time, cpu, 0)


def write(path, records):
    attr = struct.pack('<IIQQQQQ', 1, 136, 0, 1000, WRITE_TYPE, 0,
                       SAMPLE_ID_ALL | (1 << 38) | (1 << 39))
    attr += b'\0' * (136 - len(attr))
    data = b''
    for r in records:
        kind, pid, tid, time, cpu = r[:5]
        if kind == 'comm':
            body = struct.pack('<II16s', pid, tid, r[5].encode()) + \
                _sample_id(pid, tid, time, cpu)
            data += struct.pack('<IHH', RECORD_COMM, 0, 8 + len(body)) + body
        elif kind == 'sample':
            chain = [CONTEXT_KERNEL, KERNEL_IP, CONTEXT_USER_DEFERRED, r[5]]
            body = struct.pack('<QIIQII', KERNEL_IP, pid, tid, time, cpu, 0) + \
                struct.pack('<%dQ' % (1 + len(chain)), len(chain), *chain)
            data += struct.pack('<IHH', RECORD_SAMPLE, 1, 8 + len(body)) + body
        elif kind == 'deferred':
            ips = r[6]
            body = struct.pack('<QQ%dQ' % len(ips), r[5], len(ips), *ips) + \
                _sample_id(pid, tid, time, cpu)
            data += struct.pack('<IHH', RECORD_CALLCHAIN_DEFERRED, 2, 8 + len(body)) + body
        else:
            raise ValueError('unknown record kind %r' % kind)
    header_size, attr_size = 104, 136 + 16
    ids_at = header_size + attr_size
    data_at = ids_at + 8
    with open(path, 'wb') as f:
        f.write(struct.pack('<8sQQQQQQQQ', MAGIC, header_size, attr_size,
                            header_size, attr_size, data_at, len(data), 0, 0))
        f.write(b'\0' * 32)                          # no features
        f.write(attr + struct.pack('<QQ', ids_at, 8))
        f.write(struct.pack('<Q', 1))               # the event's id
        f.write(data)
