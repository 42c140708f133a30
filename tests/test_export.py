"""`acidtool export --to iceberg` on tables our own writers make: the Iceberg table, read back by
pyiceberg, holds what `acidtool read` returns at the snapshot exported, after a first export
and after each incremental one; the refusals; one commit, or none when killed anywhere.
(tests/test_export_hive.py judges tables Hive's own writers made, and Spark's Iceberg reader.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acidtool.core.errors import UsageError
from acidtool.io.acidwrite import DELETE, Event

from .helpers.layouts import acid, build, delta, events, plain
from .helpers.orcfiles import ALL_TYPES, all_types_rows, write_orc
from .helpers.runner import acidtool_process, run

pyiceberg = pytest.importorskip("pyiceberg", reason="pyiceberg is not installed "
                                "(pip install -e '.[iceberg]')")

MAX = 9223372036854775807


def catalog(lake: Path):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("default", uri=f"sqlite:///{lake}/catalog.db", warehouse=f"file://{lake}")


def iceberg_rows(lake: Path, name: str = "s.t") -> list[tuple]:
    """(partition values..., ROW__ID, the other columns) of every row, sorted."""
    t = catalog(lake).load_table(name)
    out = []
    for r in t.scan().to_arrow().to_pylist():
        rid = r.pop("_hive_row_id", None)
        key = (rid["writeid"], rid["bucketid"], rid["rowid"]) if rid else r.pop("_hive_file")
        out.append((key, json.dumps(r, sort_keys=True, default=str)))
    return sorted(out)


def read_rows(table: Path, *args) -> list[tuple]:
    """The same of what `acidtool read --with-row-id ARGS` returns (through the Python API:
    values, not their spelling), types as the export maps them."""
    from acidtool import open_table

    opts = dict(zip(args[::2], args[1::2]))
    snap = open_table(str(table)).snapshot(opts.get("--write-ids"), opts.get("--txns"),
                                           opts.get("--hive-version"), with_row_id=True)
    out = []
    for r in snap.to_arrow().to_pylist():
        rid = r.pop("ROW__ID")
        out.append(((rid["writeid"], rid["bucketid"], rid["rowid"]),
                    json.dumps(r, sort_keys=True, default=str)))
    return sorted(out)


def export(table: Path, lake: Path, *args, name: str = "s.t"):
    return run("export", table, "--to", "iceberg", "--catalog", lake, "--table", name,
               "--format", "json", *args)


def in_part(part: str, layout: dict) -> dict:
    return {f"{part}/{k}" if part else k: v for k, v in layout.items()}


# ------------------------------------------------------------------------------------------------
# Types, as Hive's own Iceberg integration maps them


TYPES = [
    (pa.int8(), pa.int32()), (pa.int16(), pa.int32()), (pa.int32(), pa.int32()),
    (pa.int64(), pa.int64()), (pa.bool_(), pa.bool_()), (pa.float32(), pa.float32()),
    (pa.float64(), pa.float64()), (pa.string(), pa.string()), (pa.binary(), pa.binary()),
    (pa.date32(), pa.date32()), (pa.decimal128(12, 3), pa.decimal128(12, 3)),
    (pa.timestamp("ns"), pa.timestamp("us")),
    (pa.timestamp("ns", tz="UTC"), pa.timestamp("us", tz="UTC")),  # local time zone
    (pa.list_(pa.int8()), pa.list_(pa.int32())),
    (pa.map_(pa.string(), pa.int16()), pa.map_(pa.string(), pa.int32())),
    (pa.struct([("x", pa.int8()), ("y", pa.timestamp("ns"))]),
     pa.struct([("x", pa.int32()), ("y", pa.timestamp("us"))])),
]


@pytest.mark.parametrize("hive,iceberg", TYPES, ids=[str(h) for h, _ in TYPES])
def test_types_map_as_hives_iceberg_integration_maps_them(hive, iceberg):
    from acidtool.commands.export.schema import iceberg_type

    assert iceberg_type(hive, "c") == iceberg


def test_a_union_has_no_iceberg_type():
    from acidtool.commands.export.schema import iceberg_type

    union = pa.dense_union([pa.field("0", pa.int32()), pa.field("1", pa.string())])
    with pytest.raises(UsageError, match=r"column row\.u: a Hive uniontype"):
        iceberg_type(pa.struct([("u", union)]), "row")


def test_every_hive_type_exports_and_reads_back(tmp_path):
    """A table of every Hive type (convert wrote it): pyiceberg returns read's values."""
    src = write_orc(tmp_path / "land" / "all.orc", ALL_TYPES, all_types_rows())
    table = tmp_path / "t"
    table.mkdir()
    assert run("convert", src.parent, "--table", table, "--write-id", "1").code == 0
    result = export(table, tmp_path / "lake")
    assert result.code == 0, result.err
    assert result.json()["rows_added"] == 5
    t = catalog(tmp_path / "lake").load_table("s.t")
    types = {f.name: str(f.field_type) for f in t.schema().fields}
    assert types["ti"] == types["si"] == "int" and types["c"] == types["vc"] == "string"
    assert types["ts"] == "timestamp" and types["dec"] == "decimal(12, 3)"
    assert types["ms"] == "map<int, struct<13: p: optional double>>" or "map<int" in types["ms"]
    assert iceberg_rows(tmp_path / "lake") == read_rows(table)
    # the data file itself, read by Arrow alone: a NULL list or map stays NULL (pyiceberg's
    # projection, left to itself, writes an empty one)
    import pyarrow.parquet as pq

    (data,) = (tmp_path / "lake").rglob("*.parquet")
    written = pq.read_table(data)
    for column in ("l", "m", "ms", "ll", "st"):
        assert written.column(column).null_count >= 1, column
    assert written.column("ms").to_pylist()[1] is None


