"""acidtool compact without a JVM: plans, what is written, the commit protocol (kills at every
fault point, undo), on layouts of our own making. test_hive_rows and test_hive23 judge the
output with Hive's own readers and compare it with Hive's own compactor."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from acidtool.core.bucket import encode_v1
from acidtool.io.acidwrite import DELETE, Event

from .helpers.layouts import acid, events
from .helpers.runner import acidtool_process, run

ALL = "t:20:9223372036854775807::"


def write(root: Path, layout: dict) -> Path:
    for rel, data in layout.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def table(tmp_path: Path, version: str = "3") -> Path:
    """Inserts in two buckets over two write ids and two statements, deletes in both buckets,
    an aborted write id (4) and one after it."""
    dels = [Event(DELETE, 1, encode_v1(0), 1, 3, None), Event(DELETE, 1, encode_v1(1), 0, 3, None)]
    return write(tmp_path / "t", {
        "delta_0000001_0000001_0000/bucket_00000": acid(events(1, 3, bucket=0),
                                                        hive_version=version),
        "delta_0000001_0000001_0000/bucket_00001": acid(events(1, 2, bucket=1),
                                                        hive_version=version),
        "delta_0000002_0000002_0000/bucket_00000": acid(events(2, 1), hive_version=version),
        "delta_0000002_0000002_0001/bucket_00000": acid(events(2, 1, stmt=1),
                                                        hive_version=version),
        "delete_delta_0000003_0000003_0000/bucket_00000": acid(dels[:1], hive_version=version),
        "delete_delta_0000003_0000003_0000/bucket_00001": acid(dels[1:], hive_version=version),
        "delta_0000004_0000004_0000/bucket_00000": acid(events(4, 2), hive_version=version),
        "delta_0000005_0000005_0000/bucket_00000": acid(events(5, 1), hive_version=version),
    })


def rows(path: Path, version: str, snapshot: str = ALL) -> list:
    result = run("read", path, "--hive-version", version, "--write-ids", snapshot,
                 "--with-row-id")
    assert result.code == 0, result.err
    return sorted(result.out.splitlines())


SNAP = "t:20:9223372036854775807::4"


@pytest.mark.parametrize("kind,made", [("--major", ["base_0000005"]),
                                       ("--minor", ["delete_delta_0000001_0000005",
                                                    "delta_0000001_0000005"])])
@pytest.mark.parametrize("version", ["3", "4"])
def test_compaction_keeps_every_row_and_row_id(tmp_path, kind, made, version):
    t = table(tmp_path, version)
    before = {s: rows(t, version, s) for s in (SNAP, "t:20:6:6:4", "t:30:9223372036854775807::4")}
    plan = run("compact", t, kind, "--hive-version", version, "--write-ids", SNAP)
    assert plan.code == 1 and "run again with --apply" in plan.out, plan.err
    assert sorted(os.listdir(t)) == sorted(os.listdir(t))  # nothing written by a plan
    assert not any(n.startswith(tuple(made)) for n in os.listdir(t))
    done = run("compact", t, kind, "--hive-version", version, "--write-ids", SNAP, "--apply",
               "--format", "json", "--journal", tmp_path / "j.jsonl")
    assert done.code == 0, done.err
    doc = done.json()
    assert doc["applied"] and doc["summary"]["due"] == 1
    assert sorted(doc["partitions"][0]["written"]) == made
    for name in made:
        assert (t / name).is_dir()
        assert ((t / name / "_metadata_acid").exists()) == name.startswith("base_")
        assert (t / name / "_orc_acid_version").read_bytes() == b"2"
    assert not [n for n in os.listdir(t) if n.startswith(("_acidtool_staging_", ".acidtool"))]
    for s, expected in before.items():
        assert rows(t, version, s) == expected, s
    ls = run("ls", t, "--hive-version", version, "--write-ids", SNAP, "--format", "json").json()
    part = ls["partitions"][0]
    if kind == "--major":
        assert part["base"] == "base_0000005" and part["deltas"] == []
    else:
        assert part["deltas"] == made
    # undo removes exactly what was written
    undo = run("undo", tmp_path / "j.jsonl")
    assert undo.code == 0, undo.err
    assert not any((t / name).exists() for name in made)
    for s, expected in before.items():
        assert rows(t, version, s) == expected


def test_nothing_to_do_and_the_initiators_choice(tmp_path):
    t = write(tmp_path / "t", {"delta_0000001_0000001_0000/bucket_00000": acid(events(1))})
    result = run("compact", t, "--major", "--format", "json")
    assert result.code == 0
    assert result.json()["partitions"][0]["compaction"] is None
    assert "nothing to merge" in result.json()["partitions"][0]["reason"]
    t2 = table(tmp_path)
    choice = run("compact", t2, "--hive-version", "3", "--format", "json").json()
    # no base and 6 current deltas: not more than hive.compactor.delta.num.threshold (10)
    assert choice["partitions"][0]["compaction"] is None
    assert choice["partitions"][0]["reason"] == \
        "the Initiator's choice: 6 deltas, not more than hive.compactor.delta.num.threshold=10"
    t1 = write(tmp_path / "one", {"delta_0000001_0000001_0000/bucket_00000": acid(events(1))})
    one = run("compact", t1, "--format", "json").json()["partitions"][0]
    assert one["reason"].startswith("the Initiator's choice: 1 delta, not more than"), \
        one["reason"]


def test_the_plan_says_which_snapshot_it_compacts_at(tmp_path):
    """A snapshot given is printed as Hive writes it; none given, the plan says what counts as
    committed rather than the default's string (`null:9223372036854775807:...`)."""
    t = table(tmp_path)
    given = run("compact", t, "--major", "--write-ids", "db.t:5:9223372036854775807::")
    assert given.out.splitlines()[0].startswith(
        f"compact {t} (Hive 4, compactor snapshot db.t:5:9223372036854775807::)"), given.out
    default = run("compact", t, "--major").out.splitlines()[0]
    assert default.startswith(f"compact {t} (Hive 4, no snapshot given: every write id found "
                              "counts as committed): 1 of 1 partitions to compact"), default
    assert "null" not in default


