"""Sequences of commands on one table (issue 39): each writer is safe alone, and the second
command must not break what the first did. After every sequence the rows are the ones Hive
reads (``read``), no row lost, resurrected or duplicated, or the command refused and changed
nothing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from .helpers.runner import run
from .test_compact import SNAP, rows, table
from .test_export import iceberg_rows, read_rows

V3 = ("--hive-version", "3")


def tree(root: Path) -> dict:
    """Every file below ``root`` (relative path -> SHA-256), the lock and quarantine included."""
    out = {}
    for top, _, files in os.walk(root):
        for f in files:
            p = Path(top) / f
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))


def compact(t: Path, journal: Path, *more: str) -> None:
    result = run("compact", t, "--major", *V3, "--write-ids", SNAP, "--apply", "--journal",
                 journal, *more)
    assert result.code == 0, result.err


def clean(t: Path, quarantine: Path) -> str:
    """``repair --select ACID021 --apply``, as compact's output advises: its journal."""
    result = run("repair", t, "--select", "ACID021", *V3, "--write-ids", SNAP, "--apply",
                 "--min-age", "0", "--quarantine", quarantine, "--format", "json")
    assert result.code == 0, result.err
    return result.json()["journal"]


def test_undo_of_a_compaction_whose_inputs_were_cleaned_is_refused(tmp_path):
    """compact, clean, undo: refused (exit 1), nothing changed, the rows still there; undo of
    the clean, then undo of the compaction, restores the table as it was."""
    t = table(tmp_path)
    before_rows, before = rows(t, "3", SNAP), tree(t)
    compact(t, tmp_path / "c.jsonl")
    cleaned = clean(t, tmp_path / "q")
    after = tree(t)
    undo = run("undo", tmp_path / "c.jsonl", "--format", "json")
    assert undo.code == 1, undo.out
    doc = undo.json()
    assert doc["restored"] is False and doc["steps_reversed"] == 0
    assert "only copy" in doc["refused"]
    assert len(doc["problems"]) == 5 and all("is gone" in p for p in doc["problems"])
    assert tree(t) == after
    assert rows(t, "3", SNAP) == before_rows
    # in the right order, both are undone and the table is as it was, byte for byte
    assert run("undo", cleaned).code == 0
    assert run("undo", tmp_path / "c.jsonl").code == 0
    assert tree(t) == before
    assert not (tmp_path / "q").exists()  # made by the clean, outside the table: removed


LATER = "t:30:9223372036854775807::4"  # SNAP and write ids 21-30 committed


def _delete_rows(t: Path, write_id: int, ids: set, name: str | None = None) -> str:
    """A DELETE of the rows whose ``id`` is in ``ids`` (acidtool's DML commit, without Spark),
    or with ``name`` an UPDATE of their name to it: its journal."""
    import pyarrow as pa

    from acidtool.commands.dml.write import write_changes
    from acidtool.table.snapshot import Table
    from acidtool.table.target import resolve

    got = Table(str(t)).snapshot(LATER, hive_version="3", with_row_id=True).to_arrow()
    got = got.filter(pa.compute.is_in(got.column("id"), pa.array(sorted(ids), got["id"].type)))
    rid = got.column("ROW__ID").combine_chunks()
    deleted = pa.table({"partition": [""] * got.num_rows, "writeid": rid.field("writeid"),
                        "bucketid": rid.field("bucketid"), "rowid": rid.field("rowid")})
    inserted = None if name is None else pa.table({
        "partition": [""] * got.num_rows, "bucketid": rid.field("bucketid"),
        "id": got.column("id"), "name": pa.array([name] * got.num_rows)})
    done = write_changes(resolve(str(t), hive_version="3"), write_id, deleted, inserted,
                         updated=0 if name is None else got.num_rows)
    assert done.journal
    return done.journal


@pytest.mark.parametrize("kind", ["--major", "--minor"])
@pytest.mark.parametrize("cleaned", [False, True], ids=["kept", "cleaned"])
def test_undo_of_a_write_a_compaction_took_in_is_refused(tmp_path, kind, cleaned):
    """A delete (write id 21), then a compaction that reads its delete delta, then (or not) the
    clean that removes it: undo of the delete is refused (exit 1) and changes nothing, for
    removing its delete delta would leave its events in the compaction's output, the rows
    still deleted, while undo said it had restored them. Undone in order (the clean, the
    compaction, then the delete) the rows come back."""
    t = table(tmp_path)
    before = rows(t, "3", LATER)
    journal = _delete_rows(t, 21, {0})
    deleted = rows(t, "3", LATER)
    assert len(deleted) < len(before)
    done = run("compact", t, kind, *V3, "--write-ids", LATER, "--apply", "--journal",
               tmp_path / "c.jsonl")
    assert done.code == 0, done.err
    quarantine = None
    if cleaned:
        done = run("repair", t, "--select", "ACID021", *V3, "--write-ids", LATER, "--apply",
                   "--min-age", "0", "--quarantine", tmp_path / "q", "--format", "json")
        assert done.code == 0, done.err
        quarantine = done.json()["journal"]
    assert (t / "delete_delta_0000021_0000021_0000").exists() is not cleaned
    after = tree(t)
    refused = run("undo", journal, "--format", "json")
    assert refused.code == 1, refused.out
    doc = refused.json()
    assert doc["restored"] is False and doc["steps_reversed"] == 0
    assert "a compaction took" in doc["refused"], doc["refused"]
    assert tree(t) == after and rows(t, "3", LATER) == deleted
    if quarantine:
        assert run("undo", quarantine).code == 0
    assert run("undo", tmp_path / "c.jsonl").code == 0
    assert rows(t, "3", LATER) == deleted
    again = run("undo", journal)
    assert again.code == 0, again.out + again.err
    assert rows(t, "3", LATER) == before


