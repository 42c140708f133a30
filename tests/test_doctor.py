"""``acidtool doctor`` against real metastores (Hive 2.3.10, 3.1.3, 4.0.1 on loopback): a table
in exactly one state each, and doctor must report exactly that code (partition, write ids,
transaction, compaction) and no other; a clean table gives exit 0. Plus the rules over made-up
views (core.doctor), which need no metastore."""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

import pytest

from acidtool.core.doctor import Compaction, Dir, OpenTxn, TableView, diagnose
from acidtool.core.snapshot import ValidTxnList, ValidWriteIdList
from acidtool.core.versions import HiveVersion
from acidtool.io.metastore import Metastore as Client
from acidtool.io.thrift import I32, I64, STRING, STRUCT

from .helpers.layouts import acid, events
from .helpers.metastore import create_table
from .helpers.runner import run

_names = itertools.count()


# -- the rules over made-up views (no metastore) -----------------------------------------------

def view(**kw) -> TableView:
    base = dict(table="db.t", version=HiveVersion.V3, location="/w/t",
                write_ids=ValidWriteIdList(high_watermark=5), txns=ValidTxnList(high_watermark=9))
    base.update(kw)
    return TableView(**base)


def d(name: str, lo: int, hi: int, status: str = "selected", part: str = "") -> Dir:
    return Dir(part, f"/w/t/{part + '/' if part else ''}{name}", name, lo, hi,
               name.startswith("base_"), status)


@pytest.mark.parametrize("kw,expect", [
    ({"dirs": [d("delta_1_5", 1, 5)]}, []),
    ({"dirs": [d("delta_1_5", 1, 5), d("delta_7_7", 7, 7, "ignored")]},
     [("HMS001", "", (7,))]),
    ({"dirs": [d("base_9", 0, 9)]}, [("HMS001", "", (6, 7, 8, 9))]),
    ({"dirs": [d("delta_1_4", 1, 4), d("delta_5_5", 5, 5, "aborted")],
      "write_ids": ValidWriteIdList(high_watermark=5, exceptions=(5,), aborted=(5,))},
     [("HMS002", "", (5,))]),
    ({"dirs": [d("delta_1_2", 1, 2), d("delta_4_5", 4, 5)]}, [("HMS003", "", (3,))]),
    ({"dirs": [d("base_3", 0, 3), d("delta_4_5", 4, 5)]}, []),  # a base holds what it covers
    ({"dirs": [d("delta_1_5", 1, 5), d("delta_1_1", 1, 1, "obsolete")]},
     [("HMS008", "", ())]),
    ({"dirs": [d("delta_1_5", 1, 5), d("delta_1_1", 1, 1, "obsolete")],  # held back
      "write_ids": ValidWriteIdList(high_watermark=5, min_open=1, exceptions=(1,))},
     []),
])
def test_each_rule_over_a_made_up_view(kw, expect):
    found = [(f.code, f.partition, f.write_ids) for f in diagnose(view(**kw))]
    assert found == expect


def test_partitions_open_transactions_and_compactions_over_a_made_up_view():
    v = view(partitioned=True, dirs=[d("delta_1_5", 1, 5, part="k=1")],
             disk_partitions={"k=1": "/w/t/k=1", "k=2": "/w/t/k=2"},
             hms_partitions={"k=1": ("/w/t/k=1", True), "k=3": ("/w/t/k=3", False)},
             open_txns=[OpenTxn(8, "u", "h", 7200.0, True), OpenTxn(9, "u", "h", 10.0, True),
                        OpenTxn(7, "u", "h", 9999.0, False)],
             compactions=[Compaction(1, "k=1", "major", "failed", 5.0, "boom"),
                          Compaction(2, "k=2", "minor", "failed", 5.0),
                          Compaction(3, "k=2", "minor", "succeeded", 1.0),  # k=2 recovered
                          Compaction(4, "k=1", "minor", "initiated", 10.0),  # young
                          Compaction(5, "k=1", "minor", "working", 7200.0)])
    found = [(f.code, f.partition, f.txn, (f.compaction or {}).get("id")) for f in diagnose(v)]
    assert found == [("HMS004", "k=2", None, None), ("HMS005", "k=3", None, None),
                     ("HMS006", "", 8, None), ("HMS007", "k=1", None, 1),
                     ("HMS007", "k=1", None, 5)]


# -- real metastores ---------------------------------------------------------------------------