def test_nanoseconds_are_refused_unless_truncation_is_asked(tmp_path):
    from .helpers.orcfiles import write_timestamps

    land = tmp_path / "land"
    land.mkdir()
    write_timestamps(land / "ts.orc", [(1_600_000_000, 123_456_789)])
    table = tmp_path / "t"
    table.mkdir()
    assert run("convert", land, "--table", table, "--write-id", "1").code == 0
    refused = export(table, tmp_path / "lake")
    assert refused.code == 2 and "--truncate-timestamps" in refused.err
    assert not (tmp_path / "lake" / "s").exists() or not any(
        (tmp_path / "lake").rglob("*.parquet"))
    assert export(table, tmp_path / "lake", "--truncate-timestamps").code == 0


# ------------------------------------------------------------------------------------------------
# Full, incremental, nothing to do


def _partitioned(root: Path) -> Path:
    layout = {}
    for part in ("p=a", "p=b"):
        layout.update(in_part(part, delta("delta_0000001_0000001_0000", acid(events(1, n=3)))))
    return build(root, layout)


def _read_ahead_alive() -> bool:
    import threading

    return any(t.name == "acidtool-read-ahead" and t.is_alive() for t in threading.enumerate())


def _three_units(root: Path) -> Path:
    """p=a of two deltas (units of their own, several batches), p=b of one."""
    layout = {}
    for d, w in (("delta_0000001_0000001_0000", 1), ("delta_0000002_0000002_0000", 2)):
        layout.update(in_part("p=a", delta(d, acid(events(w, n=50)))))
    layout.update(in_part("p=b", delta("delta_0000001_0000001_0000", acid(events(1, n=3)))))
    return build(root, layout)


@pytest.mark.parametrize("flush", [1, 1 << 40], ids=["one-batch-ahead", "group-ahead"])
def test_rows_read_ahead_are_exported_once_each(tmp_path, monkeypatch, flush):
    """While the catalog opens, the first partition's rows are read ahead: stopped after a
    batch, or its whole group, every row is exported once, into its own partition; an
    incremental export drops what was read ahead."""
    from acidtool.commands.export import rows

    used: list[str] = []
    for name in ("rows", "drop"):
        def spy(self, _real=getattr(rows.ReadAhead, name), _name=name):
            used.append(_name)
            return _real(self)
        monkeypatch.setattr(rows.ReadAhead, name, spy)
    monkeypatch.setattr(rows, "FLUSH_BYTES", flush)
    table, lake = _three_units(tmp_path / "t"), tmp_path / "lake"
    first = export(table, lake)
    assert first.code == 0, first.err
    # taken by the first group (then let go, which closes what it had open)
    assert first.json()["rows_added"] == 103 and used[:1] == ["rows"]
    used.clear()
    assert iceberg_rows(lake) == read_rows(table)
    build(table, in_part("p=a", delta("delete_delta_0000003_0000003_0000",
                                      acid(events(1, n=2, op=DELETE, current=3)))))
    second = export(table, lake, "--incremental")
    assert second.code == 0, second.err
    assert second.json()["rows_deleted"] == 2 and used == ["drop"]
    assert iceberg_rows(lake) == read_rows(table)
    assert not _read_ahead_alive()