def test_undo_of_a_rewrap_whose_statement_a_compaction_merged_is_refused(tmp_path):
    """repair re-wraps a raw file found in delta_2_2_0 into delta_2_2_1 (write id 2,
    statement 1); a minor compaction of the two statements writes delta_2_2: undo of the
    repair is refused (putting the file back would leave its rows in delta_2_2), and undone in
    order (the compaction, then the repair) the table is as it was, byte for byte."""
    from .helpers.layouts import MARK, ROW, acid, build, delta, events, plain

    t = build(tmp_path / "t", {**delta("delta_0000002_0000002_0000", acid(events(2))),
                               "delta_0000002_0000002_0000/data__abc": plain(ROW, [(10, "x")]),
                               "delta_0000002_0000002_0000/_orc_acid_version": MARK})
    start = tree(t)
    snap = ("--hive-version", "3", "--write-ids", "t:5:9223372036854775807::")
    repaired = run("repair", t, *snap, "--apply", "--min-age", "0", "--format", "json")
    assert repaired.code == 0, repaired.err
    assert (t / "delta_0000002_0000002_0001").is_dir()
    done = run("compact", t, "--minor", *snap, "--apply", "--journal", tmp_path / "c.jsonl")
    assert done.code == 0, done.err
    assert (t / "delta_0000002_0000002").is_dir()
    refused = run("undo", repaired.json()["journal"], "--format", "json")
    assert refused.code == 1 and "a compaction took" in refused.json()["refused"]
    assert run("undo", tmp_path / "c.jsonl").code == 0
    assert run("undo", repaired.json()["journal"]).code == 0
    assert tree(t) == start


def _names(t: Path) -> list:
    from acidtool.table.snapshot import Table

    got = Table(str(t)).snapshot(LATER, hive_version="3").to_arrow()
    return sorted(zip(got.column("id").to_pylist(), got.column("name").to_pylist()))


@pytest.mark.parametrize("first,later,refused", [
    # an update's new rows deleted later: its undo alone would bring the old rows back
    ((21, {0}, "u"), (22, {0}, None), True),
    # an update's new rows updated again: its undo alone would leave the later version
    ((21, {0}, "u"), (22, {0}, "v"), True),
    # a later write that leaves the update's rows alone
    ((21, {0}, "u"), (22, {1}, None), False),
    ((21, {0}, "u"), (22, {1}, "v"), False),
    # a delete wrote no row: nothing later can name one of its
    ((21, {0}, None), (22, {1}, "v"), False),
], ids=["update-then-delete", "update-then-update", "unrelated-delete", "unrelated-update",
        "delete-then-update"])
def test_undo_of_a_write_whose_rows_a_later_write_changed_is_refused(tmp_path, first, later,
                                                                    refused):
    """Undo of a write whose rows a later write deleted or updated is refused (exit 1,
    nothing changed): undoing the later one first, then it, brings the table back whole."""
    t = table(tmp_path)
    start = _names(t)
    journal = _delete_rows(t, *first)
    middle = _names(t)
    later_journal = _delete_rows(t, *later)
    end, tree_end = _names(t), tree(t)
    undo = run("undo", journal, "--format", "json")
    if refused:
        assert undo.code == 1, undo.out
        assert "a later write" in undo.json()["refused"]
        assert tree(t) == tree_end and _names(t) == end
        assert run("undo", later_journal).code == 0
        assert _names(t) == middle
        assert run("undo", journal).code == 0
    else:
        assert undo.code == 0, undo.out
        assert run("undo", later_journal).code == 0
    assert _names(t) == start


def test_undo_refuses_when_an_input_changed(tmp_path):
    """A file added to a directory the compaction read: the output may no longer be the only
    difference, so undo refuses and names it."""
    t = table(tmp_path)
    compact(t, tmp_path / "c.jsonl")
    (t / "delta_0000001_0000001_0000" / "bucket_00005").write_bytes(b"x")
    undo = run("undo", tmp_path / "c.jsonl")
    assert undo.code == 1
    assert "delta_0000001_0000001_0000 is not as the commit left it (bucket_00005" in undo.out


def test_undo_never_takes_another_runs_identical_output_for_its_own(tmp_path):
    """compact, undo, compact again (the same rows, the same bucket files), then undo of a copy
    of the first journal taken before its undo: refused, the second run's base stays."""
    t = table(tmp_path)
    before_rows = rows(t, "3", SNAP)
    compact(t, tmp_path / "c1.jsonl")
    shutil.copy(tmp_path / "c1.jsonl", tmp_path / "copy.jsonl")
    assert run("undo", tmp_path / "c1.jsonl").code == 0
    compact(t, tmp_path / "c2.jsonl")
    second = tree(t)
    undo = run("undo", tmp_path / "copy.jsonl", "--format", "json")
    assert undo.code == 1
    assert "another run" in undo.json()["refused"]
    assert tree(t) == second and rows(t, "3", SNAP) == before_rows
    assert run("undo", tmp_path / "c2.jsonl").code == 0
    assert not (t / "base_0000005").exists()
    assert rows(t, "3", SNAP) == before_rows


def test_compacted_bucket_files_are_the_same_across_runs(tmp_path):
    """Only the run marker tells two runs apart: the data files are byte-identical."""
    t = table(tmp_path)
    compact(t, tmp_path / "c1.jsonl")
    first = tree(t / "base_0000005")
    assert run("undo", tmp_path / "c1.jsonl").code == 0
    compact(t, tmp_path / "c2.jsonl")
    second = tree(t / "base_0000005")
    assert sorted(first) == sorted(second)
    assert [n for n in first if first[n] != second[n]] == ["_acidtool_run"]
    run_ids = {json.loads((t / "base_0000005" / "_acidtool_run").read_text())["run"]}
    assert run_ids == {json.loads(line)["run"] for line in
                       (tmp_path / "c2.jsonl").read_text().splitlines()[:1]}