@pytest.fixture
def made(metastore):
    """A new empty transactional table: (db.name, its directory, the metastore's info)."""
    def make(partitioned: bool = False):
        name = f"doc{next(_names)}"
        location = Path(metastore.warehouse) / name
        location.mkdir(parents=True)
        create_table(metastore.url, "default", name, "file://" + str(location),
                     partition_keys=(("ds", "string"),) if partitioned else ())
        with Client(metastore.url) as client:
            info = client.table("default", name)
        return f"default.{name}", location, info
    return make


def commit(metastore, info, abort: bool = False) -> int:
    """A writer's transaction on the table: the write id (Hive 2.3: the transaction id)."""
    with Client(metastore.url) as client:
        txn = client.open_txn()
        wid = client.allocate_write_id(txn, info) if metastore.version != "2" else txn
        client.abort_txn(txn) if abort else client.commit_txn(txn)
    return wid


def put(metastore, where: Path, name: str, wid: int) -> None:
    version = "2" if metastore.version == "2" else "3"
    (where / name).mkdir(parents=True, exist_ok=True)
    (where / name / "bucket_00000").write_bytes(acid(events(wid, 2), hive_version=version))
    if version != "2":
        (where / name / "_orc_acid_version").write_bytes(b"2")


def delta(w: int) -> str:
    return f"delta_{w:07d}_{w:07d}_0000"


def doctor(metastore, table: str, *more):
    return run("doctor", table, "--metastore", metastore.url, "--format", "json", *more)


def found(result) -> list[tuple]:
    assert result.code in (0, 1), result.err
    (t,) = result.json()["tables"]
    return [(f["code"], f["partition"], tuple(f["write_ids"]), f["txn"],
             (f.get("compaction") or {}).get("state")) for f in t["findings"]]


def test_a_clean_table_has_nothing_to_report(metastore, made):
    name, location, info = made()
    for _ in range(2):
        w = commit(metastore, info)
        put(metastore, location, delta(w), w)
    result = doctor(metastore, name)
    assert found(result) == [] and result.code == 0
    text = run("doctor", name, "--metastore", metastore.url)
    assert text.code == 0 and f"{name}: nothing found" in text.out


def test_a_directory_of_a_write_id_never_allocated(metastore, made):
    name, location, info = made()
    w = commit(metastore, info)
    put(metastore, location, delta(w), w)
    with Client(metastore.url) as client:
        hwm = client.txns().high_watermark
    foreign = (hwm if metastore.version == "2" else w) + 1000
    put(metastore, location, delta(foreign), foreign)
    assert found(doctor(metastore, name)) == [("HMS001", "", (foreign,), None, None)]


def test_an_aborted_write_not_cleaned(metastore, made):
    name, location, info = made()
    w = commit(metastore, info)
    put(metastore, location, delta(w), w)
    gone = commit(metastore, info, abort=True)
    put(metastore, location, delta(gone), gone)
    assert found(doctor(metastore, name)) == [("HMS002", "", (gone,), None, None)]


def test_a_committed_write_id_with_no_directory(metastore, made):
    if metastore.version == "2":
        pytest.skip("Hive 2.3 has no write ids of a table's own: its transactions are global")
    name, location, info = made()
    kept, lost = commit(metastore, info), commit(metastore, info)
    put(metastore, location, delta(kept), kept)
    assert found(doctor(metastore, name)) == [("HMS003", "", (lost,), None, None)]


def test_a_partition_on_disk_only_and_one_in_the_metastore_only(metastore, made):
    name, location, info = made(partitioned=True)
    w = commit(metastore, info)
    with Client(metastore.url) as client:
        client.add_partition(info, ["1"], "file://" + str(location / "ds=1"))
    put(metastore, location / "ds=1", delta(w), w)
    put(metastore, location / "ds=2", delta(w), w)
    assert found(doctor(metastore, name)) == [("HMS004", "ds=2", (), None, None)]
    with Client(metastore.url) as client:
        client.add_partition(info, ["3"], "file://" + str(location / "ds=3"))
    os.rename(location / "ds=2", location.parent / f"{location.name}-ds2")  # (HMS004 gone)
    (location / "ds=3").rmdir() if (location / "ds=3").exists() else None
    assert found(doctor(metastore, name)) == [("HMS005", "ds=3", (), None, None)]
    assert found(doctor(metastore, f"{name}/ds=1")) == []  # one partition asked for


