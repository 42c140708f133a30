"""Tables as Hive 2.3's SQL writers leave them, judged by Hive 2.3's own reader.

A SQL INSERT hands OrcRecordUpdater rows without ROW__ID, so the ``row`` struct is named
``_col0.._colN-1``; a SQL UPDATE hands it ROW__ID in field 0, so it is named ``_col1.._colN``.
Hive reads by position. Original files named ``N_M_copy_K`` get bucket -1 in Hive 2.3 (no copy
pattern), where deletes never reach them; several original files of one bucket are separate
splits, each merged with the bucket's delta events."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as paorc
import pytest

import acidtool

from .helpers.hive23 import TRANSACTION_KEY, Hive23, acidtool_read
from .helpers.hivejvm import merged_scan
from .helpers.runner import run

pytestmark = pytest.mark.spark

ALL = "10:9223372036854775807:"


class SqlWriter:
    """OrcRecordUpdater with the object inspectors Hive 2.3's FileSinkOperator gives it."""

    def __init__(self, hive: Hive23):
        self.hive = hive
        j, f = hive.jvm, hive.factory
        structs = j.org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorFactory
        rid = structs.getStandardStructObjectInspector(
            hive._list("transactionid", "bucketid", "rowid"),
            hive._list(f.writableLongObjectInspector, f.javaIntObjectInspector,
                       f.writableLongObjectInspector))
        self.insert_oi = structs.getStandardStructObjectInspector(
            hive._list("_col0", "_col1"),
            hive._list(f.javaIntObjectInspector, f.javaStringObjectInspector))
        self.update_oi = structs.getStandardStructObjectInspector(
            hive._list("_col0", "_col1", "_col2"),
            hive._list(rid, f.javaIntObjectInspector, f.javaStringObjectInspector))

    def _updater(self, table: Path, txn: int, bucket: int, split_update: bool, update: bool):
        j = self.hive.jvm
        props = j.java.util.Properties()
        props.setProperty("transactional", "true")
        if split_update:
            props.setProperty("transactional_properties", "default")
        options = (j.org.apache.hadoop.hive.ql.io.AcidOutputFormat.Options(self.hive.conf)
                   .inspector(self.update_oi if update else self.insert_oi).bucket(bucket)
                   .minimumTransactionId(txn).maximumTransactionId(txn).statementId(0)
                   .writingBase(False).recordIdColumn(0 if update else -1)
                   .tableProperties(props).finalDestination(j.org.apache.hadoop.fs.Path(str(table))))
        return j.org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat().getRecordUpdater(
            j.org.apache.hadoop.fs.Path(str(table)), options)

    def insert(self, table: Path, txn: int, rows, *, bucket: int = 0, split_update: bool = True):
        u = self._updater(table, txn, bucket, split_update, False)
        for id_, name in rows:
            u.insert(txn, self.hive._list(id_, name))
        u.close(False)

    def change(self, table: Path, txn: int, *, updates=(), deletes=(), bucket: int = 0,
               split_update: bool = True):
        """updates: [((otid, bucket, rowId), id, name)]; deletes: [(otid, bucket, rowId)]."""
        h = self.hive
        u = self._updater(table, txn, bucket, split_update, True)
        events = [(rid, id_, name) for rid, id_, name in updates] + \
            [(rid, None, None) for rid in deletes]
        for rid, id_, name in sorted(events):  # in ROW__ID order, as Hive's plans sort them
            if id_ is None:
                u.delete(txn, h._list(h.row_id(*rid), None, None))
            else:
                u.update(txn, h._list(h.row_id(*rid), id_, name))
        u.close(False)


@pytest.fixture(scope="module")
def hive(spark):
    return Hive23(spark)


@pytest.fixture(scope="module")
def sql(hive):
    return SqlWriter(hive)


def field_names(path: Path) -> list[str]:
    schema = paorc.ORCFile(str(path)).schema
    return [f.name for f in schema.field("row").type]