def test_undo_of_a_repair_with_a_quarantine_outside_the_table(tmp_path):
    """--quarantine DIR outside the table: the directories made to reach it are the
    journal's too, so undo accepts the journal and removes them."""
    t = table(tmp_path)
    before = tree(t)
    compact(t, tmp_path / "c.jsonl")
    with_base = tree(t)
    cleaned = clean(t, tmp_path / "far" / "q")
    undo = run("undo", cleaned)
    assert undo.code == 0, undo.out + undo.err
    assert tree(t) == with_base and not (tmp_path / "far").exists()
    assert run("undo", tmp_path / "c.jsonl").code == 0
    assert tree(t) == before


def test_undo_refuses_before_changing_anything_when_a_quarantined_file_is_gone(tmp_path):
    """A quarantined directory deleted by hand: undo would have put the others back and
    failed half way; it refuses first, naming it."""
    t = table(tmp_path)
    compact(t, tmp_path / "c.jsonl")
    cleaned = clean(t, tmp_path / "q")
    now = tree(t)
    gone = next((tmp_path / "q").glob("*/delta_0000001_0000001_0000"))
    shutil.rmtree(gone)
    undo = run("undo", cleaned)
    assert undo.code == 1
    assert "delta_0000001_0000001_0000 is gone" in undo.out
    assert tree(t) == now


# ------------------------------------------------------------------------------------------------
# compact -> validate -> repair: rows a base holds are never re-wrapped (case 3)

ORIGINALS = "t:9:9223372036854775807::"


def originals_table(root: Path) -> Path:
    """Original (pre-ACID) files in two buckets, and a delete of one of their rows (write id
    0, bucket 0, row 1): Hive reads 5 rows."""
    from acidtool.core.bucket import encode_v1
    from acidtool.io.acidwrite import DELETE, Event

    from .helpers.layouts import acid, build, plain

    return build(root, {
        "000000_0": plain(rows=[(1, "a"), (2, "b"), (3, "c")]),
        "000001_0": plain(rows=[(4, "d"), (5, "e"), (6, "f")]),
        "delete_delta_0000002_0000002_0000/bucket_00000":
            acid([Event(DELETE, 0, encode_v1(0), 1, 2, None)], hive_version="3"),
        "delete_delta_0000002_0000002_0000/_orc_acid_version": b"2",
    })


def plain_rows(t: Path) -> list:
    result = run("read", t, *V3, "--write-ids", ORIGINALS)
    assert result.code == 0, result.err
    return sorted(json.loads(line)["id"] for line in result.out.splitlines())


def findings(t: Path, code: str) -> list:
    result = run("validate", t, *V3, "--write-ids", ORIGINALS, "--format", "json")
    return [f for f in result.json()["findings"] if f["code"] == code]


def test_originals_a_compaction_read_are_obsolete_and_never_rewrapped(tmp_path):
    t = originals_table(tmp_path / "t")
    assert plain_rows(t) == [1, 3, 4, 5, 6]
    result = run("compact", t, "--major", *V3, "--write-ids", ORIGINALS, "--apply")
    assert result.code == 0, result.err
    assert plain_rows(t) == [1, 3, 4, 5, 6]
    # validate: the originals are obsolete (ACID021), not invisible (ACID001)
    assert findings(t, "ACID001") == []
    obsolete = sorted(Path(f["path"]).name for f in findings(t, "ACID021"))
    assert obsolete == ["000000_0", "000001_0", "delete_delta_0000002_0000002_0000"]
    # repair with a write id re-wraps nothing: 5 rows stay 5, the deleted row stays deleted
    plan = run("repair", t, *V3, "--write-ids", ORIGINALS, "--write-id", "3", "--min-age", "0",
               "--apply", "--format", "json")
    assert plan.code == 0, plan.out + plan.err
    assert plain_rows(t) == [1, 3, 4, 5, 6]
    assert not [n for n in os.listdir(t) if n.startswith("delta_")]
    # the clean compact's output advises takes the originals too, as Hive's Cleaner does
    clean = run("repair", t, "--select", "ACID021", *V3, "--write-ids", ORIGINALS,
                "--min-age", "0", "--apply")
    assert clean.code == 0, clean.out
    assert sorted(os.listdir(t)) == [".acidtool-quarantine", "base_0000002"]
    assert plain_rows(t) == [1, 3, 4, 5, 6]


def test_an_original_dropped_after_the_compaction_is_still_rewrapped(tmp_path):
    """A base of ACID rows only (no write id 0): an original file next to it came later;
    its rows are invisible (ACID001), and repair brings them back once."""
    from .helpers.layouts import plain

    t = table(tmp_path)
    compact(t, tmp_path / "c.jsonl")
    (t / "000000_0").write_bytes(plain(rows=[(70, "late")]))
    (found,) = [f for f in run("validate", t, *V3, "--write-ids", SNAP, "--format", "json"
                               ).json()["findings"] if f["code"] == "ACID001"]
    assert "holds no original files' rows" in found["message"]
    snap = "t:20:9223372036854775807::4"
    fix = run("repair", t, *V3, "--write-ids", snap, "--write-id", "6", "--min-age", "0",
              "--apply", "--format", "json")
    assert fix.code == 1, fix.err  # ACID020 (the aborted delta 4) stays for a person
    (action,) = [a for a in fix.json()["actions"] if a["code"] == "ACID001"]
    assert action["kind"] == "rewrap" and action["result"] == "done"
    ids = [json.loads(line)["id"] for line in run("read", t, *V3, "--write-ids", snap
                                                  ).out.splitlines()]
    assert ids.count(70) == 1