def test_open_write_id_stops_the_compaction(tmp_path):
    t = table(tmp_path)
    doc = run("compact", t, "--major", "--hive-version", "3", "--write-ids", "t:20:4:4:",
              "--format", "json").json()
    p = doc["partitions"][0]
    assert p["writes"] == ["base_0000003"] and p["stops_below_open_write_id"] == 4
    assert "delta_0000005_0000005_0000" not in p["reads"]


def test_every_row_deleted_still_leaves_a_base_hive4_sees(tmp_path):
    t = write(tmp_path / "t", {
        "delta_0000001_0000001_0000/bucket_00000": acid(events(1, 2)),
        "delete_delta_0000002_0000002_0000/bucket_00000": acid(
            [Event(DELETE, 1, encode_v1(0), i, 2, None) for i in range(2)])})
    assert run("compact", t, "--major", "--apply").code == 0
    assert (t / "base_0000002" / "bucket_00000").exists()
    ls = run("ls", t, "--format", "json").json()["partitions"][0]
    assert ls["base"] == "base_0000002" and rows(t, "4") == []


def test_legacy_hive2_table(tmp_path):
    """Hive 2.3's legacy layout: updates and deletes as events in deltas; positional names."""
    upd = "struct<_col1:int,_col2:string>"
    t = write(tmp_path / "t", {
        "delta_0000001_0000001_0000/bucket_00000": acid(
            [Event(0, 1, 0, i, 1, (i, f"r{i}")) for i in range(4)],
            row_type="struct<_col0:int,_col1:string>", hive_version="2"),
        "delta_0000002_0000002_0000/bucket_00000": acid(
            [Event(1, 1, 0, 1, 2, (1, "upd")), Event(2, 1, 0, 3, 2, None)], row_type=upd,
            hive_version="2")})
    snap = "10:9223372036854775807:"
    before = run("read", t, "--hive-version", "2", "--txns", snap, "--with-row-id").out
    import shutil

    for kind, made in (("--minor", "delta_0000001_0000002"), ("--major", "base_0000002")):
        shutil.rmtree(tmp_path / "c", ignore_errors=True)
        t = Path(shutil.copytree(tmp_path / "t", tmp_path / "c"))
        result = run("compact", t, kind, "--hive-version", "2", "--txns", snap, "--apply")
        assert result.code == 0, result.err
        assert (t / made).is_dir() and not (t / made / "_orc_acid_version").exists()
        after = run("read", t, "--hive-version", "2", "--txns", snap, "--with-row-id")
        assert after.code == 0 and sorted(after.out.splitlines()) == \
            sorted(before.splitlines())
    dump = [json.loads(x) for x in run("dump", t / "base_0000002" / "bucket_00000").out
            .splitlines()]
    assert [(r["operation"], r["rowId"], r["currentTransaction"]) for r in dump] == \
        [(0, 0, 1), (1, 1, 2), (0, 2, 1)]  # an UPDATE stays an UPDATE, as 2.3 writes it


