"""``read_table``'s native plan (issue 41): Spark's ORC reader, a filter and a broadcast anti
join, no Python in the plan. On every layout it takes, its rows are the ``hiveacid`` source's
and ``acidtool read``'s; on the layouts it does not take it says why and the source reads them;
Spark prunes its columns and partitions."""

from __future__ import annotations

import datetime
import decimal
import json
import struct
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.orc as paorc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acidtool.api import Table
from acidtool.core.bucket import decode
from acidtool.core.errors import AcidToolError, UsageError
from acidtool.io.acidwrite import DELETE, INSERT, UPDATE, Event
from acidtool.spark import read_table

from .helpers.layouts import acid, build, delta, events, plain
from .helpers.runner import run

pytestmark = pytest.mark.spark

ROW3 = "struct<id:int,name:string,price:double>"


def _plan(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


@pytest.fixture(params=["anti", "masks"])
def step(request, monkeypatch):
    """Each delete step of the plan: the anti join of the events (the default for a
    partition of up to ANTI_PAST delete events: every table here) and the masks."""
    from acidtool.hiveacid import frame

    if request.param == "masks":
        monkeypatch.setattr(frame, "ANTI_PAST", -1)
    return request.param


def _rows(df) -> list[str]:
    return sorted(json.dumps(r.asDict(recursive=True), sort_keys=True, default=str)
                  for r in df.collect())


def same_three_ways(spark, path, *, typed_partitions: bool = False, **kw) -> int:
    """The native plan's rows are the source's and acidtool read's, with the same columns,
    and its plan holds no Python. (``typed_partitions``: the table has a partition value
    Spark types, a null for Hive's default partition, where acidtool read gives the
    directory's string: the source alone is compared.)"""
    native = read_table(spark, str(path), native=True, **kw)
    plan = _plan(native)
    source = read_table(spark, str(path), native=False, **kw)
    assert "FileScan orc" not in _plan(source)
    if not source.count():  # (acidtool read gives no columns without a row)
        assert native.columns == source.columns and "Python" not in plan
        assert not native.count()
        return 0
    assert "Python" not in plan and "FileScan orc" in plan, plan
    ours = Table(str(path)).snapshot(kw.get("write_ids"), kw.get("txns"),
                                     kw.get("hive_version"),
                                     with_row_id=kw.get("with_row_id", False),
                                     columns=kw.get("columns"),
                                     insert_only=kw.get("insert_only", False)).to_arrow()
    assert native.columns == source.columns == ours.column_names
    assert [(f.name, f.dataType, f.nullable) for f in native.schema] == \
        [(f.name, f.dataType, f.nullable) for f in source.schema]
    got = _rows(native)
    assert got == _rows(source)
    if not typed_partitions:
        assert got == sorted(json.dumps({k: _as_spark(ours.schema.field(k).type, v)
                                         for k, v in r.items()}, sort_keys=True, default=str)
                             for r in ours.to_pylist())
    return len(got)


def _as_spark(kind: pa.DataType, value):
    """An Arrow value as Spark's Row gives it: a map as a dict (Arrow: a list of pairs)."""
    if value is None:
        return None
    if pa.types.is_map(kind):
        return {k: _as_spark(kind.item_type, v) for k, v in value}
    if pa.types.is_struct(kind):
        return {kind.field(i).name: _as_spark(kind.field(i).type, value[kind.field(i).name])
                for i in range(kind.num_fields)}
    if pa.types.is_list(kind):
        return [_as_spark(kind.value_type, v) for v in value]
    return value


def _deletes(wid: int, keys: list[tuple[int, int, int]]) -> bytes:
    return acid([Event(DELETE, o, b, r, wid, None) for o, b, r in sorted(keys)])


def _split_update(tmp_path):
    """Two buckets, two statements, an update (delete + insert), a delete of a row of an
    aborted-then-valid id, and a delta written before ADD COLUMNS (two row columns of
    three)."""
    layout = {}
    layout.update(delta("delta_0000001_0000001_0000", acid(events(1, n=4))))
    layout["delta_0000001_0000001_0000/bucket_00001"] = acid(events(1, n=3, bucket=1))
    layout.update(delta("delta_0000002_0000002_0001", acid(events(2, n=2, stmt=1))))
    layout.update(delta("delete_delta_0000003_0000003_0000", _deletes(
        3, [(1, 536870912, 0), (2, 536870913, 1)])))
    layout["delete_delta_0000003_0000003_0000/bucket_00001"] = _deletes(3, [(1, 536936448, 2)])
    three = [Event(INSERT, 3, 536870912, i, 3, (100 + i, f"u{i}", i * 1.5)) for i in range(2)]
    layout.update(delta("delta_0000003_0000003_0000", acid(three, row_type=ROW3)))
    layout.update(delta("delta_0000004_0000004_0000", acid(
        [Event(INSERT, 4, 536870912, 0, 4, (400, "aborted", 0.0))], row_type=ROW3)))
    return build(tmp_path / "t", layout)


@pytest.mark.parametrize("kw", [
    {}, {"with_row_id": True}, {"columns": ["price", "id"]},
    {"write_ids": "db.t:4:4:4:", "with_row_id": True},  # 4 open: its rows unseen
    {"write_ids": "db.t:3:2:2:"},  # 2 open: delta 2 and its delete unseen
    {"write_ids": "db.t:2:9223372036854775807::"},  # before the deletes and updates
], ids=["all", "row-id", "columns", "4-open", "2-open", "before-3"])
def test_split_update_layouts_read_natively_as_acidtool_does(spark, tmp_path, kw, step):
    table = _split_update(tmp_path)
    assert same_three_ways(spark, table, **kw) > 0


def _native(path):
    from acidtool.hiveacid.native import native_plan
    from acidtool.table.readplan import ReadOptions, plan_read

    plan = native_plan(plan_read(ReadOptions.of({"path": str(path)})))
    assert not isinstance(plan, str), plan
    return plan


@pytest.mark.parametrize("partitioned", [False, True], ids=["one", "partitions"])
def test_the_key_takes_the_bucket_id_only_where_the_deletes_differ_in_nothing_else(
        spark, tmp_path, step, partitioned):
    """Where each delete file holds one bucket property and they differ only in the bucket
    id, the key packs the id (bits 16-27), not the property: a row whose property differs
    elsewhere (here a statement id) gets no key and stays. Delete events of two statements
    keep the property itself. The rows are acidtool's and the source's either way."""
    from acidtool.hiveacid import frame

    def layout(deletes: dict) -> dict:
        out = {}
        for p in (["p=1/", "p=2/"] if partitioned else [""]):
            out.update(delta(f"{p}delta_0000002_0000002_0000", acid(events(2, n=3))))
            out.update(delta(f"{p}delta_0000002_0000002_0001", acid(events(2, n=3, stmt=1))))
            out[f"{p}delta_0000002_0000002_0000/bucket_00001"] = acid(events(2, n=3, bucket=1))
            out.update({f"{p}{k}": v for k, v in deletes.items()})
        return out

    times = 2 if partitioned else 1
    # statement 1's row 1 (bucket 0), and bucket 1's row 2 (statement 0)
    two = build(tmp_path / "t", layout({
        "delete_delta_0000003_0000003_0000/bucket_00000": _deletes(3, [(2, 536870913, 1)]),
        "delete_delta_0000003_0000003_0000/bucket_00001": _deletes(3, [(2, 536936448, 2)])}))
    part = _native(two / "p=1" if partitioned else two).parts[0]
    assert part.delete_buckets == (536870913, 536936448)  # two statements: the property
    assert "shiftright(bucket, 16)" not in (frame._packed(part) or "")
    assert same_three_ways(spark, two, with_row_id=True) == 7 * times
    # statement 1's row 1 of buckets 0 and 1, in two files: the ids packed; statement 2's
    # rows of bucket 0 lie between the two properties, and only the test of the other bits
    # keeps their row 1 from meeting statement 1's delete
    layout_u = layout({
        "delta_0000002_0000002_0002/bucket_00000": acid(events(2, n=3, stmt=2)),
        "delta_0000002_0000002_0001/bucket_00001": acid(events(2, n=3, bucket=1, stmt=1)),
        "delete_delta_0000003_0000003_0000/bucket_00000": _deletes(3, [(2, 536870913, 1)]),
        "delete_delta_0000004_0000004_0000/bucket_00001": _deletes(4, [(2, 536936449, 1)])})
    one = build(tmp_path / "u", layout_u)
    part = _native(one / "p=1" if partitioned else one).parts[0]
    assert part.delete_buckets == (536870913, 536936449)
    assert "shiftright(bucket, 16)" in (frame._packed(part) or "")
    got = read_table(spark, str(one), native=True, with_row_id=True).collect()
    kept = [(b, i) for b in (536870912, 536870914, 536936448) for i in range(3)] + \
        [(b, i) for b in (536870913, 536936449) for i in (0, 2)]
    assert sorted((r.ROW__ID.bucketid, r.ROW__ID.rowid) for r in got) == sorted(kept * times)
    assert same_three_ways(spark, one, with_row_id=True) == 13 * times


def test_without_statistics_the_deletes_are_joined_on_three_keys(spark, tmp_path, monkeypatch,
                                                                 step):
    """The one-bigint key needs the delete files' statistics; without, (writeid, bucket,
    block) are the masks' keys and (writeid, bucket, row id) the events', with the same
    rows."""
    from acidtool.hiveacid import frame

    table = _split_update(tmp_path)
    packed = read_table(spark, str(table), native=True, with_row_id=True)
    plan = _plan(packed)
    assert "__acid_key" in plan
    assert "LeftAnti" in plan and ("__acid_mask" in plan) == (step == "masks"), plan
    monkeypatch.setattr(frame, "_packed", lambda part, bits=0, narrow=False: None)
    three = read_table(spark, str(table), native=True, with_row_id=True)
    plan = _plan(three)
    assert "__acid_key" not in plan
    assert ("__acid_block" in plan) == (step == "masks"), plan
    assert _rows(three) == _rows(packed)
    assert same_three_ways(spark, table, with_row_id=True) == len(_rows(packed))


@pytest.mark.parametrize("partitioned", [False, True], ids=["one", "partitions"])
def test_masks_are_made_in_one_task_up_to_one_task_past_events(spark, tmp_path, monkeypatch,
                                                               partitioned):
    """Masks up to ONE_TASK_PAST delete events (a join's: every partition's) are made in one
    task (Spark's Coalesce 1), with no shuffle before the aggregation; past it, after a
    shuffle by the key. The rows are the same."""
    import shutil

    from acidtool.hiveacid import frame

    monkeypatch.setattr(frame, "ANTI_PAST", -1)
    table = _split_update(tmp_path)
    if partitioned:
        table = tmp_path / "parted"
        for p in ("p=1", "p=2"):
            shutil.move(str(_split_update(tmp_path / p)), str(table / p))
    one_task = read_table(spark, str(table), native=True, with_row_id=True)
    plan = _plan(one_task)
    assert "Coalesce 1" in plan and "Exchange hashpartitioning" not in plan, plan
    monkeypatch.setattr(frame, "ONE_TASK_PAST", 5 if partitioned else 2)  # (3 a partition)
    shuffled = read_table(spark, str(table), native=True, with_row_id=True)
    plan = _plan(shuffled)
    assert "Coalesce 1" not in plan and "Exchange hashpartitioning" in plan, plan
    assert _rows(shuffled) == _rows(one_task)
    assert same_three_ways(spark, table, with_row_id=True) == len(_rows(one_task))


def test_partitions_typed_escaped_and_null_are_literals_spark_prunes(spark, tmp_path, step):
    layout = {}
    for part in ("d=2024-01-01", "d=a%2Fb", "d=__HIVE_DEFAULT_PARTITION__"):
        layout.update(delta(f"{part}/delta_0000001_0000001_0000", acid(events(1, n=3))))
        layout.update(delta(f"{part}/delete_delta_0000002_0000002_0000",
                            _deletes(2, [(1, 536870912, 1)])))
    table = build(tmp_path / "t", layout)
    assert same_three_ways(spark, table, with_row_id=True, typed_partitions=True) == 6
    df = read_table(spark, str(table), native=True)
    values = sorted((r.d or "<null>") for r in df.select("d").distinct().collect())
    assert values == ["2024-01-01", "<null>", "a/b"]
    one = df.where("d = 'a/b'")
    plan = _plan(one)
    assert plan.count("FileScan orc") == 2, plan  # its data and its deletes, no other
    # the partitions share Spark's relations (one of data files, one of delete deltas), each
    # reading its own files by _metadata.file_path: the other partitions' files are never
    # opened, so garbage in them changes nothing
    assert len({unquote(f).split("/t/", 1)[1].split("/")[0] for f in one.inputFiles()}) == 3
    for f in table.rglob("bucket_*"):
        if "d=a%2Fb" not in str(f):
            f.write_bytes(b"not ORC at all" * 100)
    assert sorted(r.id for r in one.collect()) == [0, 2]
    with pytest.raises(Exception, match="(?i)orc|malformed|read"):
        df.collect()


def test_shared_relations_hold_at_most_the_listing_threshold_of_files(spark, tmp_path):
    """Past spark.sql.sources.parallelPartitionDiscovery.threshold files Spark lists a
    relation's files with a job: the partitions' files are read by relations of at most that
    many paths, with the same rows, and a filter on the partition column still reads only
    that partition's files."""
    import re

    layout = {}
    for p in range(5):
        layout.update(delta(f"p={p}/delta_0000001_0000001_0000", acid(events(1, n=3))))
        layout.update(delta(f"p={p}/delete_delta_0000002_0000002_0000",
                            _deletes(2, [(1, 536870912, p % 3)])))
    table = build(tmp_path / "t", layout)
    key = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    before = spark.conf.get(key)
    spark.conf.set(key, "2")
    try:
        df = read_table(spark, str(table), native=True)
        # (5 data directories and 5 delete deltas: relations of 2, 2 and 1 of each; Spark
        # pushes the join into each branch of the rows' union, the deletes' broadcast shared)
        sizes = {int(n) for n in re.findall(r"InMemoryFileIndex\((\d+) paths\)",
                                             df._jdf.queryExecution().sparkPlan().toString())}
        assert sizes == {1, 2}, sizes
        assert same_three_ways(spark, table, with_row_id=True) == 10
        for f in table.rglob("bucket_*"):
            if "p=3" not in str(f):
                f.write_bytes(b"not ORC at all" * 100)
        assert sorted(r.id for r in df.where("p = '3'").collect()) == [1, 2]  # (0 deleted)
    finally:
        spark.conf.set(key, before)


def _two_buckets(part: str, wid: int) -> dict:
    d = f"{part}/delta_{wid:07d}_{wid:07d}".lstrip("/")
    return {**delta(d, acid(events(wid, n=3))),
            f"{d}/bucket_00001": acid(events(wid, n=2, bucket=1))}


def test_a_directory_is_handed_to_spark_for_its_files_and_its_other_files_stay_unread(
        spark, tmp_path):
    """A delta of two bucket files is given to Spark as its directory. A file beside them
    that Hive does not read (here not ORC at all) keeps its directory from being given: the
    files are, and the other is never listed. A directory holding a directory (a ``k=v``
    one, which Spark would take for a partition column) is not given either."""
    import re

    layout = {**_two_buckets("p=1", 1), **_two_buckets("p=2", 1), **_two_buckets("p=3", 1),
              "p=1/delta_0000001_0000001/junk.txt": b"not ORC at all" * 50,
              "p=2/delta_0000001_0000001/x=1/junk.txt": b"not ORC at all" * 50}
    table = build(tmp_path / "t", layout)
    assert same_three_ways(spark, table, with_row_id=True) == 15
    df = read_table(spark, str(table), native=True)
    listed = {unquote(f).split("/t/", 1)[1] for f in df.inputFiles()}
    assert len(listed) == 6 and not any("junk" in f for f in listed), listed
    # p=1's and p=2's two files each, p=3's directory
    assert re.findall(r"InMemoryFileIndex\((\d+) paths\)",
                      df._jdf.queryExecution().sparkPlan().toString()) == ["5"]
    assert "x" not in df.columns
    assert sorted(r.id for r in df.where("p = '1'").collect()) == [0, 0, 1, 1, 2]


ODD = ("struct<`my col`:int,`a{b}'c`:string,s:struct<`x y`:int,z:array<string>>,"
       "m:map<string,int>,d:decimal(10,2),t:timestamp,dt:date>")


def _odd_row(i: int) -> tuple:
    return (i, f"v{i}", (i, [f"z{i}"]), {"k": i}, decimal.Decimal("1.25"),
            datetime.datetime(2024, 1, 1, 0, 0, i), datetime.date(2024, 1, i + 1))


def test_odd_names_nested_types_and_quoted_values_read_natively(spark, tmp_path):
    """The plan is SQL text: names with spaces, quotes and braces, nested types and partition
    values with quotes, backslashes and braces reach Spark as names and values."""
    layout = {}
    for part in ("k=it's", "k=a\\b{c}", "k=%7Bx%7D", "k=$%7Benv%3AHOME}"):
        layout.update(delta(f"{part}/delta_0000001_0000001_0000", acid(
            [Event(INSERT, 1, 536870912, i, 1, _odd_row(i)) for i in range(3)], row_type=ODD)))
        layout.update(delta(f"{part}/delete_delta_0000002_0000002_0000",
                            _deletes(2, [(1, 536870912, 1)])))
    table = build(tmp_path / "t", layout)
    assert same_three_ways(spark, table, with_row_id=True) == 8
    df = read_table(spark, str(table), native=True)
    values = ["${env:HOME}", "a\\b{c}", "it's", "{x}"]
    assert sorted(r.k for r in df.select("k").distinct().collect()) == values
    escaping = spark.conf.get("spark.sql.parser.escapedStringLiterals")
    spark.conf.set("spark.sql.parser.escapedStringLiterals", "true")  # the values alike
    try:
        assert sorted(r.k for r in read_table(spark, str(table), native=True).select(
            "k").distinct().collect()) == values
    finally:
        spark.conf.set("spark.sql.parser.escapedStringLiterals", escaping)
    assert df.columns[:2] == ["my col", "a{b}'c"]
    assert sorted(r["x y"] for r in df.where("k = 'it''s'").select("s.`x y`").collect()) == [0, 2]


def test_timestamps_fall_back_when_the_session_zone_is_not_the_jvms(spark, tmp_path):
    """Spark's ORC reader reads Hive's wall-clock timestamps in the JVM's zone and the
    DataFrame's TIMESTAMP_NTZ takes the session's: where they differ the source reads."""
    from acidtool.spark import NotNative, read_table_and_why

    layout = delta("delta_0000001_0000001_0000", acid(
        [Event(INSERT, 1, 536870912, i, 1, _odd_row(i)) for i in range(3)], row_type=ODD))
    table = build(tmp_path / "t", layout)
    same = read_table(spark, str(table), native=True).select("t").collect()
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone",
                   "America/Lima" if zone != "America/Lima" else "Asia/Tokyo")
    try:
        df, why = read_table_and_why(spark, str(table))
        assert why is not None and "time zone" in why and "timestamp" in why
        assert sorted(df.select("t").collect()) == sorted(same)  # the source: wall clock
        with pytest.raises(NotNative, match="time zone"):
            read_table(spark, str(table), native=True)
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def _scans(df) -> list[tuple[list[str], str]]:
    """(the columns it reads, ``row``'s as ``row.x``; the filters it pushes to ORC) of each
    file scan of the plan."""
    leaves = df._jdf.queryExecution().sparkPlan().collectLeaves().iterator()
    out = []
    while leaves.hasNext():
        leaf = leaves.next()
        if "FileSourceScanExec" in leaf.getClass().getName():
            fields = json.loads(leaf.requiredSchema().json())["fields"]
            names = [f["name"] for f in fields]
            names += [f"row.{c['name']}" for f in fields if f["name"] == "row"
                      for c in f["type"]["fields"]]
            out.append((names, leaf.dataFilters().toString()))
    return out