# ------------------------------------------------------------------------------------------------
# A folder of tables given as a table (case 7)


@pytest.mark.parametrize("command", [["ls"], ["validate"], ["upgrade-check"], ["compact"],
                                     ["compaction-plan"], ["read"], ["repair"], ["dump"],
                                     ["export", "--to", "iceberg", "--table", "x.y"]])
@pytest.mark.parametrize("level", ["warehouse", "database"])
def test_a_folder_of_tables_is_refused_as_a_table(tmp_path, command, level):
    from .helpers.layouts import build, plain

    wh = tmp_path / "wh"
    table(wh / "db.db", "3").rename(wh / "db.db" / "orders")
    build(wh / "db.db" / "plain", {"000000_0": plain(), "delta_0000001_0000001_0000/"
                                   "bucket_00000": (wh / "db.db" / "orders" /
                                                    "delta_0000001_0000001_0000" /
                                                    "bucket_00000").read_bytes()})
    path = wh if level == "warehouse" else wh / "db.db"
    before = tree(wh)
    extra = ["--catalog", tmp_path / "cat"] if command[0] == "export" else []
    result = run(command[0], path, *command[1:], *extra)
    assert result.code == 2, result.out + result.err
    assert "holds tables (" in result.err and "orders" in result.err
    assert "--recursive" in result.err
    assert tree(wh) == before
    if command[0] in ("ls", "validate", "upgrade-check", "compaction-plan"):
        assert run(command[0], "-r", path).code in (0, 1)


# ------------------------------------------------------------------------------------------------
# export --incremental after a write below the recorded high watermark (case 5)


def test_incremental_export_sees_a_write_id_below_the_recorded_high_watermark(tmp_path):
    pytest.importorskip("pyiceberg")
    from .helpers.layouts import plain

    t = table(tmp_path)
    shutil.rmtree(t / "delta_0000004_0000004_0000")  # deltas 1, 2, 3 and 5: 4 still to come
    snap = "t:20:9223372036854775807::"
    args = ("--to", "iceberg", "--catalog", tmp_path / "cat", "--table", "d.t", *V3,
            "--write-ids", snap, "--format", "json")
    first = run("export", t, *args)
    assert first.code == 0, first.err
    assert first.json()["rows_added"] == 6
    (tmp_path / "land.orc").write_bytes(plain(rows=[(100, "x"), (101, "y")]))
    conv = run("convert", tmp_path / "land.orc", "--table", t, "--write-id", "4", *V3)
    assert conv.code == 0, conv.err
    again = run("export", t, *args, "--incremental")
    assert again.code == 0, again.err
    assert again.json()["action"] == "incremental"
    assert again.json()["rows_added"] == 2
    same = run("export", t, *args, "--incremental")
    assert same.code == 0 and same.json()["action"] == "nothing"


# ------------------------------------------------------------------------------------------------
# The table's kind from its files (case 6, in part)


def test_compact_refuses_a_full_acid_compaction_of_an_insert_only_tables_files(tmp_path):
    """Without --insert-only, an insert-only table's plain files would be written into a
    full-ACID base (Hive then returns the six event columns as rows): refused, nothing
    written; with --insert-only it compacts."""
    from .test_compact import insert_only_table

    t = insert_only_table(tmp_path / "t")
    before = tree(t)
    result = run("compact", t, "--major", "--apply")
    assert result.code == 2
    assert "only plain files" in result.err and "--insert-only" in result.err
    assert tree(t) == before
    assert run("compact", t, "--major", "--insert-only", "--apply").code == 0


def test_a_flag_the_files_contradict_is_refused_by_convert_compact_and_read(tmp_path):
    """The table's kind from its files: convert without --insert-only into an insert-only
    table (Hive would read the six event columns as rows) and --insert-only on a full-ACID
    table are refused with exit 2 and nothing written; a full-ACID table whose delta came from
    LOAD DATA (plain files named N_M next to ACID ones) still compacts."""
    import pyarrow as pa
    import pyarrow.orc as orc

    from .test_compact import insert_only_table

    src = tmp_path / "one.orc"
    orc.write_table(pa.table({"id": pa.array([9], pa.int32()), "name": ["z"]}), str(src))
    io_table = insert_only_table(tmp_path / "io")
    full = table(tmp_path / "full")
    for t, flags in ((io_table, ()), (full, ("--insert-only",))):
        before = tree(t)
        refused = run("convert", src, "--table", t, *V3, "--write-id", "auto", *flags)
        assert refused.code == 2 and "nothing was written" in refused.err, refused.err
        assert tree(t) == before
    assert run("compact", full, "--major", *V3, "--insert-only", "--apply").code == 2
    assert run("read", full, *V3, "--insert-only").code == 2
    from acidtool.core.errors import UsageError
    from acidtool.hiveacid.job import plan_write
    from acidtool.table.options import WriteOptions

    frame = pa.schema([("id", pa.int64())])
    for t, options in ((io_table, {}), (full, {"insertOnly": "true"})):  # the Spark writer
        before = tree(t)
        with pytest.raises(UsageError, match="bucket_N|give insertOnly"):
            plan_write(WriteOptions.of({"path": str(t), "hiveVersion": "3", **options}),
                       frame, False)
        assert tree(t) == before
    fits = tmp_path / "ids.orc"  # the insert-only table's one column
    orc.write_table(pa.table({"id": pa.array([9], pa.int64())}), str(fits))
    assert run("convert", fits, "--table", io_table, *V3, "--write-id", "auto",
               "--insert-only").code == 0
    # LOAD DATA into a full-ACID table: a raw delta of plain N_M files
    raw = full / "delta_0000007_0000007_0000"
    raw.mkdir()
    orc.write_table(pa.table({"id": pa.array([7], pa.int32()), "name": ["r"]}),
                    str(raw / "000000_0"))
    rows_before = rows(full, "3", SNAP)
    assert any('"id":7,"name":"r"' in r for r in rows_before)
    done = run("compact", full, "--major", *V3, "--write-ids", SNAP, "--apply")
    assert done.code == 0, done.err
    assert (full / "base_0000007").is_dir()
    assert rows(full, "3", SNAP) == rows_before