def insert_only_table(t: Path) -> Path:
    """Three insert-only deltas of plain ORC files."""
    import pyarrow as pa
    import pyarrow.orc as po

    for w in (1, 2, 3):
        d = t / f"delta_{w:07d}_{w:07d}_0000"
        d.mkdir(parents=True)
        po.write_table(pa.table({"id": [w, w * 10]}), str(d / "000000_0"))
    return t


def test_insert_only_table(tmp_path):
    t = insert_only_table(tmp_path / "t")
    before = sorted(run("read", t, "--insert-only").out.splitlines())
    result = run("compact", t, "--major", "--insert-only", "--apply")
    assert result.code == 0, result.err
    assert sorted(os.listdir(t / "base_0000003")) == ["000000_0", "_acidtool_run", "_metadata_acid"]
    assert sorted(run("read", t, "--insert-only").out.splitlines()) == before


@pytest.mark.parametrize("kind", ["--major", "--minor", "insert-only", "legacy"])
def test_compaction_keeps_a_column_added_after_the_first_files(tmp_path, kind):
    """ALTER TABLE ... ADD COLUMNS, then an INSERT: the older files come first and lack the
    column. The compacted files hold it (the older rows null there, as Hive's compactor
    writes them); before, they took the first file's columns and the new values were lost."""
    import pyarrow as pa
    import pyarrow.orc as po

    from .helpers.layouts import build, delta

    t = tmp_path / "t"
    wide = "struct<id:int,name:string,score:double>"
    if kind == "insert-only":
        for w, columns in ((1, {"id": [1, 2]}), (2, {"id": [3], "score": [2.5]})):
            d = t / f"delta_{w:07d}_{w:07d}_0000"
            d.mkdir(parents=True)
            po.write_table(pa.table(columns), str(d / "000000_0"))
    else:
        build(t, {**delta("delta_0000001_0000001_0000", acid(events(1, n=2))),
                  **delta("delta_0000002_0000002_0000", acid(
                      [Event(0, 2, 536870912, 0, 2, (9, "x", 2.5))], row_type=wide))})
    flags = {"insert-only": ["--insert-only"], "legacy": ["--hive-version", "2"]}.get(kind, [])
    before = sorted(run("read", t, *flags, "--format", "csv").out.splitlines())
    assert before[-1].count(",") == (1 if kind == "insert-only" else 2), before
    result = run("compact", t, kind if kind.startswith("--") else "--major", *flags, "--apply")
    assert result.code == 0, result.err
    made = [d for d in os.listdir(t) if d.startswith(("base_", "delta_0000001_0000002"))]
    assert made, os.listdir(t)
    for d in made:
        for f in os.listdir(t / d):
            if not f.startswith(("_", ".")):
                schema = po.ORCFile(str(t / d / f)).schema
                row = schema if kind == "insert-only" else schema.field("row").type
                assert len(row) == (2 if kind == "insert-only" else 3), (d, f, row)
    assert sorted(run("read", t, *flags, "--format", "csv").out.splitlines()) == before


FAULTS = 12


