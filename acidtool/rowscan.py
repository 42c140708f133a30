"""``validate --level rows``: a scan of the five ACID columns of a file, a batch at a time, and
what the rules need of it (row counts, bucket and operation values, write id ranges, the first
row out of order or repeated, each stripe's last key).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from .core.facts import FileFacts, RowFacts
from .core.names import FLUSH_LENGTH_SUFFIX
from .errors import OrcReadError
from .fs import Location
from .orc import ACID_COLUMNS, FlushLength, open_orc, scan_batches


def scan_rows(loc: Location, rel: str, facts: FileFacts, data: bytes | None = None
              ) -> RowFacts:
    """Read only the five ACID columns, a batch at a time, and keep what the rules need.
    ``data``: the file's bytes, when its footer's read held them all."""
    footer = facts.footer
    names = {n.lower(): n for n, _ in footer.top_level()}
    columns = [names[c.lower()] for c in ACID_COLUMNS[:5]]
    bounds, row = [], 0
    for s in footer.stripes:
        row += s.rows
        bounds.append(row - 1)  # index of each stripe's last row
    try:
        # up to a streaming file's committed length, as Hive reads it
        flush = None
        if facts.flush_committed is not None:
            flush = FlushLength(loc.url_of(rel + FLUSH_LENGTH_SUFFIX), (facts.flush_committed,))
        src = open_orc(loc, rel, footer=footer, known=(facts.size, flush), data=data)
        acc = _RowAccumulator(bounds)
        for batch in scan_batches(src, batch_size=65536, columns=columns, use_threads=False,
                                  batch_readahead=0, fragment_readahead=0):
            acc.add(*(batch.column(i) for i in range(5)))
        return acc.facts(rel)
    except OrcReadError as exc:
        reason = str(exc).removeprefix(f"{loc.url_of(rel)}: ")
        return RowFacts(rel, error=f"ACID columns not readable: {reason}")


class _RowAccumulator:
    def __init__(self, stripe_ends: list[int]):
        self.ends = stripe_ends
        self.rows = 0
        self.buckets: set[int] = set()
        self.ops: set[int] = set()
        self.min_cur = self.max_cur = self.min_org = self.max_org = None
        self.inserts_other = 0
        self.unsorted = self.duplicate = None
        self.last = None  # (otid, bucket, rowId) of the previous batch's last row
        self.stripe_keys: list = [None] * len(stripe_ends)

    @staticmethod
    def _mm(arr, lo, hi):
        m = pc.min_max(arr)
        a, b = m["min"].as_py(), m["max"].as_py()
        if a is None:
            return lo, hi
        return (a if lo is None else min(lo, a)), (b if hi is None else max(hi, b))

    def add(self, op, org, bucket, row_id, cur):
        n = len(op)
        if n == 0:
            return
        self.min_cur, self.max_cur = self._mm(cur, self.min_cur, self.max_cur)
        self.min_org, self.max_org = self._mm(org, self.min_org, self.max_org)
        if len(self.buckets) < 4096:
            self.buckets.update(pc.unique(bucket).to_pylist())
        self.ops.update(v for v in pc.unique(op).to_pylist() if v is not None)
        self.inserts_other += pc.sum(pc.and_(pc.equal(op, 0),
                                             pc.not_equal(org, cur))).as_py() or 0
        keys = (org, bucket, row_id)
        if self.last is not None:
            keys = tuple(pa.concat_arrays([pa.array([v], k.type), k])
                         for v, k in zip(self.last, keys))
            base = self.rows - 1
        else:
            base = self.rows
        if len(keys[0]) > 1:
            a = [k.slice(0, len(k) - 1) for k in keys]
            b = [k.slice(1) for k in keys]
            eq = [pc.equal(x, y) for x, y in zip(a, b)]
            less = pc.or_(pc.less(a[0], b[0]),
                          pc.and_(eq[0], pc.or_(pc.less(a[1], b[1]),
                                                pc.and_(eq[1], pc.less(a[2], b[2])))))
            same = pc.and_(pc.and_(eq[0], eq[1]), eq[2])
            if self.duplicate is None:
                hits = pc.indices_nonzero(pc.fill_null(same, False))
                if len(hits):
                    self.duplicate = base + hits[0].as_py() + 1
            if self.unsorted is None:
                back = pc.invert(pc.or_(pc.fill_null(less, True), pc.fill_null(same, False)))
                hits = pc.indices_nonzero(back)
                if len(hits):
                    self.unsorted = base + hits[0].as_py() + 1
        start = self.rows
        for i, end in enumerate(self.ends):
            if start <= end < start + n:
                j = end - start
                self.stripe_keys[i] = (org[j].as_py(), bucket[j].as_py(), row_id[j].as_py())
        self.last = (org[n - 1].as_py(), bucket[n - 1].as_py(), row_id[n - 1].as_py())
        self.rows += n

    def facts(self, rel: str) -> RowFacts:
        return RowFacts(rel, self.rows, tuple(sorted(self.buckets)), tuple(sorted(self.ops)),
                        self.min_cur, self.max_cur, self.min_org, self.max_org,
                        self.inserts_other, self.unsorted, self.duplicate,
                        tuple(self.stripe_keys))