def test_a_query_reads_only_the_row_columns_it_uses(spark, tmp_path):
    table = _split_update(tmp_path)
    df = read_table(spark, str(table), native=True)
    scans = _scans(df.select("price").where("price > 1"))
    assert not any("row.name" in names for names, _ in scans), scans  # pruned
    data = [s for s in scans if "row.price" in s[0]]
    # (id, the first, is what keeps `row` read; the files without price are left out: a
    # null is not > 1)
    assert len(data) == 1 and [n for n in data[0][0] if n.startswith("row.")] == [
        "row.id", "row.price"] and ".price > 1" in data[0][1], scans
    deletes = [s for s in scans if "row" in s[0] and not any(
        n.startswith("row.") for n in s[0])]
    assert len(deletes) == 1, scans  # the deletes, `row` an empty struct
    assert df.count() == read_table(spark, str(table), native=False).count()


@pytest.mark.parametrize("what,layout,reason", [
    ("originals", {"000000_0": plain()}, "original or LOAD DATA files"),
    ("streaming", {**delta("delta_0000001_0000001_0000", acid(events(1))),
                   "delta_0000001_0000001_0000/bucket_00000_flush_length":
                       struct.pack(">q", len(acid(events(1))))},
     "streaming writer"),
    ("not ORC", {**delta("delta_0000001_0000001_0000", b"not an orc file")},
     "not an ORC file"),  # (said by the planning both share)
    ("misplaced", {**delta("delta_0000001_0000001_0000", acid(events(1, n=3, bucket=1))),
                   **delta("delete_delta_0000002_0000002_0000", _deletes(
                       2, [(1, 536936448, 0)]))}, "not their file's bucket"),
])
def test_layouts_spark_cannot_read_as_they_are_go_through_the_source(spark, tmp_path, what,
                                                                     layout, reason):
    table = build(tmp_path / "t", layout)
    with pytest.raises(AcidToolError, match=reason):
        read_table(spark, str(table), native=True)
    if what == "originals":
        df = read_table(spark, str(table))
        assert "FileScan orc" not in _plan(df) and df.count() == 1


