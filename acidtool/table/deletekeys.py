"""One bucket's delete keys, held compactly for membership tests (``read`` and ``compact``
apply delete events with them)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KEY = ["originalTransaction", "bucket", "rowId"]


class DeleteKeys:
    """One bucket's valid delete keys, held compactly for membership tests.

    The usual case packs (originalTransaction, rowId) into one int64 per bucket property, held
    sorted, so a batch is tested with a binary search per row (``np.searchsorted``: a quarter
    of the time of Arrow's ``is_in``, which builds its hash set again at every call); keys
    that do not fit (write ids from 2^31 or row ids from 2^32) or are null fall back to an
    Arrow hash join on the three columns."""

    def __init__(self, table: pa.Table):
        self.table = table
        org, row = table.column("originalTransaction"), table.column("rowId")
        self.min_org, self.max_org = (v.as_py() for v in pc.min_max(org).values())
        self.packable = _packable(org, row)
        self.nulls = any(table.column(k).null_count for k in KEY)
        self.by_bucket: dict[int, np.ndarray | pa.Array] = {}
        if self.packable:
            buckets = table.column("bucket")
            for value in pc.unique(buckets).to_pylist():
                part = table.filter(pc.equal(buckets, value))
                keys = _pack(part.column("originalTransaction"), part.column("rowId"))
                self.by_bucket[value] = keys.combine_chunks() if self.nulls else \
                    np.sort(keys.to_numpy())

    def match(self, batch: pa.RecordBatch) -> pa.Array | None:
        """A mask of the rows of ``batch`` that are deleted, or None when none can be."""
        org = batch.column("originalTransaction")
        low, high = (v.as_py() for v in pc.min_max(org).values())
        if low is None or high < self.min_org or low > self.max_org:
            return None
        row, bucket = batch.column("rowId"), batch.column("bucket")
        if not (self.packable and _packable(org, row)):
            return _anti_join_mask(batch, self.table)
        # a null key (an event validate calls ACID025): Arrow's is_in, which matches a null
        looked_up = self.nulls or bool(org.null_count or row.null_count or bucket.null_count)
        key = _pack(org, row)
        sought = None if looked_up else key.to_numpy()
        values = pc.unique(bucket).to_pylist()
        mask = None
        for value in values:
            keys = self.by_bucket.get(value)
            if keys is None:
                continue
            hit = pc.is_in(key, value_set=keys) if sought is None else \
                pa.array(_found(keys, sought))
            if len(values) > 1:
                hit = pc.and_(hit, pc.equal(bucket, value))
            mask = hit if mask is None else pc.or_(mask, hit)
        return mask


def _found(keys: np.ndarray, sought: np.ndarray) -> np.ndarray:
    """Which of ``sought`` are in ``keys`` (sorted, not empty)."""
    at = np.searchsorted(keys, sought)
    at[at == len(keys)] = 0
    return keys[at] == sought


def _packable(org, row) -> bool:
    lo_o, hi_o = (v.as_py() for v in pc.min_max(org).values())
    lo_r, hi_r = (v.as_py() for v in pc.min_max(row).values())
    return (lo_o is None or (lo_o >= 0 and hi_o < 2**31)) and \
        (lo_r is None or (lo_r >= 0 and hi_r < 2**32))


def _pack(org, row) -> pa.Array:
    """(originalTransaction, rowId) as one int64 (``_packable``: they fit; a null stays
    null)."""
    return pc.bit_wise_or(pc.shift_left(pc.cast(org, pa.int64()), 32), pc.cast(row, pa.int64()))


def _anti_join_mask(batch: pa.RecordBatch, deletes: pa.Table) -> pa.Array:
    """The general case: an Arrow semi join on the three key columns (it cannot carry the
    struct payload, so positions travel with the keys)."""
    positions = pa.array(range(batch.num_rows), pa.int64())
    keys = pa.table({**{k: batch.column(k) for k in KEY}, "__pos": positions})
    hits = keys.join(deletes, keys=KEY, join_type="left semi", use_threads=True)
    return pc.is_in(positions, value_set=hits.column("__pos").combine_chunks())
