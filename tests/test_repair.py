"""repair and undo: for every repairable damage, plan -> apply -> validate clean -> the rows
expected -> undo -> the tree byte-identical; what is never automatic goes to a person; the plan
writes nothing."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from acidtool import open_table

from .helpers.layouts import MARK, ROW, acid, build, delta, events, plain
from .helpers.runner import run

OLD = 3 * 86400  # seconds: older than any --min-age the tests use


def tree(root: Path) -> dict:
    """Every file's size and hash and every directory, below ``root``."""
    out = {}
    for top, dirs, files in os.walk(root):
        for d in dirs:
            out[os.path.relpath(os.path.join(top, d), root)] = "dir"
        for f in files:
            p = os.path.join(top, f)
            data = Path(p).read_bytes()
            out[os.path.relpath(p, root)] = (len(data), hashlib.sha256(data).hexdigest())
    return out


def mtimes(root: Path) -> dict:
    return {os.path.join(top, n): os.lstat(os.path.join(top, n)).st_mtime_ns
            for top, dirs, files in os.walk(root) for n in dirs + files + ["."]}


def age(root: Path, *rels: str) -> None:
    """Make these paths (and everything below them) look untouched for OLD seconds."""
    old = os.path.getmtime(root) - OLD
    for rel in rels:
        top = root / rel
        for dirpath, dirs, files in os.walk(top) if top.is_dir() else [(str(top.parent), [], [top.name])]:
            for n in files + dirs:
                os.utime(os.path.join(dirpath, n), (old, old))
        os.utime(top, (old, old))


def rows(root: Path, hive: str = "4", **kw) -> list:
    t = open_table(str(root)).snapshot(hive_version=hive, **kw).to_arrow()
    return sorted(zip(t.column("id").to_pylist(), t.column("name").to_pylist()))


def n_rows(ids, name=lambda i: f"n{i}"):
    return [(i, name(i)) for i in ids]


BASE = {**delta("delta_0000001_0000001_0000")}  # ids 0, 1 (write id 1)
RAW = plain(ROW, [(10, "x"), (11, "y")])
V0 = lambda wid, n=2, **kw: events(wid, n, v0=True, **kw)  # noqa: E731


def unsorted_file() -> bytes:
    evs = events(1, 3)
    return acid([evs[1], evs[0], evs[2]])