# ------------------------------------------------------------------------------------------------
# 4. A streaming batch over two partitions, killed at every fault point, then replayed


def _stream_batch(t: Path, b: int, state: Path, kill_at: int | None = None):
    import subprocess
    import sys

    env = {**os.environ, "ACIDTOOL_STATE_DIR": str(state)}
    env.pop("ACIDTOOL_KILL_AT", None)
    if kill_at is not None:
        env["ACIDTOOL_KILL_AT"] = str(kill_at)
    return subprocess.run([sys.executable, "-m", "tests.helpers.streamjob", str(t), str(b)],
                          env=env, capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])


@pytest.mark.slow
def test_a_streaming_batch_killed_at_any_point_is_committed_once_by_its_replay(tmp_path):
    """Batch 1 of a stream writes to two partitions; killed at each fault point (between the
    two partitions' renames too), the query's restart replays it: its rows are in exactly
    once, the next batch's too, and no staging directory is left."""
    from .helpers.streamjob import rows_of
    from .test_spark_source import _ids, partitioned

    points = 0
    for kill_at in range(1, 40):
        t = partitioned(tmp_path / str(kill_at))
        state = tmp_path / f"state{kill_at}"
        before = _ids(t)
        assert _stream_batch(t, 0, state).returncode == 0
        killed = _stream_batch(t, 1, state, kill_at)
        if killed.returncode == 0:
            break
        assert killed.returncode == -9, killed.stderr
        points += 1
        for b in (1, 2):  # the restart: batch 1 replayed, then the next one
            again = _stream_batch(t, b, state)
            assert again.returncode == 0, again.stderr
        want = sorted(before + [f'{i},"s{i}","{ds}"' for b in (0, 1, 2)
                                for i, _, ds in rows_of(b)])
        assert _ids(t) == want, f"killed at fault point {kill_at}"
        left = [str(p) for p in t.rglob("_acidtool_staging_*")]
        assert not left, left
    assert points >= 4  # staged, locked, between the renames, after them


# ------------------------------------------------------------------------------------------------
# 8. Original files in Tez UNION ALL subdirectories: compacted, cleaned, never re-wrapped


def test_union_subdirectories_are_compacted_then_obsolete_and_their_undo_guarded(tmp_path):
    import pyarrow as pa
    import pyarrow.orc as orc

    t = tmp_path / "u"
    for sub, ids in (("HIVE_UNION_SUBDIR_1", [1, 2]), ("HIVE_UNION_SUBDIR_2", [3, 4, 5])):
        (t / sub).mkdir(parents=True)
        orc.write_table(pa.table({"id": pa.array(ids, pa.int32()),
                                  "name": [f"n{i}" for i in ids]}), str(t / sub / "000000_0"))
    snap = ("--hive-version", "3", "--write-ids", "t:5:9223372036854775807::")
    before = run("read", t, *snap, "--with-row-id").out
    assert len(before.splitlines()) == 5
    done = run("compact", t, "--major", *snap, "--apply", "--journal", tmp_path / "c.jsonl")
    assert done.code == 0, done.err
    assert run("read", t, *snap, "--with-row-id").out == before
    found = run("validate", t, *snap, "--format", "json").json()["findings"]
    assert {(f["code"], f["path"].rsplit("/", 1)[-1]) for f in found} == {
        ("ACID021", "HIVE_UNION_SUBDIR_1"), ("ACID021", "HIVE_UNION_SUBDIR_2")}
    # the repair compact's output advises: the obsolete inputs cleaned, no row re-wrapped
    cleaned = run("repair", t, *snap, "--apply", "--min-age", "0")
    assert cleaned.code == 0, cleaned.err
    assert run("read", t, *snap, "--with-row-id").out == before
    cleaned = run("repair", t, *snap, "--select", "ACID021", "--apply", "--min-age", "0")
    assert cleaned.code == 0, cleaned.err
    assert sorted(n for n in os.listdir(t) if not n.startswith(".")) == ["base_0000000"]
    assert run("read", t, *snap, "--with-row-id").out == before
    undone = run("undo", tmp_path / "c.jsonl")  # its inputs gone: the base is the only copy
    assert undone.code == 1 and "undo refused" in undone.out + undone.err
    assert run("read", t, *snap, "--with-row-id").out == before


# ------------------------------------------------------------------------------------------------
# 6. Facts the files give: a flag they contradict is refused