def test_an_old_open_transaction_holding_the_cleaner_back(metastore, made):
    name, location, info = made()
    w = commit(metastore, info)
    put(metastore, location, delta(w), w)
    with Client(metastore.url) as client:
        txn = client.open_txn()
        if metastore.version == "2":
            client.lock(txn, info, None)
        else:
            client.allocate_write_id(txn, info)
        try:
            assert found(doctor(metastore, name, "--older-than", "1d")) == []  # young
            time.sleep(1.1)
            assert found(doctor(metastore, name, "--older-than", "1s")) == \
                [("HMS006", "", (), txn, None)]
        finally:
            client.abort_txn(txn)


def test_a_compaction_waiting_too_long_and_one_that_failed(metastore, made):
    name, location, info = made()
    w = commit(metastore, info)
    put(metastore, location, delta(w), w)
    with Client(metastore.url) as client:
        r = client.call("compact2", [(1, STRUCT, [(1, STRING, "default"),
                                                  (2, STRING, info.name), (4, I32, 2)])])
    if metastore.version == "4":
        assert found(doctor(metastore, name, "--older-than", "1d")) == []  # young
    time.sleep(1.1)
    assert found(doctor(metastore, name, "--older-than", "1s")) == \
        [("HMS007", "", (), None, "initiated")]
    if metastore.version != "4":
        return  # (only 4.0's metastore lets a client play the compactor's worker)
    with Client(metastore.url) as client:
        client.call("find_next_compact", [(1, STRING, "acidtool-test")])
        client.call("mark_failed", [(1, STRUCT, [(1, I64, r[1]), (2, STRING, "default"),
                                                 (3, STRING, info.name), (5, I32, 2)])])
    assert found(doctor(metastore, name, "--older-than", "1d")) == \
        [("HMS007", "", (), None, "failed")]


def test_obsolete_directories_the_cleaner_should_have_removed(metastore, made):
    name, location, info = made()
    ids = [commit(metastore, info) for _ in range(3)]
    for w in ids:
        put(metastore, location, delta(w), w)
    put(metastore, location, f"base_{ids[1]:07d}", ids[1])
    assert found(doctor(metastore, name)) == [("HMS008", "", (), None, None)]


def test_doctor_reads_only_and_batches_its_calls(metastore, made, tmp_path):
    tables = [made() for _ in range(6)]
    for _, location, info in tables:
        w = commit(metastore, info)
        put(metastore, location, delta(w), w)
    before = {str(p): p.stat().st_mtime_ns for _, loc, _ in tables for p in loc.rglob("*")}
    with Client(metastore.url) as client:
        txns, compactions = client.txns(), client.compactions()
    result = run("doctor", "default.*", "--metastore", metastore.url)
    assert result.code in (0, 1), result.err
    calls = int(result.out.rsplit(", ", 1)[1].split()[0])
    listed = len(result.out.splitlines()) - 2  # a line per table at least
    assert calls <= 8 + 3 * listed, result.out  # a few per table, the rest once per run
    after = {str(p): p.stat().st_mtime_ns for _, loc, _ in tables for p in loc.rglob("*")}
    assert after == before
    with Client(metastore.url) as client:
        assert client.txns() == txns and client.compactions() == compactions


def test_usage_errors_and_an_unreachable_metastore_are_one_line_and_exit_2(tmp_path):
    for args in (["doctor", "db.t"], ["doctor", "not a table", "--metastore",
                                      "thrift://127.0.0.1:1"],
                 ["doctor", "db.t", "--metastore", "thrift://127.0.0.1:1"],
                 ["doctor", "db.t", "--metastore", "thrift://127.0.0.1:1", "--older-than",
                  "soon"]):
        result = run(*args)
        assert result.code == 2 and len(result.err.strip().splitlines()) == 1, result.err


def test_report_with_a_metastore_carries_doctors_findings(metastore, made, tmp_path):
    name, location, info = made()
    w = commit(metastore, info)
    put(metastore, location, delta(w), w)
    gone = commit(metastore, info, abort=True)
    put(metastore, location, delta(gone), gone)
    result = run("report", name, "--metastore", metastore.url, "--format", "json", "-o", "-")
    assert result.code == 0, result.err
    doc = result.json()
    assert [f["code"] for f in doc["doctor"][name]] == ["HMS002"]
    page = tmp_path / "r.html"
    assert run("report", name, "--metastore", metastore.url, "-o", page).code == 0
    html = page.read_text()
    assert "The metastore against the files" in html and "HMS002" in html
    assert "<th data-col=12>metastore</th>" in html
