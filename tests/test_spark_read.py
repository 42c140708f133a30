"""``acidtool.spark.read_table`` and ``read --spark``: the rows of Spark's executors are the rows
``acidtool read`` returns, on every real Hive table in ../shared/realdata, on layouts with
updates, deletes, original files, statements and partitions, on Hive 2.3's legacy layout, on
insert-only and converted tables, at several snapshots."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from acidtool.api import Table
from acidtool.core.errors import AcidToolError
from acidtool.io.acidwrite import DELETE, INSERT, UPDATE, Event
from acidtool.spark import read_table

from .helpers.layouts import acid, build, delta, events, plain
from .helpers.runner import run
from .helpers.shared import REALDATA, require

pytestmark = pytest.mark.spark


def _key(row: dict) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def same_rows(spark, path, **kw) -> int:
    ours = Table(str(path)).snapshot(kw.get("write_ids"), kw.get("txns"),
                                     kw.get("hive_version"),
                                     with_row_id=kw.get("with_row_id", False),
                                     insert_only=kw.get("insert_only", False)).to_arrow()
    df = read_table(spark, str(path), **kw)
    theirs = [r.asDict(recursive=True) for r in df.collect()]
    assert df.columns == ours.column_names
    assert sorted(map(_key, theirs)) == sorted(map(_key, ours.to_pylist()))
    return len(theirs)


def _updates(tmp_path):
    ev = Event
    layout = {}
    layout.update(delta("delta_0000001_0000001_0000", acid(events(1, n=3, bucket=0))))
    layout["delta_0000001_0000001_0000/bucket_00001"] = acid(events(1, n=2, bucket=1))
    layout.update(delta("delta_0000002_0000002_0001", acid(events(2, n=1, stmt=1))))
    layout.update(delta("delete_delta_0000003_0000003_0000", acid(
        [ev(DELETE, 1, 536870912, 0, 3, None), ev(DELETE, 1, 536936448, 1, 3, None)])))
    layout.update(delta("delta_0000003_0000003_0000", acid(
        [ev(INSERT, 3, 536870912, 0, 3, (100, "updated"))])))
    layout["000000_0"] = plain(rows=[(7, "original")])
    layout["000001_0"] = plain(rows=[(8, "original")])
    return build(tmp_path / "t", layout)


@pytest.mark.parametrize("snapshot", [{}, {"with_row_id": True},
                                      {"write_ids": "db.t:2:9223372036854775807::"},
                                      {"write_ids": "db.t:3:2:2:", "with_row_id": True}],
                         ids=["all", "row-id", "before-3", "2-open"])
def test_updates_deletes_originals_and_statements(spark, tmp_path, snapshot):
    assert same_rows(spark, _updates(tmp_path), **snapshot) > 0


def test_partitions(spark, tmp_path):
    layout = {f"ds=2024-01-0{d}/{k}": v for d in (1, 2, 3)
              for k, v in delta("delta_0000001_0000001_0000", acid(events(1, n=d))).items()}
    assert same_rows(spark, build(tmp_path / "t", layout), with_row_id=True) == 6


def test_hive23_legacy_update_and_delete(spark, tmp_path):
    layout = {
        "delta_0000001_0000001_0000/bucket_00000": acid(events(1, n=3, v0=True),
                                                        hive_version="2"),
        "delta_0000002_0000002_0000/bucket_00000": acid(
            [Event(UPDATE, 1, 0, 0, 2, (0, "changed")), Event(DELETE, 1, 0, 1, 2, None)],
            hive_version="2")}
    table = build(tmp_path / "t", layout)
    assert same_rows(spark, table, hive_version="2", with_row_id=True) == 2
    assert same_rows(spark, table, hive_version="2", txns="5:2:2") == 3


def test_insert_only_and_converted_tables(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.orc as po
    import pyarrow.parquet as ppq

    mm = tmp_path / "mm"
    for rel, ids, writer in (("delta_0000001_0000001_0000/000000_0", [1, 2], po),
                             ("delta_0000002_0000002_0000/000000_0", [3], ppq)):
        (mm / rel).parent.mkdir(parents=True, exist_ok=True)
        writer.write_table(pa.table({"id": pa.array(ids, pa.int32())}), str(mm / rel))
    assert same_rows(spark, mm, insert_only=True, hive_version="4") == 3
    land = tmp_path / "land"
    land.mkdir()
    po.write_table(pa.table({"id": pa.array(range(50), pa.int32()),
                             "name": [f"n{i}" for i in range(50)]}), str(land / "a.orc"))
    converted = tmp_path / "conv"
    converted.mkdir()
    assert run("convert", land, "--table", converted, "--write-id", "3", "--buckets", "4",
               "--bucket-by", "id").code == 0
    assert same_rows(spark, converted, with_row_id=True) == 50


def test_every_real_table(spark):
    from acidtool.core.partitions import discover_tables
    from acidtool.io.fs import list_tree, resolve

    root = require(REALDATA)
    compared = 0
    for t in discover_tables(list_tree(resolve(str(root)))):
        path = root / t.root
        try:
            Table(str(path)).snapshot().to_arrow()
        except (AcidToolError, OSError):
            with pytest.raises(Exception):  # noqa: B017 - Spark fails where acidtool does
                read_table(spark, str(path)).collect()
            continue
        compared += same_rows(spark, path, with_row_id=False) >= 0
    assert compared >= 5


def test_read_spark_writes_a_dataset(spark, tmp_path):
    table = _updates(tmp_path)
    out = tmp_path / "out"
    result = run("read", table, "--spark", "--format", "parquet", "-o", out, "--with-row-id")
    assert result.code == 0, result.err
    written = pq.read_table(out).to_pylist()
    ours = Table(str(table)).snapshot(with_row_id=True).to_arrow().to_pylist()
    assert sorted(map(_key, written)) == sorted(map(_key, ours))
    again = run("read", table, "--spark", "--format", "parquet", "-o", out)
    assert again.code == 2 and "never overwrites" in again.err
    assert run("read", table, "--spark").code == 2  # a dataset needs a format and -o


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_read_spark_of_only_delete_deltas_writes_an_empty_dataset(spark, tmp_path, fmt):
    """No data file in the table: Spark writes no dataset of no columns, so acidtool writes
    what `read` writes in process (one file of no columns, no rows) as a dataset, where it
    used to stop with exit 2."""
    table = build(tmp_path / "t", delta("delete_delta_0000002_0000002_0000",
                                        acid([Event(DELETE, 1, 536870912, 0, 2, None)])))
    out = tmp_path / "out"
    result = run("read", table, "--spark", "--format", fmt, "-o", out)
    assert result.code == 0, result.err
    assert "empty" in result.err and "no data file" in result.err
    assert sorted(p.name for p in out.iterdir()) == ["_SUCCESS", f"part-00000.{fmt}"]
    import pyarrow.dataset as ds

    assert ds.dataset(str(out), format=fmt).to_table().num_rows == 0
    if fmt == "parquet":  # (Spark infers no schema from an ORC file of no columns)
        assert spark.read.parquet(str(out)).count() == 0
    again = run("read", table, "--spark", "--format", fmt, "-o", out)
    assert again.code == 2 and "never overwrites" in again.err
