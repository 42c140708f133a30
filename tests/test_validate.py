"""``acidtool validate``: the DataX case end to end, outputs, exit statuses, real Hive data."""

import json
import threading
import time
import xml.etree.ElementTree as ET

import pytest

from acidtool.core.listing import PathInfo
from acidtool.core.partitions import discover_tables
from acidtool.table import facts as F

from .helpers.layouts import acid, build, delta, events, orc_with_schema, plain
from .helpers.runner import run, run_imports
from .helpers.shared import REALDATA, require

D1 = "delta_0000001_0000001_0000"


def datax_table(root):
    """A valid Hive ACID table, plus what DataX's hdfswriter leaves: plain ORC files in the root
    and in a fresh delta directory."""
    layout = {**delta(D1), **delta("delta_0000002_0000002_0000", acid(events(2)))}
    layout["orders__6f1c9e2a_3b7d_4c0e_9a51_2d8e4f7b1c03"] = plain()
    layout["delta_0000003_0000003_0000/orders__0b6e2b8f_1d5c_4d9a_8c3f_8a1e6f2b7c90"] = plain(
        rows=((2, "b"),))
    return build(root, layout)


def test_datax_case_end_to_end(tmp_path):
    table = datax_table(tmp_path / "orders")
    result = run("validate", table, "--format", "json")
    assert result.code == 1
    found = {(f["code"], f["path"][len(str(table)) + 1:]) for f in result.json()["findings"]}
    root_file = "orders__6f1c9e2a_3b7d_4c0e_9a51_2d8e4f7b1c03"
    delta_file = "delta_0000003_0000003_0000/orders__0b6e2b8f_1d5c_4d9a_8c3f_8a1e6f2b7c90"
    assert ("ACID001", root_file) in found
    assert ("ACID004", delta_file) in found
    assert ("ACID007", delta_file) in found
    assert ("ACID005", "delta_0000003_0000003_0000") in found
    # The DataX file is a plain ORC file: Hive sees no key index either.
    text = run("validate", table).out
    assert "ACID001" in text and "ACID004" in text and "ACID007" in text
    assert text.splitlines()[-1].startswith("3 errors, 1 warning")


def test_datax_file_in_delta_without_the_name_problem_shows_missing_key_index(tmp_path):
    table = build(tmp_path / "t", {**delta(D1), **delta("delta_0000002_0000002_0000",
                                                        acid(events(2), with_key_index=False))})
    codes = {f["code"] for f in run("validate", table, "--format", "json").json()["findings"]}
    assert codes == {"ACID009"}


def test_clean_table_exits_0(tmp_path):
    table = build(tmp_path / "t", {**delta(D1)})
    result = run("validate", table, "--level", "rows")
    assert result.code == 0
    assert result.out.strip() == ("0 errors, 0 warnings, 0 info in 1 table, 1 partition, "
                                  "1 file read (level rows, Hive 4 rules)")


def test_fail_on_select_ignore(tmp_path):
    table = datax_table(tmp_path / "t")
    assert run("validate", table, "--ignore", "ACID001,ACID004,ACID007").code == 0
    assert run("validate", table, "--ignore", "ACID001,ACID004,ACID007", "--fail-on",
               "warning").code == 1
    only = run("validate", table, "--select", "ACID00", "--ignore", "ACID004,ACID005",
               "--format", "json").json()["findings"]
    assert {f["code"] for f in only} == {"ACID001", "ACID007"}
    bad = run("validate", table, "--select", "XYZ9")
    assert bad.code == 2 and "no rule matches" in bad.err


def test_formats(tmp_path):
    table = datax_table(tmp_path / "t")
    doc = run("validate", table, "--format", "json").json()
    assert doc["summary"]["error"] == 3 and doc["summary"]["partitions"] == 1
    assert set(doc["findings"][0]) == {"code", "name", "severity", "path", "message", "details"}
    lines = run("validate", table, "--format", "jsonl").out.splitlines()
    assert len(lines) == len(doc["findings"]) and json.loads(lines[0])["code"]
    junit = ET.fromstring(run("validate", table, "--format", "junit").out)
    assert junit.tag == "testsuite" and junit.get("failures") == "3"
    assert int(junit.get("tests")) >= 24
    github = run("validate", table, "--format", "github").out.splitlines()
    assert any(line.startswith("::error file=") and "title=ACID001" in line for line in github)
    assert any(line.startswith("::warning file=") for line in github)


