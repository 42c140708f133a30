"""Random damaged tables, random sequences of writers (convert, repair, undo, a second repair),
each killed (SIGKILL) at a random fault point or not at all: after any sequence, every source's
rows are read exactly once, or its file is in the quarantine or in place untouched; no row is
read twice; nothing outside the table changed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from acidtool import open_table

from .helpers.layouts import MARK, ROW, build, delta, plain
from .helpers.runner import acidtool_process as acidtool

BASE_ROWS = [(0, "n0"), (1, "n1")]
# raw sources Hive never reads as they lie (each: where it is, its rows)
IN_TABLE = {
    "in-delta": ("delta_0000002_0000002_0000/data__a", [(20, "a"), (21, "a")]),
    "in-delta-2": ("delta_0000003_0000003_0000/data__b", [(30, "b")]),
}
LANDING = {"land-1": [(40, "c"), (41, "c")], "land-2": [(50, "d")]}
ACTIONS = ["convert land-1", "convert land-2", "repair", "undo", "repair", "repair"]



def snapshot_of(root: Path) -> dict:
    out = {}
    for top, dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(top, f)
            out[os.path.relpath(p, root)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


def read_rows(table: Path) -> list:
    t = open_table(str(table)).snapshot().to_arrow()
    return list(zip(t.column("id").to_pylist(), t.column("name").to_pylist()))


# a kill at one of the first fault points of a run (a repair of two actions has about 30), or
# none; a sequence ends with the writer that must cope with what the others left
steps = st.lists(st.tuples(st.sampled_from(ACTIONS),
                           st.one_of(st.none(), st.integers(1, 20))), min_size=1, max_size=4)


@pytest.mark.slow
# kills at every fault point of a repair of one re-wrap, each followed by a second repair and an
# undo: the window between a re-wrap's commit and its source's quarantine among them
@example(damages={"in-delta"}, sequence=[("repair", n) for n in range(8, 16)] + [("repair", None)])
@example(damages={"in-delta"}, sequence=[("repair", 12), ("repair", None), ("undo", 5)])
@example(damages={"in-delta"}, sequence=[("repair", 13), ("repair", None)])
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(damages=st.sets(st.sampled_from(sorted(IN_TABLE)), min_size=1), sequence=steps)
def test_no_writer_sequence_loses_or_duplicates_a_row(tmp_path_factory, damages, sequence):
    top = tmp_path_factory.mktemp("seq")
    table, land, state = top / "t", top / "land", top / "state"
    layout = delta("delta_0000001_0000001_0000")
    sources: dict[str, tuple[Path, bytes, list]] = {}
    for name in sorted(damages):
        rel, rows = IN_TABLE[name]
        data = plain(ROW, rows)
        layout[rel] = data
        layout[rel.rsplit("/", 1)[0] + "/_orc_acid_version"] = MARK
        sources[name] = (table / rel, data, rows)
    build(table, layout)
    land.mkdir()
    for name, rows in LANDING.items():
        data = plain(ROW, rows)
        (land / f"{name}.orc").write_bytes(data)
        sources[name] = (land / f"{name}.orc", data, rows)
    outside = snapshot_of(land)
    sibling = build(top / "sibling", {**delta("delta_0000001_0000001_0000"),
                                      "part.orc": plain(ROW, [(99, "z")])})
    sibling_before = snapshot_of(sibling)

    journals: list[Path] = []
    for action, kill_at in sequence:
        if action.startswith("convert"):
            name = action.split()[1]
            acidtool("convert", land / f"{name}.orc", "--table", table, "--write-id", "auto",
                     state=state, kill_at=kill_at)
        elif action == "repair":
            before = set((state / "journals").glob("*.jsonl")) if (state / "journals").exists() \
                else set()
            acidtool("repair", table, "--apply", state=state, kill_at=kill_at)
            journals += sorted(set((state / "journals").glob("*.jsonl")) - before)
        elif action == "undo" and journals:
            acidtool("undo", journals[-1], state=state, kill_at=kill_at)

    got = read_rows(table)
    assert len(got) == len(set(got)), f"a row read twice: {sorted(got)}"
    for row in BASE_ROWS:
        assert got.count(row) == 1, (row, sorted(got))
    quarantined = {hashlib.sha256(p.read_bytes()).hexdigest()
                   for p in (table / ".acidtool-quarantine").rglob("*") if p.is_file()} \
        if (table / ".acidtool-quarantine").exists() else set()
    for name, (where, data, rows) in sources.items():
        counts = {got.count(r) for r in rows}
        if counts == {1}:
            continue
        assert counts == {0}, (name, sorted(got))
        in_place = where.exists() and where.read_bytes() == data
        assert in_place or hashlib.sha256(data).hexdigest() in quarantined, \
            f"{name}: its rows are not read and its file is neither in place nor in quarantine"
    assert snapshot_of(land) == outside  # the landing zone: read, never changed
    assert snapshot_of(sibling) == sibling_before
