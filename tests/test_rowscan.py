"""The --level rows accumulator against a plain reference, batch boundaries included."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from acidtool.table.rowscan import _RowAccumulator

TYPES = (pa.int32(), pa.int64(), pa.int32(), pa.int64(), pa.int64())


def _feed(rows: list[tuple], cuts: list[int], ends: list[int]):
    acc = _RowAccumulator(ends)
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(rows))), len(rows)]
    for lo, hi in zip(bounds, bounds[1:]):
        columns = list(zip(*rows[lo:hi])) or [()] * 5
        acc.add(*(pa.array(list(c), t) for c, t in zip(columns, TYPES)))
    return acc.facts("f")


def _reference(rows: list[tuple], ends: list[int]) -> dict:
    keys = [(org, bucket, rid) for _, org, bucket, rid, _ in rows]
    after = [i for i in range(1, len(keys)) if keys[i - 1] > keys[i]]
    repeated = [i for i in range(1, len(keys)) if keys[i - 1] == keys[i]]
    return {
        "rows": len(rows),
        "bucket_values": tuple(sorted({r[2] for r in rows})),
        "operations": tuple(sorted({r[0] for r in rows})),
        "min_current": min((r[4] for r in rows), default=None),
        "max_current": max((r[4] for r in rows), default=None),
        "min_original": min((r[1] for r in rows), default=None),
        "max_original": max((r[1] for r in rows), default=None),
        "inserts_with_other_original": sum(1 for r in rows if r[0] == 0 and r[1] != r[4]),
        "first_unsorted": after[0] if after else None,
        "first_duplicate": repeated[0] if repeated else None,
        "stripe_last_keys": tuple(keys[e] if e < len(keys) else None for e in ends),
    }


# Columns that often hold one value (one transaction, one bucket), as real files do.
def _column(choices):
    return st.one_of(st.sampled_from(choices).map(lambda v: [v]), st.just(choices))


row_sets = st.tuples(_column([0, 1, 2]), _column([1, 5]), _column([536870912, 536936448]),
                     _column([0, 1, 2, 3]), _column([1, 5])).flatmap(
    lambda cols: st.lists(st.tuples(*(st.sampled_from(c) for c in cols)), max_size=12))


@settings(max_examples=400, deadline=None)
@given(row_sets, st.lists(st.integers(0, 12), max_size=3),
       st.lists(st.integers(0, 11), max_size=3, unique=True))
def test_accumulator_matches_a_plain_reference(rows, cuts, ends):
    ends = sorted(ends)
    facts = _feed(rows, cuts, ends)
    expected = _reference(rows, ends)
    assert {k: getattr(facts, k) for k in expected} == expected


def test_null_event_values_count_nowhere():
    """A damaged or foreign file may hold nulls in the ACID columns: they are no bucket or
    operation value, and they neither order nor repeat rows (the scan used to fail on them)."""
    acc = _RowAccumulator([2])
    acc.add(pa.array([0, None, 0], pa.int32()), pa.array([1, 1, None], pa.int64()),
            pa.array([536870912, None, 536870912], pa.int32()),
            pa.array([0, 1, 1], pa.int64()), pa.array([1, 1, 1], pa.int64()))
    facts = acc.facts("f")
    assert facts.bucket_values == (536870912,) and facts.operations == (0,)
    assert (facts.min_original, facts.max_original) == (1, 1)
    assert facts.first_unsorted is None and facts.first_duplicate is None
    assert facts.null_values == (1, 1, 1, 0, 0)
