"""One table of layouts per rule: each rule has layouts where it must fire (and where) and
layouts where it must stay quiet. A meta-test checks that every registered rule has both, and
documentation."""

import json
from dataclasses import dataclass, field
from typing import Callable

import pytest

from acidtool.core.rules import REGISTRY
from acidtool.io.acidwrite import DELETE, UPDATE, Event

from .helpers.layouts import (
    MARK,
    ROW,
    acid,
    build,
    delta,
    events,
    orc_with_schema,
    plain,
    with_damaged_stripe,
)
from .helpers.runner import run

EVENT_SCHEMA = ("struct<operation:int,originalTransaction:bigint,bucket:int,rowId:bigint,"
                "currentTransaction:bigint,row:struct<id:int,name:string>>")
D1 = "delta_0000001_0000001_0000"
D2 = "delta_0000002_0000002_0000"
BASE = "base_0000002"


@dataclass
class Case:
    code: str
    label: str
    layout: Callable[[], dict]
    fires_at: list[str]  # paths relative to the table; [] means the rule must stay quiet
    args: list[str] = field(default_factory=list)


def valid():
    return {**delta(D1), **delta(D2, acid(events(2)))}


CASES = [
    # ACID001 foreign data file
    Case("ACID001", "datax file next to deltas", lambda: {**valid(),
         "orders__6f1c9e2a_3b7d_4c0e": plain()}, ["orders__6f1c9e2a_3b7d_4c0e"]),
    Case("ACID001", "original file after a base", lambda: {**delta(BASE, acid(events(1))),
         "000000_0": plain()}, ["000000_0"]),
    Case("ACID001", "original files without a base are read", lambda: {**valid(),
         "000000_0": plain(), "000000_0_copy_1": plain()}, []),
    Case("ACID001", "hidden job markers", lambda: {**valid(), "_SUCCESS": b"",
         ".part-0.crc": b"x"}, []),
    # ACID002 invalid names
    Case("ACID002", "delta_abc", lambda: {**valid(), "delta_abc/bucket_00000": acid()},
         ["delta_abc"]),
    Case("ACID002", "visibility suffix under Hive 3", lambda: {**valid(),
         "base_0000002_v0000009/bucket_00000": acid(events(2))}, ["base_0000002_v0000009"],
         ["--hive-version", "3"]),
    Case("ACID002", "visibility suffix under Hive 4", lambda: {**valid(),
         "base_0000002_v0000009/bucket_00000": acid(events(2)),
         "base_0000002_v0000009/_orc_acid_version": MARK}, []),
    # ACID003 stray directories
    Case("ACID003", "staging directory", lambda: {**valid(),
         ".hive-staging_hive_2024/-ext-10000/000000_0": plain()}, [".hive-staging_hive_2024"]),
    Case("ACID003", "killed convert", lambda: {**valid(),
         "_acidtool_staging_1234/delta_0000003_0000003_0000/bucket_00000": acid(events(3))},
         ["_acidtool_staging_1234"]),
    Case("ACID003", "directory nested in a delta", lambda: {**valid(),
         f"{D1}/sub/bucket_00000": acid()}, [f"{D1}/sub"]),
    Case("ACID003", "non-ACID directory next to deltas", lambda: {**valid(),
         "HIVE_UNION_SUBDIR_1/000000_0": plain()}, ["HIVE_UNION_SUBDIR_1"]),
    Case("ACID003", "partition directories are not strays", lambda: {
         **{f"ds=1/{k}": v for k, v in valid().items()}}, []),
    # ACID004 bad file names in ACID directories
    Case("ACID004", "datax file in a delta", lambda: {**valid(),
         f"{D2}/orders__6f1c9e2a": acid(events(2))}, [f"{D2}/orders__6f1c9e2a"]),
    Case("ACID004", "attempt suffix under Hive 3", lambda: {**delta(D1),
         f"{D1}/bucket_00001_3": acid(events(1, bucket=1))}, [f"{D1}/bucket_00001_3"],
         ["--hive-version", "3"]),
    Case("ACID004", "attempt suffix under Hive 4", lambda: {**delta(D1),
         f"{D1}/bucket_00001_3": acid(events(1, bucket=1))}, []),
    Case("ACID004", "LOAD DATA raw file under Hive 3", lambda: {**valid(),
         "delta_0000003_0000003_0000/000000_0": plain(),
         "delta_0000003_0000003_0000/_orc_acid_version": MARK}, [], ["--hive-version", "3"]),
    Case("ACID004", "flush length side file is fine", lambda: {**valid(),
         f"{D2}/bucket_00000_flush_length": (0).to_bytes(8, "big")}, []),
    # ACID005 acid version marker
    Case("ACID005", "no marker", lambda: {**delta(D1, marker=False)}, [D1]),
    Case("ACID005", "wrong marker contents", lambda: {**delta(D1),
         f"{D1}/_orc_acid_version": b"3"}, [f"{D1}/_orc_acid_version"]),
    Case("ACID005", "Hive 2 writes none", lambda: {
         "delta_0000001_0000001_0000/bucket_00000": acid(events(1, v0=True), hive_version="2")},
         [], ["--hive-version", "2"]),
    Case("ACID005", "obsolete directories are not judged", lambda: {**delta(BASE, acid(events(1))),
         **delta(D1, marker=False)}, []),
    # ACID006 unreadable
    Case("ACID006", "zero bytes", lambda: {**valid(), f"{D2}/bucket_00000": b""},
         [f"{D2}/bucket_00000"]),
    Case("ACID006", "truncated", lambda: {**valid(), f"{D2}/bucket_00000": acid(events(2))[:-40]},
         [f"{D2}/bucket_00000"]),
    Case("ACID006", "csv dropped as original", lambda: {**valid(), "000000_0": b"1,a\n"},
         ["000000_0"]),
    Case("ACID006", "names level reads no footer", lambda: {**valid(),
         f"{D2}/bucket_00000": b""}, [], ["--level", "names"]),
    Case("ACID006", "open streaming file is read to its flushed length", lambda: {**valid(),
         f"{D2}/bucket_00000": acid(events(2)) + b"\x01unflushed",
         f"{D2}/bucket_00000_flush_length": len(acid(events(2))).to_bytes(8, "big")}, []),
    Case("ACID006", "flush length beyond the file", lambda: {**valid(),
         f"{D2}/bucket_00000_flush_length": (10**6).to_bytes(8, "big")},
         [f"{D2}/bucket_00000"]),
    Case("ACID006", "flush-length file ending in a partial length", lambda: {**valid(),
         f"{D2}/bucket_00000_flush_length": b"\0" * 12}, [f"{D2}/bucket_00000"]),
    Case("ACID006", "a stripe damaged behind a sound footer, at rows level", lambda: {
         **valid(), f"{D2}/bucket_00000": with_damaged_stripe(acid(events(2, n=3000)))},
         [f"{D2}/bucket_00000"], ["--level", "rows"]),
    Case("ACID006", "the same file at metadata level: only the footer is read", lambda: {
         **valid(), f"{D2}/bucket_00000": with_damaged_stripe(acid(events(2, n=3000)))}, []),
    # ACID007 not ACID schema
    Case("ACID007", "plain ORC as a bucket file", lambda: {**valid(),
         f"{D2}/bucket_00000": plain()}, [f"{D2}/bucket_00000"]),
    Case("ACID007", "LOAD DATA raw file", lambda: {**valid(),
         "delta_0000003_0000003_0000/000000_0": plain(),
         "delta_0000003_0000003_0000/_orc_acid_version": MARK}, []),
    # ACID008 ACID-like schema with wrong fields
    Case("ACID008", "swapped columns", lambda: {**valid(), f"{D2}/bucket_00000": orc_with_schema(
         f"struct<operation:int,bucket:int,originalTransaction:bigint,rowId:bigint,"
         f"currentTransaction:bigint,row:{ROW}>", [(0, 536870912, 2, 0, 2, (1, "a"))])},
         [f"{D2}/bucket_00000"]),
    Case("ACID008", "lower-case names (a warning)", lambda: {**valid(),
         f"{D2}/bucket_00000": orc_with_schema(
             f"struct<operation:int,originaltransaction:bigint,bucket:int,rowid:bigint,"
             f"currenttransaction:bigint,row:{ROW}>", [(0, 2, 536870912, 0, 2, (1, "a"))])},
         [f"{D2}/bucket_00000"]),
    Case("ACID008", "exact schema", valid, []),
    # ACID009 key index
    Case("ACID009", "no key index", lambda: {**valid(),
         f"{D2}/bucket_00000": acid(events(2), with_key_index=False)}, [f"{D2}/bucket_00000"]),
    # ACID010 key index mismatch
    Case("ACID010", "too many entries", lambda: {**valid(), f"{D2}/bucket_00000": acid(
         events(2), key_index_text="2,536870912,0;2,536870912,1;")}, [f"{D2}/bucket_00000"]),
    Case("ACID010", "wrong last key (rows)", lambda: {**valid(), f"{D2}/bucket_00000": acid(
         events(2), key_index_text="2,536870912,0;")}, [f"{D2}/bucket_00000"],
         ["--level", "rows"]),
    Case("ACID010", "wrong last key needs rows", lambda: {**valid(), f"{D2}/bucket_00000": acid(
         events(2), key_index_text="2,536870912,0;")}, []),
    Case("ACID010", "Hive 2 leaves out the last stripe", lambda: {
         D1 + "/bucket_00000": acid(events(1, v0=True), hive_version="2")}, [],
         ["--hive-version", "2", "--level", "rows"]),
    Case("ACID010", "unparsable", lambda: {**valid(), f"{D2}/bucket_00000": acid(
         events(2), key_index_text="garbage")}, [f"{D2}/bucket_00000"]),
    # ACID011 hive.acid.version
    Case("ACID011", "missing under Hive 4", lambda: {**valid(), f"{D2}/bucket_00000": acid(
         events(2), with_acid_version=False)}, [f"{D2}/bucket_00000"]),
    Case("ACID011", "not written by Hive 2", lambda: {
         D1 + "/bucket_00000": acid(events(1, v0=True), hive_version="2")}, [],
         ["--hive-version", "2"]),
    # ACID012 bucket id
    Case("ACID012", "bucket 1 rows in bucket_00000", lambda: {**valid(),
         f"{D2}/bucket_00000": acid(events(2, bucket=1))}, [f"{D2}/bucket_00000"]),
    Case("ACID012", "rows level", lambda: {**valid(),
         f"{D2}/bucket_00001": acid(events(2, bucket=3))}, [f"{D2}/bucket_00001"],
         ["--level", "rows"]),
    Case("ACID012", "Hive 2 plain bucket ids", lambda: {
         D1 + "/bucket_00001": acid(events(1, bucket=1, v0=True), hive_version="2")}, [],
         ["--hive-version", "2"]),
    Case("ACID012", "undefined codec version", lambda: {**valid(), f"{D2}/bucket_00000": acid(
         [Event(0, 2, 1073741824, 0, 2, (1, "a"))])}, [f"{D2}/bucket_00000"]),
    # ACID013 statement id
    Case("ACID013", "statement 0 rows in _0001", lambda: {**delta(D1),
         **delta("delta_0000001_0000001_0001", acid(events(1, stmt=0, start=5)))},
         ["delta_0000001_0000001_0001/bucket_00000"]),
    Case("ACID013", "matching statement", lambda: {**delta(D1),
         **delta("delta_0000001_0000001_0001", acid(events(1, stmt=1)))}, []),
    Case("ACID013", "compacted delta keeps each statement", lambda: {
         **delta("delta_0000001_0000003", acid(events(1, stmt=0) + events(2, stmt=1)
                                               + events(3, stmt=3)))}, []),
    # ACID014 write ids out of range
    Case("ACID014", "rows of write id 1 in delta 7", lambda: {**valid(),
         **delta("delta_0000007_0000007_0000", acid(events(1)))},
         ["delta_0000007_0000007_0000/bucket_00000"]),
    Case("ACID014", "insert with another original write id (rows)", lambda: {**valid(),
         **delta("delta_0000007_0000007_0000", acid(events(7, current=7)[:1] +
                 [Event(0, 6, 536870912, 1, 7, (1, "x"))]))},
         ["delta_0000007_0000007_0000/bucket_00000"], ["--level", "rows"]),
    Case("ACID014", "base above its write id", lambda: {**delta(BASE, acid(events(3)))},
         [f"{BASE}/bucket_00000"]),
    Case("ACID014", "streaming delta range", lambda: {**delta("delta_0000001_0000003",
         acid(events(1) + events(3)))}, [], ["--level", "rows"]),
    # ACID015 unsorted
    Case("ACID015", "row ids backwards", lambda: {**valid(), f"{D2}/bucket_00000": acid(
         list(reversed(events(2, n=3))), key_index_text="2,536870912,0;")},
         [f"{D2}/bucket_00000"], ["--level", "rows"]),
    Case("ACID015", "sorted across batches", lambda: {**valid(), f"{D2}/bucket_00000": acid(
         events(2, n=70000))}, [], ["--level", "rows"]),
    # ACID016 duplicates
    Case("ACID016", "same row id twice", lambda: {**valid(), f"{D2}/bucket_00000": acid(
         events(2, n=2) + events(2, n=1, start=1), key_index_text="2,536870912,1;")},
         [f"{D2}/bucket_00000"], ["--level", "rows"]),
    # ACID017 operation
    Case("ACID017", "insert events in a delete delta", lambda: {**valid(),
         **delta("delete_delta_0000003_0000003_0000", acid(events(1, current=3)))},
         ["delete_delta_0000003_0000003_0000/bucket_00000"]),
    Case("ACID017", "update events under Hive 3", lambda: {**valid(),
         **delta("delta_0000003_0000003_0000", acid(events(3, op=UPDATE)))},
         ["delta_0000003_0000003_0000/bucket_00000"]),
    Case("ACID017", "Hive 2 legacy table", lambda: {
         D1 + "/bucket_00000": acid(events(1, v0=True), hive_version="2"),
         "delta_0000003_0000003_0000/bucket_00000": acid(
             events(1, n=1, op=UPDATE, current=3, v0=True)
             + events(1, n=1, op=DELETE, current=3, v0=True, start=1), hive_version="2")},
         [], ["--hive-version", "2"]),
    Case("ACID017", "proper delete delta", lambda: {**valid(),
         **delta("delete_delta_0000003_0000003_0000", acid(events(1, op=DELETE, current=3)))},
         []),
    # ACID018 overlapping deltas
    Case("ACID018", "partial overlap", lambda: {**delta("delta_0000001_0000005"),
         **delta("delta_0000003_0000008", acid(events(3)))}, ["delta_0000003_0000008"]),
    Case("ACID018", "same delta spelt twice", lambda: {**delta("delta_1_1_0000"),
         **delta(D1, acid(events(1, start=2)))}, ["delta_1_1_0000"]),
    Case("ACID018", "compaction nests", lambda: {**delta("delta_0000001_0000005"),
         **delta("delta_0000002_0000003", acid(events(2)))}, []),
    # ACID019 row schema
    Case("ACID019", "one delta with other column types", lambda: {**valid(),
         **delta("delta_0000003_0000003_0000", acid(
             [Event(0, 3, 536870912, 0, 3, ("x", 1))], row_type="struct<a:string,b:int>")),
         **delta("delta_0000004_0000004_0000", acid(events(4)))},
         ["delta_0000003_0000003_0000/bucket_00000"]),
    Case("ACID019", "against --schema", valid, [f"{D1}/bucket_00000", f"{D2}/bucket_00000"],
         ["--schema", "struct<id:bigint,name:string>"]),
    Case("ACID019", "names differ, types agree", lambda: {**valid(),
         **delta("delta_0000003_0000003_0000", acid(
             [Event(0, 3, 536870912, 0, 3, (1, "x"))], row_type="struct<_col0:int,"
             "_col1:string>"))}, []),
    # ACID020 invisible
    Case("ACID020", "above the high watermark", valid, [D2],
         ["--write-ids", "db.t:1:9223372036854775807::"]),
    Case("ACID020", "no snapshot given", valid, []),
    # ACID021 cleaner behind
    Case("ACID021", "obsolete delta", lambda: {**delta(BASE, acid(events(1))), **delta(D1)},
         [D1]),
    Case("ACID021", "nothing superseded", valid, []),
    Case("ACID021", "aborted delta", lambda: valid(), [D2],
         ["--write-ids", "db.t:2:9223372036854775807::2"]),
    # ACID022 open streaming file
    Case("ACID022", "flush length", lambda: {**valid(),
         f"{D2}/bucket_00000_flush_length": (0).to_bytes(8, "big") +
         len(acid(events(2))).to_bytes(8, "big")}, [f"{D2}/bucket_00000_flush_length"]),
    # ACID023 unread original data
    Case("ACID023", "union subdir after a base", lambda: {**delta(BASE, acid(events(1))),
         "HIVE_UNION_SUBDIR_1/000000_0": plain()}, ["HIVE_UNION_SUBDIR_1"]),
    Case("ACID023", "no base", lambda: {**valid(), "HIVE_UNION_SUBDIR_1/000000_0": plain()}, []),
    # ACID024 compaction due
    Case("ACID024", "eleven deltas", lambda: {k: v for i in range(1, 12) for k, v in delta(
         f"delta_{i:07d}_{i:07d}_0000", acid(events(i))).items()}, [""]),
    Case("ACID024", "ten deltas", lambda: {k: v for i in range(1, 11) for k, v in delta(
         f"delta_{i:07d}_{i:07d}_0000", acid(events(i))).items()}, []),
    Case("ACID024", "deltas large next to the base", lambda: {
         **delta("base_0000001", acid(events(1))), **delta(D2, acid(events(2, n=500)))}, [""]),
    # ACID025 null event values (a foreign writer's file in the event schema)
    Case("ACID025", "null bucket", lambda: {**valid(), f"{D2}/bucket_00000": orc_with_schema(
         EVENT_SCHEMA, [(0, 2, 536870912, 0, 2, (1, "a")), (0, 2, None, 1, 2, (2, "b"))],
         {"hive.acid.key.index": b"2,536870912,1;", "hive.acid.version": b"2"})},
         [f"{D2}/bucket_00000"], ["--level", "rows"]),
    Case("ACID025", "every value set", lambda: {**valid(), f"{D2}/bucket_00000": orc_with_schema(
         EVENT_SCHEMA, [(0, 2, 536870912, 0, 2, (1, "a")), (0, 2, 536870912, 1, 2, (2, "b"))],
         {"hive.acid.key.index": b"2,536870912,1;", "hive.acid.version": b"2"})},
         [], ["--level", "rows"]),
]