def test_recursive_warehouse(tmp_path):
    wh = tmp_path / "warehouse"
    build(wh / "shop.db" / "orders", {**{f"ds=1/{k}": v for k, v in delta(D1).items()},
                                      **{f"ds=2/{k}": v for k, v in delta(D1).items()}})
    datax_table(wh / "shop.db" / "items")
    build(wh / "shop.db" / "plain_table", {"part-0000.orc": plain()})
    doc = run("validate", wh, "-r", "--format", "json").json()
    assert doc["summary"]["tables"] == 2 and doc["summary"]["partitions"] == 3
    assert all("/items/" in f["path"] for f in doc["findings"] if f["severity"] == "error")


def test_discover_tables():
    paths = [PathInfo(p, 3) for p in [
        "db/t1/ds=1/hr=0/delta_1_1/bucket_0", "db/t1/ds=1/hr=1/base_2/bucket_0",
        "db/t2/delta_1_1/bucket_0", "db/t2/delta_1_1/sub/delta_2_2/bucket_0",
        "db/plain/part-0", ".hidden/delta_1_1/bucket_0"]]
    tables = discover_tables(paths)
    assert [(t.root, [p.name for p in t.partitions]) for t in tables] == [
        ("db/t1", ["ds=1/hr=0", "ds=1/hr=1"]), ("db/t2", [""])]


@pytest.mark.parametrize("args,message", [
    (["validate", "/no/such/table"], "no such file"),
    (["validate", "{file}"], "is a file"),
    (["validate", "{dir}", "--level", "all"], "Invalid value"),
    (["validate", "{dir}", "--schema", "struct<a:int"], "--schema"),
    (["explain", "ACID999"], "no rule"),
])
def test_bad_input(tmp_path, args, message):
    (tmp_path / "f").write_text("x")
    result = run(*[a.format(file=tmp_path / "f", dir=tmp_path) for a in args])
    assert result.code == 2 and message in result.err


def test_validate_writes_nothing(tmp_path):
    table = datax_table(tmp_path / "t")
    before = sorted((p, p.stat().st_mtime_ns, p.stat().st_size) for p in table.rglob("*"))
    run("validate", table, "--level", "rows")
    assert sorted((p, p.stat().st_mtime_ns, p.stat().st_size) for p in table.rglob("*")) == before


def test_rules_and_explain():
    listed = json.loads(run("rules", "--format", "json").out)
    codes = [r["code"] for r in listed]
    # validate's rules in order, none missing, then doctor's (level "doctor")
    assert codes == [f"ACID{i:03d}" for i in range(1, 30)] + [f"HMS{i:03d}" for i in range(1, 9)]
    assert {r["level"] for r in listed if r["code"].startswith("HMS")} == {"doctor"}
    text = run("explain", "acid007").out
    assert "What it checks" in text and "How to fix" in text
    text = run("explain", "hms006").out
    assert "found by `acidtool doctor`" in text and "Cleaner" in text


def test_realdata_hive_tables_have_no_errors():
    root = require(REALDATA)
    result = run("validate", root, "--recursive", "--level", "rows", "--format", "json")
    doc = result.json()
    assert doc["summary"]["tables"] >= 15
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    assert errors == []
    assert result.code == 0


@pytest.mark.parametrize("rel", ["trino/spark_bucketed_nation", "hive/data/files/load_data_job_acid"])
def test_realdata_foreign_files_are_flagged(rel):
    path = require(REALDATA / rel)
    doc = run("validate", path, "--format", "json").json()
    codes = {f["code"] for f in doc["findings"]}
    assert codes == {"ACID001"}
    assert all(f["severity"] == "warning" for f in doc["findings"])  # no ACID dirs there


class _Counting:
    """An fsspec in-memory filesystem that counts opens and metadata calls per path, notes
    which threads opened each name, and can make opens of some names wait (``delays``)."""

    calls: list[tuple[str, str]] = []
    threads: dict[str, set[int]] = {}
    delays: dict[str, float] = {}

    @classmethod
    def register(cls):
        import fsspec
        from fsspec.implementations.memory import MemoryFileSystem

        class CountingMemory(MemoryFileSystem):
            protocol = "countmem"

            @classmethod
            def _strip_protocol(cls, path):
                return super()._strip_protocol(path.removeprefix("countmem://"))

            def _open(self, path, *args, **kwargs):
                name = path.rsplit("/", 1)[-1]
                cls.calls.append(("open", name))
                cls.threads.setdefault(name, set()).add(threading.get_ident())
                time.sleep(cls.delays.get(name, 0))
                return super()._open(path, *args, **kwargs)

            def info(self, path, **kwargs):
                cls.calls.append(("info", path.rsplit("/", 1)[-1]))
                return super().info(path, **kwargs)

        fsspec.register_implementation("countmem", CountingMemory, clobber=True)
        return CountingMemory()


