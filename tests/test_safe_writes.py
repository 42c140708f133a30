"""Every write safe (issue: one commit protocol for repair, undo and convert). Each test here is
a class of defect that hid, duplicated or deleted rows, or changed what it was not given, while
exiting 0; each failed on the code before the protocol."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers.layouts import MARK, ROW, acid, build, delta, events, plain
from .helpers.runner import acidtool_process as acidtool
from .helpers.runner import run
from .test_repair import BASE, age, n_rows, rows, tree

RAW = plain(ROW, [(10, "x"), (11, "y")])
OTHER = plain(ROW, [(20, "p"), (21, "q")])


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))



def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


# ------------------------------------------------------------------------------------------------
# 1. A re-wrap never takes a write id whose delta Hive would not read


@pytest.mark.parametrize("layout,options,words", [
    ({**BASE, **delta("base_0000002", acid(events(2, start=5))), "part-0000.orc": RAW},
     ["--write-id", "1"], "covered by base_0000002"),
    ({**BASE, **delta("delta_0000001_0000003", acid(events(1))), "part-0000.orc": RAW},
     ["--write-id", "2"], "covered by delta_0000001_0000003"),
    ({**BASE, "part-0000.orc": RAW}, ["--write-id", "6", "--write-ids", "d.t:5:9223372036854775807::"],
     "above the snapshot's high watermark"),
    ({**BASE, "part-0000.orc": RAW}, ["--write-id", "3", "--write-ids", "d.t:5:3:3:"],
     "open in the snapshot"),
    ({**BASE, "part-0000.orc": RAW}, ["--write-id", "4", "--write-ids",
                                      "d.t:5:9223372036854775807::4"], "aborted"),
    ({**BASE, "part-0000.orc": RAW}, ["--write-id", str(2**63)], "out of range"),
    ({**BASE, "part-0000.orc": RAW}, ["--write-id", "0"], "out of range"),
    ({**{f"ds=1/{k}": v for k, v in BASE.items()},
      **{f"ds=1/{k}": v for k, v in delta("base_0000004", acid(events(4))).items()},
      "ds=1/part-0000.orc": RAW}, ["--write-id", "3"], "covered by ds=1/base_0000004"),
])
def test_a_write_id_no_reader_would_see_is_refused_at_plan_time(tmp_path, layout, options,
                                                                  words):
    root = build(tmp_path / "t", layout)
    before = tree(root)
    for extra in ([], ["--apply"]):
        out = run("repair", root, *options, *extra)
        assert out.code == 2, (out.out, out.err)
        assert words in out.err and "nothing was planned" in out.err or "out of range" in out.err
        assert tree(root) == before


def test_a_raw_file_in_a_delta_covered_by_a_compacted_delta_is_left_to_a_person(tmp_path):
    root = build(tmp_path / "t", {**delta("delta_0000001_0000002", acid(events(1))),
                                  "delta_0000002_0000002_0000/data__x": RAW,
                                  "delta_0000002_0000002_0000/_orc_acid_version": MARK})
    doc = run("repair", root, "--format", "json").json()
    assert not [a for a in doc["actions"] if a["kind"] == "rewrap"]
    assert any("covered by delta_0000001_0000002" in m["reason"] for m in doc["manual"]), doc


# ------------------------------------------------------------------------------------------------
# 2. No source's rows committed twice


def test_two_identical_raw_files_are_re_wrapped_once(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW, "part-0001.orc": RAW})
    plan = run("repair", root, "--write-id", "2", "--format", "json").json()
    assert [(a["kind"], a["target"]) for a in plan["actions"]] == [("rewrap", "part-0000.orc")]
    assert any("the same bytes as part-0000.orc" in m["reason"] for m in plan["manual"])
    out = run("repair", root, "--write-id", "2", "--apply", "--format", "json")
    assert out.code == 1  # the copy is left
    doc = out.json()
    assert [a["kind"] for a in doc["actions"]] == ["rewrap"]
    # once its twin is in, the copy's rows are known to be in the table: the next run
    # quarantines it (never re-wraps it)
    assert [(a["kind"], a["target"]) for a in doc["left"]] == [("quarantine", "part-0001.orc")]
    assert (root / "part-0001.orc").exists()
    assert run("repair", root, "--write-id", "3", "--apply").code == 0
    assert not (root / "part-0001.orc").exists()
    assert sorted(rows(root)) == sorted(n_rows([0, 1]) + [(10, "x"), (11, "y")])


def test_a_re_wrapped_delta_carries_its_provenance_and_convert_refuses_the_same_bytes(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    land = tmp_path / "land"
    land.mkdir()
    (land / "copy.orc").write_bytes(RAW)
    assert run("repair", root, "--write-id", "2", "--apply").code == 0
    record = json.loads((root / "delta_0000002_0000002_0000" / "_acidtool_sources").read_text())
    assert record["write_id"] == 2 and record["sources"][0]["path"].endswith("part-0000.orc")
    out = run("convert", land / "copy.orc", "--table", root, "--write-id", "3")
    assert out.code == 2 and "was converted already" in out.err, out.err
    assert rows(root).count((10, "x")) == 1


def test_a_fresh_repair_after_an_interrupted_re_wrap_quarantines_instead_of_re_wrapping(tmp_path):
    """The re-wrapped delta is in place but its source is not yet quarantined, and the journal
    that would tell a resume so is gone: the provenance record says the rows are in already."""
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    doc = run("repair", root, "--write-id", "2", "--apply", "--format", "json").json()
    moved = next((root / ".acidtool-quarantine").glob("*/part-0000.orc"))
    shutil.move(moved, root / "part-0000.orc")  # as if killed before the quarantine rename
    os.unlink(doc["journal"])
    out = run("repair", root, "--write-id", "3", "--apply", "--format", "json")
    assert out.code == 0, out.out
    assert [a["kind"] for a in out.json()["actions"]] == ["quarantine"]
    assert "holds already" in out.json()["actions"][0]["reason"]
    assert sorted(rows(root)) == sorted(n_rows([0, 1]) + [(10, "x"), (11, "y")])


def test_two_converts_of_one_source_started_at_once_commit_it_once(tmp_path):
    land = tmp_path / "land"
    land.mkdir()
    (land / "a.orc").write_bytes(RAW)
    for attempt in range(3):
        root = build(tmp_path / f"t{attempt}", BASE)
        procs = [subprocess.Popen([sys.executable, "-m", "acidtool", "convert", land / "a.orc",
                                   "--table", root, "--write-id", str(w)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for w in (2, 3)]
        codes = [p.wait(timeout=120) for p in procs]
        assert sorted(codes)[0] == 0 and codes.count(0) == 1, \
            [(p.returncode, p.stderr.read()) for p in procs]
        assert rows(root).count((10, "x")) == 1


# ------------------------------------------------------------------------------------------------
# 3. Paths are not patterns


def test_a_file_named_like_a_glob_is_re_wrapped_alone(tmp_path):
    root = build(tmp_path / "t", {**BASE, "*.orc": RAW, "a.orc": OTHER})
    out = run("repair", root, "--write-id", "2", "--apply", "--format", "json")
    assert out.code == 0, out.out
    got = rows(root)
    for row in [(10, "x"), (11, "y"), (20, "p"), (21, "q")]:
        assert got.count(row) == 1, got


def test_a_table_whose_name_is_a_pattern_re_wraps_its_own_file(tmp_path):
    build(tmp_path / "t1", {**BASE, "part.orc": OTHER})
    root = build(tmp_path / "t[1]", {**BASE, "part.orc": RAW})
    out = run("repair", root, "--write-id", "2", "--apply")
    assert out.code == 0, out.err
    assert sorted(rows(root)) == sorted(n_rows([0, 1]) + [(10, "x"), (11, "y")])
    assert (tmp_path / "t1" / "part.orc").read_bytes() == OTHER


# ------------------------------------------------------------------------------------------------
# 4. A run's journal is one run's; resume acts only in its own table


def test_a_journal_that_exists_is_refused(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    journal = tmp_path / "j.jsonl"
    journal.write_text("")
    before = tree(root)
    out = run("repair", root, "--write-id", "2", "--apply", "--journal", journal)
    assert out.code == 2 and "exists already" in out.err
    assert tree(root) == before and not (root / ".acidtool-lock").exists()


def test_one_journal_for_two_tables_is_refused(tmp_path):
    a = build(tmp_path / "a", {**BASE, "part-0000.orc": RAW})
    b = build(tmp_path / "b", {**BASE, "part-0000.orc": RAW})
    journal = tmp_path / "j.jsonl"
    assert run("repair", a, "--write-id", "2", "--apply", "--journal", journal).code == 0
    before = tree(b)
    assert run("repair", b, "--write-id", "2", "--apply", "--journal", journal).code == 2
    assert tree(b) == before


# the fault point _killed_mid_rewrap found last (tried first: each try is a repair killed)
_MID_REWRAP: list[int] = []


def _killed_mid_rewrap(tmp_path: Path, name: str = "t") -> tuple[Path, Path]:
    """A table whose repair was killed after its re-wrapped delta was renamed in, before its
    source was quarantined; returns (table, state directory)."""
    state = tmp_path / f"state-{name}"
    for n in [*_MID_REWRAP, *range(1, 60)]:
        root = tmp_path / name
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)
        build(root, {**BASE, "part-0000.orc": RAW})
        killed = acidtool("repair", root, "--write-id", "2", "--apply", state=state, kill_at=n)
        assert killed.returncode == -9, killed.stderr
        if (root / "delta_0000002_0000002_0000").exists() and (root / "part-0000.orc").exists():
            _MID_REWRAP[:] = [n]
            return root, state
    raise AssertionError("no fault point between the commit rename and the quarantine")


def test_a_copied_table_with_its_stale_lock_does_not_roll_back_the_original(tmp_path):
    original, state = _killed_mid_rewrap(tmp_path)
    before = tree(original)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    out = acidtool("repair", copy, "--write-id", "2", "--apply", "--format", "json", state=state)
    assert tree(original) == before  # nothing of the table not named changed
    assert out.returncode == 0, out.stderr
    assert sorted(rows(copy)) == sorted(n_rows([0, 1]) + [(10, "x"), (11, "y")])


def test_an_interrupted_undo_is_finished_by_undo_not_by_apply(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    doc = run("repair", root, "--write-id", "2", "--apply", "--format", "json").json()
    with open(doc["journal"], "a") as f:  # an undo began, and was killed
        f.write(json.dumps({"record": "undo"}) + "\n")
    lock = {"pid": dead_pid(), "host": socket.gethostname(), "journal": doc["journal"],
            "command": "undo", "table": str(root),
            "table_id": f"{os.stat(root).st_dev}:{os.stat(root).st_ino}"}
    (root / ".acidtool-lock").write_text(json.dumps(lock))
    before = tree(root)
    out = run("repair", root, "--write-id", "2", "--apply")
    assert out.code == 2 and "interrupted undo" in out.err, out.err
    assert tree(root) == before  # the lock, naming the undo to finish, is left as it was
    assert run("undo", doc["journal"]).code == 0
    assert not (root / ".acidtool-lock").exists()


@pytest.mark.slow
def test_two_applies_racing_for_a_stale_lock_resume_it_once(tmp_path):
    for attempt in range(3):
        root, state = _killed_mid_rewrap(tmp_path, f"t{attempt}")
        procs = [subprocess.Popen([sys.executable, "-m", "acidtool", "repair", root,
                                   "--write-id", "2", "--apply"],
                                  env={**os.environ, "ACIDTOOL_STATE_DIR": str(state)},
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        for p in procs:
            p.wait(timeout=120)
        journal = next((state / "journals").glob("*.jsonl"))
        kinds = [json.loads(line)["record"] for line in journal.read_text().splitlines()]
        assert kinds.count("resume") <= 1, kinds
        assert sorted(rows(root)) == sorted(n_rows([0, 1]) + [(10, "x"), (11, "y")])
        assert not (root / ".acidtool-lock").exists()


# ------------------------------------------------------------------------------------------------
# 5. Undo moves back only bytes it wrote


def test_undo_stops_at_a_file_changed_after_the_repair_and_changes_nothing(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    doc = run("repair", root, "--write-id", "2", "--apply", "--format", "json").json()
    changed = root / "delta_0000002_0000002_0000" / "bucket_00000"
    changed.write_bytes(changed.read_bytes() + b"later")
    before = tree(root)
    out = run("undo", doc["journal"])
    assert out.code == 1 and "bucket_00000" in out.out and "changed after" in out.out, out.out
    assert tree(root) == before


def test_a_second_undo_says_it_reversed_nothing(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    doc = run("repair", root, "--write-id", "2", "--apply", "--format", "json").json()
    first = run("undo", doc["journal"], "--format", "json").json()
    second = run("undo", doc["journal"], "--format", "json").json()
    assert first["steps_reversed"] > 0 and second["steps_reversed"] == 0


# ------------------------------------------------------------------------------------------------
# 6. A second signal during a roll-back does not cut it in half


def test_a_second_signal_during_the_roll_back_waits_for_it(tmp_path, monkeypatch):
    import acidtool.io.journal as J

    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    before = tree(root)
    real_take, real_reverse = J.Rename.take, J.Rename.reverse
    state = {"renames": 0}

    def take(self):
        real_take(self)
        state["renames"] += 1
        if state["renames"] == 2:  # the re-wrap is committed; its source not yet moved
            os.kill(os.getpid(), signal.SIGINT)

    def reverse(self):
        os.kill(os.getpid(), signal.SIGTERM)  # a second signal in the middle of the roll-back
        return real_reverse(self)

    monkeypatch.setattr(J.Rename, "take", take)
    monkeypatch.setattr(J.Rename, "reverse", reverse)
    out = run("repair", root, "--write-id", "2", "--apply")
    assert out.code in (130, 143), out.err
    assert "rolled back" in out.err or "interrupted" in out.err
    monkeypatch.undo()
    assert {k: v for k, v in tree(root).items() if ".acidtool" not in k} == before
    assert not (root / ".acidtool-lock").exists()
    # the signals were that command's: a writer of this process called next (a library
    # caller's AcidTable.delete, say) is not stopped by them at its raise_if_terminated
    from acidtool.core.errors import raise_if_terminated

    raise_if_terminated()


# ------------------------------------------------------------------------------------------------
# 7. The surroundings


def test_a_quarantine_that_is_a_symbolic_link_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    os.symlink(elsewhere, root / ".acidtool-quarantine")
    out = run("repair", root, "--write-id", "2", "--apply")
    assert out.code == 2 and "symbolic link" in out.err, out.err
    assert (root / "part-0000.orc").exists() and not any(elsewhere.iterdir())


def test_a_journal_inside_the_table_is_refused(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    before = tree(root)
    out = run("repair", root, "--write-id", "2", "--apply", "--journal", root / "j.jsonl")
    assert out.code == 2 and "inside the table" in out.err
    assert tree(root) == before


def test_a_partition_and_its_table_share_one_lock(tmp_path):
    root = build(tmp_path / "t", {**{f"ds=0/{k}": v for k, v in BASE.items()},
                                  "ds=0/part-0000.orc": RAW})
    (root / ".acidtool-lock").write_text(json.dumps({"pid": os.getpid(), "host":
                                                     socket.gethostname(), "journal": "x",
                                                     "command": "repair --apply"}))
    out = run("repair", root / "ds=0", "--write-id", "2", "--apply")
    assert out.code == 2 and "is running on this table" in out.err, out.err
    assert (root / "ds=0" / "part-0000.orc").exists()


# ------------------------------------------------------------------------------------------------
# 8. Readers never find a file missing


@pytest.mark.parametrize("layout,expected", [
    (delta("delta_0000001_0000001_0000", acid(events(1, 3), with_key_index=False)),
     n_rows([0, 1, 2])),
    (delta("delta_0000001_0000001_0000", acid([events(1, 3)[i] for i in (2, 0, 1)])),
     n_rows([0, 1, 2])),
    ({**delta("delta_0000001_0000001_0000", marker=False),
      "delta_0000001_0000001_0000/_orc_acid_version": b"1"}, n_rows([0, 1])),
])
def test_a_reader_at_every_step_of_an_in_place_rewrite_reads_every_row(tmp_path, monkeypatch,
                                                                        layout, expected):
    import acidtool.io.journal as J

    root = build(tmp_path / "t", layout)
    seen = []
    real = J.fault_point

    def fault_point():
        seen.append(rows(root))
        real()

    import acidtool.io.fileops as F

    monkeypatch.setattr(J, "fault_point", fault_point)  # after a journal record
    monkeypatch.setattr(F, "fault_point", fault_point)  # after each filesystem operation
    out = run("repair", root, "--apply")
    assert out.code == 0, out.out
    assert seen and all(r == expected for r in seen), seen


# ------------------------------------------------------------------------------------------------
# 9. Failures of the journal, and journals that are not


def test_a_journal_that_cannot_be_written_says_what_was_done_and_how_to_undo(tmp_path,
                                                                             monkeypatch):
    import acidtool.io.journal as J

    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW,
                                  ".hive-staging_x/y": b"y"})
    age(root, ".hive-staging_x")
    real = J.Journal.record
    count = {"n": 0}

    def record(self, **fields):
        count["n"] += 1
        if fields.get("record") == "done" and count["n"] > 4:
            raise J.JournalWriteError(f"the journal {self.path} could not be written: "
                                      "No space left on device")
        return real(self, **fields)

    monkeypatch.setattr(J.Journal, "record", record)
    out = run("repair", root, "--write-id", "2", "--apply")
    assert out.code in (2, 4) and "No space left" in out.err and "acidtool undo" in out.err
    assert "actions were done" in out.err
    assert not (root / ".acidtool-lock").exists()
    monkeypatch.undo()
    journal = out.err.split("acidtool undo ")[1].split("`")[0]
    assert run("undo", journal).code == 0


def test_an_undo_that_cannot_write_its_journal_leaves_no_lock(tmp_path, monkeypatch):
    import acidtool.io.journal as J

    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    doc = run("repair", root, "--write-id", "2", "--apply", "--format", "json").json()

    def refuse(self, path):
        raise J.JournalWriteError(f"cannot write the journal {path}: Read-only file system")

    monkeypatch.setattr(J.Journal, "__init__", refuse)
    out = run("undo", doc["journal"])
    assert out.code == 2 and "Read-only" in out.err
    assert not (root / ".acidtool-lock").exists()


@pytest.mark.parametrize("content,words", [
    (b"", None),
    (b"\xff\xfe not utf-8\n{}\n", "not a journal record"),
    (b"[1, 2]\n{}\n", "not a journal record"),
    (b"just text\nmore\n", "not a journal record"),
    (b'{"record": "plan"}\n', "not an acidtool repair journal"),
])
def test_undo_of_what_is_not_a_journal_is_a_usage_error(tmp_path, content, words):
    journal = tmp_path / "j.jsonl"
    journal.write_bytes(content)
    out = run("undo", journal)
    if words is None:  # a run killed before its first record: nothing to undo
        assert out.code == 0, out.err
    else:
        assert out.code == 2 and words in out.err, (out.code, out.err)


def test_one_vanished_target_fails_its_own_quarantine_only(tmp_path, monkeypatch):
    import acidtool.commands.repair.apply as A

    layout = {**BASE, **{f".hive-staging_{i}/x": b"x" for i in range(5)}}
    root = build(tmp_path / "t", layout)
    age(root, *[f".hive-staging_{i}" for i in range(5)])
    real = A._steps_for

    def steps_for(action, plan, made):
        steps = real(action, plan, made)
        if action.target == ".hive-staging_0":
            shutil.rmtree(root / ".hive-staging_0")  # gone between the plan and the step
        return steps

    monkeypatch.setattr(A, "_steps_for", steps_for)
    out = run("repair", root, "--apply", "--format", "json")
    results = {a["target"]: a["result"] for a in out.json()["actions"]}
    assert results.pop(".hive-staging_0") == "failed"
    assert set(results.values()) == {"done"}, results


def test_a_repair_with_nothing_to_do_writes_no_journal_and_names_no_quarantine(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})  # no --write-id: manual only
    out = run("repair", root, "--apply")
    assert out.code == 1
    assert "quarantine:" not in out.out and "journal:" not in out.out
    assert not (tmp_path / "state").exists()
    doc = run("repair", root, "--apply", "--format", "json").json()
    assert doc["journal"] is None and doc["quarantine"] is None


# ------------------------------------------------------------------------------------------------
# Plan once: each footer read at most twice by an apply (the plan, and the re-check after)


def test_an_apply_reads_each_footer_at_most_twice(tmp_path, monkeypatch):
    import collections

    import acidtool.commands.repair.plan as R
    import acidtool.table.facts as F

    root = build(tmp_path / "t", {
        **BASE, "part-0000.orc": RAW,
        **delta("delta_0000002_0000002_0000", acid(events(2, 3), with_key_index=False)),
        **delta("delta_0000003_0000003_0000", acid([events(3, 3)[i] for i in (2, 0, 1)])),
        **delta("delta_0000004_0000004_0000", acid(events(4)), marker=False)})
    reads: collections.Counter = collections.Counter()

    def counted(real):
        def read(loc, rel, *args):
            reads[loc.url_of(rel)] += 1
            return real(loc, rel, *args)
        return read

    monkeypatch.setattr(F, "read_footer_and_bytes", counted(F.read_footer_and_bytes))
    monkeypatch.setattr(R, "read_footer_and_bytes", counted(R.read_footer_and_bytes))
    out = run("repair", root, "--write-id", "5", "--apply", "--format", "json")
    assert out.code == 0, out.out
    assert len(out.json()["actions"]) == 4
    assert reads and max(reads.values()) <= 2, reads


# ------------------------------------------------------------------------------------------------
# Kills: undo and convert at every fault point; a second process meanwhile


@pytest.mark.slow
def test_undo_killed_at_every_fault_point_is_finished_by_undo(tmp_path):
    kills = 0
    for n in range(1, 80):
        case = tmp_path / f"u{n}"
        root = build(case / "t", {**BASE, "part-0000.orc": RAW,
                                  **delta("delta_0000002_0000002_0000", acid(events(2, 3),
                                                                            with_key_index=False))})
        before = tree(root)
        state = case / "state"
        applied = acidtool("repair", root, "--write-id", "3", "--apply", "--format", "json",
                           state=state)
        assert applied.returncode == 0, applied.stderr
        journal = json.loads(applied.stdout)["journal"]
        killed = acidtool("undo", journal, state=state, kill_at=n)
        if killed.returncode != -9:
            assert killed.returncode == 0, killed.stderr
            break
        kills += 1
        records = [json.loads(line)["record"] for line in Path(journal).read_text().splitlines()
                   if line.strip()]
        if records[-1] == "undone":  # killed after the undo's last record: it is finished,
            # and the next writer takes the dead lock over
            assert acidtool("undo", journal, state=state).returncode == 0
            assert tree(root) == before
            shutil.rmtree(case)
            continue
        other = acidtool("repair", root, "--write-id", "3", "--apply", state=state)
        assert other.returncode == 2 and "undo" in other.stderr, other.stderr  # not its to finish
        again = acidtool("undo", journal, state=state)
        assert again.returncode == 0, (n, again.stdout, again.stderr)
        assert tree(root) == before, f"undo killed at fault point {n}, then run again"
        shutil.rmtree(case)
    assert kills >= 5


def test_convert_killed_at_each_fault_point_commits_its_rows_once(tmp_path):
    land = tmp_path / "land"
    land.mkdir()
    (land / "a.orc").write_bytes(RAW)
    for n in range(1, 10):
        root = build(tmp_path / f"t{n}", BASE)
        state = tmp_path / f"s{n}"
        killed = acidtool("convert", land / "a.orc", "--table", root, "--write-id", "auto",
                          state=state, kill_at=n)
        if killed.returncode != -9:
            assert killed.returncode == 0, killed.stderr
            assert n > 3  # staged, locked, committed: three fault points
            break
        again = acidtool("convert", land / "a.orc", "--table", root, "--write-id", "auto",
                         state=state)
        assert again.returncode in (0, 2), again.stderr  # 2: "was converted already"
        got = rows(root)
        assert got.count((10, "x")) == 1 and got.count((11, "y")) == 1, (n, got)
        # a lock the killed convert left is taken over by the next writer, and released
        assert acidtool("repair", root, "--apply", state=state).returncode in (0, 1)
        assert not (root / ".acidtool-lock").exists()


def test_a_convert_killed_mid_commit_is_not_resumed_by_repair_as_its_own(tmp_path):
    """A convert killed with its commit in flight (journaled, not recorded done) leaves the
    table's lock naming its journal. repair --apply took it for an interrupted repair's and
    went on writing its own run into it; now it is refused, naming the convert, until undo
    rolls the convert back (the table then as it was). (One killed before its steps or after
    its commit's record has nothing in flight: the next writer takes the lock over.)"""
    land = tmp_path / "land"
    land.mkdir()
    (land / "a.orc").write_bytes(RAW)
    found = 0
    for n in range(1, 20):
        root = build(tmp_path / f"t{n}", BASE)
        before, state = tree(root), tmp_path / f"s{n}"
        killed = acidtool("convert", land / "a.orc", "--table", root, "--write-id", "auto",
                          state=state, kill_at=n)
        if killed.returncode != -9:
            assert killed.returncode == 0, killed.stderr
            break
        lock = root / ".acidtool-lock"
        journal = json.loads(lock.read_text()).get("journal") if lock.exists() else None
        records = [json.loads(line) for line in Path(journal).read_text().splitlines()
                   if line.strip()] if journal and Path(journal).exists() else []
        kinds = [r["record"] for r in records]
        if "steps" not in kinds or "done" in kinds:  # nothing in flight: taken over
            continue
        found += 1
        other = acidtool("repair", root, "--apply", state=state)
        assert other.returncode == 2 and "interrupted convert" in other.stderr, other.stderr
        undone = acidtool("undo", journal, state=state)
        assert undone.returncode == 0, undone.stderr
        assert tree(root) == before, f"convert killed at fault point {n}, then undone"
    assert found >= 2


def test_undo_waits_for_no_one_a_live_writer_holds_the_table(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    doc = run("repair", root, "--write-id", "2", "--apply", "--format", "json").json()
    (root / ".acidtool-lock").write_text(json.dumps({"pid": os.getpid(), "host":
                                                     socket.gethostname(), "journal": "x",
                                                     "command": "convert"}))
    before = tree(root)
    out = run("undo", doc["journal"])
    assert out.code == 2 and "convert is running on this table" in out.err, out.err
    assert tree(root) == before


def test_a_raw_file_that_does_not_fit_the_table_goes_to_a_person_at_plan_time(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": plain("struct<a:string,b:double>",
                                                                  [("z", 1.0)])})
    plan = run("repair", root, "--write-id", "2", "--format", "json").json()
    assert plan["actions"] == []
    assert "cannot be re-wrapped" in plan["manual"][0]["reason"], plan["manual"]
    before = tree(root)
    out = run("repair", root, "--write-id", "2", "--apply")
    assert out.code == 1 and tree(root) == before


def test_a_sigterm_once_the_command_is_over_goes_to_the_handler_it_would_meet(tmp_path):
    """A SIGTERM that lands while the CLI gives the signal handlers back (the command done):
    no traceback and no exit status 1 (a CI run saw one), but the signal sent again to the
    handler it then meets: here the default's, which ends the process by SIGTERM."""
    table = build(tmp_path / "t", delta("delta_0000001_0000001_0000", acid(events(1))))
    code = (
        "import os, signal, sys\n"
        "import acidtool.cli.main as m\n"
        "real = signal.signal\n"
        "def hooked(sig, handler):\n"
        "    if m._FINISHED and sig == signal.SIGTERM and handler is not m._terminated:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)  # before the handler is given back\n"
        "    return real(sig, handler)\n"
        "signal.signal = hooked\n"
        "m.main(sys.argv[1:])\n")
    proc = subprocess.run([sys.executable, "-c", code, "ls", str(table)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGTERM, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "delta_0000001_0000001_0000" in proc.stdout