def _legacy(tmp_path):
    """Hive 2.3 without split-update: inserts, then an update and a delete of rows of the
    first write in the second delta, two statements of one transaction updating one row
    (the higher statement wins), a row updated twice."""
    ev = Event
    layout = {
        "delta_0000001_0000001_0000/bucket_00000": acid(events(1, n=4, v0=True),
                                                        hive_version="2"),
        "delta_0000001_0000001_0000/bucket_00001": acid(events(1, n=2, bucket=1, v0=True),
                                                        hive_version="2"),
        "delta_0000002_0000002_0000/bucket_00000": acid(
            [ev(UPDATE, 1, 0, 0, 2, (0, "changed")), ev(DELETE, 1, 0, 1, 2, None)],
            hive_version="2"),
        "delta_0000003_0000003_0000/bucket_00000": acid(
            [ev(UPDATE, 1, 0, 2, 3, (2, "s0"))], hive_version="2"),
        "delta_0000003_0000003_0001/bucket_00000": acid(
            [ev(UPDATE, 1, 0, 2, 3, (2, "s1"))], hive_version="2"),
        "delta_0000004_0000004_0000/bucket_00001": acid(
            [ev(UPDATE, 1, 1, 1, 4, (1, "again")), ev(INSERT, 4, 1, 0, 4, (9, "new"))],
            hive_version="2"),
    }
    return build(tmp_path / "legacy", layout)