@pytest.mark.parametrize("level", ["metadata", "rows"])
def test_remote_round_trips_per_file(level):
    """On an object store every call is a round trip: a small data file is opened once, for
    its footer, whose one read holds the whole file (its rows are read from those bytes at
    --level rows), and it is never looked up on its own: its size and side file come from the
    one listing."""
    mem = _Counting.register()
    layout = {**delta(D1), **delta("delta_0000002_0000002_0000", acid(events(2))),
              **delta("delta_0000003_0000003_0000", acid(events(3)))}
    layout["delta_0000003_0000003_0000/bucket_00000_flush_length"] = \
        (len(layout["delta_0000003_0000003_0000/bucket_00000"])).to_bytes(8, "big")
    for rel, content in layout.items():
        mem.pipe(f"/rt-{level}/t/{rel}", content)
    _Counting.calls.clear()
    result = run("validate", f"countmem://rt-{level}/t", "--level", level, "--jobs", "1",
                 "--format", "json")
    assert result.code == 0, result.out + result.err
    assert {f["code"] for f in result.json()["findings"]} == {"ACID022"}
    data = [c for c in _Counting.calls if c[1] == "bucket_00000"]
    assert data.count(("open", "bucket_00000")) == 3, _Counting.calls
    assert ("info", "bucket_00000") not in data, _Counting.calls
    side = [c for c in _Counting.calls if c[1] == "bucket_00000_flush_length"]
    assert side == [("open", "bucket_00000_flush_length")], _Counting.calls
    assert _Counting.calls.count(("open", "_orc_acid_version")) == 3  # one per live directory


def test_markers_are_read_only_where_a_rule_judges_them():
    """Version markers of obsolete directories, and any under Hive 2 rules, are not read."""
    mem = _Counting.register()
    layout = {**delta(D1), **delta("delta_0000002_0000002_0000", acid(events(2))),
              **delta("delta_0000001_0000002", acid(events(2)))}
    for rel, content in layout.items():
        mem.pipe(f"/markers/t/{rel}", content)
    for version, opened in [("4", 1), ("2", 0)]:
        _Counting.calls.clear()
        result = run("validate", "countmem://markers/t", "--hive-version", version)
        assert result.code == 0, result.out + result.err
        assert _Counting.calls.count(("open", "_orc_acid_version")) == opened, version


@pytest.mark.parametrize("slow, threaded", [(False, False), (True, True)])
def test_local_reads_go_to_threads_only_when_they_wait(tmp_path, monkeypatch, slow, threaded):
    """A local path whose reads wait (a network mount, a cold disk) gets --jobs threads once
    the first files have been timed; one that answers at CPU speed stays on one thread."""
    from acidtool.commands.check import validate as V

    layout = {}
    for w in range(1, 11):
        name = f"delta_{w:07d}_{w:07d}_0000"
        layout.update(delta(name, acid(events(w))))
        for b in range(1, 4):
            layout[f"{name}/bucket_{b:05d}"] = acid(events(w, bucket=b))
    table = build(tmp_path / "t", layout)
    threads, real = set(), F.read_footer_and_bytes

    def read_footer_and_bytes(*args):
        threads.add(threading.get_ident())
        if slow:
            time.sleep(0.002)  # waiting, as on a network mount
        return real(*args)

    monkeypatch.setattr(F, "read_footer_and_bytes", read_footer_and_bytes)
    if not slow:  # on a loaded machine even a page-cache read may be preempted
        monkeypatch.setattr(F, "waited", lambda work: (work(), 0.0)[1])
    report = V.validate([str(table)], V.ValidateOptions(jobs=4))
    assert report.files == 40 > F.PROBE_FILES and not report.findings
    assert (len(threads) > 1) is threaded


def test_waited_counts_waiting_not_computing(monkeypatch):
    """waited() is wall-clock time less this thread's CPU time; the clocks are stood in for,
    so that no timing of a busy machine decides the test (timings belong in benchmarks)."""
    clock = {"wall": 100.0, "cpu": 7.0}
    monkeypatch.setattr(F.time, "perf_counter", lambda: clock["wall"])
    monkeypatch.setattr(F.time, "thread_time", lambda: clock["cpu"])

    def sleep():
        clock["wall"] += 0.02

    def compute():
        clock["wall"] += 0.02
        clock["cpu"] += 0.02

    assert F.waited(sleep) == pytest.approx(0.02)
    assert F.waited(compute) == pytest.approx(0.0)


