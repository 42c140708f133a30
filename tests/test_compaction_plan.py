"""`acidtool compaction-plan`: the command around the Initiator's decision (the decision itself
is judged by Hive in test_compaction.py)."""

from __future__ import annotations

import json
import os

import pytest

from .helpers.layouts import acid, build, delta, events
from .helpers.runner import run, run_process


def _deltas(n: int, first: int = 1, rows: int = 2) -> dict:
    out = {}
    for w in range(first, first + n):
        out.update(delta(f"delta_{w:07d}_{w:07d}_0000", acid(events(w, rows))))
    return out


@pytest.fixture
def warehouse(tmp_path):
    """shop.db/orders: ds=1 with eleven deltas (no base: major), ds=2 with two (nothing);
    shop.db/items: a base and eleven small deltas (minor at pct 10)."""
    root = tmp_path / "warehouse"
    build(root / "shop.db" / "orders" / "ds=1", _deltas(11))
    build(root / "shop.db" / "orders" / "ds=2", _deltas(2))
    build(root / "shop.db" / "items", {**delta("base_0000001", acid(events(1, 5000))),
                                       **_deltas(11, first=2, rows=1)})
    return root


def test_a_warehouse_plan_in_every_format(warehouse):
    text = run("compaction-plan", "-r", warehouse, "--set",
               "hive.compactor.delta.pct.threshold=10")
    assert text.code == 1, text.err  # something is due
    assert "2 of 3 partitions due" in text.out
    doc = run("compaction-plan", "-r", warehouse, "--format", "json", "--set",
              "hive.compactor.delta.pct.threshold=10").json()
    got = {(p["table"], p["partition"]): p["compaction"] for p in doc["plans"]}
    assert got == {("shop.items", ""): "minor", ("shop.orders", "ds=1"): "major",
                   ("shop.orders", "ds=2"): None}
    assert all(p["table_from"] == "path" for p in doc["plans"])
    assert doc["settings"]["hive.compactor.delta.pct.threshold"] == "10"
    sql = run("compaction-plan", "-r", warehouse, "--format", "sql", "--set",
              "hive.compactor.delta.pct.threshold=10").out.splitlines()
    assert sql[2:] == ["ALTER TABLE `shop`.`items` COMPACT 'minor';",
                       "ALTER TABLE `shop`.`orders` PARTITION (`ds`='1') COMPACT 'major';"]
    assert sql[1].startswith("-- table names guessed from the warehouse path")


def test_nothing_due_exits_0_and_settings_move_the_thresholds(warehouse):
    orders = warehouse / "shop.db" / "orders" / "ds=2"
    assert run("compaction-plan", orders).code == 0
    due = run("compaction-plan", orders, "--set", "hive.compactor.delta.num.threshold=1",
              "--format", "json").json()
    assert [p["compaction"] for p in due["plans"]] == ["major"]  # no base
    assert "2 deltas (more than hive.compactor.delta.num.threshold=1) and no base" in \
        due["plans"][0]["reason"]


@pytest.mark.parametrize("args,message", [
    (["--set", "nonsense"], "give KEY=VALUE"),
    (["--set", "hive.compactor.delta.num.threshold=many"], "is not a number"),
    (["--set", "hive.unknown=1"], "KEY one of"),
])
def test_bad_settings_are_one_line_and_exit_2(warehouse, args, message):
    result = run("compaction-plan", warehouse / "shop.db" / "items", *args)
    assert result.code == 2 and message in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_a_compactor_snapshot_stops_at_the_first_open_write_id(warehouse):
    """With write id 5 open, the Initiator sees only deltas 1-4 (and 6+ not at all)."""
    part = warehouse / "shop.db" / "orders" / "ds=1"
    doc = run("compaction-plan", part, "--format", "json", "--write-ids",
              "shop.orders:11:5:5:").json()
    assert doc["plans"][0]["deltas"] == 4 and doc["plans"][0]["compaction"] is None


HOSTILE = ["x\n::error::INJECTED", "it's", "back\\slash", "semi;DROP TABLE t", "tick`tick",
           "\x1b[31mred", "cr\rret"]


def test_hostile_names_stay_inside_their_quotes(tmp_path):
    root = tmp_path / "w"
    for i, name in enumerate(HOSTILE):
        build(root / f"db{i}.db" / name / f"k={name}", _deltas(11))
    result = run_process("compaction-plan", "-r", root, "--format", "sql")
    assert result.code == 1, result.err
    lines = result.out.splitlines()
    assert len(lines) == 2 + len(HOSTILE)
    for line in lines:
        assert line.startswith("-- ") or (line.startswith("ALTER TABLE `") and
                                          line.endswith(" COMPACT 'major';")), line
        assert "\x1b" not in line and "\r" not in line
    for fmt in ("json", "text"):
        out = run_process("compaction-plan", "-r", root, "--format", fmt)
        assert out.code == 1 and "\x1b" not in out.out
        assert not [x for x in out.out.splitlines() if x.startswith("::")]
        if fmt == "json":
            names = {p["table"] for p in json.loads(out.out)["plans"]}
            assert names == {f"db{i}.{n}" for i, n in enumerate(HOSTILE)}
    assert os.listdir(root)  # nothing was written or moved