@pytest.mark.parametrize("kw", [{}, {"txns": "5:3:3"}, {"txns": "3:9223372036854775807::"}],
                         ids=["all", "3-open", "up-to-3"])
def test_hive23_legacy_layouts_merge_natively_as_acidtool_does(spark, tmp_path, kw):
    table = _legacy(tmp_path)
    assert same_three_ways(spark, table, hive_version="2", with_row_id=True, **kw) > 0
    got = read_table(spark, str(table), hive_version="2", native=True, with_row_id=True,
                     **kw).collect()
    assert (1, 0, 1) not in {tuple(r.ROW__ID) for r in got}  # deleted by write 2
    names = {r.name for r in got}
    if not kw:
        assert {"changed", "s1", "again", "new"} <= names and "s0" not in names


def test_original_files_and_parquet_files_go_through_the_source(spark, tmp_path):
    legacy = build(tmp_path / "legacy", {
        "000000_0": plain(),
        **delta("delta_0000001_0000001_0000", acid(events(1, v0=True), hive_version="2"))})
    with pytest.raises(UsageError, match="original"):
        read_table(spark, str(legacy), hive_version="2", native=True)
    assert read_table(spark, str(legacy), hive_version="2").count() == 3
    parquet = tmp_path / "pq"
    (parquet / "delta_0000001_0000001_0000").mkdir(parents=True)
    pq.write_table(pa.table({"id": [1, 2], "name": ["a", "b"]}),
                   parquet / "delta_0000001_0000001_0000" / "000000_0")
    with pytest.raises(UsageError, match="Parquet or text"):
        read_table(spark, str(parquet), insert_only=True, native=True)
    assert read_table(spark, str(parquet), insert_only=True).count() == 2


