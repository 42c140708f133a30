"""``--metastore``: real Hive metastores (2.3.10, 3.1.3, 4.0.1) on loopback name tables, give
snapshots, and own convert's transactions. Each test runs against each version."""

from __future__ import annotations

import contextlib
import itertools
import socket
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.orc as po
import pytest

from acidtool.core.catalog import MetastoreError
from acidtool.io.metastore import Metastore as Client

from .helpers.metastore import create_table
from .helpers.runner import run

pytestmark = pytest.mark.spark
_names = itertools.count()


@pytest.fixture
def table(metastore, tmp_path):
    """A new bucketed transactional table (id int, name string) in the default database."""
    name = f"t{next(_names)}"
    location = f"{metastore.warehouse}/{name}"
    create_table(metastore.url, "default", name, "file://" + location)
    return f"default.{name}", location


def raw_orc(path, ids, names=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    names = names or [f"n{i}" for i in ids]
    po.write_table(pa.table({"id": pa.array(ids, pa.int32()), "name": names}), str(path))
    return path


def convert(metastore, source, table, *more):
    return run("convert", source, "--table", table, "--write-id", "auto", "--metastore",
               metastore.url, "--format", "json", *more)


def test_the_version_is_told_by_the_calls_the_metastore_lacks(metastore):
    with Client(metastore.url) as client:
        assert client.version == metastore.version


def test_ls_names_a_table_and_takes_the_metastores_snapshot(metastore, table, tmp_path):
    name, location = table
    result = run("ls", name, "--metastore", metastore.url, "--format", "json")
    assert result.code == 0, result.err
    doc = result.json()
    assert doc["hive_version"] == metastore.version
    assert doc["snapshot"]["source"] == f"metastore {metastore.url}"
    assert doc["path"].rstrip("/").endswith(location.lstrip("/"))
    assert "snapshot" in result.err and metastore.url in result.err
    assert doc["metastore"]["table"] == name and doc["metastore"]["columns"] == ["id", "name"]
    assert (doc["metastore"]["num_buckets"], doc["metastore"]["bucket_cols"]) == (2, ["id"])


def test_a_converted_delta_is_committed_in_the_metastore_and_read_by_name(metastore, table,
                                                                          tmp_path):
    name, location = table
    with Client(metastore.url) as client:
        before = client.txns()
    result = convert(metastore, raw_orc(tmp_path / "in" / "part-0.orc", [1, 2, 3]), name)
    assert result.code == 0, result.err
    summary = result.json()
    txn = summary["transaction"]
    assert txn > before.high_watermark or before.high_watermark == 0
    with Client(metastore.url) as client:
        after = client.txns()
        assert not after.is_aborted(txn) and txn not in after.open_ids
        assert after.high_watermark >= txn
        if metastore.version != "2":
            ids = client.write_ids(client.table(*name.split(".")), after)
            assert ids.is_valid(summary["write_id"])
        else:
            assert summary["write_id"] == txn  # 2.3 numbers deltas by transaction
    listing = run("ls", name, "--metastore", metastore.url, "--format", "json").json()
    selected = [e["name"] for p in listing["partitions"] for e in p["entries"]
                if e["status"] == "selected"]
    assert selected == [summary["directory"]]
    rows = run("read", name, "--metastore", metastore.url)
    assert rows.code == 0, rows.err
    assert sorted(rows.out.splitlines()) == [
        '{"id":1,"name":"n1"}', '{"id":2,"name":"n2"}', '{"id":3,"name":"n3"}']


@dataclass
class OpenWrite:
    """A write the metastore holds open: its transaction and write id (the transaction on
    Hive 2), aborted when its ``with`` ends unless committed."""

    client: Client
    txn: int
    write_id: int
    committed: bool = False

    def commit(self) -> None:
        self.client.commit_txn(self.txn)
        self.committed = True


@contextlib.contextmanager
def open_write(metastore, table, tmp_path) -> Iterator[OpenWrite]:
    """Row 1 converted into ``table`` and committed, then row 2 converted under a write the
    metastore holds open."""
    name, location = table
    assert convert(metastore, raw_orc(tmp_path / "a" / "x.orc", [1]), name).code == 0
    with Client(metastore.url) as client:
        info = client.table(*name.split("."))
        txn = client.open_txn()
        write_id = client.allocate_write_id(txn, info) if metastore.version != "2" else txn
        write = OpenWrite(client, txn, write_id)
        try:
            late = run("convert", raw_orc(tmp_path / "b" / "y.orc", [2]), "--table", location,
                       "--write-id", str(write_id), "--hive-version", metastore.version)
            assert late.code == 0, late.err
            yield write
        finally:
            if not write.committed:
                client.abort_txn(txn)


def test_an_open_transaction_hides_its_delta_as_hive_would(metastore, table, tmp_path):
    """A writer still open in the metastore: its delta is on disk but nobody may read it."""
    name, _ = table
    with open_write(metastore, table, tmp_path) as write:
        listing = run("ls", name, "--metastore", metastore.url, "--format", "json").json()
        entries = {e["name"]: e["status"] for p in listing["partitions"] for e in p["entries"]}
        hidden = [n for n in entries if f"_{write.write_id:07d}_" in n]
        assert hidden and all(entries[n] != "selected" for n in hidden), entries
        assert run("read", name, "--metastore", metastore.url).out.splitlines() == [
            '{"id":1,"name":"n1"}']
        write.commit()
    assert sorted(run("read", name, "--metastore", metastore.url).out.splitlines()) == [
        '{"id":1,"name":"n1"}', '{"id":2,"name":"n2"}']


def test_a_failure_while_writing_aborts_the_transaction_and_leaves_the_table(
        metastore, table, tmp_path, monkeypatch):
    import acidtool.commands.convert.delta as convert_module

    name, location = table

    def boom(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(convert_module, "write_files", boom)
    with Client(metastore.url) as client:
        before = client.txns().high_watermark
    result = convert(metastore, raw_orc(tmp_path / "in" / "x.orc", [1]), name)
    assert result.code == 2 and "No space left" in result.err
    with Client(metastore.url) as client:
        after = client.txns()
    aborted = [t for t in range(before + 1, after.high_watermark + 1)]
    assert aborted and all(after.is_aborted(t) or t in after.exceptions for t in aborted)
    import os
    assert [n for n in os.listdir(location) if not n.startswith(".")] == [] \
        if os.path.isdir(location) else True


def test_a_new_partition_is_added_with_the_delta(metastore, tmp_path):
    location = f"{metastore.warehouse}/parted{metastore.version}"
    create_table(metastore.url, "default", f"parted{metastore.version}", "file://" + location,
                 partition_keys=(("ds", "string"),))
    name = f"default.parted{metastore.version}"
    result = convert(metastore, raw_orc(tmp_path / "in" / "x.orc", [7]), name,
                     "--partition", "ds=2026-11-24")
    assert result.code == 0, result.err
    with Client(metastore.url) as client:
        info = client.table("default", f"parted{metastore.version}")
        parts = client.partitions(info)
    assert [p.name for p in parts] == ["ds=2026-11-24"]
    rows = run("read", name, "--metastore", metastore.url)
    assert rows.code == 0, rows.err
    assert rows.out.splitlines() == ['{"id":7,"name":"n7","ds":"2026-11-24"}']
    # the partition named alone reads as its directory does: no partition column
    rows = run("read", f"{name}/ds=2026-11-24", "--metastore", metastore.url)
    assert rows.out.splitlines() == ['{"id":7,"name":"n7"}']


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("args,message", [
    (lambda m: ["ls", "default.nosuch", "--metastore", m.url], "no table default.nosuch"),
    (lambda m: ["ls", "default.t0", "--metastore", f"thrift://127.0.0.1:{_free_port()}"],
     "cannot reach the metastore"),
    (lambda m: ["read", "default.plain", "--metastore", m.url], "not a transactional table"),
    (lambda m: ["ls", "default.nosuch", "--metastore", "http://x"], "thrift://HOST:PORT"),
    (lambda m: ["ls", "default.plain", "--metastore", m.url, "--hive-version",
                "3" if m.version != "3" else "4"], "disagrees with the metastore"),
])
def test_what_goes_wrong_is_one_line_and_exit_2(metastore, tmp_path, args, message):
    try:
        create_table(metastore.url, "default", "plain", f"file://{metastore.warehouse}/plain",
                     transactional=False, bucket_cols=())
    except RuntimeError:
        pass  # made by an earlier case
    result = run(*args(metastore))
    assert result.code == 2, result
    assert message in result.err and len(result.err.strip().splitlines()) == 1, result.err


def test_hives_own_reader_given_the_metastores_snapshot_returns_the_converted_rows(
        metastore, table, tmp_path, request):
    """Hive 3.1's and 4.0's merged ACID scan, handed the snapshot the metastore gives, reads
    what acidtool reads: the converted rows, and not a delta whose writer is still open."""
    if metastore.version == "2":
        pytest.skip("Hive 2.3's reader runs in Spark's JVM: its judge is the 3.1 and 4.0 one")
    from .helpers.hivejvm import acidtool_rows

    judge = request.getfixturevalue("hive31" if metastore.version == "3" else "hive40")
    name, location = table
    assert convert(metastore, raw_orc(tmp_path / "a" / "x.orc", [1, 2, 3]), name).code == 0
    with Client(metastore.url) as client:
        info = client.table(*name.split("."))
        txn = client.open_txn()
        write_id = client.allocate_write_id(txn, info)
        assert run("convert", raw_orc(tmp_path / "b" / "y.orc", [4]), "--table", location,
                   "--write-id", str(write_id), "--hive-version", metastore.version).code == 0
        txns = client.txns()
        ids = client.write_ids(info, txns)
        client.abort_txn(txn)
    hive = judge.read(location, str(ids), txns.text(ranges=False), buckets=2)
    ours = acidtool_rows(location, metastore.version, "--write-ids", str(ids), "--txns",
                         txns.text(ranges=False))
    assert sorted(v for _, v in hive) == [["1", "n1"], ["2", "n2"], ["3", "n3"]]
    assert hive == ours


def test_repair_rewraps_under_a_write_id_the_metastore_allocates(metastore, table, tmp_path):
    """A DataX file dropped into the table's root: `repair --write-id auto --apply` re-wraps it
    in a transaction of the metastore, which then shows it committed; `ls` by name selects it
    and `read` returns its rows."""
    name, location = table
    assert convert(metastore, raw_orc(tmp_path / "a" / "x.orc", [1]), name).code == 0
    raw_orc(tmp_path / "t" / "orders__datax", [5, 6]).rename(f"{location}/orders__datax")
    plan = run("repair", name, "--metastore", metastore.url, "--write-id", "auto", "--format",
               "json", "--min-age", "0")
    assert plan.code == 1 and "provisional" in plan.err
    assert [a["kind"] for a in plan.json()["actions"]] == ["rewrap"]
    done = run("repair", name, "--metastore", metastore.url, "--write-id", "auto", "--apply",
               "--format", "json", "--min-age", "0")
    assert done.code == 0, done.err
    txn = done.json()["transaction"]
    with Client(metastore.url) as client:
        after = client.txns()
    assert txn not in after.exceptions and after.high_watermark >= txn
    assert sorted(run("read", name, "--metastore", metastore.url).out.splitlines()) == [
        '{"id":1,"name":"n1"}', '{"id":5,"name":"n5"}', '{"id":6,"name":"n6"}']


def test_a_path_is_matched_to_its_table_by_location(metastore, table, tmp_path):
    name, location = table
    assert convert(metastore, raw_orc(tmp_path / "in" / "x.orc", [3]), name).code == 0
    by_path = run("ls", location, "--metastore", metastore.url, "--format", "json")
    assert by_path.code == 0, by_path.err
    assert by_path.json()["snapshot"]["source"] == f"metastore {metastore.url}"
    with Client(metastore.url) as client:
        info = client.table(*name.split("."))
        expected = client.write_ids(info, client.txns()) if metastore.version != "2" else None
    if expected is not None:
        assert by_path.json()["snapshot"]["write_ids"] == str(expected)


def _fail(exc):
    def boom(*args, **kwargs):
        raise exc
    return boom


# Each step of convert's transaction, failed or interrupted: (what to patch, the exception,
# the exit status). A partition is new in every case, so add_partition is a step too.
FAULTS = [
    ("acidtool.io.metastore.Metastore.lock", MetastoreError("lock refused"), 2),
    ("acidtool.io.metastore.Metastore.allocate_write_id", MetastoreError("no write id"), 2),
    ("acidtool.commands.convert.delta.write_files", KeyboardInterrupt(), 130),
    ("acidtool.commands.convert.delta.write_files", "Terminated", 143),
    ("acidtool.io.journal.rename", OSError(5, "I/O error"), 2),  # the commit
    ("acidtool.io.metastore.Metastore.add_partition", MetastoreError("no partition"), 2),
    ("acidtool.io.metastore.Metastore.commit_txn", MetastoreError("commit refused"), 2),
    ("acidtool.io.metastore.Metastore.commit_txn", KeyboardInterrupt(), 130),
]


@pytest.mark.parametrize("where,exc,status", FAULTS,
                         ids=[f"{w.rsplit('.', 1)[1]}-{type(e).__name__ if not isinstance(e, str) else e}"
                              for w, e, _ in FAULTS])
def test_a_failure_at_any_step_aborts_and_leaves_the_table_as_it_was(
        metastore, tmp_path, monkeypatch, where, exc, status):
    import os

    from acidtool.core.errors import Terminated

    if metastore.version == "2" and "allocate_write_id" in where:
        pytest.skip("Hive 2.3 allocates no write ids: its deltas take the transaction id")
    name = f"faults{metastore.version}_{next(_names)}"
    location = f"{metastore.warehouse}/{name}"
    create_table(metastore.url, "default", name, "file://" + location,
                 partition_keys=(("ds", "string"),))
    module, attr = where.rsplit(".", 1)
    owner = __import__(module.rsplit(".", 1)[0], fromlist=[module.rsplit(".", 1)[1]])
    target = getattr(owner, module.rsplit(".", 1)[1])
    monkeypatch.setattr(target, attr, _fail(Terminated() if exc == "Terminated" else exc))
    with Client(metastore.url) as client:
        before = client.txns().high_watermark
    result = convert(metastore, raw_orc(tmp_path / "in" / "x.orc", [1]), f"default.{name}",
                     "--partition", "ds=1")
    assert result.code == status, result.err
    monkeypatch.undo()
    with Client(metastore.url) as client:
        after = client.txns()
        states = client.txn_states()
        parts = client.partitions(client.table("default", name))
    opened = list(range(before + 1, after.high_watermark + 1))
    assert opened and all(states.get(t) == "aborted" for t in opened), states
    assert parts == []
    left = [os.path.join(d, f) for d, _, fs in os.walk(location) for f in fs]
    assert left == [], left  # nothing of the run in the table, hidden or not
    assert run("read", f"default.{name}", "--metastore", metastore.url).out == ""


@pytest.mark.parametrize("signal_number,fraction", [
    (9, 0.3), (9, 0.7), (9, 0.95), (15, 0.5), (2, 0.5)], ids=lambda v: str(v))
def test_a_convert_killed_at_any_moment_is_never_read(metastore, table, tmp_path,
                                                     signal_number, fraction):
    """A real process stopped by a signal at a moment of its run: after SIGTERM and SIGINT the
    transaction is aborted; after SIGKILL it stays open (the metastore's reaper would abort it
    at hive.txn.timeout; this one runs none). Either way the new rows are never read, and what
    the run left in the table is hidden or under a write id no snapshot sees."""
    import os
    import signal as signals
    import subprocess
    import sys
    import time

    name, location = table
    assert convert(metastore, raw_orc(tmp_path / "old" / "x.orc", [1]), name).code == 0
    sources = [raw_orc(tmp_path / "in" / f"part-{i}.orc", list(range(i * 50_000, (i + 1) *
                                                                        50_000)))
               for i in range(3)]
    args = [sys.executable, "-m", "acidtool", "convert", *map(str, sources), "--table", name,
            "--write-id", "auto", "--metastore", metastore.url, "--max-file-rows", "40000"]
    started = time.monotonic()  # a whole run, timed: it commits the sources' rows once
    probe = subprocess.run(args, capture_output=True, timeout=120)
    full = time.monotonic() - started
    assert probe.returncode == 0, probe.stderr
    with Client(metastore.url) as client:
        before = client.txns().high_watermark
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(full * fraction)
    proc.send_signal(signal_number)
    proc.wait(timeout=120)
    expected = sorted([1] + list(range(150_000)))  # the first row, and the timed run's
    with Client(metastore.url) as client:
        states = client.txns(), client.txn_states()
    mine = [t for t in range(before + 1, states[0].high_watermark + 1)]
    rows = run("read", name, "--metastore", metastore.url, "--columns", "id")
    assert rows.code == 0, rows.err
    ids = sorted(int(line[6:-1]) for line in rows.out.splitlines())
    if proc.returncode == 0:  # it finished before the signal
        assert all(t not in states[1] for t in mine)
        assert ids == sorted(expected + list(range(150_000)))
        return
    assert ids == expected  # the killed run's rows are not read, nor any of them twice
    for t in mine:
        if signal_number == signals.SIGKILL:
            assert states[1].get(t) in ("open", "aborted"), states
        else:
            assert states[1].get(t) == "aborted", (states, proc.stderr.read())
    visible = [n for n in os.listdir(location) if not n.startswith((".", "_"))]
    listing = run("ls", name, "--metastore", metastore.url, "--format", "json").json()
    selected = [e["name"] for p in listing["partitions"] for e in p["entries"]
                if e["status"] == "selected"]
    assert len(selected) == 2 and set(selected) <= set(visible)


def test_positional_column_names_read_as_the_metastore_names_them(metastore, table, tmp_path):
    """Hive 2.3's writers name a file's row columns _col0.._colN: only the metastore knows them
    as id and name."""
    name, location = table
    src = tmp_path / "in" / "x.orc"
    src.parent.mkdir(parents=True)
    po.write_table(pa.table({"_col0": pa.array([4], pa.int32()), "_col1": ["d"]}), str(src))
    assert convert(metastore, src, name, "--schema", "struct<_col0:int,_col1:string>").code == 0
    assert run("read", location).out.splitlines() == ['{"_col0":4,"_col1":"d"}']
    assert run("read", name, "--metastore", metastore.url).out.splitlines() == [
        '{"id":4,"name":"d"}']
    doc = run("validate", name, "--metastore", metastore.url, "--format", "json").json()
    assert doc["snapshot"]["source"] == f"metastore {metastore.url}"


def test_a_failed_repair_aborts_its_transaction(metastore, table, tmp_path, monkeypatch):
    """repair --write-id auto --apply: an apply that fails (here: at its first step) leaves its
    transaction aborted, and the foreign file where it was."""
    import os

    import acidtool.commands.repair.apply as apply_module

    name, location = table
    raw_orc(tmp_path / "t" / "orders__datax", [5]).rename(f"{location}/orders__datax")
    with Client(metastore.url) as client:
        before = client.txns().high_watermark
    monkeypatch.setattr(apply_module, "_apply_locked", _fail(OSError(28, "No space left")))
    result = run("repair", name, "--metastore", metastore.url, "--write-id", "auto", "--apply",
                 "--min-age", "0")
    assert result.code == 2 and "No space left" in result.err
    with Client(metastore.url) as client:
        after = client.txns()
        states = client.txn_states()
    opened = list(range(before + 1, after.high_watermark + 1))
    assert opened and all(states.get(t) == "aborted" for t in opened), states
    assert os.path.exists(f"{location}/orders__datax")


def test_compact_takes_hive4s_compactor_transaction_and_its_suffix(metastore, table, tmp_path,
                                                                   request):
    """`compact --metastore --apply`: under Hive 4 inside a transaction of its own, committed
    after the rename, the base named base_N_vT; under 3.1 and 2.3 none (their compactors take
    none). The rows read by name, and (4.0) by Hive's own reader given the metastore's
    snapshot, are the rows before."""
    name, location = table
    for i, ids in enumerate(([1, 2, 3], [4, 5])):
        assert convert(metastore, raw_orc(tmp_path / f"s{i}" / "x.orc", ids), name).code == 0
    before = sorted(run("read", name, "--metastore", metastore.url).out.splitlines())
    deltas = run("ls", name, "--metastore", metastore.url, "--format", "json").json()[
        "partitions"][0]["deltas"]
    base = f"base_{max(int(d.split('_')[2]) for d in deltas):07d}"  # 2.3: a transaction id
    plan = run("compact", name, "--metastore", metastore.url, "--major")
    assert plan.code == 1, plan.err
    assert ("_vT suffix" in plan.out) == (metastore.version == "4")
    done = run("compact", name, "--metastore", metastore.url, "--major", "--apply",
               "--format", "json")
    assert done.code == 0, done.err
    doc = done.json()
    (written,) = doc["partitions"][0]["written"]
    if metastore.version == "4":
        txn = doc["transaction"]
        assert doc["committed"] and written == f"{base}_v{txn:07d}"
        with Client(metastore.url) as client:
            after = client.txns()
        assert txn not in after.exceptions and after.high_watermark >= txn
    else:
        assert doc["transaction"] is None and written == base
    assert sorted(run("read", name, "--metastore", metastore.url).out.splitlines()) == before
    ls = run("ls", name, "--metastore", metastore.url, "--format", "json").json()
    assert ls["partitions"][0]["base"] == written
    if metastore.version == "4":
        judge = request.getfixturevalue("hive40")
        with Client(metastore.url) as client:
            info = client.table(*name.split("."))
            txns = client.txns()
            ids = client.write_ids(info, txns)
        hive = judge.read(location, str(ids), txns.text(ranges=False), buckets=2)
        assert sorted(f'{{"id":{v[0]},"name":"{v[1]}"}}' for _, v in hive) == before


def test_report_names_the_table_and_takes_the_metastores_snapshot(metastore, table, tmp_path):
    """report --metastore: the table as the metastore names it (not guessed from its path),
    and an open writer's delta outside what the snapshot reads, as ls shows it."""
    name, _ = table
    with open_write(metastore, table, tmp_path) as write:
        result = run("report", name, "--metastore", metastore.url, "--format", "json",
                     "-o", "-")
        assert result.code == 0, result.err
        doc = result.json()
        listed = run("ls", name, "--metastore", metastore.url, "--format", "json").json()
    assert doc["hive_version"] == metastore.version
    assert doc["snapshot"]["source"] == f"metastore {metastore.url}"
    [reported] = doc["tables"]
    assert reported["table"] == name
    [part] = reported["partitions"]
    [ls_part] = listed["partitions"]
    assert part["deltas"] == ls_part["deltas"] and len(part["deltas"]) == 1
    assert not any(f"_{write.write_id:07d}_" in d for d in part["deltas"])


def test_an_insert_only_table_is_named_through_a_stock_metastore(metastore, tmp_path):
    """A stock 3.1 or 4.0 metastore (its capability check and, in 4.0, its transformer on)
    gives an insert-only table only to a client whose request says it reads them, as Hive's
    own client's does ("Your client does not appear to support insert-only tables")."""
    if metastore.version == "2":
        pytest.skip("Hive 2.3 has no insert-only tables")
    name = f"io{next(_names)}"
    location = f"{metastore.warehouse}/{name}"
    create_table(metastore.url, "default", name, "file://" + location, bucket_cols=(),
                 params={"transactional_properties": "insert_only"})
    raw_orc(tmp_path / "src.orc", [1, 2])
    conv = convert(metastore, tmp_path / "src.orc", f"default.{name}", "--insert-only")
    assert conv.code == 0, conv.err
    result = run("ls", f"default.{name}", "--metastore", metastore.url, "--format", "json")
    assert result.code == 0, result.err
    assert result.json()["partitions"][0]["deltas"] == ["delta_0000001_0000001_0000"]
    rows = run("read", f"default.{name}", "--metastore", metastore.url)
    assert rows.code == 0, rows.err
    assert sorted(rows.out.splitlines()) == ['{"id":1,"name":"n1"}', '{"id":2,"name":"n2"}']


def test_a_warehouse_directory_is_judged_table_by_table_through_the_metastore(metastore,
                                                                              tmp_path):
    """-r over a directory of tables with --metastore: no table has the directory's location,
    each table below it is named by its own (was exit 2, "no table of the metastore has this
    location")."""
    wh = tmp_path / "wh"
    name = f"w{next(_names)}"
    location = wh / "shop.db" / name
    create_table(metastore.url, "default", name, "file://" + str(location))
    assert convert(metastore, raw_orc(tmp_path / "in" / "x.orc", [1, 2]), f"default.{name}"
                   ).code == 0
    plan = run("compaction-plan", "-r", wh, "--metastore", metastore.url, "--format", "json")
    assert plan.code in (0, 1), plan.err
    assert {(p["table"], p["table_from"]) for p in plan.json()["plans"]} == {
        (f"default.{name}", "metastore")}
    check = run("upgrade-check", "-r", wh, "--metastore", metastore.url, "--format", "json")
    if metastore.version != "2":  # it judges a Hive 2 warehouse before its upgrade
        assert check.code == 2 and "Hive 2 warehouse" in check.err
        return
    assert check.code in (0, 1), check.err
    assert [p["table"] for p in check.json()["partitions"]] == [f"default.{name}"]