@pytest.mark.parametrize("split_update", [True, False], ids=["split-update", "legacy"])
def test_positional_row_names_read_by_position(hive, sql, tmp_path, split_update):
    table = tmp_path / "t"
    sql.insert(table, 1, [(i, f"r{i}") for i in range(4)], split_update=split_update)
    sql.change(table, 2, updates=[((1, 0, 1), 10, "r1 updated")], deletes=[(1, 0, 3)],
               split_update=split_update)
    sql.insert(table, 3, [(20, "r20")], split_update=split_update)
    files = sorted(table.glob("delta_*/bucket_00000"))
    layouts = {tuple(field_names(f)) for f in files if f.parent.name.startswith("delta_")}
    assert ("_col0", "_col1") in layouts and ("_col1", "_col2") in layouts  # what 2.3 wrote
    for txns in (ALL, "1:9223372036854775807:", "10:2:2", "2:9223372036854775807:"):
        expected = hive.read(str(table), txns, split_update=split_update)
        assert expected
        assert acidtool_read(table, txns) == expected
    rows = [json.loads(x) for x in run("read", table, "--hive-version", "2", "--txns", ALL).out
            .splitlines()]
    assert all(list(r) == ["_col0", "_col1"] for r in rows)  # one set of names, 0-based
    picked = run("read", table, "--hive-version", "2", "--txns", ALL, "--columns", "_col1")
    assert picked.code == 0, picked.err
    assert sorted(json.loads(x)["_col1"] for x in picked.out.splitlines()) == \
        ["r0", "r1 updated", "r2", "r20"]
    # only the UPDATE's files in the snapshot: still _col0.._colN-1
    only_update = run("read", table, "--hive-version", "2", "--txns", "2:9223372036854775807:1")
    assert only_update.code == 0 and '"_col0":10' in only_update.out, only_update.err
    api = acidtool.open_table(str(table)).snapshot(txns=ALL, hive_version="2").to_arrow()
    assert api.column_names == ["_col0", "_col1"] and api.num_rows == 4
    diff = run("diff", table, "--hive-version", "2", "--from-write-id", "1", "--to-write-id", "3")
    assert diff.code == 0, diff.err
    validate = run("validate", table, "--hive-version", "2", "--level", "rows", "--format", "json")
    assert not [f for f in validate.json()["findings"] if f["severity"] in ("error", "warning")]


