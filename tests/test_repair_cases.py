"""Repair cases as data: a rule case in tests/fixtures/rules/ACIDnnn.yml that carries a
``repair`` section (format in tests/helpers/rulecases.py) is planned, applied and undone here,
one parametrized test for every repairable rule. A new repair edge case is a few lines of
YAML."""

import os

import pytest

from acidtool.core.rules import REGISTRY

from .helpers.layouts import build
from .helpers.rulecases import NAMES, layout, load
from .helpers.runner import run
from .test_repair import OLD, tree

PLANNERS = {code for code, r in REGISTRY.items() if r.repair.planner is not None}
CASES = [(code, case) for code, case in load() if "repair" in case]


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))


def _age_everything(root) -> None:
    old = os.path.getmtime(root) - OLD
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            os.utime(os.path.join(top, name), (old, old), follow_symlinks=False)


@pytest.mark.parametrize("code,case", CASES, ids=[f"{code}-{c['name']}" for code, c in CASES])
def test_repair_case(code, case, tmp_path):
    rep = case["repair"]
    table = build(tmp_path / "tbl", layout(case))
    _age_everything(table)
    before = tree(table)
    given = case.get("args", [])
    levels = [i for i, a in enumerate(given) if a == "--level"]
    snapshot = [a for i, a in enumerate(given) if i not in levels and i - 1 not in levels]
    # (repair reads at --level rows always)
    args = ["repair", table, "--select", code, *snapshot, *rep.get("args", [])]

    planned = run(*args, "--format", "json")
    assert planned.code == 1, planned.err
    assert {a["code"]: a["kind"] for a in planned.json()["actions"]} == rep["actions"]
    assert tree(table) == before  # the plan writes nothing

    applied = run(*args, "--apply", "--format", "json")
    assert applied.code == 0, (applied.out, applied.err)
    doc = applied.json()
    assert all(a["result"] == "done" for a in doc["actions"]) and doc["left"] == []
    for path in rep.get("present", []):
        assert (table / path.format(**NAMES)).exists(), path
    for path in rep.get("absent", []):
        assert not (table / path.format(**NAMES)).exists(), path
    checked = run("validate", table, "--select", code, "--level", "rows", "--format", "json",
                  *snapshot)
    assert [f for f in checked.json()["findings"] if f["code"] == code] == []

    assert run("undo", doc["journal"]).code == 0
    assert tree(table) == before


def test_every_repairable_rule_has_a_repair_case():
    assert {code for code, _ in CASES} >= set(PLANNERS), sorted(set(PLANNERS) - {c for c, _ in CASES})
