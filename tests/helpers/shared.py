"""Locating ``../shared`` (spec, conformance cases, real Hive data). Tests skip cleanly without it."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ACIDTOOL_SHARED", PROJECT.parent / "shared"))
# The spec's conformance cases are ours: a copy lives in tests/fixtures (a fresh clone runs
# them); test_fixture_cases_in_step keeps it equal to ../shared's when that is present.
SHARED_SPEC_CASES = SHARED / "spec" / "cases.json"
SPEC_CASES = PROJECT / "tests" / "fixtures" / "spec" / "cases.json"
REALDATA = SHARED / "realdata"


def require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not present (tests that read ../shared skip without it)")
    return path


@lru_cache(maxsize=1)
def spec_cases() -> dict:
    if not SPEC_CASES.exists():
        return {}
    return json.loads(SPEC_CASES.read_text())


def case_params(section: str, id_key: str | None = None):
    """pytest parameters for one section of cases.json; one skipped param when it is absent."""
    items = spec_cases().get(section)
    if not items:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{SPEC_CASES} not present"))]
    return [pytest.param(c, id=str(c[id_key]) if id_key else f"{section}-{i}")
            for i, c in enumerate(items)]