def write_original(path: Path, ids: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    paorc.write_table(pa.table({"id": pa.array(ids, pa.int32()),
                                "name": [f"n{i}" for i in ids]}), str(path))


@pytest.mark.parametrize("split_update", [True, False], ids=["split-update", "legacy"])
def test_copy_files_of_two_buckets_with_updates_and_deletes(hive, sql, tmp_path, split_update):
    """Hive 2.3 gives ``_copy_N`` files bucket -1: the deletes and updates aimed at (0, b, r)
    reach only the N_M file of bucket b, and every file is numbered from 0."""
    table = tmp_path / "t"
    write_original(table / "000000_0", [0, 1])
    write_original(table / "000000_0_copy_1", [2, 3])
    write_original(table / "000001_0", [4, 5])
    write_original(table / "000001_0_copy_1", [6, 7])
    sql.change(table, 5, deletes=[(0, 0, 0)], updates=[((0, 0, 1), 11, "n1 updated")],
               split_update=split_update)
    sql.change(table, 5, deletes=[(0, 1, 1)], bucket=1, split_update=split_update)
    for txns in (ALL, "4:9223372036854775807:"):
        expected = hive.read(str(table), txns, buckets=2, split_update=split_update)
        assert len(expected) == (6 if txns == ALL else 8)  # two deleted, one updated
        assert [rid for rid, _ in expected].count((0, -1, 0)) == 2
        assert acidtool_read(table, txns) == expected
    validate = run("validate", table, "--hive-version", "2", "--format", "json").json()
    flagged = {Path(f["path"]).name for f in validate["findings"] if f["code"] == "ACID001"}
    assert flagged == {"000000_0_copy_1", "000001_0_copy_1"}


def test_original_files_of_one_bucket_are_separate_legacy_splits(hive, sql, tmp_path):
    """Two original files of bucket 0 (000000_0 and a root bucket_00000): Hive 2.3 applies the
    bucket's update to the row (0, 0, 0) of each, and returns the delta's insert twice."""
    table = tmp_path / "t"
    write_original(table / "000000_0", [1, 2])
    write_original(table / "bucket_00000", [5])
    u = hive.updater(str(table), 2, split_update=False)
    u.update(2, hive.row(99, "upd", hive.row_id(0, 0, 0)))
    u.insert(2, hive.row(50, "ins"))
    u.close(False)
    expected = hive.read(str(table), ALL, split_update=False)
    assert [values[0] for _, values in expected].count("99") == 2
    assert [values[0] for _, values in expected].count("50") == 2
    assert acidtool_read(table, ALL) == expected


def read_in_splits(hive: Hive23, table: Path, txns: str, max_split: int) -> list[tuple]:
    """Hive 2.3's merged scan with ETL split generation and splits of at most ``max_split``
    bytes: a file larger than that is read stripe by stripe in several splits."""
    j = hive.jvm
    job = j.org.apache.hadoop.mapred.JobConf()
    job.set("mapreduce.input.fileinputformat.inputdir", "file://" + str(table))
    for key, value in (("columns", "id,name"), ("schema.evolution.columns", "id,name"),
                       ("columns.types", "int:string"),
                       ("schema.evolution.columns.types", "int:string"),
                       ("hive.txn.valid.txns", txns), ("transactional", "true"),
                       ("transactional_properties", "default"), ("bucket_count", "1"),
                       ("hive.orc.splits.include.fileid", "false"),
                       ("hive.exec.orc.split.strategy", "ETL"),
                       ("mapreduce.input.fileinputformat.split.maxsize", str(max_split)),
                       ("mapreduce.input.fileinputformat.split.minsize", "1")):
        job.set(key, value)
    job.setBoolean("hive.transactional.table.scan", True)
    job.setInt("hive.txn.operational.properties", 1)
    return [key for key, _ in merged_scan(j, job, TRANSACTION_KEY)]


@pytest.fixture(scope="module")
def multi_stripe_update(spark, tmp_path_factory):
    """3,000 of 6,000 rows updated by Hive 2.3's split-update writers, in stripes of about
    1,000 rows (ORC checks the stripe size every 5,000 rows... and the tiny size flushes)."""
    hive = Hive23(spark)  # its own Configuration: the small stripes stay in this table
    hive.conf.set("hive.exec.orc.default.stripe.size", "4096")
    sql = SqlWriter(hive)
    table = tmp_path_factory.mktemp("hive23-update") / "t"
    sql.insert(table, 1, [(i, f"r{i}") for i in range(6000)])
    sql.change(table, 2, updates=[((1, 0, i), i + 100000, f"u{i}") for i in range(0, 6000, 2)])
    return hive, table


def test_hive23_update_files_share_a_key_index_and_validate_says_so(multi_stripe_update):
    hive, table = multi_stripe_update
    for side in ("delta_0000002_0000002_0000", "delete_delta_0000002_0000002_0000"):
        meta = run("meta", table / side / "bucket_00000", "--format", "json").json()
        meta = meta[0] if isinstance(meta, list) else meta
        stripes, index = len(meta["stripes"]), meta["acid"]["key_index"]
        assert len(index) > stripes > 1  # both files' stripes in each index
        assert meta["acid"]["stats"] == {"inserts": 0, "updates": 0, "deletes": 3000}
    for level in ("metadata", "rows"):
        doc = run("validate", table, "--hive-version", "2", "--level", level, "--format",
                  "json").json()
        acid010 = [f for f in doc["findings"] if f["code"] == "ACID010"]
        assert len(acid010) == 2 and {f["severity"] for f in acid010} == {"info"}
        assert "share one key index" in acid010[0]["message"]
        assert not [f for f in doc["findings"] if f["severity"] in ("error", "warning")]
    # acidtool reads what Hive 2.3 reads in one split per file
    assert acidtool_read(table, ALL) == hive.read(str(table), ALL)


def test_hive23_own_reader_loses_updated_rows_when_it_splits_such_a_file(multi_stripe_update):
    """What explain ACID010 says: stripe by stripe, the shared index bounds the insert file's
    splits with the delete file's keys, and most updated rows are dropped."""
    hive, table = multi_stripe_update
    whole = read_in_splits(hive, table, ALL, 256 * 1024 * 1024)
    split = read_in_splits(hive, table, ALL, 4096)
    assert len(whole) == 6000 and sum(1 for k in whole if k[0] == 2) == 3000
    assert len(split) < len(whole) and sum(1 for k in split if k[0] == 2) < 3000
    assert "loses rows when it splits" in run("explain", "ACID010").out
