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

from .helpers.hive23 import Hive23, acidtool_read
from .helpers.runner import run

pytestmark = pytest.mark.spark

BUCKETS = 2


@pytest.fixture(scope="module")
def hive(spark):
    return Hive23(spark)


statement = st.tuples(st.sampled_from(["insert", "insert", "update", "delete"]),
                      st.integers(0, BUCKETS - 1), st.integers(1, 4))
history = st.lists(st.lists(statement, min_size=1, max_size=2), min_size=1, max_size=5)


def write(hive: Hive23, table: Path, transactions, split_update: bool) -> None:
    live: dict[int, list[tuple[int, int]]] = {b: [] for b in range(BUCKETS)}  # (txn, rowId)
    next_id = 0
    for txn, statements in enumerate(transactions, start=1):
        used_buckets = set()
        added: dict[int, list[tuple[int, int]]] = {b: [] for b in range(BUCKETS)}
        for stmt, (op, bucket, count) in enumerate(statements):
            if bucket in used_buckets:
                continue  # Hive 2.3 row ids of one bucket would repeat across statements
            targets = sorted(live[bucket])[:count] if op != "insert" else []
            if op != "insert" and not targets:
                continue
            used_buckets.add(bucket)
            u = hive.updater(str(table), txn, bucket=bucket, statement=stmt,
                             split_update=split_update)
            if op == "insert":
                for row_id in range(count):
                    u.insert(txn, hive.row(next_id, f"t{txn}-{row_id}"))
                    added[bucket].append((txn, row_id))
                    next_id += 1
            else:
                for otid, row_id in targets:
                    rid = hive.row_id(otid, bucket, row_id)
                    if op == "update":
                        u.update(txn, hive.row(next_id, f"updated in {txn}", rid))
                        next_id += 1
                    else:
                        u.delete(txn, hive.row(0, "", rid))
                    live[bucket].remove((otid, row_id))
            u.close(False)
        for b in range(BUCKETS):
            live[b].extend(added[b])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(history, st.booleans(), st.data())
def test_random_hive_tables_read_and_validate(hive, transactions, split_update, data):
    table = Path(tempfile.mkdtemp(prefix="acid-hive23-random-")) / "t"
    try:
        write(hive, table, transactions, split_update)
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
