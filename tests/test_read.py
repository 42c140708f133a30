"""``acidtool read`` and ``diff``: Hive's rows for a snapshot, from real and synthetic tables."""

import json
import shutil

import pyarrow.orc as paorc
import pyarrow.parquet as pq
import pytest

import acidtool
from acidtool.io.acidwrite import DELETE, INSERT, UPDATE, Event

from .helpers.layouts import MARK, acid, build, delta, events, orc_with_schema, plain
from .helpers.runner import run
from .helpers.shared import REALDATA, require

TRINO = "trino"


def rows(*args):
    result = run("read", *args)
    assert result.code == 0, result.err
    return [json.loads(line) for line in result.out.splitlines()]


def test_nation_with_two_delete_deltas(tmp_path):
    src = require(REALDATA / TRINO)
    table = tmp_path / "nation"
    (table / "delta_0000002_0000002_0000").mkdir(parents=True)
    shutil.copy(src / "nationFile25kRowsSortedOnNationKey/bucket_00000",
                table / "delta_0000002_0000002_0000/bucket_00000")
    for d in ("delete_delta_0000003_0000003_0000", "delete_delta_0000004_0000004_0000"):
        shutil.copytree(src / "nation_delete_deltas" / d, table / d)
    t = acidtool.open_table(str(table)).snapshot().to_arrow()
    assert t.num_rows == 23000
    keys = set(t.column("n_nationkey").to_pylist())
    assert 5 not in keys and 19 not in keys and len(keys) == 23
    # before write id 4 commits, only the first delete delta applies
    t = acidtool.open_table(str(table)).snapshot(write_ids="t:4:4:4:").to_arrow()
    assert t.num_rows == 24000


def test_original_file_with_delete_delta():
    table = require(REALDATA / TRINO / "fullacidNationTableWithOriginalFiles")
    out = rows(table)
    assert len(out) == 24 and "UNITED STATES" not in {r["n_name"] for r in out}


def test_original_files_with_delete_delta_trino():
    table = require(REALDATA / TRINO / "dummy_id_data_orc")
    out = rows(table, "--with-row-id")
    ids = [r["id"] for r in out]
    assert ids == [0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]
    assert out[2]["ROW__ID"] == {"writeid": 0, "bucketid": 536870912, "rowid": 3}


def test_original_files_with_delete_deltas_in_other_buckets_qubole():
    table = require(REALDATA / "qubole-presto/presto-hive/src/test/resources/dummy_id_data_orc")
    ids = [r["id"] for r in rows(table)]
    assert len(ids) == 18 and 6 not in ids and 11 not in ids


@pytest.mark.parametrize("write_ids,expected", [
    ("t:2:1:1,2:", []),
    ("t:2:2:2:", [("a1", "b2"), ("a3", "b4")]),
    ("t:2:9223372036854775807::", [("a1", "b2"), ("a3", "b4"), ("a5", "b6"), ("a7", "b8")]),
])
def test_streaming_file_rows_filtered_per_write_id(tmp_path, write_ids, expected):
    src = require(REALDATA / "impala/testdata/data/streaming.orc")
    table = tmp_path / "t"
    (table / "delta_1_2").mkdir(parents=True)
    shutil.copy(src, table / "delta_1_2" / "bucket_00000")
    assert [(r["a"], r["b"]) for r in rows(table, "--write-ids", write_ids)] == expected


def _table(tmp_path):
    """Write ids: 1 insert (bucket 0 and 1), 2 two statements, 3 update of (1,0,0) and delete of
    (1,0,1), 4 aborted insert, 5 insert."""
    ev = lambda *a: Event(*a)  # noqa: E731
    layout = {}
    layout.update(delta("delta_0000001_0000001_0000", acid(events(1, n=2, bucket=0))))
    layout["delta_0000001_0000001_0000/bucket_00001"] = acid(events(1, n=1, bucket=1))
    layout.update(delta("delta_0000002_0000002_0000", acid(events(2, n=1, stmt=0))))
    layout.update(delta("delta_0000002_0000002_0001", acid(events(2, n=1, stmt=1))))
    layout.update(delta("delete_delta_0000003_0000003_0000", acid(
        [ev(DELETE, 1, 536870912, 0, 3, None), ev(DELETE, 1, 536870912, 1, 3, None)])))
    layout.update(delta("delta_0000003_0000003_0000", acid(
        [ev(INSERT, 3, 536870912, 0, 3, (100, "updated"))])))
    layout.update(delta("delta_0000004_0000004_0000", acid(events(4, n=1))))
    layout.update(delta("delta_0000005_0000005_0000", acid(events(5, n=1, start=7))))
    return build(tmp_path / "t", layout)