def test_insert_only_tables_of_orc_files_read_natively(spark, tmp_path):
    """Their files are the rows: a scan per shape, columns by position (Hive's _colN names),
    partitions literals."""
    layout = {}
    for part in ("ds=1", "ds=2"):
        layout[f"{part}/delta_0000001_0000001_0000/000000_0"] = plain(
            ROW3, rows=[(1, "a", 0.5), (2, "b", None)])
        layout[f"{part}/delta_0000002_0000002_0000/000000_0"] = plain(ROW3, rows=[(3, "c", 1.5)])
    layout["ds=2/delta_0000003_0000003_0000/000000_0"] = plain(
        "struct<_col0:int,_col1:string,_col2:double>", rows=[(4, "d", 2.5)])
    table = build(tmp_path / "t", layout)
    assert same_three_ways(spark, table, insert_only=True) == 7
    assert same_three_ways(spark, table, insert_only=True,
                           write_ids="db.t:3:2:2:") == 5  # 2 open
    df = read_table(spark, str(table), insert_only=True, native=True)
    assert sorted(r.id for r in df.where("ds = '2' AND price > 2").collect()) == [4]


@st.composite
def _histories(draw):
    """Deltas of 1-3 buckets and two statements, delete deltas of rows written before, some
    write ids left open or aborted by the snapshot."""
    layout: dict = {}
    written: list[tuple[int, int, int]] = []
    n_writes = draw(st.integers(2, 5))
    for wid in range(1, n_writes + 1):
        if written and draw(st.booleans()):
            gone = draw(st.lists(st.sampled_from(written), min_size=1, max_size=4, unique=True))
            name = f"delete_delta_{wid:07d}_{wid:07d}_0000"
            layout[f"{name}/_orc_acid_version"] = b"2"
            for bucket in sorted({decode(b).bucket_id for _, b, _ in gone}):  # file by bucket
                layout[f"{name}/bucket_{bucket:05d}"] = _deletes(wid, [
                    k for k in gone if decode(k[1]).bucket_id == bucket])
            continue
        for bucket in range(draw(st.integers(1, 3))):
            stmt = draw(st.integers(0, 1))
            evs = events(wid, n=draw(st.integers(1, 4)), bucket=bucket, stmt=stmt)
            name = f"delta_{wid:07d}_{wid:07d}_{stmt:04d}"
            layout.setdefault(f"{name}/_orc_acid_version", b"2")
            layout[f"{name}/bucket_{bucket:05d}"] = acid(evs)
            written += [(e.original_transaction, e.bucket, e.row_id) for e in evs]
    hidden = draw(st.lists(st.integers(1, n_writes), max_size=2, unique=True))
    write_ids = f"db.t:{n_writes}:{min(hidden) if hidden else 9223372036854775807}:" + \
        ",".join(map(str, sorted(hidden))) + ":" if hidden else None
    return layout, write_ids


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(_histories(), st.sampled_from([None, "masks", "shuffled"]))
def test_random_histories_read_natively_as_acidtool_does(spark, tmp_path_factory, history,
                                                         step):
    """(``step``: every delete step masks, made in one task or after a shuffle)"""
    from acidtool.hiveacid import frame

    layout, write_ids = history
    table = build(tmp_path_factory.mktemp("h") / "t", layout)
    default = frame.ANTI_PAST, frame.ONE_TASK_PAST
    if step:
        frame.ANTI_PAST, frame.ONE_TASK_PAST = -1, -1 if step == "shuffled" else default[1]
    try:
        same_three_ways(spark, table, write_ids=write_ids, with_row_id=True)
    finally:
        frame.ANTI_PAST, frame.ONE_TASK_PAST = default


