"""``repair --select ACID024``: the compaction Hive's Initiator would run, run by compact's
writer inside repair's plan, journal and undo; opt-in, and only at a snapshot the user gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .helpers.layouts import acid, events
from .helpers.runner import acidtool_process, run
from .test_compact import SNAP, rows, table, write
from .test_repair import tree


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))


def many(tmp_path: Path, version: str = "3") -> Path:
    """test_compact's table (two buckets, two statements, deletes, write id 4 aborted) and
    eight more one-row deltas: fifteen deltas, more than Hive's threshold of ten."""
    t = table(tmp_path, version)
    return write(t, {f"delta_{w:07d}_{w:07d}_0000/bucket_00000":
                     acid(events(w, 1), hive_version=version) for w in range(6, 14)})


def repair(t: Path, *args, select: str = "ACID024") -> dict:
    result = run("repair", t, "--select", select, *args, "--format", "json")
    assert result.code in (0, 1), result.err
    return result.json()


def due(t: Path, version: str, snapshot: str = SNAP) -> list:
    out = run("validate", t, "--select", "ACID024", "--hive-version", version, "--write-ids",
              snapshot, "--format", "json")
    return [f["path"] for f in out.json()["findings"] if f["code"] == "ACID024"]


@pytest.mark.parametrize("version", ["3", "4"])
def test_compacts_what_validate_finds_due_keeping_every_row(tmp_path, version):
    t = many(tmp_path, version)
    before, files = rows(t, version, SNAP), tree(t)
    assert due(t, version)
    plan = repair(t, "--hive-version", version, "--write-ids", SNAP)
    (action,) = plan["actions"]
    assert (action["kind"], action["target"], action["params"]["compaction"]) == \
        ("compact", ".", "major")  # no base: the Initiator's choice
    assert action["params"]["writes"] == ["base_0000013"]
    assert tree(t) == files  # the plan writes nothing

    done = repair(t, "--hive-version", version, "--write-ids", SNAP, "--apply")
    assert [a["result"] for a in done["actions"]] == ["done"] and done["left"] == []
    names = os.listdir(t)
    assert "base_0000013" in names
    assert "delta_0000001_0000001_0000" in names  # what was read stays, obsolete
    assert not [n for n in names if n.startswith("_acidtool_staging_")]
    assert rows(t, version, SNAP) == before
    assert due(t, version) == []

    assert run("undo", done["journal"]).code == 0
    assert tree(t) == files


def test_only_when_selected_and_only_at_a_given_snapshot(tmp_path):
    t = many(tmp_path)
    files = tree(t)
    unselected = run("repair", t, "--hive-version", "3", "--write-ids", SNAP, "--format", "json")
    assert "compact" not in {a["kind"] for a in unselected.json()["actions"]}
    # without a snapshot every write id found would count as committed, aborted 4 too
    plan = repair(t, "--hive-version", "3")
    assert plan["actions"] == []
    (item,) = plan["manual"]
    assert item["code"] == "ACID024" and "--write-ids" in item["reason"]
    applied = run("repair", t, "--select", "ACID024", "--hive-version", "3", "--apply")
    assert applied.code == 1, applied.err
    assert tree(t) == files


def test_stops_below_the_first_open_write_id(tmp_path):
    t = many(tmp_path)
    snapshot = "t:20:12:12:4"  # write id 12 open
    before = rows(t, "3", snapshot)
    plan = repair(t, "--hive-version", "3", "--write-ids", snapshot)
    (action,) = plan["actions"]
    assert "first open write id, 12" in action["reason"]
    done = repair(t, "--hive-version", "3", "--write-ids", snapshot, "--apply")
    assert [a["result"] for a in done["actions"]] == ["done"]
    assert [n for n in os.listdir(t) if n.startswith("base_")] == ["base_0000011"]
    assert rows(t, "3", snapshot) == before
    assert rows(t, "3", "t:20:9223372036854775807::4") == rows(t, "3", SNAP)


def test_runs_after_the_other_repairs_and_compacts_what_they_made(tmp_path):
    """An ACID file renamed by a copy script (ACID004) is renamed back first; the compaction,
    last in the plan, reads it."""
    t = many(tmp_path)
    write(t, {"delta_0000014_0000014_0000/bucket_00000.orc": acid(events(14, 2),
                                                                 hive_version="3"),
              "delta_0000014_0000014_0000/_orc_acid_version": b"2"})
    snapshot = "t:20:9223372036854775807::4"
    plan = repair(t, "--hive-version", "3", "--write-ids", snapshot,
                  select="ACID004,ACID024")
    assert [(a["id"], a["kind"]) for a in plan["actions"]] == [("a1", "rename"),
                                                                ("a2", "compact")]
    done = repair(t, "--hive-version", "3", "--write-ids", snapshot, "--apply",
                  select="ACID004,ACID024")
    assert [a["result"] for a in done["actions"]] == ["done", "done"]
    assert (t / "base_0000014" / "bucket_00000").exists()
    after = rows(t, "3", snapshot)
    assert sum('"writeid":14' in r.replace(" ", "") for r in after) == 2, after


def test_a_partition_is_compacted_alone(tmp_path):
    t = tmp_path / "p"
    t.mkdir()
    many(tmp_path / "a").rename(t / "ds=1")
    table(tmp_path / "b").rename(t / "ds=2")
    files = tree(t / "ds=2")
    done = repair(t, "--hive-version", "3", "--write-ids", SNAP, "--apply")
    assert [(a["target"], a["result"]) for a in done["actions"]] == [("ds=1", "done")]
    assert (t / "ds=1" / "base_0000013").is_dir()
    assert tree(t / "ds=2") == files


FAULTS = 10


@pytest.mark.parametrize("kill_at", range(1, FAULTS + 1))
def test_killed_anywhere_a_rerun_finishes_and_undo_restores(tmp_path, kill_at):
    t = many(tmp_path)
    before, files = rows(t, "3", SNAP), tree(t)
    state = tmp_path / "state"
    args = ("repair", t, "--select", "ACID024", "--hive-version", "3", "--write-ids", SNAP,
            "--apply", "--journal", tmp_path / "j.jsonl")
    killed = acidtool_process(*args, state=state, kill_at=kill_at)
    if killed.returncode == 0:
        pytest.skip(f"the apply has fewer than {kill_at} fault points")
    assert killed.returncode == -9, killed.stderr
    assert rows(t, "3", SNAP) == before
    again = acidtool_process(*args[:-2], "--format", "json", state=state)
    assert again.returncode == 0, again.stderr
    assert "base_0000013" in os.listdir(t)
    assert not [n for n in os.listdir(t) if n.startswith("_acidtool_staging_")]
    assert rows(t, "3", SNAP) == before
    assert acidtool_process("undo", tmp_path / "j.jsonl", state=state).returncode == 0
    assert tree(t) == files