def _partitioned_table(root, partitions: int):
    """A partitioned table with a problem of each reach: per file, per partition, table-wide
    (one partition's row layout differs), and entries that belong to no partition."""
    layout = {}
    for i in range(partitions):
        layout.update({f"ds={i:02d}/{rel}": data for rel, data in delta(D1).items()})
    layout["ds=03/orders__6f1c9e2a"] = plain()
    other_row = acid(events(2), row_type="struct<id:bigint,name:string>")
    layout.update({f"ds=05/{rel}": data for rel, data in
                   delta("delta_0000002_0000002_0000", other_row).items()})
    layout["ds=07/hr=1/delta_0000001_0000001_0000/bucket_00000"] = acid()  # a second level
    layout["ds=07/loose.orc"] = plain()  # between partition levels: stray
    layout["part-00000.orc"] = plain()  # next to the partitions: stray
    return build(root, layout)


class _NoPool:
    """A multiprocessing context with no POSIX semaphores: its locks, and so its pools and
    shared arrays, cannot be made."""

    def Pool(self, *args, **kwargs):  # noqa: N802 (multiprocessing's name)
        raise OSError(38, "Function not implemented")

    Array = Value = Pool


def _deep_table(root, partitions: int, row_type: str = "struct<id:int,name:string>"):
    """Few top-level partition directories, many partitions below them."""
    layout = {}
    data = acid(events(1), row_type=row_type)
    for i in range(partitions):
        layout.update({f"year=202{i % 2}/day={i:03d}/{rel}": content
                       for rel, content in delta(D1, data).items()})
    layout["year=2021/day=004/orders__6f1c9e2a"] = plain()
    return build(root, layout)