def test_a_failure_while_reading_ahead_fails_the_export_and_makes_nothing(tmp_path,
                                                                           monkeypatch):
    from acidtool.commands.export import rows
    from acidtool.core.errors import PathError

    def unreadable(unit, job):
        raise PathError(f"{unit.unit[1]}: cannot read this file")
        yield  # noqa

    monkeypatch.setattr(rows, "unit_rows", unreadable)
    table, lake = _three_units(tmp_path / "t"), tmp_path / "lake"
    result = export(table, lake)
    assert result.code == 2 and "cannot read this file" in result.err, result.err
    assert not catalog(lake).table_exists("s.t")
    assert not _read_ahead_alive()


def test_an_export_refused_by_its_plan_leaves_no_read_ahead_running(tmp_path):
    table, lake = _three_units(tmp_path / "t"), tmp_path / "lake"
    assert export(table, lake).code == 0
    other = _partitioned(tmp_path / "other")
    refused = export(other, lake)  # s.t holds an export of another table
    assert refused.code == 2 and "export into a new table" in refused.err
    assert not _read_ahead_alive()


def test_the_text_says_which_snapshot_was_exported(tmp_path):
    """None given: what counts as committed, and up to which write id (the recorded string's
    table is null); given: the snapshot as Hive writes it."""
    table, lake = _partitioned(tmp_path / "t"), tmp_path / "lake"
    args = ["export", table, "--to", "iceberg", "--catalog", lake, "--table", "s.t"]
    first = run(*args)
    assert first.code == 0, first.err
    assert first.out.splitlines()[0] == (
        f"export {table} (Hive 4, no snapshot given: every write id found, up to 1, counts as "
        f"committed) into s.t, local catalog in {lake} (SQLite {lake}/catalog.db)")
    again = run(*args).out.splitlines()
    assert again[1].startswith("s.t already holds this snapshot (every write id up to 1) of the "
                               "table"), again
    given = run(*args, "--write-ids", f"db.t:1:{MAX}::", "--incremental").out.splitlines()
    assert given[0].startswith(f"export {table} (Hive 4, write ids db.t:1:{MAX}::) into s.t"), \
        given


def test_incremental_export_follows_deletes_inserts_and_partitions(tmp_path):
    table, lake = _partitioned(tmp_path / "t"), tmp_path / "lake"
    first = export(table, lake)
    assert first.code == 0, first.err
    assert first.json()["action"] == "create" and first.json()["rows_added"] == 6
    assert iceberg_rows(lake) == read_rows(table)
    # a delete in p=a (p=b still has a row with that ROW__ID), rows in p=b, a new partition
    build(table, {**in_part("p=a", delta("delete_delta_0000002_0000002_0000",
                                         acid(events(1, n=1, op=DELETE, current=2)))),
                  **in_part("p=b", delta("delta_0000003_0000003_0000", acid(events(3, n=2)))),
                  **in_part("p=c", delta("delta_0000003_0000003_0000", acid(events(3, n=1))))})
    refused = export(table, lake)
    assert refused.code == 2 and "--incremental" in refused.err
    second = export(table, lake, "--incremental")
    assert second.code == 0, second.err
    doc = second.json()
    assert (doc["action"], doc["rows_added"], doc["rows_deleted"]) == ("incremental", 3, 1)
    assert doc["previous_snapshot"] == f"null:1:{MAX}::"
    assert iceberg_rows(lake) == read_rows(table)
    # the same snapshot again: nothing done, nothing committed
    snaps = len(catalog(lake).load_table("s.t").snapshots())
    again = export(table, lake, "--incremental")
    assert again.code == 0 and again.json()["action"] == "nothing"
    assert len(catalog(lake).load_table("s.t").snapshots()) == snaps
    # a partition gone from Hive: its rows go
    import shutil

    shutil.rmtree(table / "p=c")
    build(table, in_part("p=a", delta("delta_0000004_0000004_0000", acid(events(4, n=1)))))
    assert export(table, lake, "--incremental").json()["rows_deleted"] == 1
    assert iceberg_rows(lake) == read_rows(table)