def test_a_hive_2_compaction_of_copy_n_originals_is_refused(tmp_path):
    """Hive 2.3 reads N_M_copy_K originals as bucket -1: a compaction would write their rows
    to bucket_-0001 with colliding ROW__IDs. Refused with nothing written; Hive 3 numbers
    them and compacts them."""
    import pyarrow as pa
    import pyarrow.orc as orc

    t = tmp_path / "c"
    t.mkdir()
    for name, ids in (("000000_0", [1, 2]), ("000000_0_copy_1", [3, 4]),
                      ("000001_0_copy_1", [5]), ("000002_0", [6])):
        orc.write_table(pa.table({"id": pa.array(ids, pa.int32())}), str(t / name))
    before = tree(t)
    refused = run("compact", t, "--major", "--hive-version", "2", "--apply")
    assert refused.code == 2 and "bucket_-0001" in refused.err, refused.err
    assert tree(t) == before
    done = run("compact", t, "--major", "--hive-version", "3", "--apply")
    assert done.code == 0, done.err
    ids = run("read", t, "--hive-version", "3", "--with-row-id").out
    rows = [json.loads(x) for x in ids.splitlines()]
    assert sorted(r["id"] for r in rows) == [1, 2, 3, 4, 5, 6]
    assert len({json.dumps(r["ROW__ID"], sort_keys=True) for r in rows}) == 6


@pytest.mark.parametrize("original", ["000000_0", "p=1/000001_0_copy_1"])
def test_convert_into_a_table_of_original_files_takes_their_columns(tmp_path, original):
    """A table converted to ACID whose only data are its original files (nothing written
    since) has their columns: a source of other types is refused as for a table of deltas
    (before, it was taken, and the table then held two schemas that read would not mix)."""
    import pyarrow as pa
    import pyarrow.orc as orc

    t = tmp_path / "t"
    (t / original).parent.mkdir(parents=True)
    orc.write_table(pa.table({"id": pa.array([1], pa.int32()), "name": ["a"]}),
                    str(t / original))
    (t / "p=1" / "_dropped_by_a_tool").parent.mkdir(exist_ok=True)
    orc.write_table(pa.table({"x": pa.array([1.5])}), str(t / "p=1" / "_dropped_by_a_tool"))
    before = tree(t)
    part = ["--partition", "p=1"] if original.startswith("p=1") else []
    wide = tmp_path / "wide.orc"
    orc.write_table(pa.table({"id": pa.array([3], pa.int64()), "name": ["c"]}), str(wide))
    refused = run("convert", wide, "--table", t, *V3, "--write-id", "5", *part)
    assert refused.code == 2 and "do not fit the table" in refused.err, refused.err
    assert f"{original} holds (id int, name string)" in refused.err, refused.err
    assert tree(t) == before
    fits = tmp_path / "fits.orc"
    orc.write_table(pa.table({"id": pa.array([4], pa.int32()), "name": ["d"]}), str(fits))
    done = run("convert", fits, "--table", t, *V3, "--write-id", "5", *part)
    assert done.code == 0, done.err


def test_convert_refuses_rows_of_another_schema_and_read_says_why_it_cannot(tmp_path):
    """convert into a table whose files hold other row columns is refused (exit 2, nothing
    written); a table that got such a delta anyway (copied in) is not read as a mix: read
    and the API say which files differ (exit 1), never an internal error."""
    import pyarrow as pa
    import pyarrow.orc as orc

    src = tmp_path / "src"
    src.mkdir()
    orc.write_table(pa.table({"id": pa.array([1, 2], pa.int32()), "name": ["a", "b"]}),
                    str(src / "a.orc"))
    orc.write_table(pa.table({"x": pa.array([1.5]), "y": pa.array([7], pa.int64())}),
                    str(src / "b.orc"))
    orc.write_table(pa.table({"id": pa.array([3], pa.int64()), "name": ["c"]}),
                    str(src / "c.orc"))
    t, other = tmp_path / "t", tmp_path / "other"
    t.mkdir()
    other.mkdir()
    ok = run("convert", src / "a.orc", "--table", t, *V3, "--write-id", "auto")
    assert ok.code == 0, ok.err
    before = tree(t)
    for name in ("b.orc", "c.orc"):
        refused = run("convert", src / name, "--table", t, *V3, "--write-id", "auto")
        assert refused.code == 2 and "do not fit the table" in refused.err, refused.err
        assert tree(t) == before
    cast = run("convert", src / "c.orc", "--table", t, *V3, "--write-id", "auto",
               "--schema", "struct<id:int,name:string>")
    assert cast.code == 2 and "cannot be cast safely" in cast.err  # bigint into int: refused
    # a delta of another schema copied in by another tool
    assert run("convert", src / "b.orc", "--table", other, *V3, "--write-id", "7").code == 0
    shutil.move(str(other / "delta_0000007_0000007_0000"), str(t))
    for fmt in ("jsonl", "csv"):
        read = run("read", t, *V3, "--format", fmt)
        assert read.code == 1 and "different schemas" in read.err and not read.out, read.err
    from acidtool import open_table
    from acidtool.core.errors import MixedSchemaError

    with pytest.raises(MixedSchemaError):
        open_table(str(t)).snapshot(hive_version="3").to_arrow()


# ------------------------------------------------------------------------------------------------
# 8. A SIGTERM at any moment of a writer leaves no lock and no half table


def test_a_sigterm_at_any_moment_of_convert_leaves_no_lock(tmp_path):
    import random
    import signal
    import subprocess
    import sys
    import time

    import pyarrow as pa
    import pyarrow.orc as orc

    src = tmp_path / "a.orc"
    orc.write_table(pa.table({"id": pa.array(range(1000), pa.int32())}), str(src))
    rng = random.Random(39)
    env = {**os.environ, "ACIDTOOL_STATE_DIR": str(tmp_path / "state")}
    for i in range(16):
        t = tmp_path / f"t{i}"
        t.mkdir()
        proc = subprocess.Popen([sys.executable, "-m", "acidtool", "convert", str(src),
                                 "--table", str(t), "--write-id", "1"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.05, 0.9))
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        names = sorted(os.listdir(t))
        assert proc.returncode in (0, 143, -signal.SIGTERM), err
        assert names in ([], ["delta_0000001_0000001_0000"]), (names, err)


