"""Insert-only (micro-managed) transactional tables: --insert-only on ls, read, diff, validate
and convert. Their bases and deltas hold plain data files (ORC, Parquet, text...), selected by
the same getAcidState (tests/test_hive_selection.py judges it with Hive 3.1 and 4.0)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as paorc
import pyarrow.parquet as pq
import pytest

import acidtool

from .helpers.runner import run

D = "delta_{0:07d}_{0:07d}_0000"


def orc(path: Path, ids, names=("id", "name")) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    paorc.write_table(pa.table({names[0]: pa.array(ids, pa.int32()),
                                names[1]: [f"n{i}" for i in ids]}), str(path))


def parquet(path: Path, ids) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int32()),
                             "name": [f"n{i}" for i in ids]}), str(path))


@pytest.fixture
def mm(tmp_path) -> Path:
    """Write ids 1 and 2 as ORC (two files, one a copy), 3 as Parquet, 4 aborted or open."""
    t = tmp_path / "mm"
    orc(t / D.format(1) / "000000_0", [1, 2])
    orc(t / D.format(1) / "000000_0_copy_1", [3])
    orc(t / D.format(2) / "000000_0", [4], names=("_col0", "_col1"))  # positional names
    parquet(t / D.format(3) / "000000_0", [5, 6])
    orc(t / D.format(4) / "000000_0", [7])
    return t


def ids(result) -> list[int]:
    assert result.code == 0, result.err
    return sorted(json.loads(x)["id"] for x in result.out.splitlines())


@pytest.mark.parametrize("version", ["3", "4"])
@pytest.mark.parametrize("write_ids,expected", [
    ("t:10:9223372036854775807::", [1, 2, 3, 4, 5, 6, 7]),
    ("t:10:9223372036854775807::4", [1, 2, 3, 4, 5, 6]),  # 4 aborted
    ("t:10:4:4:", [1, 2, 3, 4, 5, 6]),  # 4 open
    ("t:2:9223372036854775807::", [1, 2, 3, 4]),
])
def test_read_plain_orc_and_parquet_files_by_snapshot(mm, version, write_ids, expected):
    result = run("read", mm, "--insert-only", "--hive-version", version, "--write-ids",
                 write_ids)
    assert ids(result) == expected
    assert all(list(json.loads(x)) == ["id", "name"] for x in result.out.splitlines())
    table = acidtool.open_table(str(mm)).snapshot(write_ids, hive_version=version,
                                                  insert_only=True).to_arrow()
    assert sorted(table.column("id").to_pylist()) == expected


def test_without_insert_only_the_same_files_are_load_data_or_foreign(mm):
    """Read as a full-ACID table, a Parquet file in a delta is not ORC: one line, exit 1."""
    result = run("read", mm)
    assert result.code == 1 and "not an ORC file" in result.err and "--insert-only" in result.err
    assert result.err.count("\n") == 1


def test_ls_and_aborted_deltas(mm):
    doc = run("ls", mm, "--insert-only", "--hive-version", "3", "--write-ids",
              "t:10:9223372036854775807::4", "--format", "json").json()
    part = doc["partitions"][0]
    assert part["deltas"] == [D.format(w) for w in (1, 2, 3)]
    # Hive 3.1 lists an insert-only table's aborted deltas (hive-exec 3.1.3), not a full one's
    assert part["aborted"] == [D.format(4)]
    doc = run("ls", mm, "--hive-version", "3", "--write-ids", "t:10:9223372036854775807::4",
              "--format", "json").json()
    assert doc["partitions"][0]["aborted"] == []


def test_a_base_hides_older_deltas_and_originals(mm):
    orc(mm / "000000_0", [100])  # from before the table was insert-only
    assert ids(run("read", mm, "--insert-only")) == [1, 2, 3, 4, 5, 6, 7, 100]
    orc(mm / "base_0000003" / "000000_0", [50])  # INSERT OVERWRITE at write id 3
    assert ids(run("read", mm, "--insert-only")) == [7, 50]


def test_diff_by_files(mm):
    result = run("diff", mm, "--insert-only", "--from-write-id", "1", "--to-write-id", "3")
    assert result.code == 0, result.err
    rows = [json.loads(x) for x in result.out.splitlines()]
    assert sorted((r["op"], r["id"]) for r in rows) == [("insert", 4), ("insert", 5),
                                                        ("insert", 6)]
    orc(mm / "base_0000005" / "000000_0", [50])
    result = run("diff", mm, "--insert-only", "--from-write-id", "4", "--to-write-id", "5")
    rows = [json.loads(x) for x in result.out.splitlines()]
    assert sorted((r["op"], r["id"]) for r in rows) == [
        ("delete", i) for i in range(1, 8)] + [("insert", 50)]


@pytest.mark.parametrize("args,code,message", [
    (["--with-row-id"], 2, "no ROW__ID"),
    (["--hive-version", "2"], 2, "Hive 2.3 has no insert-only tables"),
])
def test_read_refuses(mm, args, code, message):
    result = run("read", mm, "--insert-only", *args)
    assert result.code == code and message in result.err and "\n" == result.err[-1]


def test_other_formats_are_one_line(mm):
    (mm / D.format(5)).mkdir()
    (mm / D.format(5) / "000000_0").write_text("8\tn8\n")  # a text table's file
    result = run("read", mm, "--insert-only")
    assert result.code == 1 and "neither ORC nor Parquet" in result.err
    assert result.err.count("\n") == 1


def test_validate_judges_plain_files_as_correct(mm):
    doc = run("validate", mm, "--insert-only", "--hive-version", "3", "--level", "rows",
              "--format", "json").json()
    assert doc["findings"] == []
    # the same directory as a full-ACID table: the Parquet file is not ORC
    doc = run("validate", mm, "--hive-version", "3", "--format", "json").json()
    assert {f["code"] for f in doc["findings"]} >= {"ACID005", "ACID006"}


def test_convert_writes_what_hive_writes_for_an_insert_only_table(tmp_path):
    land = tmp_path / "land"
    orc(land / "a.orc", [1, 2, 3])
    orc(land / "b.orc", [4, 5])
    table = tmp_path / "t"
    table.mkdir()
    result = run("convert", land, "--table", table, "--write-id", "auto", "--insert-only",
                 "--hive-version", "3", "--format", "json")
    assert result.code == 0, result.err
    summary = result.json()
    delta = table / summary["directory"]
    assert summary["files"] == {"000000_0": 5}
    assert sorted(p.name for p in delta.iterdir()) == ["000000_0", "_acidtool_sources"]
    data = paorc.ORCFile(str(delta / "000000_0"))
    assert data.schema.names == ["id", "name"] and not data.metadata  # no ACID metadata
    assert ids(run("read", table, "--insert-only")) == [1, 2, 3, 4, 5]
    assert run("validate", table, "--insert-only", "--level", "rows").code == 0
    # bucketed: a file per bucket, named as Hive's tasks name them
    result = run("convert", land, "--table", table, "--write-id", "auto", "--insert-only",
                 "--buckets", "2", "--bucket-by", "id", "--allow-duplicates", "--format", "json")
    assert result.code == 0, result.err
    assert set(result.json()["files"]) <= {"000000_0", "000001_0"}
    assert ids(run("read", table, "--insert-only")) == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    refused = run("convert", land, "--table", table, "--write-id", "9", "--insert-only",
                  "--hive-version", "2")
    assert refused.code == 2 and "Hive 2.3 has no insert-only tables" in refused.err