def test_partition_exports_and_syncs_only_the_partitions_asked_for(tmp_path):
    table, lake = _partitioned(tmp_path / "t"), tmp_path / "lake"
    first = export(table, lake, "--partition", "p=a")
    assert first.code == 0, first.err
    assert {json.loads(r)["p"] for _, r in iceberg_rows(lake)} == {"a"}
    props = catalog(lake).load_table("s.t").current_snapshot().summary.additional_properties
    assert props["acidtool.partitions"] == '["p=a"]'
    build(table, {**in_part("p=a", delta("delete_delta_0000002_0000002_0000",
                                         acid(events(1, n=1, op=DELETE, current=2)))),
                  **in_part("p=b", delta("delta_0000002_0000002_0000", acid(events(2))))})
    # p=a brought up to date; p=b, not asked for, left as it is (not in the table)
    assert export(table, lake, "--partition", "p=a", "--incremental").json()[
        "rows_deleted"] == 1
    assert {json.loads(r)["p"] for _, r in iceberg_rows(lake)} == {"a"}
    # the whole table: p=b comes
    assert export(table, lake, "--incremental").json()["rows_added"] == 5
    assert iceberg_rows(lake) == read_rows(table)
    missing = export(table, lake, "--partition", "p=zz", "--incremental")
    assert missing.code == 2 and "--partition p=zz: no such partition" in missing.err


def test_snapshot_properties_record_the_source(tmp_path):
    table, lake = _partitioned(tmp_path / "t"), tmp_path / "lake"
    ids = "t:1:9223372036854775807::"
    assert export(table, lake, "--write-ids", ids).code == 0
    props = dict(catalog(lake).load_table("s.t").current_snapshot().summary.additional_properties)
    assert props["acidtool.source"] == str(table)
    assert props["acidtool.hive-version"] == "4"
    assert props["acidtool.write-ids"] == ids and props["acidtool.mode"] == "full"
    # the partition columns are identity partitions
    spec = catalog(lake).load_table("s.t").spec()
    assert [(f.name, str(f.transform)) for f in spec.fields] == [("p", "identity")]


def test_an_open_write_id_that_commits_later_is_exported_then(tmp_path):
    table = build(tmp_path / "t", {**delta("delta_0000001_0000001_0000", acid(events(1))),
                                   **delta("delta_0000002_0000002_0000", acid(events(2))),
                                   **delta("delta_0000003_0000003_0000", acid(events(3)))})
    lake = tmp_path / "lake"
    open2 = "t:3:2:2:"
    assert export(table, lake, "--write-ids", open2).json()["rows_added"] == 4
    assert iceberg_rows(lake) == read_rows(table, "--write-ids", open2)
    done = "t:3:9223372036854775807::"
    assert export(table, lake, "--write-ids", done, "--incremental").json()["rows_added"] == 2
    assert iceberg_rows(lake) == read_rows(table, "--write-ids", done)


def test_a_column_hive_added_is_added_to_the_iceberg_table(tmp_path):
    """ALTER TABLE ... ADD COLUMNS: newer files have a column older ones lack (Hive reads
    them as nulls). The first export may see only old files, or both; neither drops it."""
    from acidtool.io.acidwrite import INSERT

    wide = "struct<id:int,name:string,score:double>"
    newer = delta("delta_0000002_0000002_0000", acid(
        [Event(INSERT, 2, 536870912, i, 2, (10 + i, f"w{i}", 1.5 * i)) for i in range(2)],
        row_type=wide))
    for first_sees_new in (False, True):
        root = tmp_path / str(first_sees_new)
        table = build(root / "t", delta("delta_0000001_0000001_0000", acid(events(1, n=2))))
        if first_sees_new:
            build(table, newer)
        assert export(table, root / "lake").code == 0
        if not first_sees_new:
            build(table, newer)
            second = export(table, root / "lake", "--incremental")
            assert second.json()["columns_added"] == ["score"], second.out
        rows = catalog(root / "lake").load_table("s.t").scan().to_arrow().to_pylist()
        assert sorted((r["id"], r["score"]) for r in rows) == [
            (0, None), (1, None), (10, 0.0), (11, 1.5)]
        assert iceberg_rows(root / "lake") == read_rows(table)