def _ids(out):
    """ROW__IDs in key order (SQL gives rows in no particular order; Hive's follows splits)."""
    return sorted((r["ROW__ID"]["writeid"], r["ROW__ID"]["bucketid"], r["ROW__ID"]["rowid"])
                  for r in out)


def test_synthetic_table_snapshots(tmp_path):
    table = _table(tmp_path)
    snap = "t:5:9223372036854775807::4"
    out = rows(table, "--with-row-id", "--write-ids", snap)
    assert _ids(out) == [(1, 536936448, 0), (2, 536870912, 0), (2, 536870913, 0),
                         (3, 536870912, 0), (5, 536870912, 7)]
    assert [r["name"] for r in out if r["ROW__ID"]["writeid"] == 3] == ["updated"]
    # before the update: both original rows of bucket 0 are there
    out = rows(table, "--with-row-id", "--write-ids", "t:2:9223372036854775807::")
    assert _ids(out) == [(1, 536870912, 0), (1, 536870912, 1), (1, 536936448, 0),
                         (2, 536870912, 0), (2, 536870913, 0)]
    # write id 3 open: neither its delete nor its insert is visible
    out = rows(table, "--with-row-id", "--write-ids", "t:5:3:3:4")
    assert (1, 536870912, 0) in _ids(out) and (3, 536870912, 0) not in _ids(out)


def test_diff_is_read_to_minus_read_from(tmp_path):
    table = _table(tmp_path)
    result = run("diff", table, "--from-write-id", "2", "--to", "t:5:9223372036854775807::4")
    assert result.code == 0, result.err
    out = [json.loads(line) for line in result.out.splitlines()]
    assert sorted((r["op"], r["ROW__ID"]["writeid"], r["ROW__ID"]["rowid"]) for r in out) == [
        ("delete", 1, 0), ("delete", 1, 1), ("insert", 3, 0), ("insert", 5, 7)]
    assert "2 inserted, 2 deleted" in result.err
    same = run("diff", table, "--from-write-id", "5", "--to-write-id", "5")
    assert same.out == ""


def test_diff_tells_partitions_apart(tmp_path):
    """Each partition's bucket files number their rows from 0: a delete in one partition is a
    delete though another partition still has a row with the same ROW__ID."""
    layout = {}
    for part in ("p=a", "p=b"):
        layout.update({f"{part}/{k}": v for k, v in
                       delta("delta_0000001_0000001_0000", acid(events(1, n=3))).items()})
    layout.update({f"p=a/{k}": v for k, v in delta(
        "delete_delta_0000002_0000002_0000", acid(events(1, n=1, op=DELETE, current=2))).items()})
    table = build(tmp_path / "t", layout)
    result = run("diff", table, "--from-write-id", "1", "--to-write-id", "2")
    assert result.code == 0, result.err
    out = [json.loads(line) for line in result.out.splitlines()]
    assert [(r["op"], r["p"], r["ROW__ID"]["rowid"]) for r in out] == [("delete", "a", 0)]


def test_diff_sees_a_hive2_legacy_update_in_place(tmp_path):
    """Hive 2.3 without split-update keeps a row's ROW__ID through an UPDATE: the old row is
    deleted and the new one inserted, though no ROW__ID came or went."""
    layout = {
        "delta_0000001_0000001_0000/bucket_00000": acid(events(1, n=2, v0=True), hive_version="2"),
        "delta_0000002_0000002_0000/bucket_00000": acid(
            [Event(UPDATE, 1, 0, 1, 2, (1, "changed"))], hive_version="2"),
    }
    table = build(tmp_path / "t", layout)
    result = run("diff", table, "--hive-version", "2", "--from", "1:9223372036854775807:",
                 "--to", "2:9223372036854775807:")
    assert result.code == 0, result.err
    out = [json.loads(line) for line in result.out.splitlines()]
    assert sorted((r["op"], r["name"]) for r in out) == [("delete", "n1"), ("insert", "changed")]
    assert run("diff", table, "--hive-version", "2", "--from", "2:9223372036854775807:",
               "--to", "2:9223372036854775807:").out == ""