def _converted(t: Path, src: Path, *more) -> dict:
    done = run("convert", src, "--table", t, *V3, "--write-id", "auto", "--format", "json",
               *more)
    assert done.code == 0, done.err
    return done.json()


def test_undo_of_a_convert_takes_its_delta_back_out_from_any_directory(tmp_path,
                                                                      monkeypatch):
    """convert journals its commit: undo takes the delta back out, leaving the table as it
    was, byte for byte. The journal holds the paths as the command was given them (here
    relative): undo run from another directory acts on the same table, not on a copy of the
    same relative name there (which holds the very same delta, so its files' hashes would
    not tell them apart). The same sources convert again after."""
    t = table(tmp_path)
    before, rows_before = tree(t), rows(t, "3", LATER)
    src = _source(tmp_path / "src.orc", _row_schema(t), 3, seed=7)
    monkeypatch.chdir(tmp_path)
    doc = _converted(Path("t"), src)
    assert doc["journal"] and doc["rows"] == 3
    assert len(rows(t, "3", LATER)) == len(rows_before) + 3
    decoy = tmp_path / "elsewhere" / "t"
    shutil.copytree(t, decoy)
    decoy_tree = tree(decoy)
    monkeypatch.chdir(decoy.parent)
    undone = run("undo", doc["journal"], "--format", "json")
    assert undone.code == 0, undone.out + undone.err
    assert undone.json()["restored"] is True
    assert tree(t) == before and rows(t, "3", LATER) == rows_before
    assert tree(decoy) == decoy_tree
    again = run("undo", doc["journal"])
    assert again.code == 0 and "nothing to restore" in again.out, again.out
    assert _converted(t, src)["rows"] == 3  # not "converted already": its delta is gone
    assert len(rows(t, "3", LATER)) == len(rows_before) + 3


def test_undo_of_a_convert_that_moved_its_sources_says_where_they_are(tmp_path,
                                                                      monkeypatch):
    """--move-sources moves the sources out of the landing zone after the commit, outside
    the table: undo takes the delta out and names where the sources are (from any
    directory), so that the load can be made again once they are back."""
    t = table(tmp_path)
    before = tree(t)
    (tmp_path / "land").mkdir()
    (tmp_path / "elsewhere").mkdir()
    src = _source(tmp_path / "land" / "a.orc", _row_schema(t), 2, seed=5)
    monkeypatch.chdir(tmp_path)
    doc = _converted(t, src, "--move-sources", "done")
    assert not src.exists() and (tmp_path / "done" / "a.orc").exists()
    monkeypatch.chdir(tmp_path / "elsewhere")
    undone = run("undo", doc["journal"])
    assert undone.code == 0 and tree(t) == before, undone.out
    assert undone.out.splitlines()[1:] == [
        f"the sources this convert moved (--move-sources) are still in {tmp_path / 'done'}, "
        "listed in its acidtool-manifest-*.jsonl: move them back, and the manifest aside, to "
        "load them again"]
    again = run("undo", doc["journal"], "--format", "json")
    assert again.code == 0 and again.json()["steps_reversed"] == 0
    assert again.json()["sources_moved_to"] == str(tmp_path / "done")
    (tmp_path / "done" / "a.orc").rename(src)
    manifest = next((tmp_path / "done").glob("acidtool-manifest-*.jsonl"))
    refused = run("convert", src, "--table", t, *V3, "--write-id", "auto", "--move-sources",
                  tmp_path / "done")  # (the same delta's name again: its manifest is there)
    assert refused.code == 2 and f"{manifest.name} exists already" in refused.err
    manifest.rename(tmp_path / "aside.jsonl")
    second = _converted(t, src, "--move-sources", tmp_path / "done")
    assert second["rows"] == 2  # not "converted already"
    assert (tmp_path / "done" / "a.orc").exists()
    assert run("undo", second["journal"]).code == 0
    assert tree(t) == before
    src.write_bytes((tmp_path / "done" / "a.orc").read_bytes())
    third = _converted(t, src)  # no --move-sources: undo says nothing of sources
    plain = run("undo", third["journal"])
    assert plain.code == 0 and len(plain.out.splitlines()) == 1, plain.out
    assert run("undo", third["journal"], "--format", "json").json()["sources_moved_to"] is None
    assert tree(t) == before


@pytest.mark.parametrize("kind", ["--major", "--minor"])
def test_undo_of_a_convert_a_compaction_took_in_is_refused(tmp_path, kind):
    t = table(tmp_path)
    rows_before = rows(t, "3", LATER)
    src = _source(tmp_path / "src.orc", _row_schema(t), 2, seed=3)
    journal = _converted(t, src)["journal"]
    done = run("compact", t, kind, *V3, "--write-ids", LATER, "--apply", "--journal",
               tmp_path / "c.jsonl")
    assert done.code == 0, done.err
    converted, after = rows(t, "3", LATER), tree(t)
    refused = run("undo", journal, "--format", "json")
    assert refused.code == 1 and "a compaction took" in refused.json()["refused"], refused.out
    assert tree(t) == after and rows(t, "3", LATER) == converted
    assert run("undo", tmp_path / "c.jsonl").code == 0
    assert run("undo", journal).code == 0
    assert rows(t, "3", LATER) == rows_before