def test_insert_only_rows_are_keyed_by_their_file(tmp_path):
    layout = {"delta_0000001_0000001_0000/000000_0": plain(rows=[(1, "a"), (2, "b")]),
              "delta_0000002_0000002_0000/000000_0": plain(rows=[(3, "c")])}
    table, lake = build(tmp_path / "t", layout), tmp_path / "lake"
    first = export(table, lake, "--insert-only", "--hive-version", "3")
    assert first.code == 0, first.err
    assert first.json()["key_column"] == "_hive_file"
    got = iceberg_rows(lake)
    assert [k for k, _ in got] == ["delta_0000001_0000001_0000/000000_0"] * 2 + [
        "delta_0000002_0000002_0000/000000_0"]
    # an INSERT OVERWRITE: base_3 replaces every row
    build(table, {"base_0000003/000000_0": plain(rows=[(9, "z")])})
    second = export(table, lake, "--insert-only", "--hive-version", "3", "--incremental")
    assert (second.json()["rows_added"], second.json()["rows_deleted"]) == (1, 3)
    assert [json.loads(r)["id"] for _, r in iceberg_rows(lake)] == [9]


def test_refusals_say_why_and_touch_nothing(tmp_path):
    table, lake = _partitioned(tmp_path / "t"), tmp_path / "lake"
    other = _partitioned(tmp_path / "other")
    assert export(table, lake).code == 0
    wrong = export(other, lake, "--incremental")
    assert wrong.code == 2 and f"holds an export of {table}" in wrong.err
    version = export(table, lake, "--hive-version", "3", "--incremental")
    assert version.code == 2 and "Hive 4's rules" in version.err
    # a table acidtool did not write
    cat = catalog(lake)
    cat.create_table(("s", "mine"), schema=pa.schema([("x", pa.int32())]))
    foreign = export(table, lake, name="s.mine")
    assert foreign.code == 2 and "holds no acidtool export" in foreign.err
    for bad, words in ((["--table", "nonamespace"], "NAMESPACE.NAME"),
                       (["--catalog", "prod-unconfigured"], "no catalog of that name")):
        args = ["export", table, "--to", "iceberg", "--catalog", lake, "--table", "s.t"]
        args[args.index(bad[0]) + 1] = bad[1]
        result = run(*args)
        assert result.code == 2 and words in result.err and len(result.err.splitlines()) == 1
    assert run("export", tmp_path / "missing", "--to", "iceberg", "--catalog", lake,
               "--table", "s.x").code == 2


def test_dry_run_writes_nothing(tmp_path):
    table, lake = _partitioned(tmp_path / "t"), tmp_path / "lake"
    result = run("export", table, "--to", "iceberg", "--catalog", lake, "--table", "s.t",
                 "--dry-run")
    assert result.code == 0 and "would create" in result.out
    assert not lake.exists()  # not even the local catalog's database
    assert export(table, lake).code == 0
    build(table, in_part("p=a", delta("delta_0000002_0000002_0000", acid(events(2)))))
    before = sorted(p.name for p in lake.rglob("*"))
    update = run("export", table, "--to", "iceberg", "--catalog", lake, "--table", "s.t",
                 "--incremental", "--dry-run")
    assert update.code == 0 and "would update" in update.out
    assert sorted(p.name for p in lake.rglob("*")) == before


def test_catalog_names_uris_and_directories(tmp_path, monkeypatch):
    from acidtool.io.iceberg import catalog_spec

    assert catalog_spec(str(tmp_path / "lake")).kind == "directory"
    sql = catalog_spec(f"sqlite:///{tmp_path}/c.db")
    assert sql.kind == "sql" and ("warehouse", f"file://{tmp_path}/warehouse") in sql.properties
    assert catalog_spec("http://127.0.0.1:8181").kind == "rest"
    assert catalog_spec("thrift://127.0.0.1:9083").kind == "hive"
    with pytest.raises(UsageError, match="needs --warehouse"):
        catalog_spec("postgresql://u@127.0.0.1/db")
    with pytest.raises(UsageError, match="unknown scheme"):
        catalog_spec("ftp://x")
    # a name pyiceberg's configuration gives (here by its environment variables)
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__URI", f"sqlite:///{tmp_path}/prod.db")
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__WAREHOUSE", f"file://{tmp_path}/prodwh")
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__TYPE", "sql")
    assert catalog_spec("prod").kind == "configured"
    table = _partitioned(tmp_path / "t")
    result = run("export", table, "--to", "iceberg", "--catalog", "prod", "--table", "s.t")
    assert result.code == 0, result.err
    assert any((tmp_path / "prodwh").rglob("*.parquet"))


