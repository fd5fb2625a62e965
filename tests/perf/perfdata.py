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
        types = set()
        self.sample_id_all = True
        for off in range(a_off, a_off + a_size, attr_size):
            sample_type, _, flags = struct.unpack_from('<QQQ', self.buf, off + 24)
            types.add(sample_type)
            self.sample_id_all &= bool(flags & SAMPLE_ID_ALL)
        if len(types) != 1:
            raise ValueError('%s: events with different sample_type %s' %
                             (path, sorted(types)))
        self.sample_type = types.pop()
        if self.sample_type & READ:
            raise ValueError('%s: PERF_SAMPLE_READ is not handled' % path)
        self.data = (d_off, d_size)

    def _u64(self, off):
        return struct.unpack_from('<Q', self.buf, off)[0]

    def records(self):
        st = self.sample_type
        off, end = self.data[0], self.data[0] + self.data[1]
        while off < end:
            type_, _, size = struct.unpack_from('<IHH', self.buf, off)
            if size < 8:
                raise ValueError('record of size %d at %#x' % (size, off))
            r = Record(off, type_)
            if type_ == RECORD_SAMPLE:
                p = off + 8 + 8 * bool(st & IDENTIFIER) + 8 * bool(st & IP)
                if st & TID:
                    r.tid = struct.unpack_from('<I', self.buf, p + 4)[0]
                    p += 8
                if st & TIME:
                    r.time_at, r.time = p, self._u64(p)
                    p += 8
                p += 8 * sum(bool(st & b) for b in (ADDR, ID, STREAM_ID, CPU, PERIOD))
                if st & CALLCHAIN:
                    nr = self._u64(p)
                    if nr >= 2 and self._u64(p + 8 * (nr - 1)) == CONTEXT_USER_DEFERRED:
                        r.cookie = self._u64(p + 8 * nr)
            elif type_ < USER_TYPE_START and self.sample_id_all:
                if type_ == RECORD_CALLCHAIN_DEFERRED:
                    r.cookie = self._u64(off + 8)
                # The sample_id trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER.
                p = off + size - 8 * sum(bool(st & b) for b in
                                         (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER))
                if st & TID:
                    r.tid = struct.unpack_from('<I', self.buf, p + 4)[0]
                    p += 8
                if st & TIME:
                    r.time_at, r.time = p, self._u64(p)
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
    if not pd.sample_type & TIME or not pd.sample_id_all:
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