def _warehouse(root, partitions: int):
    """Two tables below a warehouse directory, for --recursive; their row layouts differ
    (which is no finding: ACID019 compares the files of one table)."""
    _partitioned_table(root / "db.db" / "orders", partitions // 2)
    _deep_table(root / "db.db" / "events", partitions // 2, "struct<id:bigint,name:string>")
    return root


@pytest.mark.parametrize("shape, recursive, work", [
    (_partitioned_table, False, "_check_subtrees"),  # each process lists its share
    (_deep_table, False, "_check_listed"),  # listed here, checked in processes
    (_warehouse, True, "_check_listed"),
])
def test_partitions_checked_in_processes_find_what_one_process_finds(tmp_path, monkeypatch,
                                                                     shape, recursive, work):
    from acidtool.commands.check import validate as V

    table = shape(tmp_path / "t", V.SHARE_MIN_PARTITIONS + 2)
    monkeypatch.setattr(V, "_cpus", lambda: 4)
    used, real = [], V._in_processes
    monkeypatch.setattr(V, "_in_processes", lambda *a, **k: used.append(
        (a[1].func.__name__, a[2])) or real(*a, **k))
    # the reference: one listing of the whole tree, every partition's facts held, then the rules
    share_min = V.SHARE_MIN_PARTITIONS
    monkeypatch.setattr(V, "SHARE_MIN_PARTITIONS", 10**9)
    whole = V.validate([str(table)], V.ValidateOptions(jobs=1, recursive=recursive))
    assert not used
    monkeypatch.setattr(V, "SHARE_MIN_PARTITIONS", share_min)
    # one process: the same shares, checked in turn
    one = V.validate([str(table)], V.ValidateOptions(jobs=1, recursive=recursive))
    assert used == [(work, 1)]
    used.clear()
    many = V.validate([str(table)], V.ValidateOptions(jobs=4, recursive=recursive))
    assert used == [(work, 4)]
    assert many.findings == one.findings == whole.findings and one.findings
    assert (many.tables, many.partitions, many.files) == (one.tables, one.partitions, one.files) \
        == (whole.tables, whole.partitions, whole.files)
    # where no process can be made (no POSIX semaphores in some sandboxes): one process
    monkeypatch.setattr(V.multiprocessing, "get_context", lambda method: _NoPool())
    assert V.validate([str(table)],
                      V.ValidateOptions(jobs=4, recursive=recursive)).findings == one.findings


def test_what_processes_are_checked_for(tmp_path):
    """The findings the comparison above stands on."""
    from acidtool.commands.check import validate as V

    table = _partitioned_table(tmp_path / "t", V.SHARE_MIN_PARTITIONS)
    codes = {(f.code, f.path[len(str(table)) + 1:])
             for f in V.validate([str(table)], V.ValidateOptions(jobs=1)).findings}
    assert codes == {("ACID001", "ds=03/orders__6f1c9e2a"),
                     # the foreign file counts as an original file, the base Hive's Initiator
                     # weighs the delta against: a major compaction is due
                     ("ACID024", "ds=03"),
                     ("ACID005", "ds=07/hr=1/delta_0000001_0000001_0000"),  # a partition too
                     ("ACID019", "ds=05/delta_0000002_0000002_0000/bucket_00000"),
                     # what lies in no leaf partition: Hive never reads it
                     ("ACID028", "part-00000.orc"), ("ACID028", "ds=07/loose.orc"),
                     ("ACID028", "ds=07/delta_0000001_0000001_0000")}


def test_a_partition_directory_removed_meanwhile_is_skipped(tmp_path, monkeypatch):
    """As in one process's listing: a directory a cleaner removed after the table was listed
    is gone, not an error."""
    from acidtool.commands.check import validate as V

    table = _partitioned_table(tmp_path / "t", V.SHARE_MIN_PARTITIONS)
    one = V.validate([str(table)], V.ValidateOptions(jobs=1))
    monkeypatch.setattr(V, "_cpus", lambda: 4)
    real = V._top_partitions
    monkeypatch.setattr(V, "_top_partitions", lambda loc: real(loc) + ["ds=99"])
    many = V.validate([str(table)], V.ValidateOptions(jobs=4))
    assert many.findings == one.findings and many.partitions == one.partitions


def test_a_failure_in_a_worker_process_is_one_line(tmp_path, monkeypatch):
    from acidtool.commands.check import validate as V
    from acidtool.core.errors import PathError

    table = _partitioned_table(tmp_path / "t", V.SHARE_MIN_PARTITIONS)
    monkeypatch.setattr(V, "_cpus", lambda: 4)
    real = V.list_tree

    def list_tree(loc, **options):
        if loc.url.endswith("ds=04"):
            raise PathError(f"{loc.url}: permission denied")
        return real(loc, **options)

    monkeypatch.setattr(V, "list_tree", list_tree)
    result = run("validate", table, "--jobs", "4")
    assert result.code == 2
    assert result.err.strip() == f"acidtool: error: {table}/ds=04: permission denied"


_SLOW_FORK = """
import os, sys, time

# each forked process lingers in fork's clean-up, where the pool's terminate finds it (this
# hook runs before those acidtool registers, as threading's does)
os.register_at_fork(after_in_child=lambda: time.sleep(0.5))
from acidtool.cli.main import main
from acidtool.commands.check import validate as V
from acidtool.core.errors import PathError
V._cpus = lambda: 4
real = V.list_tree

def list_tree(loc, **options):
    if loc.url.endswith("ds=04"):
        raise PathError(f"{loc.url}: permission denied")
    return real(loc, **options)

V.list_tree = list_tree
main(["validate", sys.argv[1], "--jobs", "4"])
"""


def test_a_failure_before_the_processes_have_started_ends_them(tmp_path):
    """This process fails a share at once and the pool's terminate sends SIGTERM to processes
    still being forked. Before, the CLI's handler raised in fork's clean-up, Python dropped
    the exception, the process waited for work, and validate never ended (it hung a test
    run): now each forked process holds the signal back until it can die of it."""
    import os
    import signal
    import subprocess
    import sys

    from acidtool.commands.check import validate as V

    table = _partitioned_table(tmp_path / "t", V.SHARE_MIN_PARTITIONS)
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_FORK, str(table)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # (the forked processes too)
        proc.communicate()
        pytest.fail("validate --jobs 4 did not end")
    assert proc.returncode == 2, err
    assert err.strip() == f"acidtool: error: {table}/ds=04: permission denied"


def test_a_file_larger_than_one_read_is_opened_again_for_its_rows():
    from acidtool.core.orcproto import TAIL_GUESS

    mem = _Counting.register()
    big = acid(events(1, n=20000))
    assert len(big) > TAIL_GUESS
    for rel, content in {**delta(D1, big)}.items():
        mem.pipe(f"/big/t/{rel}", content)
    _Counting.calls.clear()
    result = run("validate", "countmem://big/t", "--level", "rows", "--format", "json")
    assert result.code == 0 and result.json()["findings"] == [], result.out + result.err
    assert _Counting.calls.count(("open", "bucket_00000")) == 2


def _validate_findings(path: str) -> list:
    from acidtool.commands.check import validate as V

    return V.validate([path], V.ValidateOptions(jobs=4)).findings


def test_validate_inside_a_pool_worker_runs_in_that_process(tmp_path, monkeypatch):
    """A pool's workers are daemonic and may not fork: validate checks the table there."""
    import multiprocessing

    from acidtool.commands.check import validate as V

    table = _partitioned_table(tmp_path / "t", V.SHARE_MIN_PARTITIONS)
    monkeypatch.setattr(V, "_cpus", lambda: 4)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        inside = pool.apply(_validate_findings, (str(table),))
    assert inside == V.validate([str(table)], V.ValidateOptions(jobs=1)).findings


def test_acid019_breaks_a_tie_by_path_not_by_gathering_order():
    """Partitions come back from processes in any order: of two row layouts as common, the
    one met first in path order is taken for the table's."""
    from acidtool.core.facts import Context
    from acidtool.core.rules import REGISTRY

    a = ("file:///t/ds=1", ["int", "string"], ["delta_1/bucket_00000"])
    b = ("file:///t/ds=2", ["bigint", "string"], ["delta_1/bucket_00000"])
    rule = REGISTRY["ACID019"]
    for seen in ([a, b], [b, a]):
        (finding,) = rule.run(seen, Context())
        assert finding.path == "file:///t/ds=2/delta_1/bucket_00000"
        assert finding.details["expected"] == ["int", "string"]


@pytest.mark.parametrize("layouts, schema, flagged", [
    # ALTER TABLE ... ADD COLUMNS: older files lack the trailing column, in either majority
    ([["int", "string"], ["int", "string"], ["int", "string", "double"]], None, []),
    ([["int", "string"], ["int", "string", "double"], ["int", "string", "double"]], None, []),
    # a type that differs is flagged, beside files of an ADD COLUMNS
    ([["int", "string"], ["int", "string", "double"], ["bigint", "string"]], None, [2]),
    # against the table's columns: fewer is before an ADD COLUMNS, more is not the table's
    ([["int", "string"], ["int", "string", "double"]], "struct<a:int,b:string,c:double>", []),
    ([["int", "string"], ["int", "string", "double"]], "struct<a:int,b:string>", [1]),
    ([["int", "string"], ["string"]], "struct<a:int,b:string>", [1]),
])
def test_acid019_takes_files_from_before_add_columns_for_the_tables(layouts, schema, flagged):
    """Hive reads a file of the table's first columns with nulls in the rest (written before
    an ADD COLUMNS), as acidtool read does: no finding; another type, or (with --schema)
    more columns than the table's, is one."""
    from acidtool.core.facts import Context
    from acidtool.core.rules import REGISTRY

    seen = [(f"file:///t/ds={i}", types, ["delta_1/bucket_00000"])
            for i, types in enumerate(layouts)]
    found = REGISTRY["ACID019"].run(seen, Context(schema=schema))
    assert sorted(f.path for f in found) == [f"file:///t/ds={i}/delta_1/bucket_00000"
                                             for i in flagged]


@pytest.mark.parametrize("level, imported", [("metadata", False), ("rows", True)])
def test_pyarrow_is_imported_for_row_scans_only(tmp_path, level, imported):
    """Names and footers of a local table are read without pyarrow, whose import is most of
    the start-up time of a `validate` run in CI over a small landing zone."""
    table = build(tmp_path / "t", {**delta(D1)})
    result, pyarrow_imported = run_imports("pyarrow", "validate", table, "--level", level)
    assert result.code == 0, result.err
    assert pyarrow_imported is imported


@pytest.mark.parametrize("module", ["tabulate", "pydantic"])
def test_validate_starts_without_what_it_does_not_use(tmp_path, module):
    """tabulate (validate prints no table) and pydantic (typer from 0.28 on builds every
    option through it) each took tens of milliseconds of every start."""
    table = build(tmp_path / "t", {**delta(D1)})
    result, imported = run_imports(module, "validate", table)
    assert result.code == 0, result.err
    assert not imported


def test_null_event_values_are_read_not_crashed_on(tmp_path):
    """A foreign writer's file with the ACID schema but nulls in its event columns."""
    schema = ("struct<operation:int,originalTransaction:bigint,bucket:int,rowId:bigint,"
              "currentTransaction:bigint,row:struct<id:int,name:string>>")
    data = orc_with_schema(schema, [(0, 1, 536870912, 0, 1, (1, "a")),
                                    (0, 1, None, 1, 1, (2, "b")),
                                    (None, None, 536870912, 2, None, (3, "c"))],
                           {"hive.acid.key.index": b"1,536870912,2;", "hive.acid.version": b"2"})
    table = build(tmp_path / "t", delta(D1, data))
    result = run("validate", table, "--level", "rows", "--format", "json")
    assert result.code == 1 and "Traceback" not in result.err, result.err
    nulls = [f for f in result.json()["findings"] if f["code"] == "ACID025"]
    assert [f["details"]["nulls"] for f in nulls] == [
        {"operation": 1, "originalTransaction": 1, "bucket": 1, "currentTransaction": 1}]


@pytest.mark.parametrize("shape, jobs, line", [
    (lambda root: build(root, {**delta(D1), **delta("delta_0000002_0000002_0000")}), 1,
     "/2 files read"),
    (lambda root: _partitioned_table(root, 18), 1,
     "/18 top-level partition directories checked"),
    (lambda root: _deep_table(root, 18), 2, "/19 partitions checked"),
])
def test_progress_bar_counts_towards_the_total_on_stderr(tmp_path, monkeypatch, capsys, shape,
                                                         jobs, line):
    from acidtool.commands.check import validate as V

    monkeypatch.setattr(V, "_cpus", lambda: 2)
    table = shape(tmp_path / "t")
    V.validate([str(table)], V.ValidateOptions(jobs=jobs), progress=True)
    err = capsys.readouterr().err
    steps = err.split("\r")[1:]
    assert steps[-1] == "\x1b[K"  # cleared when done: the report starts on a clean line
    drawn = steps[:-1]
    assert drawn and all(s.startswith("acidtool: [") and s.endswith(line) for s in drawn), err
    V.validate([str(table)], V.ValidateOptions(jobs=jobs))
    assert capsys.readouterr().err == ""


def test_the_cli_shows_progress_only_on_a_terminal(tmp_path):
    table = _partitioned_table(tmp_path / "t", 18)
    result = run("validate", table)
    assert "acidtool: [" not in result.err and "\r" not in result.err


def test_a_remote_table_of_many_partitions_is_checked_share_by_share(monkeypatch):
    """Shares on an object store too: the same findings as when every partition's facts are
    held at once, with reads on threads (they wait on round trips), never in processes."""
    from acidtool.commands.check import validate as V

    mem = _Counting.register()
    layout = {}
    for i in range(V.SHARE_MIN_PARTITIONS + 2):
        layout.update({f"ds={i:02d}/{rel}": data for rel, data in delta(D1).items()})
    layout["ds=03/orders__6f1c9e2a"] = plain()
    layout.update({f"ds=05/{rel}": data for rel, data in delta(
        "delta_0000002_0000002_0000", acid(events(2), row_type="struct<id:bigint>")).items()})
    for rel, content in layout.items():
        mem.pipe(f"/shares/t/{rel}", content)
    url = "countmem://shares/t"
    remote, real_read_all = [], V.read_all
    monkeypatch.setattr(V, "read_all", lambda *a, **k: remote.append(k["remote"])
                        or real_read_all(*a, **k))
    monkeypatch.setattr(V, "SHARE_MIN_PARTITIONS", 10**9)
    whole = V.validate([url], V.ValidateOptions(jobs=4))
    assert remote == [True]
    monkeypatch.undo()
    monkeypatch.setattr(V, "read_all", lambda *a, **k: remote.append(k["remote"])
                        or real_read_all(*a, **k))
    shares = []
    real_in_processes = V._in_processes
    monkeypatch.setattr(V, "_in_processes", lambda *a: shares.append(a[2])
                        or real_in_processes(*a))
    remote.clear()
    many = V.validate([url], V.ValidateOptions(jobs=4))
    assert shares == [1]  # one process: nothing is forked for a remote table
    assert len(remote) > 1 and all(remote)
    assert {f.code for f in whole.findings} == {"ACID001", "ACID019", "ACID024"}  # as above
    assert many.findings == whole.findings
    assert (many.partitions, many.files) == (whole.partitions, whole.files) == (18, 20)


def _sizes_matter_table(root):
    """Files whose sizes validate learns by reading them, and others it stats: a base small
    next to its deltas (ACID024 judges by size), a streaming file, an empty and a damaged
    file, an obsolete delta (not read), markers (one too long to be read whole), a file in a
    directory nested in a delta, and original data in an ACID-looking directory."""
    big = acid(events(2, n=400))
    return build(root, {
        "base_0000001/bucket_00000": acid(events(1)),
        "base_0000001/_metadata_acid": b'{"thisFileVersion":"0","dataFormat":"compacted"}',
        **delta("delta_0000001_0000001_0000"),  # obsolete: below the base
        **delta("delta_0000002_0000002_0000", big),
        "delta_0000002_0000002_0000/bucket_00001": b"",
        "delta_0000002_0000002_0000/bucket_00002": b"ORC" + b"\0" * 30,
        "delta_0000002_0000002_0000/sub/bucket_00000": acid(events(2)),
        "delta_0000003_0000003_0000/bucket_00000": acid(events(3)) + b"\0" * 50,
        "delta_0000003_0000003_0000/bucket_00000_flush_length":
            len(acid(events(3))).to_bytes(8, "big"),
        "delta_0000003_0000003_0000/_orc_acid_version": b"2" + b" " * 40,
        "orig/delta_0000004_0000004/000000_0": b"",
    })


@pytest.mark.parametrize("level, hive", [("metadata", "4"), ("metadata", "3"),
                                         ("metadata", "2"), ("rows", "4")])
def test_sizes_learnt_by_reading_are_the_sizes_a_listing_states(tmp_path, monkeypatch, level,
                                                                 hive):
    from acidtool.commands.check import validate as V
    from acidtool.core.listing import UNKNOWN_SIZE
    from acidtool.core.snapshot import make_snapshot
    from acidtool.io.fs import resolve

    table = _sizes_matter_table(tmp_path / "t")
    opts = V.ValidateOptions(level=level, jobs=1, snapshot=make_snapshot(hive_version=hive))
    checked = []
    real = V.run_rules
    monkeypatch.setattr(V, "run_rules",
                        lambda table, *a: checked.extend(table.partitions) or real(table, *a))
    learnt = V.validate([str(table)], opts)
    facts = checked[:]
    assert len(facts) == 1 and facts[0].files
    assert not any(f.size == UNKNOWN_SIZE for p in facts for e in p.state.entries
                   for f in e.files)
    monkeypatch.setattr(F, "sizes_listed", lambda loc, opts: True)
    checked.clear()
    listed = V.validate([str(table)], opts)
    assert learnt.findings == listed.findings
    assert [(p.state.entries, p.files.keys()) for p in facts] == \
        [(p.state.entries, p.files.keys()) for p in checked]
    assert [f.size for p in facts for f in p.files.values()] == \
        [f.size for p in checked for f in p.files.values()]
    if hive != "2":  # the base's size is what ACID024 judges the deltas by
        assert any(f.code == "ACID024" and "of the base" in f.message for f in listed.findings)
    unsized = {p.path for p in V.list_tree(resolve(str(table)), sizes=False)
               if p.size == UNKNOWN_SIZE}
    assert "delta_0000002_0000002_0000/bucket_00000" in unsized
    assert "orig/delta_0000004_0000004/000000_0" not in unsized


@pytest.mark.parametrize("partitions", [3, 18])  # checked whole, and share by share
def test_a_remote_tables_base_markers_are_read_on_threads(monkeypatch, partitions):
    """The selection reads each base's _metadata_acid before anything else of its partition:
    on an object store those reads are round trips, and go to --jobs threads together."""
    from acidtool.commands.check import validate as V

    mem = _Counting.register()
    monkeypatch.setattr(_Counting, "delays", {"_metadata_acid": 0.01})
    monkeypatch.setattr(_Counting, "threads", {})
    for i in range(partitions):
        for rel, data in {"base_0000001/bucket_00000": acid(),
                          "base_0000001/_metadata_acid":
                              b'{"thisFileVersion":"0","dataFormat":"compacted"}',
                          **delta("delta_0000002_0000002_0000", acid(events(2)))}.items():
            mem.pipe(f"/markers{partitions}/t/ds={i:02d}/{rel}", data)
    report = V.validate([f"countmem://markers{partitions}/t"], V.ValidateOptions(jobs=4))
    assert report.partitions == partitions
    assert not [f for f in report.findings if f.severity == "error"]
    assert len(_Counting.threads["_metadata_acid"]) > 1