# ------------------------------------------------------------------------------------------------
# Random histories: after every export, Iceberg holds what read returns


@st.composite
def histories(draw):
    """Write ids 1..n, each inserting rows into a partition or deleting live rows (an update is
    both in one write id); some write ids aborted at some of the exported snapshots."""
    parts = draw(st.sampled_from([("",), ("p=a", "p=b")]))
    steps = []
    for _ in range(draw(st.integers(2, 6))):
        part = draw(st.sampled_from(parts))
        steps.append((part, draw(st.integers(0, 3)), draw(st.integers(0, 3))))
    points = sorted(set(draw(st.lists(st.integers(1, len(steps)), min_size=1, max_size=4))))
    aborted = draw(st.sets(st.integers(1, len(steps)), max_size=2))
    return parts, steps, points, aborted


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(histories())
def test_every_incremental_export_equals_read(tmp_path_factory, history):
    parts, steps, points, aborted = history
    root = tmp_path_factory.mktemp("h")
    table, lake = root / "t", root / "lake"
    table.mkdir()
    live: dict[str, list[tuple[int, int]]] = {p: [] for p in parts}  # (write id, row id)
    layouts = []
    for wid, (part, inserts, deletes) in enumerate(steps, 1):
        layout = {}
        gone = live[part][:deletes]
        if gone:
            evs = [Event(DELETE, w, 536870912, r, wid, None) for w, r in sorted(gone)]
            layout.update(delta(f"delete_delta_{wid:07d}_{wid:07d}_0000", acid(evs)))
        if inserts:
            layout.update(delta(f"delta_{wid:07d}_{wid:07d}_0000", acid(events(wid, n=inserts))))
        if wid not in aborted:
            live[part] = live[part][deletes:] + [(wid, r) for r in range(inserts)]
        layouts.append((wid, in_part(part, layout)))
    for point in points:
        for wid, layout in layouts:
            if wid <= point:
                build(table, layout)
        ab = ",".join(str(a) for a in sorted(aborted) if a <= point)
        snap = f"t:{point}:{MAX}::{ab}"
        result = export(table, lake, "--write-ids", snap, "--incremental")
        if not any(table.iterdir()):
            assert result.code == 2  # nothing to take columns from yet
            continue
        assert result.code == 0, result.err
        assert iceberg_rows(lake) == read_rows(table, "--write-ids", snap), snap


# ------------------------------------------------------------------------------------------------
# One commit: a second writer meanwhile, and kills


def test_a_commit_made_meanwhile_refuses_this_one_and_its_files_go(tmp_path):
    from acidtool.commands.export.run import ExportOptions, plan_export, run_export
    from acidtool.io.iceberg import CommitConflict
    from acidtool.table.target import resolve

    table, lake = _partitioned(tmp_path / "t"), tmp_path / "lake"
    assert export(table, lake).code == 0
    build(table, in_part("p=a", delta("delta_0000002_0000002_0000", acid(events(2)))))
    opts = ExportOptions(str(lake), "s.t", incremental=True)
    plan, work = plan_export(resolve(str(table)), opts)
    assert export(table, lake, "--incremental").code == 0  # another run commits first
    before = sorted(lake.rglob("*.parquet"))
    with pytest.raises(CommitConflict, match="nothing of this export was committed"):
        run_export(plan, work, opts)
    assert sorted(lake.rglob("*.parquet")) == before  # what it wrote is gone again
    assert iceberg_rows(lake) == read_rows(table)


def test_a_write_that_fails_behind_the_reader_is_raised_and_every_file_goes(monkeypatch):
    """Writes run two at a time behind the reader: the one that fails is raised (by the
    next write or by settle), and the files of those that did not are removed with the
    rest, none of them left writing."""
    import itertools
    from types import SimpleNamespace

    from acidtool.io import iceberg

    removed: list[str] = []
    calls = itertools.count()

    def write(self, table):
        n = next(calls)
        time.sleep(0.05 if n % 2 == 0 else 0.01)
        if n == 1:
            raise OSError("disk full")
        f = SimpleNamespace(file_path=f"data-{n}.parquet")
        self.written.append(f)
        return [f]

    monkeypatch.setattr(iceberg.FileWriter, "write", write)
    writer = iceberg.FileWriter(None, SimpleNamespace(delete=removed.append))
    rows = pa.table({"x": [1]})
    with pytest.raises(OSError, match="disk full"):
        for _ in range(5):
            writer.write_behind(rows)
        writer.settle()
    writer.remove_written()
    made = next(calls)  # (the writes begun)
    assert made >= 2
    assert sorted(removed) == sorted(f"data-{n}.parquet" for n in range(made) if n != 1)
    assert writer.written == [] and writer._pending == []