def test_a_convert_journal_that_exists_is_refused_before_anything_is_written(tmp_path):
    t = table(tmp_path)
    before = tree(t)
    taken = tmp_path / "j.jsonl"
    taken.write_text("")
    src = _source(tmp_path / "src.orc", _row_schema(t), 2, seed=3)
    done = run("convert", src, "--table", t, *V3, "--write-id", "auto", "--journal", taken)
    assert done.code == 2 and "exists already" in done.err, done.err
    assert tree(t) == before and taken.read_text() == ""


# ------------------------------------------------------------------------------------------------
# Random orders of the commands a user runs, on our table and on a copy of a real one: after
# every command the rows (and their ROW__IDs) are the ones Hive reads, none lost, resurrected or
# duplicated; only convert adds rows, and exactly its own; an incremental export to Iceberg,
# at any point of the sequence, holds exactly those rows


REAL_NATION = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "trino" / \
    "fullacidNationTableWithOriginalFiles"
STEPS = ("convert", "major", "minor", "clean", "repair", "undo", "export")
HWM = ("--hive-version", "3", "--write-ids", "t:20000000:9223372036854775807::")


def _row_schema(t: Path):
    """The table's row columns, from its first data file (an ACID file's row struct)."""
    import pyarrow as pa
    import pyarrow.orc as orc

    for top, dirs, files in sorted(os.walk(t)):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for f in sorted(files):
            if f.startswith(("_", ".")):
                continue
            schema = orc.ORCFile(os.path.join(top, f)).schema
            if "row" in schema.names and "originalTransaction" in schema.names:
                return pa.schema(list(schema.field("row").type))
            return schema
    raise AssertionError(f"no data file in {t}")


def _source(path: Path, schema, n: int, seed: int) -> Path:
    import pyarrow as pa
    import pyarrow.orc as orc

    cols = {}
    for f in schema:
        if pa.types.is_integer(f.type):
            cols[f.name] = pa.array([seed * 1000 + i for i in range(n)], f.type)
        else:
            cols[f.name] = pa.array([f"s{seed}-{i}" for i in range(n)], f.type)
    orc.write_table(pa.table(cols), str(path))
    return path


def _hive_rows(t: Path) -> list[str]:
    result = run("read", t, *HWM, "--with-row-id")
    assert result.code == 0, result.err
    return sorted(result.out.splitlines())


def _base_table(which: str, into: Path) -> Path:
    if which == "real":
        if not REAL_NATION.is_dir():
            pytest.skip("../shared/realdata is not here")
        shutil.copytree(REAL_NATION, into)
        return into
    made = table(into.parent / (into.name + "-made"))
    shutil.move(str(made), str(into))
    return into


@pytest.mark.parametrize("which", ["ours", "real"])
def test_random_orders_of_commands_keep_hives_rows(tmp_path_factory, which):
    from collections import Counter

    from hypothesis import HealthCheck, example, given, settings
    from hypothesis import strategies as st

    @settings(max_examples=15, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(st.tuples(st.sampled_from(STEPS), st.integers(0, 5)), min_size=2,
                    max_size=7))
    # exports between a compaction, its undo and a clean, and around a conversion and a repair
    @example([("export", 0), ("major", 0), ("export", 0), ("undo", 0), ("export", 0),
              ("clean", 0), ("export", 0)])
    @example([("export", 0), ("convert", 1), ("minor", 0), ("export", 0), ("repair", 0),
              ("major", 0), ("export", 0)])
    def sequence(steps):
        work = tmp_path_factory.mktemp("seq")
        t = _base_table(which, work / "t")
        schema = _row_schema(t)
        rows = _hive_rows(t)
        journals: list[Path] = []
        added: dict[Path, Counter] = {}  # a convert's journal: the rows it added
        for i, (step, k) in enumerate(steps):
            journal = work / f"j{i}.jsonl"
            where = f"step {i} ({step}) of {steps}"
            if step == "convert":
                src = _source(work / f"src{i}.orc", schema, 1 + k, seed=i + 1)
                done = run("convert", src, "--table", t, "--hive-version", "3", "--write-id",
                           "auto", "--journal", journal)
                assert done.code == 0, (where, done.err)
                after = _hive_rows(t)
                added[journal] = Counter(after) - Counter(rows)
                assert sum(added[journal].values()) == 1 + k and \
                    not Counter(rows) - Counter(after), where
                rows = after
                journals.append(journal)
                continue
            if step == "export":  # the Iceberg table follows whatever came before
                done = run("export", t, "--to", "iceberg", "--catalog", work / "lake",
                           "--table", "s.t", *HWM, "--incremental")
                assert done.code == 0, (where, done.err)
                assert iceberg_rows(work / "lake") == read_rows(t, *HWM), where
                assert _hive_rows(t) == rows, where
                continue
            if step in ("major", "minor"):
                done = run("compact", t, f"--{step}", *HWM, "--apply", "--journal", journal)
                assert done.code == 0, (where, done.err)
            elif step == "clean":
                done = run("repair", t, *HWM, "--select", "ACID021", "--apply", "--min-age",
                           "0", "--journal", journal)
                assert done.code in (0, 1), (where, done.err)
            elif step == "repair":
                done = run("repair", t, *HWM, "--apply", "--min-age", "0", "--journal",
                           journal)
                assert done.code in (0, 1), (where, done.err)
            elif journals:  # undo of any earlier journal: done, or refused changing nothing
                undone = journals.pop(k % len(journals))
                done = run("undo", undone)
                assert done.code in (0, 1), (where, done.out, done.err)
                if done.code == 1:
                    assert "undo refused" in done.out + done.err, (where, done.out, done.err)
                elif undone in added:  # a convert's undone: exactly its rows are gone
                    rows = sorted((Counter(rows) - added[undone]).elements())
            if journal.exists():
                journals.append(journal)
            assert _hive_rows(t) == rows, where

    sequence()
