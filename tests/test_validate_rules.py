"""Every rule's cases, as data: tests/fixtures/rules/ACIDnnn.yml (format in
tests/helpers/rulecases.py). Each case is a layout where the rule must fire (and where) or stay
quiet. A meta-test checks that every registered rule has both, and documentation.

A new edge case of a rule is a few lines in its YAML file, not new test code."""

import json

import pytest

from acidtool.core.rules import REGISTRY

from .helpers.layouts import build
from .helpers.rulecases import layout, load, valid_layout
from .helpers.runner import run

CASES = load()


def _run(code, case, tmp_path):
    table = build(tmp_path / "tbl", layout(case))
    result = run("validate", table, "--format", "json", "--select", code,
                 "--fail-on", "info", *case.get("args", []))
    assert result.code in (0, 1), result.err
    doc = json.loads(result.out)
    prefix = str(table)
    paths = sorted(f["path"][len(prefix):].lstrip("/") for f in doc["findings"])
    return result, doc, paths


@pytest.mark.parametrize("code,case", CASES, ids=[f"{code}-{c['name']}" for code, c in CASES])
def test_rule(code, case, tmp_path):
    result, doc, paths = _run(code, case, tmp_path)
    assert paths == sorted(case["fires_at"]), [f["message"] for f in doc["findings"]]
    assert all(f["code"] == code for f in doc["findings"])
    assert result.code == (1 if case["fires_at"] else 0)


def test_every_rule_has_docs_and_both_kinds_of_case():
    for code, r in REGISTRY.items():
        for text in (r.name, r.summary, r.what, r.why, r.example, r.fix):
            assert text and len(text) > 3, (code, text)
        cases = [c for c_code, c in CASES if c_code == code]
        assert any(c["fires_at"] for c in cases), f"{code} has no failing layout"
        assert any(not c["fires_at"] for c in cases) or code in ("ACID009", "ACID015", "ACID016",
                                                              "ACID022"), \
            f"{code} has no passing layout"
        assert run("explain", code).code == 0


def test_valid_layout_is_clean_for_every_rule(tmp_path):
    # the passing layout shared by rules without a dedicated one (ACID009, 015, 016, 022)
    table = build(tmp_path / "tbl", valid_layout())
    result = run("validate", table, "--format", "json", "--level", "rows", "--fail-on", "info")
    assert result.code == 0, result.out
    assert json.loads(result.out)["findings"] == []


def test_every_case_file_names_a_registered_rule_and_loads():
    codes = {code for code, _ in CASES}
    assert codes == set(REGISTRY), codes ^ set(REGISTRY)
    for code, case in CASES:
        assert set(case) <= {"name", "include", "layout", "fires_at", "args", "repair"}, (code, case)
        assert layout(case), (code, case["name"])
