"""``validate --level rows``: a scan of the five ACID columns of a file, a batch at a time, and
what the rules need of it (row counts, bucket and operation values, write id ranges, the first
row out of order or repeated, each stripe's last key).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..core.errors import OrcReadError
from ..core.facts import FileFacts, RowFacts
from ..core.names import FLUSH_LENGTH_SUFFIX
from ..io.fs import Location
from ..io.orc import ACID_COLUMNS, FlushLength, open_orc, scan_batches


def scan_rows(loc: Location, rel: str, facts: FileFacts, data: bytes | None = None
              ) -> RowFacts:
    """Read only the five ACID columns, a batch at a time, and keep what the rules need.
    ``data``: the file's bytes, when its footer's read held them all."""
    footer = facts.footer
    assert footer is not None, "rows are scanned of files whose footer was read"
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
    """What the rules need of the ACID columns, a batch at a time. Null values (damaged or
    foreign files) count nowhere: not as bucket or operation values, not in the write id
    ranges, and a comparison with a null neither orders nor repeats rows."""

    def __init__(self, stripe_ends: list[int]):
        self.ends = stripe_ends
        self.rows = 0
        self.buckets: set[int] = set()
        self.ops: set[int] = set()
        self.min_cur = self.max_cur = self.min_org = self.max_org = None
        self.inserts_other = 0
        self.unsorted = self.duplicate = None
        # (otid, bucket, rowId) of the previous batch's last row
        self.last: tuple | None = None
        self.stripe_keys: list = [None] * len(stripe_ends)
        self.nulls = [0] * 5

    def add(self, op, org, bucket, row_id, cur):
        n = len(op)
        if n == 0:
            return
        for i, column in enumerate((op, org, bucket, row_id, cur)):
            self.nulls[i] += column.null_count
        cur_lo, cur_hi = _min_max(cur)
        org_lo, org_hi = _min_max(org)
        self.min_cur, self.max_cur = _widen(self.min_cur, self.max_cur, cur_lo, cur_hi)
        self.min_org, self.max_org = _widen(self.min_org, self.max_org, org_lo, org_hi)
        buckets = [v for v in pc.unique(bucket).to_pylist() if v is not None]
        if len(self.buckets) < 4096:
            self.buckets.update(buckets)
        ops = [v for v in pc.unique(op).to_pylist() if v is not None]
        self.ops.update(ops)
        # insert events whose originalTransaction is not their currentTransaction; none where
        # both columns hold one same value (every insert delta written by one transaction)
        if 0 in ops and not org_lo == org_hi == cur_lo == cur_hi:
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
            # Leading columns that hold one value throughout (and did in the previous batch's
            # last row) compare equal everywhere: the rest decides the order.
            skip = 0
            if org.null_count == 0 and org_lo == org_hi and (
                    self.last is None or self.last[0] == org_lo):
                skip = 1
                if bucket.null_count == 0 and len(buckets) == 1 and (
                        self.last is None or self.last[1] == buckets[0]):
                    skip = 2
            less, same = _compare([k.slice(0, len(k) - 1) for k in keys[skip:]],
                                  [k.slice(1) for k in keys[skip:]])
            if self.duplicate is None:
                hit = pc.index(same, True).as_py()  # nulls are not True
                if hit >= 0:
                    self.duplicate = base + hit + 1
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
                        tuple(self.stripe_keys), None, tuple(self.nulls))


def _min_max(arr) -> tuple:
    m = pc.min_max(arr)
    return m["min"].as_py(), m["max"].as_py()


def _widen(lo, hi, batch_lo, batch_hi) -> tuple:
    if batch_lo is None:
        return lo, hi
    return (batch_lo if lo is None else min(lo, batch_lo)), \
        (batch_hi if hi is None else max(hi, batch_hi))


def _compare(a: list, b: list) -> tuple:
    """(less, same): whether each row of the columns ``a`` comes before, or equals, the same
    row of ``b``, column by column (Kleene logic: a null compares as unknown)."""
    less, same = pc.less(a[-1], b[-1]), pc.equal(a[-1], b[-1])
    for x, y in zip(reversed(a[:-1]), reversed(b[:-1])):
        eq = pc.equal(x, y)
        less = pc.or_(pc.less(x, y), pc.and_(eq, less))
        same = pc.and_(eq, same)
    return less, same
