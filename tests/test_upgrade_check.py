"""``acidtool upgrade-check``: the pre-upgrade tool's decision, judged on random tables written by
Hive 2.3's own OrcRecordUpdater (the tool's loop run with Hive 2.3.10's own classes:
tests/helpers/preupgrade.py), and its output, exit status and refusals on layouts of our own."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from acidtool.core.compaction import compactor_snapshot
from acidtool.core.snapshot import make_snapshot

from .helpers.hive23 import BUCKETS, Hive23, write_history
from .helpers.layouts import acid, build, events, orc_with_schema, plain
from .helpers.preupgrade import ToolFailed, needs_compaction
from .helpers.runner import run

LONG_MAX = 9223372036854775807
ACID_SCHEMA = ("struct<operation:int,originalTransaction:bigint,bucket:int,rowId:bigint,"
               "currentTransaction:bigint,row:struct<id:int,name:string>>")


def check(path, *args) -> dict:
    result = run("upgrade-check", path, "--format", "json", *args)
    assert result.code in (0, 1), result.err
    doc = result.json()
    assert result.code == (0 if doc["ready"] else 1)
    return doc


# -- judged by Hive 2.3's classes -----------------------------------------------------------

statement = st.tuples(st.sampled_from(["insert", "insert", "insert", "update", "delete"]),
                      st.integers(0, BUCKETS - 1), st.integers(1, 3))
history = st.lists(st.lists(statement, min_size=1, max_size=2), min_size=1, max_size=5)


@pytest.fixture(scope="module")
def hive(spark):
    return Hive23(spark)


@pytest.mark.spark
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(history, st.booleans(), st.data())
def test_the_pre_upgrade_tool_and_acidtool_decide_alike(hive, transactions, split_update,
                                                         data):
    """Random histories (legacy v1 and split-update), with original files, a streaming
    delta's side file, a delta file without hive.acid.stats, and open or aborted
    transactions: needs a major compaction or not, where the tool fails, and its bytes."""
    table = Path(tempfile.mkdtemp(prefix="acid-upgrade-")) / "t"
    try:
        write_history(hive, table, transactions, split_update)
        if not table.exists():
            return
        extras = data.draw(st.sets(st.sampled_from(["originals", "flush", "no-stats"])))
        deltas = sorted(p for p in table.iterdir() if p.name.startswith("delta_"))
        if "originals" in extras:
            (table / "000000_0").write_bytes(plain(rows=[(i, "o") for i in range(30)]))
        if "flush" in extras and deltas:  # a streaming delta: the tool skips the rest of it
            target = data.draw(st.sampled_from(deltas))
            (target / "bucket_00000_flush_length").write_bytes(b"\0" * 8)
        if "no-stats" in extras and deltas:
            target = data.draw(st.sampled_from(deltas))
            (target / "bucket_00009").write_bytes(orc_with_schema(ACID_SCHEMA, []))
        top = len(transactions)
        exceptions = data.draw(st.lists(st.integers(1, top), max_size=2, unique=True))
        txns = ":".join(map(str, [top, LONG_MAX, *sorted(exceptions)]))
        compactor = str(compactor_snapshot(make_snapshot("2", txns=txns)).txns)
        try:
            expected = needs_compaction(hive.jvm, str(table), compactor)
        except ToolFailed:
            expected = None
        part = check(table, "--txns", txns)["partitions"][0]
        if expected is None:
            assert part["blocked"] and not part["needs_major"], part
            event("the tool fails")
        else:
            assert part["blocked"] is None, part
            assert (part["needs_major"], part["estimate_bytes"]) == expected, part
            event("needs major" if expected[0] else "ready")
        event("split-update" if split_update else "legacy v1")
    finally:
        shutil.rmtree(table.parent)


# -- output, exit status, refusals ------------------------------------------------------------

def _delta(name: str, op: int = 0, wid: int = 1, marker: bool = False) -> dict:
    out = {f"{name}/bucket_00000": acid(events(wid, 2, op=op, v0=True), hive_version="2")}
    if marker:
        out[f"{name}/_orc_acid_version"] = b"2"
    return out


def test_inserts_only_need_nothing_and_exit_0(tmp_path):
    table = build(tmp_path / "wh" / "s.db" / "t", {**_delta("delta_0000001_0000001"),
                                                   **_delta("delta_0000002_0000002", wid=2)})
    doc = check(table)
    (part,) = doc["partitions"]
    assert doc["ready"] and not part["needs_major"] and part["layout"] == "v1"
    assert part["reason"] == "only inserts in its current deltas"
    assert part["statement"] is None and doc["summary"]["estimate_bytes"] == 0


def test_an_update_in_a_v1_delta_needs_a_major_compaction(tmp_path):
    table = build(tmp_path / "wh" / "s.db" / "t", {
        "000000_0": plain(), **_delta("delta_0000001_0000001"),
        **_delta("delta_0000002_0000002", op=1, wid=2)})
    doc = check(table)
    (part,) = doc["partitions"]
    assert part["needs_major"] and part["evidence"] == "delta_0000002_0000002/bucket_00000"
    assert "2 updates and 0 deletes" in part["reason"] and "misreads" in part["reason"]
    assert part["statement"] == "ALTER TABLE `s`.`t` COMPACT 'major'"
    total = sum(f.stat().st_size for f in table.rglob("*") if f.is_file())
    assert part["bytes"] == total
    assert part["estimate_bytes"] == total + (table / "000000_0").stat().st_size
    sql = run("upgrade-check", table, "--format", "sql")
    assert sql.code == 1
    lines = sql.out.splitlines()
    assert "ALTER TABLE `s`.`t` COMPACT 'major';" in lines
    assert "-- Generated total of 1 compaction commands" in lines
    assert any(x.startswith("-- The total volume of data to be compacted is 0.00")
               and x.endswith("MB") for x in lines)
    assert any("acidtool compact" in x and "--major" in x for x in lines)


def test_a_streaming_delta_is_passed_over_and_missing_stats_block(tmp_path):
    # The side file ends the delta: bucket_00001's deletes are never read (bucket_00000 is:
    # it sorts before its side file).
    streaming = {**_delta("delta_0000001_0000002"),
                 "delta_0000001_0000002/bucket_00000_flush_length": b"\0" * 8,
                 "delta_0000001_0000002/bucket_00001": acid(events(1, 2, op=2, v0=True),
                                                            hive_version="2")}
    table = build(tmp_path / "a", streaming)
    assert not check(table)["partitions"][0]["needs_major"]
    table = build(tmp_path / "b", {**_delta("delta_0000001_0000002", op=2),
                                   "delta_0000001_0000002/bucket_00001_flush_length": b"\0" * 8})
    assert check(table)["partitions"][0]["needs_major"]
    table = build(tmp_path / "c", {
        "delta_0000001_0000001/bucket_00000": orc_with_schema(ACID_SCHEMA, [])})
    doc = check(table)
    part = doc["partitions"][0]
    assert not doc["ready"] and not part["needs_major"]
    assert part["blocked"] == "delta_0000001_0000001/bucket_00000: no hive.acid.stats in " \
                              "its footer"
    text = run("upgrade-check", table)
    assert text.code == 1 and "BLOCKED" in text.out and "not ready" in text.out


def test_a_base_and_originals_alone_need_nothing_even_with_a_hidden_delta(tmp_path):
    """The tool looks for children named delta_ first; an obsolete delta under a base is
    not current, so its update events do not count."""
    table = build(tmp_path / "t", {"base_0000005/bucket_00000": acid(events(5, 2, v0=True),
                                                                     hive_version="2"),
                                   **_delta("delta_0000003_0000003", op=1, wid=3)})
    part = check(table)["partitions"][0]
    assert not part["needs_major"] and part["reason"] == \
        "no current delta (base_0000005 covers them)"
    table = build(tmp_path / "u", {"000000_0": plain()})
    part = check(table)["partitions"][0]
    assert not part["needs_major"] and part["layout"] == "originals"


def test_a_warehouse_with_partitions_and_foreign_names(tmp_path):
    wh = tmp_path / "wh"
    build(wh / "s.db" / "p" / "ds=1", _delta("delta_0000001_0000001", op=2))
    build(wh / "s.db" / "p" / "ds=2", _delta("delta_0000001_0000001"))
    build(wh / "s.db" / "q", {**_delta("delta_0000001_0000001", marker=True),
                              "part-0000.snappy.orc": plain()})
    doc = check(wh, "--recursive")
    by = {(p["table"], p["partition"]): p for p in doc["partitions"]}
    assert by[("s.p", "ds=1")]["needs_major"] and not by[("s.p", "ds=2")]["needs_major"]
    assert by[("s.p", "ds=1")]["statement"] == \
        "ALTER TABLE `s`.`p` PARTITION (`ds`='1') COMPACT 'major'"
    assert by[("s.q", "")]["layout"] == "split-update"
    names = {t["table"]: [n["code"] for n in t["names"]] for t in doc["tables"]}
    assert names == {"s.p": [], "s.q": ["ACID001"]}
    assert doc["summary"] == {"tables": 2, "partitions": 3, "need_major": 1, "blocked": 0,
                              "bad_names": 1, "estimate_bytes": by[("s.p", "ds=1")]["bytes"]}
    text = run("upgrade-check", wh, "-r")
    assert text.code == 1
    assert "1 of 3 partitions need a major compaction" in text.out
    assert "ACID001" in text.out and "part-0000.snappy.orc" in text.out


def test_refusals(tmp_path):
    table = build(tmp_path / "t", _delta("delta_0000001_0000001"))
    result = run("upgrade-check", table / "delta_0000001_0000001")
    assert result.code == 2 and "is a delta directory of a table" in result.err
    result = run("upgrade-check", tmp_path / "nothing")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    result = run("upgrade-check", table, "--to", "5")
    assert result.code == 2
    result = run("upgrade-check", table, "--to", "4", "--format", "json")
    assert result.code == 0 and result.json()["to"] == "4"


def test_tables_whose_guessed_names_collide_are_shown_by_their_directories(tmp_path):
    for where in ("a/data", "b/data"):
        build(tmp_path / where, _delta("delta_0000001_0000001"))
    text = run("upgrade-check", tmp_path, "-r")
    assert text.code == 0, text.err
    assert str(tmp_path / "a" / "data") in text.out and str(tmp_path / "b" / "data") in text.out
    assert "to compact" not in text.out and "ready" in text.out.splitlines()[-1]


def test_hostile_partition_names_stay_inert_in_every_format(tmp_path):
    """Names from the directory tree can hold quotes, backticks, newlines and '::' lines: the
    SQL keeps one statement a line and its values quoted, text one row a partition, JSON its
    names exact."""
    wh = tmp_path / "wh"
    values = ["a'b`c", "x\ny;DROP TABLE t", "::error::z"]
    for v in values:
        build(wh / "s.db" / "p" / f"ds={v}", _delta("delta_0000001_0000001", op=2))
    doc = check(wh, "-r")
    assert sorted(p["partition"] for p in doc["partitions"]) == sorted(f"ds={v}" for v in values)
    sql = run("upgrade-check", wh, "-r", "--format", "sql").out.splitlines()
    statements = [x for x in sql if not x.startswith("--")]
    assert len(statements) == 3 and all(x.startswith("ALTER TABLE `s`.`p` PARTITION (`ds`='")
                                        and x.endswith("') COMPACT 'major';")
                                        for x in statements), statements
    assert "ALTER TABLE `s`.`p` PARTITION (`ds`='a\\'b`c') COMPACT 'major';" in statements
    assert not any(x.startswith("::") or x.lstrip().startswith("y;DROP") for x in sql)
    text = run("upgrade-check", wh, "-r").out.splitlines()
    assert sum("MAJOR" in x for x in text) == 3
    assert not any(x.startswith("::") or x.startswith("y;DROP") for x in text)