def test_insert_overwrite_base_and_load_data(tmp_path):
    layout = {**delta("delta_0000001_0000001_0000", acid(events(1, n=3))),
              "base_0000002/000000_0": plain(rows=[(10, "iow")]),
              "delta_0000003_0000003_0000/000000_0": plain(rows=[(20, "load")]),
              "delta_0000003_0000003_0000/000000_0_copy_1": plain(rows=[(21, "load2")]),
              "delta_0000003_0000003_0000/_orc_acid_version": MARK}
    table = build(tmp_path / "t", layout)
    out = rows(table, "--with-row-id")
    assert [(r["id"], r["ROW__ID"]["writeid"], r["ROW__ID"]["rowid"]) for r in out] == [
        (10, 2, 0), (20, 3, 0), (21, 3, 1)]
    # write id 3 aborted: the LOAD DATA rows are invisible
    assert [r["id"] for r in rows(table, "--write-ids", "t:3:9223372036854775807::3")] == [10]


def test_hive2_legacy_update_and_delete_events(tmp_path):
    ev = lambda *a: Event(*a)  # noqa: E731
    layout = {
        "delta_0000001_0000001_0000/bucket_00000": acid(events(1, n=3, v0=True), hive_version="2"),
        "delta_0000002_0000002_0000/bucket_00000": acid(
            [ev(UPDATE, 1, 0, 0, 2, (0, "changed")), ev(DELETE, 1, 0, 1, 2, None)],
            hive_version="2"),
    }
    table = build(tmp_path / "t", layout)
    out = rows(table, "--hive-version", "2", "--with-row-id")
    assert [(r["ROW__ID"]["rowid"], r["name"]) for r in out] == [(0, "changed"), (2, "n2")]
    # transaction 2 still open: the original rows
    out = rows(table, "--hive-version", "2", "--txns", "5:2:2")
    assert [r["name"] for r in out] == ["n0", "n1", "n2"]


def test_partition_columns(tmp_path):
    layout = {f"ds=2024-01-0{d}/{k}": v for d in (1, 2)
              for k, v in delta("delta_0000001_0000001_0000", acid(events(1, n=1))).items()}
    table = build(tmp_path / "t", layout)
    out = rows(table)
    assert [r["ds"] for r in out] == ["2024-01-01", "2024-01-02"]


def test_formats_and_output_files(tmp_path):
    table = _table(tmp_path)
    out = tmp_path / "o.parquet"
    assert run("read", table, "--format", "parquet", "-o", out, "--with-row-id").code == 0
    t = pq.read_table(out)
    assert t.num_rows == 6 and t.column_names == ["ROW__ID", "id", "name"]
    orc_out = tmp_path / "o.orc"
    assert run("read", table, "--format", "orc", "-o", orc_out).code == 0
    assert paorc.ORCFile(str(orc_out)).nrows == 6
    csv = run("read", table, "--format", "csv", "--with-row-id", "--columns", "name").out
    assert csv.splitlines()[0] == '"ROW__ID","name"'
    assert '"{""writeid"":1,""bucketid"":536936448,""rowid"":0}","n0"' in csv
    assert len(rows(table, "--limit", "2")) == 2


@pytest.mark.parametrize("fmt,open_file", [
    ("parquet", lambda f: pq.read_table(f)), ("orc", lambda f: paorc.read_table(str(f)))])
@pytest.mark.parametrize("layout,snapshot", [
    ("deletes only", []),  # a table of delete deltas alone (as realdata's trino tables)
    ("nothing visible", ["--write-ids", "t:0:9223372036854775807::"]),
], ids=["deletes-only", "nothing-visible"])
def test_no_row_and_no_data_file_read_is_still_a_file_of_that_format(tmp_path, fmt,
                                                                      open_file, layout,
                                                                      snapshot):
    """No data file in the snapshot (only delete deltas, or none the snapshot sees): no
    columns to take, and the output is still a Parquet or ORC file of no rows that readers
    open (it was a file of no bytes)."""
    deletes = delta("delete_delta_0000002_0000002_0000",
                    acid([Event(DELETE, 1, 536870912, 0, 2, None)]))
    table = build(tmp_path / "t", deletes if layout == "deletes only" else
                  {**delta("delta_0000001_0000001_0000", acid(events(1, n=3))), **deletes})
    out = tmp_path / f"o.{fmt}"
    result = run("read", table, *snapshot, "--format", fmt, "-o", out)
    assert result.code == 0, result.err
    assert out.stat().st_size > 0 and open_file(out).num_rows == 0