@pytest.mark.parametrize("kill_at", range(1, FAULTS + 1))
def test_killed_at_every_fault_point_leaves_the_table_readable(tmp_path, kill_at):
    """SIGKILL at each fault point of a minor compaction (two directories): the rows are as
    before, and the next compaction (or undo) finishes or rolls back cleanly."""
    t = table(tmp_path)
    before = rows(t, "3", SNAP)
    state = tmp_path / "state"
    proc = acidtool_process("compact", t, "--minor", "--hive-version", "3", "--write-ids",
                            SNAP, "--apply", "--journal", tmp_path / "j.jsonl", state=state,
                            kill_at=kill_at)
    killed = proc.returncode != 0
    names = set(os.listdir(t))
    both = {"delta_0000001_0000005", "delete_delta_0000001_0000005"}
    if killed and both & names and not both <= names:
        # killed between the two renames: readers are told, never handed a wrong table
        # (rolled back below)
        read = run("read", t, "--hive-version", "3", "--write-ids", SNAP)
        assert read.code == 1 and "half of a compaction" in read.err and not read.out, read.err
        assert run("ls", t, "--hive-version", "3", "--write-ids", SNAP).code == 1
        found = run("validate", t, "--hive-version", "3", "--write-ids", SNAP,
                    "--format", "json")
        assert found.code == 1
        codes = {(f["code"], f["path"].rsplit("/", 1)[-1]) for f in found.json()["findings"]}
        assert ("ACID029", (both & names).pop()) in codes
        assert not [c for c in codes if c[0] == "ACID021" and "_0000001_0000001" in c[1]]
        assert run("compact", t, "--major", "--hive-version", "3", "--write-ids",
                   SNAP).code == 1  # a plan over the half: refused, not compacted wrong
    else:
        assert rows(t, "3", SNAP) == before
    again = run("compact", t, "--minor", "--hive-version", "3", "--write-ids", SNAP, "--apply",
                "--format", "json")
    assert again.code == 0, again.err
    assert both <= set(os.listdir(t))
    assert not [n for n in os.listdir(t) if n.startswith("_acidtool_staging_")]
    assert rows(t, "3", SNAP) == before
    if (tmp_path / "j.jsonl").exists():
        undo = run("undo", tmp_path / "j.jsonl")
        assert undo.code == 0, undo.err
        assert rows(t, "3", SNAP) == before


def _racing(t: Path, state: Path, n: int = 2) -> list:
    """``n`` compactions of ``t`` started at once, each a process of its own."""
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-m", "acidtool", "compact", str(t), "--minor",
                               "--hive-version", "3", "--write-ids", SNAP, "--apply"],
                              env={**os.environ, "ACIDTOOL_STATE_DIR": str(state)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(n)]
    return [(p.wait(timeout=120), p.stderr.read()) for p in procs]


def _compacted_once(t: Path, before: list) -> None:
    names = os.listdir(t)
    assert sorted(n for n in names if n.endswith("_0000001_0000005")) == [
        "delete_delta_0000001_0000005", "delta_0000001_0000005"], names
    assert not [n for n in names if n.startswith("_acidtool_staging_")]
    assert not (t / ".acidtool-lock").exists()
    assert rows(t, "3", SNAP) == before


def test_two_compactions_at_once_compact_once(tmp_path):
    """Two processes: one holds the table's lock and compacts; the other is refused (exit 2,
    one line) or, coming after, finds nothing to do. Never two outputs, never a row lost."""
    for attempt in range(3):
        t = table(tmp_path / f"r{attempt}")
        before = rows(t, "3", SNAP)
        done = _racing(t, tmp_path / f"state{attempt}")
        assert sorted(code for code, _ in done) in ([0, 0], [0, 2]), done
        assert all(len(err.strip().splitlines()) == 1 for code, err in done if code == 2)
        _compacted_once(t, before)


@pytest.mark.parametrize("kill_at", [3, 7])
def test_two_compactions_racing_for_a_dead_ones_lock_roll_it_back_once(tmp_path, kill_at):
    """A compaction killed holding the lock, then two at once: the dead one's work is rolled
    back once, the table compacted once, the rows as before."""
    t = table(tmp_path)
    before = rows(t, "3", SNAP)
    state = tmp_path / "state"
    killed = acidtool_process("compact", t, "--minor", "--hive-version", "3", "--write-ids",
                              SNAP, "--apply", "--journal", tmp_path / "dead.jsonl",
                              state=state, kill_at=kill_at)
    assert killed.returncode != 0 and (t / ".acidtool-lock").exists()
    done = _racing(t, state)
    assert 0 in [code for code, _ in done] and all(code in (0, 2) for code, _ in done), done
    _compacted_once(t, before)
    ends = [json.loads(x) for x in (tmp_path / "dead.jsonl").read_text().splitlines()
            if json.loads(x)["record"] == "end"]
    assert len(ends) == 1 and ends[0]["result"] == "rolled back by the next compaction"


