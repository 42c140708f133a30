"""One bucket's delete keys, held compactly for membership tests (``read`` and ``compact``
apply delete events with them)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

KEY = ["originalTransaction", "bucket", "rowId"]


class DeleteKeys:
    """One bucket's valid delete keys, held compactly for membership tests.

    The usual case packs (originalTransaction, rowId) into one int64 per bucket property, so a
    batch is tested with one hash lookup per row (``is_in``); keys that do not fit (write ids
    from 2^31 or row ids from 2^32) fall back to an Arrow hash join on the three columns."""

    def __init__(self, table: pa.Table):
        self.table = table
        org, row = table.column("originalTransaction"), table.column("rowId")
        self.min_org, self.max_org = (v.as_py() for v in pc.min_max(org).values())
        self.packable = _packable(org, row)
        self.by_bucket: dict[int, pa.Array] = {}
        if self.packable:
            buckets = table.column("bucket")
            for value in pc.unique(buckets).to_pylist():
                part = table.filter(pc.equal(buckets, value))
                self.by_bucket[value] = _pack(part.column("originalTransaction"),
                                              part.column("rowId")).combine_chunks()

    def match(self, batch: pa.RecordBatch) -> pa.Array | None:
        """A mask of the rows of ``batch`` that are deleted, or None when none can be."""
        org = batch.column("originalTransaction")
        low, high = (v.as_py() for v in pc.min_max(org).values())
        if low is None or high < self.min_org or low > self.max_org:
            return None
        row, bucket = batch.column("rowId"), batch.column("bucket")
        if not (self.packable and _packable(org, row)):
            return _anti_join_mask(batch, self.table)
        key = _pack(org, row)
        values = pc.unique(bucket).to_pylist()
        mask = None
        for value in values:
            keys = self.by_bucket.get(value)
            if keys is None:
                continue
            hit = pc.is_in(key, value_set=keys)
            if len(values) > 1:
                hit = pc.and_(hit, pc.equal(bucket, value))
            mask = hit if mask is None else pc.or_(mask, hit)
        return mask


def _packable(org, row) -> bool:
    lo_o, hi_o = (v.as_py() for v in pc.min_max(org).values())
    lo_r, hi_r = (v.as_py() for v in pc.min_max(row).values())
    return (lo_o is None or (lo_o >= 0 and hi_o < 2**31)) and \
        (lo_r is None or (lo_r >= 0 and hi_r < 2**32))


def _pack(org, row) -> pa.Array:
    return pc.bit_wise_or(pc.shift_left(pc.cast(org, pa.int64()), 32), pc.cast(row, pa.int64()))


def _anti_join_mask(batch: pa.RecordBatch, deletes: pa.Table) -> pa.Array:
    """The general case: an Arrow semi join on the three key columns (it cannot carry the
    struct payload, so positions travel with the keys)."""
    positions = pa.array(range(batch.num_rows), pa.int64())
    keys = pa.table({**{k: batch.column(k) for k in KEY}, "__pos": positions})
    hits = keys.join(deletes, keys=KEY, join_type="left semi", use_threads=True)
    return pc.is_in(positions, value_set=hits.column("__pos").combine_chunks())