def test_the_default_takes_the_source_where_it_reads_sooner(spark, tmp_path, monkeypatch):
    """Spark's broadcast costs more a mask of deleted row ids than the source's merge costs a
    row: past DELETES_PAST masks a row (and past PARTITIONS_PAST partitions, each a scan to
    plan) the default is the source, once it has read in the session (its first read costs
    seconds more: until then, only where it saves more than that); native=True still builds
    Spark's plan; read --spark says which read it."""
    import acidtool.spark
    from acidtool.hiveacid import native
    from acidtool.spark import read_table_and_why

    few = build(tmp_path / "few", {
        **delta("delta_0000001_0000001_0000", acid(events(1, n=100))),
        **delta("delete_delta_0000002_0000002_0000", _deletes(2, [(1, 536870912, 7)]))})
    many = build(tmp_path / "many", {
        **delta("delta_0000001_0000001_0000", acid(events(1, n=5))),
        **delta("delete_delta_0000002_0000002_0000", _deletes(
            2, [(1, 536870912, i) for i in range(3)]))})
    df, why = read_table_and_why(spark, str(few))
    assert why is None and "FileScan orc" in _plan(df) and df.count() == 99
    # a session in which the source has not read yet: Spark's plan, the source's saving being
    # far under its first read's cost, unless that cost is taken as less than the saving
    monkeypatch.setattr(acidtool.spark, "_SOURCE_READ", set())
    df, why = read_table_and_why(spark, str(many))
    assert why is None and "FileScan orc" in _plan(df) and df.count() == 2
    with monkeypatch.context() as cheap:
        cheap.setattr(native, "SOURCE_FIRST_READ_S", -1.0)
        why = read_table_and_why(spark, str(many))[1]
        assert why is not None and why.endswith(
            "by more than the source's first read in a session costs"), why
    assert read_table(spark, str(many), native=False).count() == 2  # the source has read now
    df, why = read_table_and_why(spark, str(many))
    assert why is not None and "up to 1 mask of 64 row ids for 5 rows" in why
    assert "FileScan orc" not in _plan(df) and df.count() == 2
    assert "FileScan orc" in _plan(read_table(spark, str(many), native=True))
    out = run("read", str(many), "--spark", "--format", "parquet", "-o",
              str(tmp_path / "out"))
    assert out.code == 0 and "read through the hiveacid source: its deletes make up to 1 " \
        "mask" in out.err, out.err
    out = run("read", str(few), "--spark", "--format", "parquet", "-o", str(tmp_path / "o2"))
    assert out.code == 0 and "read by Spark's own ORC reader" in out.err, out.err

    # past FILES_PAST files of under FILE_ROWS_UNDER rows each on average (Spark opens a file
    # slower than the source): `few` is a data file and a delete file of 50 rows on average
    monkeypatch.setattr(native, "FILES_PAST", 1)
    df, why = read_table_and_why(spark, str(few))
    assert why is not None and "2 files of 50 rows on average, past 1 files" in why, why
    assert "FileScan orc" not in _plan(df) and df.count() == 99
    monkeypatch.setattr(native, "FILE_ROWS_UNDER", 50)  # 100 rows: not under 50 a file
    assert read_table_and_why(spark, str(few))[1] is None
    monkeypatch.undo()
    monkeypatch.setattr(native, "FILES_PAST", 2)  # 2 files: not past 2
    assert read_table_and_why(spark, str(few))[1] is None
    monkeypatch.undo()

    parted = build(tmp_path / "parted", {
        **delta("p=1/delta_0000001_0000001_0000", acid(events(1, n=3))),
        **delta("p=2/delta_0000001_0000001_0000", acid(events(1, n=3)))})
    assert read_table_and_why(spark, str(parted))[1] is None
    monkeypatch.setattr(native, "PARTITIONS_PAST", 1)
    assert "2 partitions" in read_table_and_why(spark, str(parted))[1]

    # the partitions are one scan of their data files and one join with all their deletes
    monkeypatch.setattr(native, "PARTITIONS_PAST", 200)
    deleting = build(tmp_path / "deleting", {
        **delta("p=1/delta_0000001_0000001_0000", acid(events(1, n=30))),
        **delta("p=1/delete_delta_0000002_0000002_0000", _deletes(2, [(1, 536870912, 1)])),
        **delta("p=2/delta_0000001_0000001_0000", acid(events(1, n=30))),
        **delta("p=2/delete_delta_0000002_0000002_0000", _deletes(2, [(1, 536870912, 2)])),
        **delta("p=3/delta_0000001_0000001_0000", acid(events(1, n=30)))})
    df, why = read_table_and_why(spark, str(deleting))
    plan = df._jdf.queryExecution().sparkPlan().toString()
    assert why is None and plan.count("BroadcastHashJoin") == 1, plan
    assert plan.count("FileScan orc") == 2 and df.count() == 88, plan
    got = {(r.p, r.id) for r in df.collect()}
    assert ("1", 1) not in got and ("2", 2) not in got and {("1", 2), ("2", 1), ("3", 1)} <= got
    # past JOINED_PAST partitions with deletes, the source (without deletes, no join: not)
    monkeypatch.setattr(native, "JOINED_PAST", 2)
    df, why = read_table_and_why(spark, str(deleting))
    assert why is not None and why.startswith("3 partitions with deletes, past 2"), why
    assert "FileScan orc" not in _plan(df) and df.count() == 88
    assert read_table_and_why(spark, str(parted))[1] is None