def _run(case, tmp_path):
    table = build(tmp_path / "tbl", case.layout())
    result = run("validate", table, "--format", "json", "--select", case.code,
                 "--fail-on", "info", *case.args)
    assert result.code in (0, 1), result.err
    doc = json.loads(result.out)
    prefix = str(table)
    paths = sorted(f["path"][len(prefix):].lstrip("/") for f in doc["findings"])
    return result, doc, paths


@pytest.mark.parametrize("case", CASES, ids=[f"{c.code}-{c.label}" for c in CASES])
def test_rule(case, tmp_path):
    result, doc, paths = _run(case, tmp_path)
    assert paths == sorted(case.fires_at), [f["message"] for f in doc["findings"]]
    assert all(f["code"] == case.code for f in doc["findings"])
    assert result.code == (1 if case.fires_at else 0)


def test_every_rule_has_docs_and_both_kinds_of_case():
    for code, r in REGISTRY.items():
        for text in (r.name, r.summary, r.what, r.why, r.example, r.fix):
            assert text and len(text) > 3, (code, text)
        cases = [c for c in CASES if c.code == code]
        assert any(c.fires_at for c in cases), f"{code} has no failing layout"
        assert any(not c.fires_at for c in cases) or code in ("ACID009", "ACID015", "ACID016",
                                                              "ACID022"), \
            f"{code} has no passing layout"
        assert run("explain", code).code == 0


def test_valid_layout_is_clean_for_every_rule(tmp_path):
    # the passing layout shared by rules without a dedicated one (ACID009, 015, 016, 022)
    table = build(tmp_path / "tbl", valid())
    result = run("validate", table, "--format", "json", "--level", "rows", "--fail-on", "info")
    assert result.code == 0, result.out
    assert json.loads(result.out)["findings"] == []
