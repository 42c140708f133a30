"""``dump`` and ``meta`` on the real files in ../shared/realdata, checked against what their
origins' tests assert (../shared/realdata/PROVENANCE.md)."""

import json

import pytest

from .helpers.runner import run
from .helpers.shared import REALDATA, require

TRINO = "trino"
QUBOLE = "qubole-presto"


def rows(*args):
    result = run("dump", *args)
    assert result.code == 0, result.err
    return [json.loads(line) for line in result.out.splitlines()]


def test_nation_25k_rows():
    path = require(REALDATA / TRINO / "nationFile25kRowsSortedOnNationKey/bucket_00000")
    out = rows(path)
    assert len(out) == 25000
    assert {(r["originalTransaction"], r["bucket"], r["currentTransaction"]) for r in out} == {
        (2, 536870912, 2)}
    assert [r["rowId"] for r in out] == list(range(25000))
    assert out[0]["row"]["n_name"] == "ALGERIA"
    # each nation repeated 1000 times, sorted on nationkey
    assert [out[i]["row"]["n_nationkey"] for i in range(0, 25000, 1000)] == list(range(25))


@pytest.mark.parametrize("delta,txn,first", [("delete_delta_0000003_0000003_0000", 3, 5000),
                                             ("delete_delta_0000004_0000004_0000", 4, 19000)])
def test_nation_delete_deltas(delta, txn, first):
    path = require(REALDATA / TRINO / "nation_delete_deltas" / delta / "bucket_00000")
    out = rows(path)
    assert [r["rowId"] for r in out] == list(range(first, first + 1000))
    assert all(r["operation"] == 2 and r["row"] is None and r["originalTransaction"] == 2
               and r["currentTransaction"] == txn and r["bucket"] == 536870912 for r in out)


def test_fullacid_single_row_is_exactly_the_documented_line():
    path = require(REALDATA / QUBOLE / "presto-orc/src/test/resources/"
                   "fullacid_basefile_singleCol_singleRow.orc")
    assert run("dump", path).out == ('{"operation":0,"originalTransaction":2,"bucket":536870912,'
                                     '"rowId":0,"currentTransaction":2,"row":{"col":2}}\n')


def test_delete_against_original_file_bucket_1():
    path = require(REALDATA / QUBOLE / "presto-hive/src/test/resources/dummy_id_data_orc/"
                   "delete_delta_0000001_0000001_0000/bucket_00001")
    (r,) = rows(path, "--decode")
    assert (r["originalTransaction"], r["bucket"], r["rowId"], r["currentTransaction"]) == (
        0, 536936448, 1, 1)
    assert (r["bucketId"], r["statementId"], r["codecVersion"], r["op"]) == (1, 0, 1, "delete")


def test_original_files_synthetic_row_ids_follow_path_order():
    table = require(REALDATA / TRINO / "dummy_id_data_orc")
    out = rows(table, "--synthetic-row-ids", "--with-file")
    assert out[-1]["file"] == "delete_delta_10000001_10000001_0000/bucket_00000"
    assert (out[-1]["originalTransaction"], out[-1]["rowId"]) == (0, 2)
    out = out[:-1]
    first = {}
    for r in out:
        first.setdefault(r["file"], r["rowId"])
    # 000002_0_copy_2 starts at 8: 000002_0 and 000002_0_copy_1 hold 4 rows each (bucket 2)
    assert first == {"000000_0": 0, "000001_0": 0, "000002_0": 0, "000002_0_copy_1": 4,
                     "000002_0_copy_2": 8}
    assert {r["bucket"] for r in out if r["file"].startswith("000002")} == {537001984}
    ids = [r["row"]["id"] for r in out]
    assert ids == [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]


def test_streaming_file_with_two_transactions():
    path = require(REALDATA / "impala/testdata/data/streaming.orc")
    out = rows(path)
    assert [(r["originalTransaction"], r["row"]["a"], r["row"]["b"]) for r in out] == [
        (1, "a1", "b2"), (1, "a3", "b4"), (2, "a5", "b6"), (2, "a7", "b8")]
    assert len(rows(path, "--write-id", "2")) == 2
    meta = run("meta", path, "--format", "json").json()[0]
    assert [(k["originalTransaction"], k["rowId"]) for k in meta["acid"]["key_index"]] == [
        (1, 1), (2, 1)]
    assert len(meta["stripes"]) == 2


def test_lower_case_acid_names_still_decode():
    path = require(REALDATA / "impala/testdata/data/full_acid_schema_but_no_acid_version.orc")
    out = rows(path, "--decode")
    assert [r["row"]["i"] for r in out] == [1, 2, 3]
    assert all(r["op"] == "insert" for r in out)
    meta = run("meta", path, "--format", "json").json()[0]
    assert meta["acid_schema"] is True and meta["acid"] is None


def test_acid5k():
    path = require(REALDATA / "orc/java/mapreduce/src/test/resources/acid5k.orc")
    out = rows(path)
    assert len(out) == 5000
    assert all(len(r) == 6 and len(r["row"]) == 3 and min(r["row"].values()) >= 0 for r in out)
    assert {r["originalTransaction"] for r in out} == {12}
    meta = run("meta", path, "--format", "json").json()[0]
    assert meta["compression"] == "SNAPPY" and meta["acid"]["version"] == "2"


def test_alltypesorc_count_and_delete_predicate():
    path = require(REALDATA / "hive/data/files/alltypesorc")
    out = rows(path)
    assert len(out) == 12288
    assert sum(1 for r in out if r["cint"] is not None and r["cint"] < -1070551679) == 8


def test_hive2_pre_gregorian_dates_print_as_hive_wrote_them():
    path = require(REALDATA / "impala/testdata/data/hive2_pre_gregorian.orc")
    # Hive 2.1.1 wrote 1582-10-04/05/06/15/16 in the hybrid calendar; Java (and so orc-tools)
    # prints those back; proleptic readers (Impala, pyorc) show 1582-10-14, 15, 16, 15, 16.
    assert [r["d"] for r in rows(path)] == ["1582-10-04", "1582-10-15", "1582-10-16",
                                            "1582-10-15", "1582-10-16"]


def test_meta_of_hive_delta():
    path = require(REALDATA / "hive/data/files/test_hcube_2.db/tbl1/delta_0000002_0000002_0000")
    (meta,) = run("meta", path, "--format", "json").json()
    assert meta["acid_schema"] and meta["acid"]["stats"] == {"inserts": 1, "updates": 0,
                                                             "deletes": 0}
    text = run("meta", path).out
    assert "hive.acid.key.index: 1 entry for 1 stripes" in text or "hive.acid.key.index" in text


def test_every_realdata_orc_file_dumps():
    root = require(REALDATA)
    files = [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(("_", "."))
             and p.suffix not in (".md", ".crc")]
    assert len(files) > 50
    for p in files:
        result = run("dump", p, "--limit", "5")
        assert result.code == 0, (p, result.err)
        assert result.out, p