def test_refuses_a_master_without_spark_and_both_kinds(tmp_path):
    t = table(tmp_path)
    assert run("compact", t, "--major", "--minor").code == 2
    result = run("compact", t, "--master", "local[2]")
    assert result.code == 2 and "--master goes with --spark" in result.err


def _files(root: Path) -> dict:
    """Every file of the directories a compaction wrote, with its bytes' hash (a run
    marker, which names the run, by its name only)."""
    import hashlib

    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            if p.name != "_acidtool_run" else "run" for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.mark.spark
@pytest.mark.parametrize("version,kind", [("3", "--major"), ("3", "--minor"), ("4", "--major"),
                                          ("4", "--minor")])
def test_spark_writes_the_same_bytes_as_in_process(spark, tmp_path, version, kind):
    """One task per (partition, bucket) on local[2]: the same files, byte for byte, as the
    in-process compaction of a copy; then read, undo and the staging directory as in process."""
    import shutil

    here = table(tmp_path, version)
    there = Path(shutil.copytree(here, tmp_path / "s"))
    before = rows(here, version, SNAP)
    a = run("compact", here, kind, "--hive-version", version, "--write-ids", SNAP, "--apply")
    b = run("compact", there, kind, "--hive-version", version, "--write-ids", SNAP, "--apply",
            "--spark", "--master", "local[2]", "--journal", tmp_path / "s.jsonl")
    assert a.code == 0 and b.code == 0, (a.err, b.err)
    assert _files(here) == _files(there)
    assert rows(there, version, SNAP) == before
    assert not [n for n in os.listdir(there) if n.startswith("_acidtool_staging_")]
    assert run("undo", tmp_path / "s.jsonl").code == 0
    assert _files(there) == _files(table(tmp_path / "fresh", version))


@pytest.mark.spark
def test_spark_compacts_legacy_and_insert_only_tables(spark, tmp_path):
    t = insert_only_table(tmp_path / "mm")
    before = sorted(run("read", t, "--insert-only").out.splitlines())
    result = run("compact", t, "--major", "--insert-only", "--apply", "--spark", "--master",
                 "local[2]")
    assert result.code == 0, result.err
    assert sorted(run("read", t, "--insert-only").out.splitlines()) == before
    legacy = write(tmp_path / "legacy", {
        f"delta_{w:07d}_{w:07d}/bucket_0000{b}": acid(events(w, 2, bucket=b, v0=True),
                                                      hive_version="2")
        for w in (1, 2) for b in (0, 1)})
    before = run("read", legacy, "--hive-version", "2", "--with-row-id").out
    result = run("compact", legacy, "--major", "--hive-version", "2", "--apply", "--spark",
                 "--master", "local[2]")
    assert result.code == 0, result.err
    assert sorted(os.listdir(legacy / "base_0000002")) == ["_acidtool_run", "bucket_00000",
                                                            "bucket_00001"]
    after = run("read", legacy, "--hive-version", "2", "--with-row-id").out
    assert sorted(after.splitlines()) == sorted(before.splitlines())


def codecs_of(directory: Path) -> set[str]:
    import pyarrow.orc as po

    return {po.ORCFile(str(f)).compression for f in directory.iterdir()
            if not f.name.startswith(("_", "."))}


def coded_table(tmp_path: Path, codecs: list[str], version: str = "3") -> Path:
    """Deltas of write ids 1..N, the i-th written with codecs[i], a delete in the last."""
    layout = {f"delta_{w:07d}_{w:07d}_0000/bucket_00000":
              acid(events(w, 3), hive_version=version, compression=c)
              for w, c in enumerate(codecs, 1)}
    n = len(codecs) + 1
    layout[f"delete_delta_{n:07d}_{n:07d}_0000/bucket_00000"] = acid(
        [Event(DELETE, 1, encode_v1(0), 1, n, None)], hive_version=version,
        compression=codecs[-1])
    return write(tmp_path / "t", layout)


