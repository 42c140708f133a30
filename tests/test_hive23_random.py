"""Random tables written by Hive 2.3's own OrcRecordUpdater: ``acidtool read`` returns what
Hive's OrcInputFormat returns for a random snapshot, and ``validate --level rows`` finds no
error (any error on a table Hive wrote itself is a false positive).

Hypothesis writes a history the way Hive's SQL layer does: each statement of a transaction
inserts rows, or updates or deletes rows committed earlier, in one bucket, with its events in
ROW__ID order; split-update (delete_delta_) and legacy tables both."""

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from .helpers.hive23 import BUCKETS, Hive23, acidtool_read, write_history
from .helpers.runner import run

pytestmark = pytest.mark.spark



@pytest.fixture(scope="module")
def hive(spark):
    return Hive23(spark)


statement = st.tuples(st.sampled_from(["insert", "insert", "update", "delete"]),
                      st.integers(0, BUCKETS - 1), st.integers(1, 4))
history = st.lists(st.lists(statement, min_size=1, max_size=2), min_size=1, max_size=5)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(history, st.booleans(), st.data())
def test_random_hive_tables_read_and_validate(hive, transactions, split_update, data):
    table = Path(tempfile.mkdtemp(prefix="acid-hive23-random-")) / "t"
    try:
        write_history(hive, table, transactions, split_update)
        if not table.exists():
            return  # every statement was skipped: nothing written
        top = len(transactions)
        exceptions = data.draw(st.lists(st.integers(1, top), max_size=2, unique=True))
        txns = ":".join(map(str, [top, 9223372036854775807, *sorted(exceptions)]))
        expected = hive.read(str(table), txns, buckets=BUCKETS, split_update=split_update)
        assert acidtool_read(table, txns) == expected
        changed = any(op != "insert" for t in transactions for op, _, _ in t)
        event(f"{'split-update' if split_update else 'legacy'}, "
              f"{'updates or deletes' if changed else 'inserts only'}, "
              f"{'rows' if expected else 'no rows'} in the snapshot")
        report = run("validate", table, "--hive-version", "2", "--level", "rows",
                     "--format", "json")
        errors = [f for f in report.json()["findings"] if f["severity"] == "error"]
        assert errors == [], transactions
    finally:
        shutil.rmtree(table.parent)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(history, st.booleans(), st.sampled_from(["--major", "--minor"]), st.data())
def test_hive_reads_the_same_rows_after_acidtool_compacts_its_tables(hive, transactions,
                                                                      split_update, kind, data):
    """Random tables written by Hive 2.3's own writer, compacted by acidtool (major or minor,
    at a snapshot with open or aborted transactions): Hive 2.3's reader returns the same rows
    and ROW__IDs as before, at that snapshot and at every later one."""
    table = Path(tempfile.mkdtemp(prefix="acid-hive23-compact-")) / "t"
    try:
        write_history(hive, table, transactions, split_update)
        if not table.exists():
            return
        top = len(transactions)
        exceptions = data.draw(st.lists(st.integers(1, top), max_size=2, unique=True))
        txns = ":".join(map(str, [top, 9223372036854775807, *sorted(exceptions)]))
        later = ":".join(map(str, [top + 5, 9223372036854775807, *sorted(exceptions)]))
        before = {s: hive.read(str(table), s, buckets=BUCKETS, split_update=split_update)
                  for s in (txns, later)}
        result = run("compact", table, kind, "--hive-version", "2", "--txns", txns, "--apply")
        assert result.code == 0, result.err
        event(f"{kind}: {'wrote' if 'wrote' in result.out else 'nothing to do'}")
        for s, rows in before.items():
            assert hive.read(str(table), s, buckets=BUCKETS, split_update=split_update) == rows
            assert acidtool_read(table, s) == rows
    finally:
        shutil.rmtree(table.parent)