def test_a_metastore_table_reads_natively_with_its_names_types_and_snapshot(metastore, spark,
                                                                             tmp_path):
    """Through a real metastore: its column names over the files' _colN, its int partition
    key typed, its snapshot (an aborted and an open write id unseen), as the source reads
    it; a filter on the partition key reads one partition's files."""
    from acidtool.io.metastore import Metastore as Client

    from .helpers.metastore import create_table

    if metastore.version == "2":
        pytest.skip("Hive 2.3's metastore has no write ids: its tables are read with --txns")
    name = f"native{abs(hash(str(tmp_path))) % 10**6}"
    location = Path(metastore.warehouse) / name
    create_table(metastore.url, "default", name, "file://" + str(location),
                 columns=(("id", "int"), ("name", "string")), partition_keys=(("day", "int"),))
    with Client(metastore.url) as client:
        info = client.table("default", name)
        for day in (1, 2):
            client.add_partition(info, [str(day)], "file://" + str(location / f"day={day}"))
        ids = []
        for outcome in ("commit", "abort", "commit", "open"):
            txn = client.open_txn()
            ids.append(client.allocate_write_id(txn, info))
            if outcome == "commit":
                client.commit_txn(txn)
            elif outcome == "abort":
                client.abort_txn(txn)
    try:
        _read_through(metastore, spark, location, name, ids)
    finally:  # the session's metastore is shared: no transaction is left open for others
        with Client(metastore.url) as client:
            client.abort_txn(txn)


def _read_through(metastore, spark, location: Path, name: str, ids: list[int]) -> None:
    for day in (1, 2):
        where = location / f"day={day}"
        for wid in ids:
            d = where / f"delta_{wid:07d}_{wid:07d}_0000"
            d.mkdir(parents=True)
            (d / "bucket_00000").write_bytes(acid(events(wid, n=3),
                                                  row_type="struct<_col0:int,_col1:string>"))
            (d / "_orc_acid_version").write_bytes(b"2")
        d = where / f"delete_delta_{ids[2]:07d}_{ids[2]:07d}_0000"
        d.mkdir()
        (d / "bucket_00000").write_bytes(_deletes(ids[2], [(ids[0], 536870912, 1)]))
        (d / "_orc_acid_version").write_bytes(b"2")
    table = f"default.{name}"
    native = read_table(spark, table, metastore=metastore.url, with_row_id=True, native=True)
    source = read_table(spark, table, metastore=metastore.url, with_row_id=True, native=False)
    assert native.columns == source.columns == ["ROW__ID", "id", "name", "day"]
    assert dict(native.dtypes)["day"] == "int"
    assert [(f.name, f.dataType, f.nullable) for f in native.schema] == \
        [(f.name, f.dataType, f.nullable) for f in source.schema]
    assert _rows(native) == _rows(source)
    assert sorted({r.ROW__ID.writeid for r in native.collect()}) == [ids[0], ids[2]]
    assert native.count() == 2 * (3 + 3 - 1)
    one = native.where("day = 2")
    for f in (location / "day=1").rglob("bucket_*"):  # (never opened: garbage changes nothing)
        f.write_bytes(b"not ORC" * 100)
    assert one.count() == 5


_NAME_CHARS = "ab %{}[]*?\\#'\"=@+,;$&^|<>`~!()é中\u00a0\u2003\u0085"


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.text(_NAME_CHARS, min_size=1, max_size=6).filter(
    lambda n: n not in (".", "..") and not n.startswith(("_", "."))), min_size=1, max_size=2))
def test_file_path_strings_are_sparks_own(spark, tmp_path_factory, names):
    """A partition reads its files of a shared relation by _metadata.file_path, so acidtool's
    string for a file must be Spark's, character for character (a string Spark does not give
    would leave the file's rows out): checked against Spark on names of every kind of
    character, as inputFiles() is."""
    from acidtool.hiveacid.sparkpaths import file_path, input_file, one_glob, unglobbed
    from acidtool.io.spark import input_files

    path = tmp_path_factory.mktemp("p").joinpath(*names, "bucket_00000")
    path.parent.mkdir(parents=True, exist_ok=True)
    paorc.write_table(pa.table({"a": [1, 2]}), str(path))
    frame = spark.read.orc([unglobbed(str(path))])
    got = {r.f for r in frame.selectExpr("a", "_metadata.file_path AS f").collect()}
    assert got == {file_path(str(path))}
    assert frame.inputFiles() == [input_file(str(path))]
    # one glob of the files, or of their directories, names them and nothing else (a
    # second file beside the first's directory is left out)
    other = path.parents[len(names)] / "other" / "bucket_00000"
    other.parent.mkdir()
    paorc.write_table(pa.table({"a": [3]}), str(other))
    (path.parent.parent / "left_out").write_bytes(b"not ORC")
    for paths in ([str(path), str(other)], [str(path.parent), str(other.parent)]):
        glob = one_glob(paths)
        assert glob is not None
        both = spark.read.orc([glob])
        assert sorted(both.inputFiles()) == \
            sorted([input_file(str(path)), input_file(str(other))])
        # (what acidtool checks them by: the same strings, in one call into the JVM)
        assert input_files(both) == set(both.inputFiles())


def test_input_files_are_sparks_in_slices_of_any_size(spark, tmp_path):
    """acidtool fetches a relation's inputFiles() in slices sized by the strings it expects
    (py4j's answers past 8 KB wait on the socket): whatever the slices, Spark's own list."""
    from acidtool.io.spark import input_files

    for i in range(30):
        paorc.write_table(pa.table({"a": [i]}), str(tmp_path / f"bucket_{i:05d}"))
    frame = spark.read.orc(str(tmp_path))
    files = set(frame.inputFiles())
    assert len(files) == 30
    for like in ((), ["x" * 2999], ["x" * 6000], ["x" * 200]):  # slices of 60, 2, 1, 29
        assert input_files(frame, like) == files


