"""Fault injection for convert: a real `acidtool convert` process killed (SIGKILL), terminated
(SIGTERM) or interrupted (SIGINT) at seeded random moments of its run, with and without
--move-sources. Whatever the moment:

* the table holds either nothing new or exactly the new delta, whole;
* every source file is in exactly one place (where it was, or in the --move-sources folder);
* running the same convert again afterwards never duplicates a row: the table ends with every
  source row exactly once.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as paorc
import pytest

from .helpers.layouts import acid, build, delta, events
from .helpers.runner import run

SOURCES = 3
ROWS = 60_000  # per source: a run long enough to be caught in every phase
FIRST = 1000  # the sources' first id
SCHEMA = "struct<id:int,name:string>"  # the table's, as layouts.events writes it


def _sources(root: Path) -> list[Path]:
    root.mkdir(parents=True)
    paths = []
    for i in range(SOURCES):
        ids = pa.array(range(FIRST + i * ROWS, FIRST + (i + 1) * ROWS), pa.int32())
        p = root / f"part-{i:05d}.orc"
        paorc.write_table(pa.table({"id": ids, "name": pa.array([f"n{j}" for j in
                                                                 range(ROWS)])}), str(p))
        paths.append(p)
    return paths


def _start(sources: list[Path], table: Path, done: Path | None) -> subprocess.Popen:
    args = [sys.executable, "-m", "acidtool", "convert", *map(str, sources), "--table",
            str(table), "--write-id", "auto", "--max-file-rows", "50000",
            "--schema", SCHEMA]
    if done is not None:
        args += ["--move-sources", str(done)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _ids(table: Path) -> list[int]:
    result = run("read", table, "--columns", "id")
    assert result.code == 0, result.err
    return sorted(json.loads(line)["id"] for line in result.out.splitlines())


def _full_run_seconds(tmp_path: Path) -> float:
    sources = _sources(tmp_path / "timing" / "land")
    table = build(tmp_path / "timing" / "t", {})
    started = time.monotonic()
    proc = _start(sources, table, None)
    proc.wait(timeout=120)
    assert proc.returncode == 0, proc.stderr.read()
    return time.monotonic() - started


@pytest.fixture(scope="module")
def duration(tmp_path_factory) -> float:
    return _full_run_seconds(tmp_path_factory.mktemp("convert-timing"))


OLD = [0, 1]  # the rows the table holds before: write id 1's


def _table(root: Path) -> Path:
    table = build(root, delta("delta_0000001_0000001_0000", acid(events(1))))
    return table


CASES = [(sig, move, seed) for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)
         for move in (False, True) for seed in range(3)]


@pytest.mark.parametrize("sig,move,seed", CASES,
                         ids=[f"{signal.Signals(s).name}-{'move' if m else 'keep'}-{n}"
                              for s, m, n in CASES])
def test_convert_killed_at_any_moment_loses_and_duplicates_nothing(tmp_path, duration, sig,
                                                                   move, seed):
    rng = random.Random(seed * 31 + sig + move)
    sources = _sources(tmp_path / "land")
    table = _table(tmp_path / "t")
    before = _ids(table)
    done = tmp_path / "done" if move else None
    proc = _start(sources, table, done)
    # the process's import takes a good part of the run: aim anywhere from start to end
    time.sleep(rng.uniform(0.05, duration * 1.1))
    if proc.poll() is None:
        proc.send_signal(sig)
    proc.wait(timeout=120)
    err = proc.stderr.read().decode()
    assert "internal error" not in err and "Traceback" not in err, err

    deltas = sorted(p.name for p in table.iterdir() if p.name.startswith("delta_"))
    assert deltas in (["delta_0000001_0000001_0000"],
                      ["delta_0000001_0000001_0000", "delta_0000002_0000002_0000"]), deltas
    committed = len(deltas) == 2
    new = list(range(FIRST, FIRST + SOURCES * ROWS))
    assert _ids(table) == sorted(before + (new if committed else [])), err
    if proc.returncode not in (0, -signal.SIGKILL):
        assert ("is committed" in err) == committed or proc.returncode in (130, 143), err
    if sig != signal.SIGKILL:  # only a killed process can leave its staging directory
        assert not [p for p in table.iterdir() if p.name.startswith("_acidtool_staging_")]

    # every source file in exactly one place
    where = []
    for s in sources:
        moved = done / s.name if done else None
        places = [p for p in (s, moved) if p is not None and p.exists()]
        assert len(places) == 1, (s, places)
        where.append(places[0])
    if not committed:
        assert where == sources  # nothing moves before the commit

    # the same convert again, on the sources wherever they are now: never a duplicate
    result = run("convert", *where, "--table", table, "--write-id", "auto",
                 "--max-file-rows", "50000", "--schema", SCHEMA)
    if committed:
        assert result.code == 2 and "was converted already" in result.err, result.err
    else:
        assert result.code == 0, result.err
    assert _ids(table) == sorted(before + new)
    assert run("validate", table, "--select", "ACID0", "--ignore", "ACID003").code == 0


def test_a_leftover_staging_directory_changes_nothing_but_a_finding(tmp_path):
    """What SIGKILL can leave: the staging directory of a convert that never committed."""
    table = _table(tmp_path / "t")
    staged = "_acidtool_staging_0123456789ab/delta_0000002_0000002_0000"
    build(table, delta(staged, acid(events(2, n=5))))
    listing = run("ls", table, "--format", "json").json()
    clean = run("ls", _table(tmp_path / "clean"), "--format", "json").json()
    assert listing["partitions"][0]["summary"]["files"] == \
        clean["partitions"][0]["summary"]["files"]
    assert _ids(table) == OLD
    src = _sources(tmp_path / "land")[:1]
    result = run("convert", *src, "--table", table, "--write-id", "auto", "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["write_id"] == 2  # the uncommitted id 2 is not skipped
    found = run("validate", table, "--format", "json").json()["findings"]
    (leftover,) = [f for f in found if f["code"] == "ACID003"]
    assert leftover["path"].endswith("_acidtool_staging_0123456789ab")
    assert "interrupted acidtool writer" in leftover["message"]


def test_sigterm_before_the_commit_says_nothing_was_committed(tmp_path, duration):
    table = _table(tmp_path / "t")
    proc = _start(_sources(tmp_path / "land"), table, None)
    time.sleep(duration * 0.6)
    if proc.poll() is not None:
        pytest.skip("the run ended before the signal: nothing to judge")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    err = proc.stderr.read().decode()
    # -SIGTERM: the signal came while acidtool's handler was not (yet, or any more) installed:
    # during the interpreter's start-up (nothing done) or after main returned (all done).
    # Either way the table must be whole: the delta complete, or nothing of it.
    if (table / "delta_0000002_0000002_0000").exists():
        assert proc.returncode in (0, 143, -signal.SIGTERM), err
        assert proc.returncode != 143 or "is committed" in err, err
        # complete: every bucket file of the run (each source fills ceil(ROWS / 50,000))
        buckets = SOURCES * -(-ROWS // 50_000)
        assert sorted(n for n in os.listdir(table / "delta_0000002_0000002_0000")
                      if n.startswith("bucket_")) == [f"bucket_{i:05d}" for i in range(buckets)]
    else:
        assert proc.returncode in (143, -signal.SIGTERM), err
        assert proc.returncode != 143 or "nothing was committed" in err or \
            err.strip() == "acidtool: interrupted", err
    assert not [n for n in os.listdir(table) if n.startswith("_acidtool_staging_")]


def test_move_sources_into_the_table_is_refused_before_writing(tmp_path):
    table = _table(tmp_path / "t")
    src = _sources(tmp_path / "land")
    before = sorted(os.listdir(table))
    # into the table, below it, and below a directory given as the source (a later run of
    # the same command would walk into it)
    for given, dest in ((src, table), (src, table / "done"),
                        ([tmp_path / "land"], tmp_path / "land" / "done")):
        result = run("convert", *given, "--table", table, "--write-id", "auto",
                     "--move-sources", dest)
        assert result.code == 2, result.err
        assert "nothing was written" in result.err
        assert sorted(os.listdir(table)) == before
        assert all(s.exists() for s in src)


def test_two_sources_with_one_name_are_refused_before_writing(tmp_path):
    a = _sources(tmp_path / "a")[:1]
    b = tmp_path / "b" / a[0].name
    b.parent.mkdir()
    paorc.write_table(pa.table({"id": pa.array([7], pa.int32()), "name": ["x"]}), str(b))
    table = _table(tmp_path / "t")
    result = run("convert", a[0], b, "--table", table, "--write-id", "auto",
                 "--move-sources", tmp_path / "done")
    assert result.code == 2 and "would both move to" in result.err, result.err
    assert not (table / "delta_0000002_0000002_0000").exists()


@pytest.mark.parametrize("fail", [KeyboardInterrupt, OSError])
@pytest.mark.parametrize("at", range(SOURCES))
def test_a_failure_while_moving_says_the_delta_is_committed(tmp_path, monkeypatch, fail, at):
    """Each step after the commit, failing (an error, or Ctrl-C): the delta is committed and
    said to be, the manifest records exactly the moves made, a re-run converts nothing again."""
    import acidtool.commands.convert.sources as C

    src = _sources(tmp_path / "land")
    table = _table(tmp_path / "t")
    done = tmp_path / "done"
    real, calls = C._move, []

    def move(a, b):
        if len(calls) == at:
            raise fail("injected")
        calls.append(a)
        real(a, b)

    monkeypatch.setattr(C, "_move", move)
    result = run("convert", *src, "--table", table, "--write-id", "auto", "--move-sources",
                 done, "--schema", SCHEMA)
    assert result.code == (130 if fail is KeyboardInterrupt else 4), result.err
    assert "delta_0000002_0000002_0000 is committed" in result.err
    moved = [s for s in src if not s.exists()]
    assert moved == src[:at] and all((done / s.name).exists() for s in moved)
    if at:
        assert all(str(s) in result.err for s in moved), result.err
    else:
        assert "moved: none" in result.err, result.err
    lines = [json.loads(x) for x in
             (done / "acidtool-manifest-delta_0000002_0000002_0000.jsonl").read_text().splitlines()]
    assert len(lines) == 1 + at and "done" not in lines[-1]
    assert [m["from"] for m in lines[1:]] == [str(s) for s in moved]
    monkeypatch.setattr(C, "_move", real)
    again = run("convert", *[done / s.name if s in moved else s for s in src], "--table", table,
                "--write-id", "auto", "--schema", SCHEMA)
    assert again.code == 2 and "was converted already" in again.err
    assert _ids(table) == sorted(OLD + list(range(FIRST, FIRST + SOURCES * ROWS)))


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_an_interruption_right_after_the_commit_rename_rolls_it_back(tmp_path, monkeypatch,
                                                                    signal_number):
    """The commit is the journal's record that the rename is done: a signal between the
    rename and that record puts the delta back, and says nothing was committed."""
    import acidtool.io.journal as J
    from acidtool.core.errors import Terminated

    exc = KeyboardInterrupt if signal_number == signal.SIGINT else Terminated
    table = _table(tmp_path / "t")
    real = J.rename

    def rename(src, dst):
        real(src, dst)
        if dst.url.endswith("delta_0000002_0000002_0000"):
            raise exc()

    monkeypatch.setattr(J, "rename", rename)
    sources = _sources(tmp_path / "land")
    result = run("convert", *sources, "--table", table, "--write-id", "auto", "--schema", SCHEMA)
    assert result.code == 128 + signal_number, result.err
    assert "nothing was committed" in result.err, result.err
    assert not [p for p in table.iterdir() if p.name.startswith("_acidtool_staging_")]
    assert not (table / "delta_0000002_0000002_0000").exists()
    assert _ids(table) == sorted(OLD)
    monkeypatch.setattr(J, "rename", real)  # and the next convert commits its rows once
    assert run("convert", *sources, "--table", table, "--write-id", "auto", "--schema",
               SCHEMA).code == 0
    assert _ids(table) == sorted(OLD + list(range(FIRST, FIRST + SOURCES * ROWS)))


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_an_interruption_after_the_commit_says_what_is_committed(tmp_path, monkeypatch,
                                                                 signal_number):
    """A signal once the run has ended (its delta renamed in, its journal closed), while the
    result is being said: the line names the committed delta's table and the undo, not a bare
    'interrupted' a user would take for nothing written (seen with SIGINT at random moments)."""
    import acidtool.cli.results as R

    real = R.output_for

    def output_for(fmt):  # the signal, to this process, as its result is about to be said
        os.kill(os.getpid(), signal_number)
        time.sleep(5)  # (its handler raises here)
        raise AssertionError("no signal")

    monkeypatch.setattr(R, "output_for", output_for)
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))
    table = _table(tmp_path / "t")
    result = run("convert", *_sources(tmp_path / "land"), "--table", table, "--write-id", "auto",
                 "--schema", SCHEMA)
    assert result.code == 128 + signal_number, result.err
    (journal,) = (tmp_path / "state" / "journals").glob("convert-*.jsonl")
    assert result.err == (f"acidtool: interrupted after the commit: {table} is committed "
                          f"(journal {journal}; `acidtool undo {journal}` takes it back)\n")
    assert _ids(table) == sorted(OLD + list(range(FIRST, FIRST + SOURCES * ROWS)))
    monkeypatch.setattr(R, "output_for", real)
    assert run("undo", journal).code == 0 and _ids(table) == sorted(OLD)


def test_write_ids_are_java_longs(tmp_path):
    src = _sources(tmp_path / "land")[:1]
    table = _table(tmp_path / "t")
    result = run("convert", *src, "--table", table, "--write-id", str(2**63))
    assert result.code == 2 and "(a Java long)" in result.err, result.err
    top = build(tmp_path / "top", delta(f"base_{2**63 - 1}", acid(events(1))))
    result = run("convert", *src, "--table", top, "--write-id", "auto")
    assert result.code == 2 and "the largest a write id" in result.err, result.err


def test_a_convert_that_loses_the_race_for_its_write_id_says_so(tmp_path, monkeypatch):
    """Another writer commits the same write id between this convert's check and its rename:
    this one commits nothing, says who won, and leaves no staging directory."""
    import acidtool.io.journal as J

    table = _table(tmp_path / "t")
    real = J.rename

    def rename(src, dst):
        other = Path(dst.path)
        other.mkdir()
        (other / "bucket_00000").write_bytes(acid(events(2)))  # the other writer's delta
        real(src, dst)

    monkeypatch.setattr(J, "rename", rename)
    result = run("convert", *_sources(tmp_path / "land")[:1], "--table", table, "--write-id",
                 "auto", "--schema", SCHEMA)
    assert result.code == 1, result.err  # a failure while writing: nothing committed
    assert "another writer committed" in result.err and "nothing of this run" in result.err
    assert not [p for p in table.iterdir() if p.name.startswith("_acidtool_staging_")]
    assert _ids(table) == sorted(OLD + [0, 1])  # the other writer's rows, not this run's


@pytest.mark.parametrize("record,code", [("TERMINATED", 143), ("INTERRUPTED", 130)])
def test_a_signal_whose_exception_python_dropped_still_stops_the_commit(tmp_path, monkeypatch,
                                                                         record, code):
    """Python drops an exception raised in a weakref callback of the import machinery
    ("Exception ignored in: <function _get_module_lock.<locals>.cb>"): a SIGTERM or Ctrl-C
    arriving there was lost, convert went on to commit, and a traceback went to stderr. The
    handlers' record stops it before the rename, and no traceback is printed."""
    import acidtool.commands.convert.run as convert  # where write_files is called
    from acidtool.core import errors

    write_files = convert.write_files

    def signal_lost_while_writing(*args, **kwargs):
        getattr(errors, record).append(signal.SIGTERM)  # the handler ran; its exception vanished
        return write_files(*args, **kwargs)

    monkeypatch.setattr(convert, "write_files", signal_lost_while_writing)
    table = _table(tmp_path / "t")
    before = sorted(os.listdir(table))
    result = run("convert", *_sources(tmp_path / "land"), "--table", table, "--write-id", "auto")
    assert result.code == code, result.err
    assert "Traceback" not in result.err and result.err.count("\n") == 1, result.err
    assert sorted(os.listdir(table)) == before