def _kill_points(args: list, state: Path) -> int:
    """How many fault points a run passes (it is run to the end, uncounted, to know)."""
    env = {**os.environ, "ACIDTOOL_STATE_DIR": str(state), "ACIDTOOL_KILL_AT": "1000000"}
    proc = subprocess.run([sys.executable, "-c", (
        "import sys, acidtool.io.fileops as j\n"
        "from acidtool.cli.main import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(j._faults[0], file=sys.stderr)"), *map(str, args)],
        env=env, capture_output=True, text=True, timeout=120)
    return int(proc.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("incremental", [False, True])
def test_a_kill_at_any_fault_point_leaves_the_last_snapshot(tmp_path, incremental):
    table = _partitioned(tmp_path / "t")
    lake = tmp_path / "lake"
    if incremental:
        assert export(table, lake).code == 0
        build(table, {**in_part("p=a", delta("delete_delta_0000002_0000002_0000",
                                             acid(events(1, n=1, op=DELETE, current=2)))),
                      **in_part("p=b", delta("delta_0000002_0000002_0000", acid(events(2))))})
    before = iceberg_rows(lake) if incremental else None
    args = ["export", table, "--to", "iceberg", "--catalog", lake, "--table", "s.t",
            "--incremental"]
    scratch = tmp_path / "count"
    import shutil

    shutil.copytree(lake, scratch / "lake") if incremental else None
    points = _kill_points(["export", table, "--to", "iceberg", "--catalog", scratch / "lake",
                           "--table", "s.t", "--incremental"], tmp_path / "state")
    assert points >= 4
    saved = tmp_path / "saved"
    if incremental:
        shutil.copytree(lake, saved)
    for at in range(1, points + 1):
        if lake.exists():
            shutil.rmtree(lake)
        if incremental:
            shutil.copytree(saved, lake)
        proc = acidtool_process(*args, state=tmp_path / "state", kill_at=at)
        assert proc.returncode == -signal.SIGKILL, (at, proc.stderr)
        committed = at == points  # the last point follows the commit
        if incremental:
            assert iceberg_rows(lake) == (read_rows(table) if committed else before), at
        else:
            exists = lake.exists() and catalog(lake).table_exists("s.t")
            assert exists == committed, at
        again = export(table, lake, "--incremental")
        assert again.code == 0, again.err
        assert again.json()["action"] == ("nothing" if committed else
                                          "incremental" if incremental else "create")
        assert iceberg_rows(lake) == read_rows(table), at


def test_a_kill_at_random_moments_leaves_a_snapshot_whole(tmp_path):
    """SIGKILL after a delay, inside pyiceberg's own work too: the table is at its last
    snapshot or the new one, never between; the export run again completes it."""
    table, lake = _partitioned(tmp_path / "t"), tmp_path / "lake"
    assert export(table, lake).code == 0
    build(table, in_part("p=b", delta("delta_0000002_0000002_0000", acid(events(2, n=50)))))
    old = iceberg_rows(lake)
    import shutil

    saved = tmp_path / "saved"
    shutil.copytree(lake, saved)
    args = [sys.executable, "-m", "acidtool", "export", str(table), "--to", "iceberg",
            "--catalog", str(lake), "--table", "s.t", "--incremental"]
    for delay in (0.3, 0.6, 0.9, 1.2, 1.5, 2.0):
        shutil.rmtree(lake)
        shutil.copytree(saved, lake)
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.kill()
        proc.wait()
        now = iceberg_rows(lake)
        assert now in (old, read_rows(table)), delay
        assert export(table, lake, "--incremental").code == 0
        assert iceberg_rows(lake) == read_rows(table)


def test_the_demo_table_exports(tmp_path):
    """What docs/export.md shows first: the bundled example."""
    from acidtool.demo import build_demo

    table = build_demo(tmp_path / "demo-table")
    result = run("export", table, "--to", "iceberg", "--catalog", tmp_path / "lake",
                 "--table", "shop.orders")
    assert result.code == 0, result.err
    assert "created shop.orders: 5 rows" in result.out
    assert len(iceberg_rows(tmp_path / "lake", "shop.orders")) == 5


def test_export_needs_no_pyspark(tmp_path):
    """make demo installs no Spark: export (not --spark) must not import it."""
    table = _partitioned(tmp_path / "t")
    code = ("import sys\nsys.modules['pyspark'] = None  # any import of it fails\n"
            "from acidtool.cli.main import main\nmain(sys.argv[1:])")
    proc = subprocess.run([sys.executable, "-c", code, "export", str(table), "--to", "iceberg",
                           "--catalog", str(tmp_path / "lake"), "--table", "s.t"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "created s.t: 6 rows" in proc.stdout


def test_the_export_command_leaves_pandas_out(tmp_path):
    """pyiceberg's import pulls pandas in through pyarrow's shim (a third of a second of
    every export) though an export hands it Arrow only: the command keeps it out, and still
    creates and then updates the table."""
    table = _partitioned(tmp_path / "t")
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('pandas:', 'pandas' in sys.modules, file=sys.stderr))\n"
            "sys.argv = ['acidtool', *sys.argv[1:]]\n"
            "from acidtool.cli.main import main\nmain()")
    for extra in ([], ["--incremental"]):
        proc = subprocess.run([sys.executable, "-c", code, "export", str(table), "--to",
                               "iceberg", "--catalog", str(tmp_path / "lake"), "--table", "s.t",
                               *extra], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "pandas: False" in proc.stderr
    assert "created s.t: 6 rows" in proc.stdout or "nothing" in proc.stdout.lower(), proc.stdout


@pytest.mark.parametrize("incremental", [False, True])
def test_two_exports_racing_commit_once(tmp_path, incremental):
    """Two processes export the same snapshot into one table at once: the rows are there once;
    the loser says the table changed under it (exit 1) or, having looked after the winner
    committed, that there is nothing to do."""
    table, lake = _partitioned(tmp_path / "t"), tmp_path / "lake"
    if incremental:
        assert export(table, lake).code == 0
        build(table, {**in_part("p=a", delta("delete_delta_0000002_0000002_0000",
                                             acid(events(1, n=1, op=DELETE, current=2)))),
                      **in_part("p=b", delta("delta_0000002_0000002_0000", acid(events(2))))})
    args = [sys.executable, "-m", "acidtool", "export", str(table), "--to", "iceberg",
            "--catalog", str(lake), "--table", "s.t", "--incremental"]
    for _ in range(3):
        racers = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True) for _ in range(2)]
        results = [(p.wait(timeout=120), p.stderr.read()) for p in racers]
        assert all(code in (0, 1) for code, _ in results), results
        for code, err in results:
            assert code == 0 or "changed by another writer" in err or \
                "already exists" in err, err
        assert any(code == 0 for code, _ in results)
        assert iceberg_rows(lake) == read_rows(table)
    assert not [p for p in lake.rglob("*.parquet")
                if p.stat().st_size == 0], "no half-written file"


def test_a_namespace_a_racing_export_made_meanwhile_is_taken_as_made(tmp_path, monkeypatch):
    """pyiceberg's SQL catalog lets SQLite's UNIQUE failure through (an IntegrityError) when
    two exports create the namespace at once: the loser goes on, the namespace being there."""
    from acidtool.io.iceberg import Commit, catalog_spec, open_catalog

    catalog = open_catalog(catalog_spec(str(tmp_path / "lake")))
    catalog.create_namespace_if_not_exists(("s",))

    def raced(namespace, properties=None):
        raise RuntimeError("UNIQUE constraint failed: iceberg_namespace_properties")

    monkeypatch.setattr(catalog, "create_namespace_if_not_exists", raced)
    commit = Commit.create(catalog, ("s", "t"), pa.schema([("id", pa.int32())]), [], {})
    assert commit.ident == ("s", "t")
    monkeypatch.setattr(catalog, "namespace_exists", lambda namespace: False)
    with pytest.raises(RuntimeError, match="UNIQUE"):
        Commit.create(catalog, ("s", "u"), pa.schema([("id", pa.int32())]), [], {})