# (id, layout, options, {code: kind}, rows after, hive version, aged paths)
CASES = [
    ("datax-root", {**BASE, "part-0000.orc": RAW}, ["--write-id", "2"],
     {"ACID001": "rewrap"}, n_rows([0, 1]) + [(10, "x"), (11, "y")], "4", []),
    ("datax-root-partition", {**{f"ds=1/{k}": v for k, v in BASE.items()},
                              "ds=1/orders__9c1d": RAW}, ["--write-id", "5"],
     {"ACID001": "rewrap"}, n_rows([0, 1]) + [(10, "x"), (11, "y")], "4", []),
    ("raw-in-delta", {**BASE, "delta_0000002_0000002_0000/data__abc": RAW,
                      "delta_0000002_0000002_0000/_orc_acid_version": MARK}, [],
     {"ACID004": "rewrap"}, n_rows([0, 1]) + [(10, "x"), (11, "y")], "4", []),
    ("raw-bucket-next-to-acid", {**BASE, "delta_0000001_0000001_0000/bucket_00001": RAW}, [],
     {"ACID007": "rewrap"}, n_rows([0, 1]) + [(10, "x"), (11, "y")], "4", []),
    ("renamed-bucket", {"delta_0000001_0000001_0000/bucket_00000 (1)": acid(events(1)),
                        "delta_0000001_0000001_0000/_orc_acid_version": MARK}, [],
     {"ACID004": "rename"}, n_rows([0, 1]), "4", []),
    ("renamed-bucket-orc", {**BASE, "delta_0000002_0000002_0000/bucket_00003.orc":
                            acid(events(2, bucket=3, start=5)),
                            "delta_0000002_0000002_0000/_orc_acid_version": MARK}, [],
     {"ACID004": "rename"}, n_rows([0, 1]) * 2, "4", []),
    ("missing-marker", delta("delta_0000001_0000001_0000", marker=False), [],
     {"ACID005": "write-marker"}, n_rows([0, 1]), "4", []),
    ("wrong-marker", {**delta("delta_0000001_0000001_0000", marker=False),
                      "delta_0000001_0000001_0000/_orc_acid_version": b"1"}, [],
     {"ACID005": "write-marker"}, n_rows([0, 1]), "4", []),
    ("missing-key-index", delta("delta_0000001_0000001_0000", acid(events(1, 3),
                                                                   with_key_index=False)), [],
     {"ACID009": "rebuild-key-index"}, n_rows([0, 1, 2]), "4", []),
    ("wrong-key-index", delta("delta_0000001_0000001_0000",
                              acid(events(1, 3), key_index_text="1,536870912,0;")), [],
     {"ACID010": "rebuild-key-index"}, n_rows([0, 1, 2]), "4", []),
    ("unsorted", delta("delta_0000001_0000001_0000", unsorted_file()), [],
     {"ACID015": "sort-events"}, n_rows([0, 1, 2]), "4", []),
    ("hive-staging", {**BASE, ".hive-staging_hive_2026-01-01/-ext-10000/x": b"x"}, [],
     {"ACID003": "quarantine"}, n_rows([0, 1]), "4", [".hive-staging_hive_2026-01-01"]),
    ("acidtool-staging", {**BASE, "_acidtool_staging_0123/delta_0000002_0000002_0000/"
                          "bucket_00000": acid(events(2))}, [],
     {"ACID003": "quarantine"}, n_rows([0, 1]), "4", ["_acidtool_staging_0123"]),
    ("unparsable-dir", {**BASE, "delta_12x_12/bucket_00000": acid(events(12))}, [],
     {"ACID002": "quarantine"}, n_rows([0, 1]), "3", ["delta_12x_12"]),
    ("flush-length-done", {**BASE, "delta_0000001_0000001_0000/bucket_00000_flush_length": b""},
     [], {"ACID022": "quarantine"}, n_rows([0, 1]), "4", []),
    ("obsolete", {**BASE, **delta("base_0000002", acid(events(2, 2, start=4))),
                  "base_0000002/_orc_acid_version": MARK},
     ["--select", "ACID021", "--write-ids", "d.t:2:9223372036854775807::"],
     {"ACID021": "quarantine"}, n_rows([0, 1]), "4", ["delta_0000001_0000001_0000"]),
    ("hive23-root", {"delta_0000001_0000001_0000/bucket_00000": acid(V0(1), hive_version="2"),
                     "part-0000.orc": RAW}, ["--write-id", "2"],
     {"ACID001": "rewrap"}, n_rows([0, 1]) + [(10, "x"), (11, "y")], "2", []),
]


def _flush(case_layout: dict, root: Path) -> None:
    """A side file whose one length is its data file's size."""
    for rel in list(case_layout):
        if rel.endswith("_flush_length"):
            data = root / rel[:-len("_flush_length")]
            (root / rel).write_bytes(data.stat().st_size.to_bytes(8, "big"))


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))


@pytest.mark.parametrize("name,layout,options,expected,after,hive,aged", CASES,
                         ids=[c[0] for c in CASES])
def test_plan_apply_validate_read_undo(tmp_path, name, layout, options, expected, after, hive,
                                       aged):
    root = build(tmp_path / "t", layout)
    _flush(layout, root)
    age(root, *aged)
    if name == "flush-length-done":
        age(root, "delta_0000001_0000001_0000/bucket_00000_flush_length")
    before, times = tree(root), mtimes(root)
    args = ["repair", root, "--hive-version", hive, *options]

    planned = run(*args, "--format", "json")
    assert planned.code == 1, planned.err
    doc = planned.json()
    assert {a["code"]: a["kind"] for a in doc["actions"]} == expected
    assert all(a["result"] == "planned" for a in doc["actions"])
    assert tree(root) == before and mtimes(root) == times  # the plan wrote nothing

    applied = run(*args, "--apply", "--format", "json")
    assert applied.code == 0, (applied.out, applied.err)
    result = applied.json()
    assert [a["result"] for a in result["actions"]] == ["done"] * len(expected)
    assert result["manual"] == [] and result["left"] == []
    codes = ",".join(expected)
    checked = run("validate", root, "--level", "rows", "--hive-version", hive,
                  "--select", codes, *[o for o in options if o.startswith("d.t")][:0])
    assert checked.code == 0 and "0 errors, 0 warnings" in checked.out, checked.out
    snap = {"write_ids": options[options.index("--write-ids") + 1]} \
        if "--write-ids" in options else {}
    assert rows(root, hive, **snap) == sorted(after)
    assert not (root / ".acidtool-lock").exists()

    undone = run("undo", result["journal"])
    assert undone.code == 0, undone.err
    assert tree(root) == before