@pytest.mark.parametrize("codecs,given,version,kind,expect,source", [
    (["snappy", "snappy", "zlib"], None, "3", "--minor", "SNAPPY", "the files read"),
    (["snappy", "snappy", "zlib"], None, "3", "--major", "SNAPPY", "the files read"),
    (["none", "none"], None, "3", "--minor", "UNCOMPRESSED", "the files read"),
    (["zlib", "zlib"], "lz4", "3", "--minor", "LZ4", "--codec"),
    (["zstd", "zstd"], None, "3", "--major", "ZLIB", "Hive's default"),  # 3.1 reads no ZSTD
    (["zstd", "zstd"], None, "4", "--major", "ZSTD", "the files read"),
    (["zlib", "snappy"], "zstd", "4", "--minor", "ZSTD", "--codec"),
])
def test_a_compaction_writes_the_tables_codec(tmp_path, codecs, given, version, kind, expect,
                                              source):
    """As Hive's compactor: the table's codec (here the files'), not a fixed one; a Hive 3
    minor compaction used to write uncompressed files."""
    t = coded_table(tmp_path, codecs, version)
    before = rows(t, version)
    args = ["compact", t, kind, "--hive-version", version, "--apply", "--format", "json"]
    result = run(*args, *(["--codec", given] if given else []))
    assert result.code == 0, result.err
    (part,) = json.loads(result.out)["partitions"]
    assert part["codec"] == expect.lower().replace("uncompressed", "none")
    assert part["codec_from"] == source
    for name in part["writes"]:
        assert codecs_of(t / name) == {expect}, name
    assert rows(t, version) == before


def test_zstd_is_refused_for_a_hive_that_cannot_read_it(tmp_path):
    t = coded_table(tmp_path, ["zlib", "zlib"], "3")
    before = sorted(os.listdir(t))
    for version in ("2", "3"):
        result = run("compact", t, "--major", "--hive-version", version, "--codec", "zstd",
                     "--apply")
        assert result.code == 2 and "reads no ZSTD" in result.err, result.err
    assert sorted(os.listdir(t)) == before


@pytest.mark.parametrize("prop,files,version,expect", [
    ("SNAPPY", ["ZLIB"], "4", ("snappy", "the table's orc.compress")),
    ("NONE", ["ZLIB"], "3", ("none", "the table's orc.compress")),
    ("ZSTD", ["SNAPPY"], "3", ("snappy", "the files read")),
    ("LZO", [], "4", ("zlib", "Hive's default")),  # pyarrow writes no LZO
    (None, ["ZLIB", "SNAPPY", "SNAPPY"], "4", ("snappy", "the files read")),
    (None, [], "2", ("zlib", "Hive's default")),
])
def test_the_codec_chosen_from_the_table_property_then_the_files(prop, files, version, expect):
    from acidtool.core.compact import compaction_codec
    from acidtool.core.versions import HiveVersion

    assert compaction_codec(None, prop, files, HiveVersion.of(version)) == expect
    assert compaction_codec("lz4", prop, files, HiveVersion.of(version)) == ("lz4", "--codec")


def test_the_summary_counts_one_event_and_one_file_in_the_singular(tmp_path):
    gone = [Event(DELETE, 1, encode_v1(0), 0, 3, None)]
    t = write(tmp_path / "t", {
        "delta_0000001_0000001_0000/bucket_00000": acid(events(1, 1)),
        "delta_0000002_0000002_0000/bucket_00000": acid(events(2, 1)),
        "delete_delta_0000003_0000003_0000/bucket_00000": acid(gone)})
    result = run("compact", t, "--minor", "--apply", "--journal", tmp_path / "j.jsonl")
    assert result.code == 0, result.err
    assert "wrote delete_delta_0000001_0000003: 1 event in 1 data file," in result.out
    assert "wrote delta_0000001_0000003: 2 events in 1 data file," in result.out
    assert "  3 directories and files read are obsolete now" in result.out