def test_failure_leaves_no_partial_output(tmp_path):
    table = _table(tmp_path)
    (table / "delta_0000005_0000005_0000" / "bucket_00000").write_bytes(b"ORC-broken")
    out = tmp_path / "o.parquet"
    result = run("read", table, "--format", "parquet", "-o", out)
    assert result.code == 1 and "bucket_00000" in result.err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".acidtool")] == []


@pytest.mark.parametrize("layout, version, message", [
    ({**delta("delta_0000001_0000001_0000"),
      "delete_delta_0000002_0000002_0000/bucket_00000": plain()}, "3",
     "delete delta file without the ACID event schema"),
    # Hive 3.1's split generation: NumberFormatException 'For input string: "00000_1"'
    ({"base_0000001/bucket_00000_1": plain(), "base_0000001/_orc_acid_version": MARK}, "3",
     'For input string: "00000_1"'),
    ({"delta_0000001_0000001_0000/bucket_00000": orc_with_schema(
        "struct<operation:int,originalTransaction:bigint,bucket:int,rowId:bigint,"
        "currentTransaction:date,row:struct<id:int>>", [])}, "4",
     "column currentTransaction is date32[day], not int64"),
], ids=["plain-delete-delta", "hive3-attempt-name", "acid-names-other-types"])
def test_files_hive_cannot_read_where_they_lie_are_one_clear_error(tmp_path, layout, version, message):
    """Plain ORC where Hive needs ACID events, a bucket id from the name it cannot get, ACID
    names over other types: Hive fails the read, and so does read, naming the file."""
    table = build(tmp_path / "t", layout)
    result = run("read", table, "--hive-version", version)
    assert result.code == 1 and message in result.err, result.err
    assert len(result.err.strip().splitlines()) == 1


def test_refused_snapshot(tmp_path):
    layout = {**delta("base_0000005", acid(events(5))),
              "base_0000005/_metadata_acid": b'{"thisFileVersion":"0","dataFormat":"compacted"}'}
    table = build(tmp_path / "t", layout)
    result = run("read", table, "--write-ids", "t:6:3:3:")
    assert result.code == 1 and "Not enough history" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_unknown_column(tmp_path):
    result = run("read", _table(tmp_path), "--columns", "nope")
    assert result.code == 2 and "unknown column" in result.err


def test_a_column_added_later_is_null_in_the_files_before_it(tmp_path):
    """ALTER TABLE ... ADD COLUMNS: --columns may name the new column; the older files' rows
    read null there, as Hive reads them (before, "unknown column" and exit 2)."""
    from acidtool.io.acidwrite import Event

    layout = {**delta("delta_0000001_0000001_0000", acid(events(1, n=2))),
              **delta("delta_0000002_0000002_0000", acid(
                  [Event(0, 2, 536870912, 0, 2, (9, "x", 2.5))],
                  row_type="struct<id:int,name:string,price:double>"))}
    table = build(tmp_path / "t", layout)
    out = rows(table, "--columns", "price,id")
    assert sorted((r["id"], r["price"]) for r in out) == [(0, None), (1, None), (9, 2.5)]
    assert list(out[0]) == ["price", "id"]
    assert run("read", table, "--columns", "cost").code == 2


@pytest.mark.parametrize("partitioned", [False, True])
def test_files_from_before_add_columns_read_as_the_widest_in_every_format(tmp_path,
                                                                           partitioned):
    """The older files come first and lack the added column; every output has the table's
    columns all through (before, CSV's header had the old ones and later rows had more, and
    Parquet and ORC failed with an internal error), the partition columns last, and the
    older rows null there, as Hive reads them."""
    layout = {}
    for p in (["p=1/", "p=2/"] if partitioned else [""]):
        layout.update({**delta(f"{p}delta_0000001_0000001_0000", acid(events(1, n=2))),
                       **delta(f"{p}delta_0000002_0000002_0000", acid(
                           [Event(0, 2, 536870912, 0, 2, (9, "x", 2.5))],
                           row_type="struct<id:int,name:string,price:double>"))})
    table = build(tmp_path / "t", layout)
    names = ["id", "name", "price"] + (["p"] if partitioned else [])
    csv = run("read", table, "--format", "csv").out.splitlines()
    assert csv[0] == ",".join(f'"{n}"' for n in names)
    assert all(line.count(",") == len(names) - 1 for line in csv[1:]), csv
    for fmt in ("parquet", "orc"):
        out = tmp_path / f"rows.{fmt}"
        assert run("read", table, "--format", fmt, "-o", out).code == 0
        got = pq.read_table(out) if fmt == "parquet" else paorc.read_table(str(out))
        assert got.column_names == names
        assert sorted((r["id"], r["price"]) for r in got.to_pylist()) == sorted(
            [(0, None), (1, None), (9, 2.5)] * (2 if partitioned else 1))
    snap = acidtool.open_table(str(table)).snapshot()
    assert snap.to_arrow().column_names == snap.to_batches().schema.names == names


