"""acidtool against real Hive 2.3 code: tables written by OrcRecordUpdater, read by
OrcInputFormat, compared with ``acidtool dump`` and ``acidtool read``, for several snapshots."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as paorc
import pytest

from .helpers.hive23 import Hive23, acidtool_read
from .helpers.runner import run

pytestmark = pytest.mark.spark

SNAPSHOTS = ["10:9223372036854775807:", "10:4:4", "2:9223372036854775807:", "10:3:3:4",
             "1:9223372036854775807:", "10:2:2"]


@pytest.fixture(scope="module")
def hive(spark):
    return Hive23(spark)


def build_split_update(hive, table: Path):
    t = str(table)
    u = hive.updater(t, 1, bucket=0)
    for i in range(4):
        u.insert(1, hive.row(i, f"b0-{i}"))
    u.close(False)
    u = hive.updater(t, 1, bucket=1)
    for i in range(2):
        u.insert(1, hive.row(100 + i, f"b1-{i}"))
    u.close(False)
    for stmt in (0, 1):  # one transaction, two statements
        u = hive.updater(t, 2, statement=stmt)
        u.insert(2, hive.row(200 + stmt, f"t2-s{stmt}"))
        u.close(False)
    u = hive.updater(t, 3, bucket=0)  # delete one row, update another
    u.delete(3, hive.row(1, "b0-1", hive.row_id(1, 0, 1)))
    u.update(3, hive.row(2, "b0-2 updated", hive.row_id(1, 0, 2)))
    u.close(False)
    u = hive.updater(t, 3, bucket=1)
    u.delete(3, hive.row(100, "b1-0", hive.row_id(1, 1, 0)))
    u.close(False)
    u = hive.updater(t, 4)  # a transaction the snapshots treat as aborted/open
    u.insert(4, hive.row(400, "t4"))
    u.close(False)
    u = hive.updater(t, 5)
    u.insert(5, hive.row(500, "t5"))
    u.close(False)


@pytest.fixture(scope="module")
def split_table(hive, tmp_path_factory):
    table = tmp_path_factory.mktemp("hive23") / "split"
    build_split_update(hive, table)
    return table


@pytest.mark.parametrize("txns", SNAPSHOTS)
def test_read_equals_hive_split_update(hive, split_table, txns):
    expected = hive.read(str(split_table), txns, buckets=2)
    assert expected, "Hive returned no rows: the test would prove nothing"
    assert acidtool_read(split_table, txns) == expected


def test_dump_shows_what_hive_wrote(split_table):
    rows = [json.loads(x) for x in run("dump", split_table, "--all", "--with-file", "--hive-version",
                                       "2").out.splitlines()]
    deletes = [(r["originalTransaction"], r["bucket"], r["rowId"], r["currentTransaction"])
               for r in rows if r["operation"] == 2]
    assert sorted(deletes) == [(1, 0, 1, 3), (1, 0, 2, 3), (1, 1, 0, 3)]
    assert all(r["row"] is None for r in rows if r["operation"] == 2)
    inserts = {(r["file"].split("/")[0], r["row"]["id"]) for r in rows if r["operation"] == 0}
    assert ("delta_0000002_0000002_0001", 201) in inserts
    assert ("delta_0000003_0000003_0000", 2) in inserts


def test_validate_finds_no_error_on_hive_written_tables(split_table):
    result = run("validate", split_table, "--hive-version", "2", "--level", "rows",
                 "--format", "json")
    assert [f for f in result.json()["findings"] if f["severity"] == "error"] == []


def test_ls_selection_matches_what_hive_read(split_table):
    doc = run("ls", split_table, "--hive-version", "2", "--txns", "10:4:4", "--format",
              "json").json()
    assert doc["partitions"][0]["deltas"] == [
        "delta_0000001_0000001_0000", "delta_0000002_0000002_0000", "delta_0000002_0000002_0001",
        "delete_delta_0000003_0000003_0000", "delta_0000003_0000003_0000",
        "delta_0000005_0000005_0000"]


@pytest.fixture(scope="module")
def legacy_table(hive, tmp_path_factory):
    """transactional=true without transactional_properties: Hive 2's legacy layout, updates and
    deletes as events in delta_ directories."""
    table = tmp_path_factory.mktemp("hive23") / "legacy"
    t = str(table)
    u = hive.updater(t, 1, split_update=False)
    for i in range(4):
        u.insert(1, hive.row(i, f"r{i}"))
    u.close(False)
    u = hive.updater(t, 2, split_update=False)
    u.update(2, hive.row(1, "r1 updated", hive.row_id(1, 0, 1)))
    u.delete(2, hive.row(3, "r3", hive.row_id(1, 0, 3)))
    u.close(False)
    u = hive.updater(t, 3, split_update=False)
    u.update(3, hive.row(1, "r1 again", hive.row_id(1, 0, 1)))
    u.close(False)
    return table


@pytest.mark.parametrize("txns", ["10:9223372036854775807:", "1:9223372036854775807:",
                                  "10:2:2", "10:3:3"])
def test_read_equals_hive_legacy(hive, legacy_table, txns):
    expected = hive.read(str(legacy_table), txns, split_update=False)
    assert expected
    assert acidtool_read(legacy_table, txns) == expected
    assert not any(f["severity"] == "error" for f in run(
        "validate", legacy_table, "--hive-version", "2", "--level", "rows", "--format",
        "json").json()["findings"])


def test_hive_reads_what_convert_writes(hive, tmp_path):
    land = tmp_path / "land"
    land.mkdir()
    paorc.write_table(pa.table({"id": pa.array(range(7), pa.int32()),
                                "name": [f"x{i}" for i in range(7)]}), str(land / "a.orc"))
    paorc.write_table(pa.table({"id": pa.array(range(7, 10), pa.int32()),
                                "name": [f"x{i}" for i in range(7, 10)]}), str(land / "b.orc"))
    table = tmp_path / "t"
    table.mkdir()
    result = run("convert", land, "--table", table, "--write-id", "6", "--hive-version", "2",
                 "--max-file-rows", "4")
    assert result.code == 0, result.err
    got = hive.read(str(table), "10:9223372036854775807:", buckets=3)
    # a.orc (7 rows) fills bucket files 0 and 1, b.orc (3 rows) bucket file 2
    expected_ids = [(6, 0, i) for i in range(4)] + [(6, 1, i) for i in range(3)] + \
        [(6, 2, i) for i in range(3)]
    assert got == [(rid, [str(i), f"x{i}"]) for i, rid in enumerate(expected_ids)]
    assert acidtool_read(table, "10:9223372036854775807:") == got
    assert hive.read(str(table), "10:6:6", buckets=3) == []


@pytest.mark.parametrize("kind,made", [("MAJOR", "base_0000005"),
                                       ("MINOR", "delta_0000001_0000005")])
def test_read_equals_hive_after_hive_compaction(hive, tmp_path, kind, made):
    from .helpers.hive23 import compact

    table = tmp_path / kind.lower()
    build_split_update(hive, table)
    compact(hive, str(table), kind, "10:9223372036854775807:4")  # transaction 4 aborted
    assert (table / made).is_dir()
    for txns in ("10:9223372036854775807:4", "20:9223372036854775807:4", "10:6:4:6"):
        expected = hive.read(str(table), txns, buckets=2)
        assert expected
        assert acidtool_read(table, txns) == expected
    assert not any(f["severity"] == "error" for f in run(
        "validate", table, "--hive-version", "2", "--level", "rows", "--format",
        "json").json()["findings"])
    if kind == "MAJOR":
        # a snapshot older than the compacted base: Hive and acidtool both refuse it
        with pytest.raises(Exception, match="Not enough history"):
            hive.read(str(table), "2:9223372036854775807:", buckets=2)
        result = run("read", table, "--hive-version", "2", "--txns", "2:9223372036854775807:")
        assert result.code == 1 and "Not enough history" in result.err


@pytest.mark.parametrize("native", [True, "masks", False],
                         ids=["spark-plan", "spark-plan-masks", "source"])
@pytest.mark.parametrize("which,txns", [
    ("split", "10:9223372036854775807:"), ("split", "10:4:4"), ("split", "10:3:3:4"),
    ("legacy", "10:9223372036854775807:"), ("legacy", "10:2:2"), ("legacy", "10:3:3"),
])
def test_spark_reads_hive23s_tables_as_hive23_does(hive, split_table, legacy_table, spark,
                                                   which, txns, native, monkeypatch):
    """acidtool.spark.read_table, by Spark's own plan (the legacy layout's window included;
    the delete step the anti join of the events or masks) and by the source: Hive 2.3's
    rows and ROW__IDs."""
    from acidtool.hiveacid import frame
    from acidtool.spark import read_table

    if native == "masks":
        monkeypatch.setattr(frame, "ANTI_PAST", -1)
        native = True
    table = split_table if which == "split" else legacy_table
    expected = hive.read(str(table), txns, buckets=2 if which == "split" else 1,
                         split_update=which == "split")
    assert expected
    df = read_table(spark, str(table), txns=txns, hive_version=2, with_row_id=True,
                    native=native)
    got = sorted(((r.ROW__ID.writeid, r.ROW__ID.bucketid, r.ROW__ID.rowid),
                  [None if v is None else str(v) for v in (r.id, r.name)])
                 for r in df.collect())
    assert got == expected
