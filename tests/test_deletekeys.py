"""DeleteKeys, the delete step of ``read``, ``compact`` and ``export``: a batch's rows are
deleted exactly where a delete event names their (originalTransaction, bucket, rowId)."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from acidtool.table.deletekeys import DeleteKeys

# small ranges, so that rows and events meet
BUCKETS = st.sampled_from([536870912, 536936448, 537001984])
KEYS = st.tuples(st.integers(0, 4), BUCKETS, st.integers(0, 40))
# now and then a key past what one int64 packs (write id 2^31, row id 2^32), in the events, in
# the rows, or in both
LARGE = st.sampled_from([None, None, None, None, "events", "rows", "both"])
LARGE_KEYS = [(2**31 + 1, 536870912, 3), (2, 536870912, 2**32 + 5)]


def _table(keys) -> pa.Table:
    return pa.table({"originalTransaction": pa.array([k[0] for k in keys], pa.int64()),
                     "bucket": pa.array([k[1] for k in keys], pa.int32()),
                     "rowId": pa.array([k[2] for k in keys], pa.int64())})


@settings(max_examples=300, deadline=None)
@given(st.lists(KEYS, min_size=1, max_size=60), st.lists(KEYS, min_size=1, max_size=80), LARGE)
def test_a_row_is_deleted_exactly_where_an_event_names_its_key(events, rows, large):
    if large in ("events", "both"):
        events = events + LARGE_KEYS
    if large in ("rows", "both"):
        rows = rows + LARGE_KEYS
    deleted = DeleteKeys(_table(events)).match(_table(rows).to_batches()[0])
    got = [False] * len(rows) if deleted is None else deleted.to_pylist()
    assert got == [r in set(events) for r in rows]


def test_sorted_keys_of_many_rows_and_buckets():
    """Rows of two buckets in one batch, events at the ends of each bucket's range."""
    rows = [(1, b, r) for b in (536870912, 536936448) for r in range(1000)]
    events = [(1, 536870912, 0), (1, 536870912, 999), (1, 536936448, 500), (1, 536936448, 1000)]
    deleted = DeleteKeys(_table(events)).match(_table(rows).to_batches()[0]).to_pylist()
    assert [r for r, d in zip(rows, deleted) if d] == events[:3]