def test_python_api(tmp_path):
    table = _table(tmp_path)
    snap = acidtool.open_table(str(table)).snapshot(write_ids="t:5:9223372036854775807::4",
                                                    with_row_id=True)
    reader = snap.to_batches()
    assert sum(b.num_rows for b in reader) == 5
    assert acidtool.open_table(str(table)).to_arrow().num_rows == 6


def test_columns_are_matched_by_position(tmp_path):
    """Hive 2.3 names row fields _col0.. in inserts and _col1.. in updates."""
    from acidtool.io.acidwrite import Event

    layout = {**delta("delta_0000001_0000001_0000", acid(events(1, n=2),
                                                         row_type="struct<_col0:int,_col1:string>")),
              **delta("delta_0000002_0000002_0000", acid(
                  [Event(0, 2, 536870912, 0, 2, (9, "x"))], row_type="struct<id:int,name:string>")),
              **delta("delta_0000003_0000003_0000", acid(
                  [Event(0, 3, 536870912, 0, 3, (7, "y"))],
                  row_type="struct<_col1:int,_col2:string>"))}
    table = build(tmp_path / "t", layout)
    out = rows(table)
    assert {tuple(r) for r in out} == {("id", "name")}
    assert sorted(r["id"] for r in out) == [0, 1, 7, 9]


def test_memory_limit_streams_delete_keys_with_the_same_result(tmp_path):
    ev = lambda *a: Event(*a)  # noqa: E731
    layout = {**delta("delta_0000001_0000001_0000", acid(events(1, n=5000))),
              **delta("delete_delta_0000002_0000002_0000", acid(
                  [ev(DELETE, 1, 536870912, i, 2, None) for i in range(0, 5000, 3)]))}
    table = build(tmp_path / "t", layout)
    full = rows(table, "--with-row-id")
    limited = rows(table, "--with-row-id", "--memory-limit", "48K")  # chunks of 1,024 keys
    assert len(full) == 5000 - 1667
    assert _ids(limited) == _ids(full)
    assert run("read", table, "--memory-limit", "lots").code == 2


@pytest.mark.parametrize("fmt,codec,expect", [
    ("orc", None, "UNCOMPRESSED"), ("orc", "snappy", "SNAPPY"), ("orc", "zstd", "ZSTD"),
    ("parquet", None, "SNAPPY"), ("parquet", "zstd", "ZSTD"), ("parquet", "uncompressed", "UNCOMPRESSED"),
])
def test_read_writes_the_codec_asked_for(tmp_path, fmt, codec, expect):
    root = build(tmp_path / "t", delta("delta_0000001_0000001_0000", acid(events(1, 5))))
    out = tmp_path / f"out.{fmt}"
    result = run("read", root, "--format", fmt, "-o", out,
                 *(["--compression", codec] if codec else []))
    assert result.code == 0, result.err
    if fmt == "orc":
        assert paorc.ORCFile(str(out)).compression == expect
        assert paorc.read_table(str(out)).num_rows == 5
    else:
        assert pq.ParquetFile(str(out)).metadata.row_group(0).column(0).compression == expect
        assert pq.read_table(str(out)).num_rows == 5


@pytest.mark.parametrize("args", [("--format", "jsonl"), ("--format", "csv"),
                                  ("--format", "orc", "--spark")])
def test_read_refuses_a_codec_it_cannot_use(tmp_path, args):
    root = build(tmp_path / "t", delta("delta_0000001_0000001_0000", acid(events(1, 5))))
    result = run("read", root, *args, "-o", tmp_path / "out", "--compression", "zstd")
    assert result.code == 2 and "--compression goes with" in result.err
    assert not (tmp_path / "out").exists()