def test_a_second_undo_changes_nothing(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    before = tree(root)
    applied = run("repair", root, "--write-id", "2", "--apply", "--format", "json").json()
    assert run("undo", applied["journal"]).code == 0
    assert run("undo", applied["journal"]).code == 0
    assert tree(root) == before


@pytest.mark.parametrize("layout,options,code,words", [
    ({**BASE, "part-0000.orc": RAW}, [], "ACID001", "--write-id"),
    ({"delta_0000001_0000001_0000/bucket_00000": acid(events(1, bucket=1)),
      "delta_0000001_0000001_0000/_orc_acid_version": MARK}, [], "ACID012", "deletes hit"),
    ({**BASE, ".hive-staging_x/y": b"y"}, [], "ACID003", "--min-age"),
    ({**BASE, "delta_0000001_0000001_0000/bucket_00000 (1)": acid(events(1))}, [], "ACID004",
     "exists already"),
    ({**BASE, "base_0000002/bucket_00000": RAW}, [], "ACID007", "base"),
    ({**BASE, **delta("base_0000002", acid(events(2)))}, ["--select", "ACID021"], "ACID021",
     "snapshot"),
])
def test_what_is_never_automatic_goes_to_a_person(tmp_path, layout, options, code, words):
    root = build(tmp_path / "t", layout)
    before = tree(root)
    out = run("repair", root, *options, "--format", "json")
    assert out.code == 1
    manual = [m for m in out.json()["manual"] if m["code"] == code]
    assert manual and words in manual[0]["reason"], out.json()
    assert all(a["code"] != code for a in out.json()["actions"])
    applied = run("repair", root, *options, "--apply", "--format", "json")
    assert applied.code == 1  # a finding is left for a person
    assert any(m["code"] == code for m in applied.json()["manual"])
    assert {k: v for k, v in tree(root).items() if ".acidtool" not in k} == \
        {k: v for k, v in before.items()} or applied.json()["actions"]


def test_a_clean_table_needs_nothing_and_nothing_is_written(tmp_path):
    root = build(tmp_path / "t", BASE)
    before, times = tree(root), mtimes(root)
    assert run("repair", root).code == 0
    applied = run("repair", root, "--apply", "--format", "json")
    assert applied.code == 0 and applied.json()["actions"] == []
    assert tree(root) == before
    # no file rewritten in place either (the table directory's own time moves: the lock)
    assert {k: v for k, v in mtimes(root).items() if os.path.isfile(k)} == \
        {k: v for k, v in times.items() if os.path.isfile(k)}
    assert not (tmp_path / "state").exists()  # no journal either


def test_a_live_lock_refuses_a_second_apply_and_undo(tmp_path):
    import json
    import socket

    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    (root / ".acidtool-lock").write_text(json.dumps({"pid": os.getpid(),
                                                     "host": socket.gethostname(),
                                                     "journal": "x", "since": "now"}))
    out = run("repair", root, "--write-id", "2", "--apply")
    assert out.code == 2 and "is running on this table" in out.err
    assert (root / "part-0000.orc").exists()


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    import json
    import socket
    import subprocess

    dead = subprocess.Popen(["true"])
    dead.wait()
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    (root / ".acidtool-lock").write_text(json.dumps({"pid": dead.pid,
                                                     "host": socket.gethostname(),
                                                     "journal": str(tmp_path / "none.jsonl"),
                                                     "since": "then"}))
    out = run("repair", root, "--write-id", "2", "--apply")
    assert out.code == 0, out.err
    assert not (root / ".acidtool-lock").exists()


def test_validate_does_not_flag_the_quarantine(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    assert run("repair", root, "--write-id", "2", "--apply").code == 0
    assert any((root / ".acidtool-quarantine").iterdir())
    out = run("validate", root, "--level", "rows")
    assert out.code == 0 and "0 errors, 0 warnings, 0 info" in out.out


def test_quarantine_elsewhere_must_be_on_the_same_filesystem_and_hidden(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    out = run("repair", root, "--write-id", "2", "--quarantine", root / "q")
    assert out.code == 2 and "'.' or '_'" in out.err
    elsewhere = tmp_path / "q"
    out = run("repair", root, "--write-id", "2", "--quarantine", elsewhere, "--apply",
              "--format", "json")
    assert out.code == 0, out.err
    assert (elsewhere / out.json()["quarantine"].rsplit("/", 1)[-1] / "part-0000.orc").exists()


def test_streaming_recovery_only_when_selected(tmp_path):
    data = acid(events(1, 3))
    root = build(tmp_path / "t", {"delta_0000001_0000001_0000/bucket_00000": data + b"garbage",
                                  "delta_0000001_0000001_0000/_orc_acid_version": MARK,
                                  "delta_0000001_0000001_0000/bucket_00000_flush_length":
                                      len(data).to_bytes(8, "big")})
    age(root, "delta_0000001_0000001_0000")
    plain_run = run("repair", root, "--format", "json").json()
    assert not plain_run["actions"]
    out = run("repair", root, "--select", "ACID022", "--apply", "--format", "json")
    assert out.code == 0, out.out
    assert [a["kind"] for a in out.json()["actions"]] == ["recover-streaming"]
    assert (root / "delta_0000001_0000001_0000/bucket_00000").read_bytes() == data
    assert rows(root) == n_rows([0, 1, 2])


def test_explain_shows_the_repair():
    out = run("explain", "ACID001")
    assert "acidtool repair" in out.out and "--write-id" in out.out
    out = run("explain", "ACID012")
    assert "never" in out.out.lower()


def test_journal_records_each_step_before_it_is_taken(tmp_path):
    import json

    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    doc = run("repair", root, "--write-id", "2", "--apply", "--format", "json").json()
    records = [json.loads(line) for line in Path(doc["journal"]).read_text().splitlines()]
    kinds = [r["record"] for r in records]
    assert kinds[0] == "begin" and kinds[1] == "plan" and kinds[-1] == "end"
    assert kinds.index("steps") < kinds.index("done")
    ops = [s["op"] for r in records if r["record"] == "steps" for a in r["actions"]
           for s in a["steps"]]
    assert "write" in ops and ops.count("rename") == 2


def test_every_rule_declares_its_repair_and_each_kind_matches_its_planner():
    from acidtool.core.rules import REGISTRY
    from acidtool.core.rules.registry import RepairKind

    kinds = {code: r.repair.kind for code, r in REGISTRY.items()}
    for code, r in REGISTRY.items():
        assert r.repair.text, f"{code} does not say what repair does"
        assert (r.repair.planner is None) == (r.repair.kind is RepairKind.MANUAL), code
    # the repairs a person opts into, and those left to a person, as the docs say
    assert {c for c, k in kinds.items() if k is RepairKind.OPT_IN} == {"ACID021", "ACID024"}
    assert {"ACID012", "ACID013", "ACID016", "ACID018"} <= \
        {c for c, k in kinds.items() if k is RepairKind.MANUAL}
    assert REGISTRY["ACID022"].repair.opt_in and REGISTRY["ACID022"].repair.kind is \
        RepairKind.AUTO  # its finished side files automatic, cutting a file opt-in


def test_the_default_journal_goes_to_the_state_directory(tmp_path):
    root = build(tmp_path / "t", {**BASE, "part-0000.orc": RAW})
    doc = run("repair", root, "--write-id", "2", "--format", "json").json()
    assert doc["journal"].startswith(str(tmp_path / "state" / "journals"))
    assert doc["quarantine"].startswith(str(root / ".acidtool-quarantine"))
    assert doc["path"] == str(root) and doc["hive_version"] == "4"
    assert [a["target"] for a in doc["actions"]] == ["part-0000.orc"]


@pytest.mark.parametrize("repair, problem", [
    (("manual", "Rewrites the bucket properties.", "planner"), "a planner goes with"),
    (("auto", "Quarantines it.", None), "a planner goes with"),
    (("opt-in", "Quarantines it.", "planner"), "says what --select opts into"),
    (("auto", "", "planner"), "does not say what `acidtool repair` does"),
])
def test_the_registry_refuses_a_rule_whose_repair_declaration_does_not_hold(repair, problem):
    from acidtool.core.rules import REGISTRY
    from acidtool.core.rules.registry import Repair, RepairKind, rule

    kind, text, planner = repair
    declared = Repair(RepairKind(kind), text, (lambda *a: None) if planner else None)
    with pytest.raises(ValueError, match=f"rule ACID999's repair .*{re.escape(problem)}"):
        rule("ACID999", "x", "error", "names", "x", what="", why="", example="", fix="",
             repair=declared)(lambda r, p, ctx: [])
    assert "ACID999" not in REGISTRY