LISTING_NAMES = ["bucket_00000", "_orc_acid_version", ".bucket_00000.crc", "_metadata",
                 "_common_metadata", "_k=v", "b._COPYING_", "_SUCCESS", "a_b", "x=1", "é",
                 "_metadata_x", ".hidden=1"]


def test_which_files_sparks_listing_keeps_is_sparks_own(spark, tmp_path):
    """A directory handed to Spark for its files is read whole: acidtool's rule for the files
    Spark's listing keeps (``sparkpaths.listed``) is checked against Spark's listing."""
    from acidtool.hiveacid.sparkpaths import input_file, listed

    folder = tmp_path / "d"
    folder.mkdir()
    for name in LISTING_NAMES:
        (folder / name).write_text("a\n")
    got = set(spark.read.text(str(folder)).inputFiles())
    assert got == {input_file(str(folder / n)) for n in LISTING_NAMES if listed(n)}
    assert {n for n in LISTING_NAMES if not listed(n)} == {
        "_orc_acid_version", ".bucket_00000.crc", "_SUCCESS", "b._COPYING_", ".hidden=1"}


def test_a_scan_of_a_directorys_files_alone_is_given_the_directory_and_no_filter(spark,
                                                                                 tmp_path):
    """One partition: its delta of two bucket files is handed over as the directory, with no
    filter by file to run on each row; with a file beside them that Hive does not read, as
    the two files."""
    table = build(tmp_path / "t", _two_buckets("", 1))
    df = read_table(spark, str(table), native=True)
    plan = _plan(df)
    assert "InMemoryFileIndex(1 paths)" in plan and "__acid_file" not in plan, plan
    assert same_three_ways(spark, table, with_row_id=True) == 5
    (table / "delta_0000001_0000001" / "junk.txt").write_bytes(b"not ORC at all" * 50)
    df = read_table(spark, str(table), native=True)
    plan = _plan(df)
    assert "InMemoryFileIndex(2 paths)" in plan and "__acid_file" not in plan, plan
    assert same_three_ways(spark, table, with_row_id=True) == 5


@pytest.mark.parametrize("partitioned", [False, True], ids=["one", "partitions"])
def test_a_file_gone_between_the_plan_and_sparks_relation_fails_the_read(
        spark, tmp_path, monkeypatch, partitioned):
    """Relations are handed one glob of their paths, which leaves out a path that has gone
    (a literal path fails): a bucket file removed after acidtool planned the snapshot, before
    Spark made its relations, fails the read; it never reads the table without that file's
    rows."""
    from acidtool.hiveacid import frame

    parts = ["p=1", "p=2"] if partitioned else [""]
    table = build(tmp_path / "t", {k: v for p in parts for k, v in _two_buckets(p, 1).items()})
    gone = table / (f"{parts[0]}/" if partitioned else "") / "delta_0000001_0000001" / \
        "bucket_00001"
    assert gone.exists()
    made = frame._Scans.made

    def remove_first(self, statement):
        gone.unlink()
        return made(self, statement)

    monkeypatch.setattr(frame._Scans, "made", remove_first)
    with pytest.raises(Exception) as failed:
        read_table(spark, str(table), native=True).collect()
    assert "bucket_00001" in str(failed.value)


@pytest.mark.parametrize("files, rows, why", [
    (501, 501, "501 files of 1 row on average, past 500 files"),
    (1000, 5000, "1,000 files of 5 rows on average, past 500 files"),
    (500, 500, None),  # not past 500
    (501, 501 * 100_000, None),  # files of 100,000 rows: Spark's plan reads them sooner
    (501, 501 * 100_000 - 1, "501 files of 99,999 rows on average")])
def test_the_file_rule_of_the_default(files, rows, why):
    """Past FILES_PAST files of under FILE_ROWS_UNDER rows each on average the default is the
    source (Spark costs a file ~9 ms, the source ~2 ms: benchmarks/bench_spark_small_files.py);
    delete files count."""
    from acidtool.core.snapshot import IdList
    from acidtool.hiveacid.native import NativePlan, Part, Scan

    scan = Scan(tuple(f"f{i}" for i in range(files - 1)), ("id",), (pa.int32(),))
    part = Part((), (scan,), ("d0",), ("id",), rows=rows)
    got = NativePlan(pa.schema([("id", pa.int32())]), (part,), IdList(), (), rows=rows).slower()
    assert (got is None) if why is None else (got is not None and why in got), got


@pytest.mark.parametrize("files, masks, rows, why", [
    (501, 0, 501, None),  # 7 ms a file: 3.5 s saved, under the first read's 6 s
    (1000, 0, 5000, "1,000 files of 5 rows on average"),  # 7 s saved
    (2, 3, 6, None),  # past a mask in ten rows, but microseconds saved
    (2, 6_000_000, 20_000_000, None),  # 7.2 - 2.2 = 5 s saved: under 6 s
    (2, 8_000_000, 20_000_000, "up to 8,000,000 masks")])  # 9.6 - 2.2 = 7.4 s saved
def test_the_rules_of_the_default_before_the_source_has_read(files, masks, rows, why):
    """In a session where the source has not read yet, its first read costs about 6 s more
    than Spark's plan's (SOURCE_FIRST_READ_S): the file and mask rules take it only where
    they save more than that."""
    from acidtool.core.snapshot import IdList
    from acidtool.hiveacid.native import NativePlan, Part, Scan

    scan = Scan(tuple(f"f{i}" for i in range(files - 1)), ("id",), (pa.int32(),))
    part = Part((), (scan,), ("d0",), ("id",), rows=rows)
    plan = NativePlan(pa.schema([("id", pa.int32())]), (part,), IdList(), (), rows=rows,
                      delete_masks=masks)
    got = plan.slower(source_started=False)
    assert (got is None) if why is None else (got is not None and why in got and got.endswith(
        "by more than the source's first read in a session costs")), got
    assert plan.slower(source_started=True) is not None  # once it has read, past either rule
