"""Hive's own readers read the tables repair leaves: Hive 3.1's and 4.0's merged ACID scan for
every damage repair fixes, and Hive 2.3's for the damages of a 2.3 table. The rows and ROW__IDs
must be what acidtool read says, and the rows what the damaged table held plus what was
re-wrapped."""

from __future__ import annotations

import pytest

from .helpers.hive23 import Hive23
from .helpers.hivejvm import Judge, acidtool_rows
from .helpers.layouts import ROW, acid, build, events, plain
from .helpers.runner import run
from .test_repair import CASES, _flush, age

pytestmark = pytest.mark.spark

EVERYTHING = "t:100:9223372036854775807::"


@pytest.fixture(scope="module", params=["3", "4"])
def judge(request):
    return Judge((request.param, request.getfixturevalue({"3": "hive31",
                                                          "4": "hive40"}[request.param])))


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))


HIVE3_CASES = [c for c in CASES if c[5] != "2" and c[0] != "obsolete"]


@pytest.mark.parametrize("case", HIVE3_CASES, ids=[c[0] for c in HIVE3_CASES])
def test_hive_reads_the_repaired_table(judge, tmp_path, case):
    name, layout, options, expected, after, _, aged = case
    version, hive = judge
    root = build(tmp_path / "t", layout)
    _flush(layout, root)
    age(root, *aged)
    if name == "flush-length-done":
        age(root, "delta_0000001_0000001_0000/bucket_00000_flush_length")
    out = run("repair", root, "--hive-version", version, *options, "--apply")
    assert out.code == 0, out.out + out.err
    table = str(root / "ds=1") if name.endswith("partition") else str(root)
    got = hive.read(table, EVERYTHING)
    assert sorted((int(v[0]), v[1]) for _, v in got) == sorted(after)
    assert acidtool_rows(table, version, "--write-ids", EVERYTHING) == got


@pytest.fixture(scope="module")
def hive23(spark):
    return Hive23(spark)


def test_hive23_reads_a_repaired_23_table(hive23, tmp_path):
    layout = {"delta_0000001_0000001_0000/bucket_00000": acid(events(1, v0=True),
                                                             hive_version="2"),
              "part-0000.orc": plain(ROW, [(10, "x"), (11, "y")]),
              "delta_0000002_0000002_0000/bucket_00000.orc": acid(events(2, v0=True, start=3),
                                                                  hive_version="2"),
              ".hive-staging_hive_1/x": b"x"}
    root = build(tmp_path / "t", layout)
    age(root, ".hive-staging_hive_1")
    out = run("repair", root, "--hive-version", "2", "--write-id", "3", "--apply",
              "--format", "json")
    assert out.code == 0, out.out + out.err
    assert sorted(a["kind"] for a in out.json()["actions"]) == ["quarantine", "rename", "rewrap"]
    txns = "3:9223372036854775807"
    got = hive23.read(str(root), txns)
    assert sorted((int(v[0]), v[1]) for _, v in got) == sorted(
        [(0, "n0"), (1, "n1"), (0, "n0"), (1, "n1"), (10, "x"), (11, "y")])
    assert acidtool_rows(root, "2", "--txns", txns) == got
