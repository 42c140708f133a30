"""The ``hiveacid`` Spark data source (acidtool.hiveacid) on local[2]: reads (the Hive-judged
suites of test_spark_read go through it too, as read_table does), partition pruning (files of
partitions not asked for are never opened), and writes that Hive 2.3's, 3.1's and 4.0's own
readers and ``validate --level rows`` accept."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import pytest

from .helpers.hivejvm import acidtool_rows
from .helpers.layouts import acid, build, delta, events
from .helpers.runner import run
from .test_hive_raw_files import judge  # noqa: F401 - the fixture: Hive 2.3, 3.1 and 4.0
from .test_metastore import table  # noqa: F401 - the fixture: a bucketed table in a metastore

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark(spark):
    from acidtool.spark import register

    register(spark)
    return spark


def hiveacid(spark, **options):
    reader = spark.read.format("hiveacid")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader


def rows_of(df) -> list:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def partitioned(tmp_path: Path) -> Path:
    layout = {}
    for ds in (1, 2, 3):
        layout.update({f"ds={ds}/{k}": v for k, v in delta(
            "delta_0000001_0000001_0000", acid(events(1, n=ds))).items()})
    return build(tmp_path / "p", layout)


def garble(root: Path, *partitions: str) -> None:
    """The data files of these partitions made unreadable: a read that opens one fails."""
    for part in partitions:
        for top, _, files in os.walk(root / part):
            for f in files:
                if f.startswith("bucket_"):
                    Path(top, f).write_bytes(b"not an ORC file")


# ------------------------------------------------------------------------------------------------
# Reading


def test_reads_what_acidtool_read_returns_with_row_ids(spark, tmp_path):
    t = partitioned(tmp_path)
    got = rows_of(hiveacid(spark, withRowId="true").load(str(t)))
    ours = run("read", t, "--with-row-id").out.splitlines()
    assert len(got) == len(ours) == 6
    assert {(r[0].writeid, r[0].bucketid, r[0].rowid, r[1], r[3]) for r in got} == {
        (1, 536870912, i, i, str(ds)) for ds in (1, 2, 3) for i in range(ds)}


def test_the_partitions_option_never_opens_other_partitions(spark, tmp_path):
    t = partitioned(tmp_path)
    garble(t, "ds=1", "ds=3")
    df = hiveacid(spark, partitions="ds=2").load(str(t))
    assert sorted(r.id for r in df.collect()) == [0, 1]
    assert {r.ds for r in df.collect()} == {"2"}
    with pytest.raises(Exception, match="no partition 'ds=9'"):
        hiveacid(spark, partitions="ds=9").load(str(t)).collect()


@pytest.mark.parametrize("where,read", [("ds = '2'", "2"), ("ds in ('2', '3')", "23"),
                                        ("ds >= '2'", "23"), ("ds < '3' and id > 0", "12"),
                                        ("not ds = '1'", "23")])
def test_pushed_filters_prune_partitions(spark, tmp_path, where, read):
    """Partition ds=N holds ids 0..N-1; the partitions no filter keeps are garbled."""
    t = partitioned(tmp_path)
    garble(t, *[f"ds={d}" for d in "123" if d not in read])
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        df = hiveacid(spark).schema("id int, name string, ds string").load(str(t)).where(where)
        got = sorted((r.ds, r.id) for r in df.collect())
    finally:
        spark.conf.unset("spark.sql.python.filterPushdown.enabled")
    expected = sorted((d, i) for d in read for i in range(int(d)))
    if "id > 0" in where:
        expected = [e for e in expected if e[1] > 0]
    assert got == expected


def test_pruning_judges_only_what_it_can_for_every_partition():
    """Unit level: typed values, Hive's default partition as null, Not; a filter on a row
    column, or one a value cannot be compared with, is left to Spark."""
    from pyspark.sql.datasource import EqualTo, GreaterThan, In, IsNull, Not

    from acidtool.table.readplan import Unit, prune

    units = [Unit(None, ("bucket", 0), (("ds", datetime.date(2024, 1, d)), ("h", h)))
             for d in (1, 2) for h in (None, 7)]
    kept, left = prune(units, [EqualTo(("ds",), datetime.date(2024, 1, 2))])
    assert [u.values for u in kept] == [u.values for u in units[2:]] and left == []
    kept, left = prune(units, [IsNull(("h",))])
    assert [dict(u.values)["h"] for u in kept] == [None, None]
    kept, left = prune(units, [Not(In(("h",), (7,)))])
    assert [dict(u.values)["h"] for u in kept] == []  # null is neither in nor not in
    kept, left = prune(units, [GreaterThan(("id",), 3), GreaterThan(("ds",), "x")])
    assert kept == units and len(left) == 2


def test_typed_partition_columns_from_a_schema_the_user_gives(spark, tmp_path):
    t = partitioned(tmp_path)
    df = hiveacid(spark).schema("id int, name string, ds int").load(str(t))
    assert sorted({r.ds for r in df.collect()}) == [1, 2, 3]


def test_bad_options_name_the_option(spark, tmp_path):
    t = partitioned(tmp_path)
    for options, said in [({"writeIds": "x"}, "write-id list 'x'"),
                          ({"writeids": "t:1:9223372036854775807::", "txns": "1:1::"},
                           "give one snapshot"),
                          ({"wrietIds": "1"}, "unknown read option 'wrietids'")]:
        with pytest.raises(Exception, match=said):
            hiveacid(spark, **options).load(str(t)).collect()


# ------------------------------------------------------------------------------------------------
# Writing


def frame(spark, n: int, parts: int = 3, start: int = 0):
    return spark.createDataFrame([(i, f"n{i}") for i in range(start, start + n)],
                                 "id int, name string").repartition(parts)


def clean(root: Path, *args) -> None:
    doc = run("validate", root, "--level", "rows", "--format", "json", *args).json()
    assert [f for f in doc["findings"] if f["severity"] in ("error", "warning")] == []


def test_hive_reads_what_an_append_writes(spark, judge, tmp_path):  # noqa: F811
    version, hive = judge
    t = tmp_path / "t"
    t.mkdir()
    frame(spark, 20).write.format("hiveacid").option("hiveVersion", version) \
        .option("writeId", "5").mode("append").save(str(t))
    frame(spark, 4, 2, start=100).write.format("hiveacid").option("hiveVersion", version) \
        .mode("append").save(str(t))  # writeId auto: the next, 6
    names = sorted(os.listdir(t))
    assert names == ["delta_0000005_0000005_0000", "delta_0000006_0000006_0000"], names
    buckets = len([n for n in os.listdir(t / names[0]) if n.startswith("bucket_")])
    if version == "2":
        expected = hive.read(str(t), "10:9223372036854775807::", buckets=buckets)
        got = acidtool_rows(t, "2", "--txns", "10:9223372036854775807::")
    else:
        snap = "t:10:9223372036854775807::"
        expected = hive.read(str(t), snap, buckets=buckets)
        got = acidtool_rows(t, version, "--write-ids", snap)
    assert len(expected) == 24 and got == expected
    assert sorted(int(v[0]) for _, v in expected) == list(range(20)) + list(range(100, 104))
    clean(t, "--hive-version", version)
    if version == "2":
        return
    frame(spark, 3, 1, start=200).write.format("hiveacid").option("hiveVersion", version) \
        .mode("overwrite").save(str(t))  # base_0000007: INSERT OVERWRITE
    assert "base_0000007" in os.listdir(t)
    expected = hive.read(str(t), snap, buckets=buckets)
    assert [v for _, v in expected] == [["200", "n200"], ["201", "n201"], ["202", "n202"]]
    assert {rid[0] for rid, _ in expected} == {7}
    assert acidtool_rows(t, version, "--write-ids", snap) == expected


def test_overwrite_writes_a_base_per_partition_written(spark, tmp_path):
    t = partitioned(tmp_path)
    df = spark.createDataFrame([(7, "seven", "2"), (8, "eight", "4")], "id int, name string, ds string")
    df.write.format("hiveacid").mode("overwrite").save(str(t))
    assert sorted(os.listdir(t / "ds=2")) == ["base_0000002", "delta_0000001_0000001_0000"]
    assert sorted(os.listdir(t / "ds=4")) == ["base_0000002"]
    assert "base_0000002" not in os.listdir(t / "ds=1")
    got = sorted((r.ds, r.id) for r in hiveacid(spark).load(str(t)).collect())
    assert got == [("1", 0), ("2", 7), ("3", 0), ("3", 1), ("3", 2), ("4", 8)]
    clean(t)


def test_a_static_partition_and_rows_that_name_another(spark, tmp_path):
    t = partitioned(tmp_path)
    frame(spark, 3).write.format("hiveacid").option("partition", "ds=9").mode("append") \
        .save(str(t))
    assert sorted(r.id for r in hiveacid(spark, partitions="ds=9").load(str(t)).collect()) \
        == [0, 1, 2]
    wrong = spark.createDataFrame([(1, "x", "5")], "id int, name string, ds string")
    with pytest.raises(Exception, match="holds other values than '8'"):
        wrong.write.format("hiveacid").option("partition", "ds=8").mode("append").save(str(t))
    assert not (t / "ds=8").exists() or os.listdir(t / "ds=8") == []
    assert not [n for n in os.listdir(t) if n.startswith("_acidtool_staging_")]


def test_bucketed_rows_go_to_hives_bucket_and_several_tasks_merge(spark, tmp_path):
    from acidtool.core.hashing import bucket_number

    t = tmp_path / "b"
    t.mkdir()
    frame(spark, 50, parts=4).write.format("hiveacid").option("buckets", "4") \
        .option("bucketBy", "id").mode("append").save(str(t))
    d = t / "delta_0000001_0000001_0000"
    files = sorted(n for n in os.listdir(d) if n.startswith("bucket_"))
    assert files == [f"bucket_0000{b}" for b in range(4)]
    got = hiveacid(spark, withRowId="true").load(str(t)).collect()
    for r in got:
        assert r.ROW__ID.bucketid == 536870912 | bucket_number([r.id], ["int"], 4, 2) << 16
    per_bucket = {}
    for r in got:
        per_bucket.setdefault(r.ROW__ID.bucketid, []).append(r.ROW__ID.rowid)
    assert all(sorted(v) == list(range(len(v))) for v in per_bucket.values())
    assert sorted(r.id for r in got) == list(range(50))
    clean(t)


def test_insert_only_tables_get_plain_files(spark, tmp_path):
    t = tmp_path / "mm"
    t.mkdir()
    frame(spark, 6, parts=2).write.format("hiveacid").option("insertOnly", "true") \
        .mode("append").save(str(t))
    d = t / "delta_0000001_0000001_0000"
    assert sorted(os.listdir(d)) == ["000000_0", "000001_0"]
    got = hiveacid(spark, insertOnly="true").load(str(t)).collect()
    assert sorted(r.id for r in got) == list(range(6))
    clean(t, "--insert-only")


def test_sql_create_select_insert(spark, tmp_path):
    t = partitioned(tmp_path)
    spark.sql(f"CREATE TABLE acid_p USING hiveacid OPTIONS (path '{t}')")
    try:
        assert spark.sql("SELECT count(*) FROM acid_p").collect()[0][0] == 6
        spark.sql("INSERT INTO acid_p VALUES (50, 'fifty', '1')")
        assert spark.sql("SELECT id FROM acid_p WHERE ds = '1' ORDER BY id").collect() == \
            [(0,), (50,)]
    finally:
        spark.sql("DROP TABLE acid_p")


def test_sql_table_options_reach_the_source(spark, tmp_path):
    """Spark hands a SQL table's OPTIONS over as "option.<name>", lower-cased: each is taken
    as the option it names (hiveVersion, writeIds), and a typo is still refused."""
    t = partitioned(tmp_path)
    spark.sql(f"CREATE TABLE acid_o USING hiveacid OPTIONS (path '{t}', hiveVersion '3', "
              "writeIds 'default.t:1:9223372036854775807::')")
    try:
        assert spark.sql("SELECT count(*) FROM acid_o").collect()[0][0] == 6
    finally:
        spark.sql("DROP TABLE acid_o")
    # Spark may ask the source for its schema when the table is created, or at its first read:
    # the typo is refused at whichever comes first
    try:
        with pytest.raises(Exception, match="unknown read option 'hiveversoin'"):
            spark.sql(f"CREATE TABLE acid_typo USING hiveacid OPTIONS (path '{t}', "
                      "hiveVersoin '3')")
            spark.sql("SELECT count(*) FROM acid_typo").collect()
    finally:
        spark.sql("DROP TABLE IF EXISTS acid_typo")


def test_a_failed_job_leaves_the_table_as_it_was(spark, tmp_path):
    from .test_repair import tree

    t = partitioned(tmp_path)
    before = tree(t)
    bad = spark.createDataFrame([(1, "x", "1"), (2, "y", "2")], "id string, name string, ds string")
    bad = bad.selectExpr("case when id = '2' then raise_error('boom') else 1 end as id", "name",
                         "ds")
    with pytest.raises(Exception, match="boom"):
        bad.write.format("hiveacid").mode("append").save(str(t))
    assert tree(t) == before


# ------------------------------------------------------------------------------------------------
# With a metastore (Hive 2.3, 3.1 and 4.0's, on loopback)


def _new_txns(metastore, before: int):
    from acidtool.io.metastore import Metastore as Client

    with Client(metastore.url) as client:
        after = client.txns()
    return after, list(range(before + 1, after.high_watermark + 1))


def test_an_append_commits_its_write_id_in_the_metastore(spark, metastore, table):  # noqa: F811
    from acidtool.io.metastore import Metastore as Client

    name, location = table
    with Client(metastore.url) as client:
        before = client.txns().high_watermark
    frame(spark, 10).write.format("hiveacid").option("metastore", metastore.url) \
        .mode("append").save(name)
    after, txns = _new_txns(metastore, before)
    assert len(txns) == 1 and not after.is_aborted(txns[0])
    assert txns[0] not in after.open_ids
    got = hiveacid(spark, metastore=metastore.url).load(name).collect()
    assert sorted(r.id for r in got) == list(range(10))
    (d,) = [n for n in os.listdir(location) if not n.startswith((".", "_"))]
    assert sorted(n for n in os.listdir(Path(location) / d) if n.startswith("bucket_")) == \
        ["bucket_00000", "bucket_00001"]  # the table's two buckets
    clean(Path(location), "--hive-version", metastore.version)


def test_a_failed_job_aborts_its_transaction(spark, metastore, table):  # noqa: F811
    from acidtool.io.metastore import Metastore as Client

    name, location = table
    with Client(metastore.url) as client:
        before = client.txns().high_watermark
    bad = spark.createDataFrame([("1", "x"), ("2", "y")], "id string, name string")
    bad = bad.selectExpr("case when id = '2' then raise_error('boom') else 1 end as id", "name")
    with pytest.raises(Exception, match="boom"):
        bad.write.format("hiveacid").option("metastore", metastore.url).mode("append") \
            .save(name)
    after, txns = _new_txns(metastore, before)
    # (Hive 2.3's list does not tell aborted from open: an exception below every open one)
    assert len(txns) == 1 and txns[0] in after.exceptions and after.min_open > txns[0]
    assert not os.path.isdir(location) or \
        [n for n in os.listdir(location) if not n.startswith(".")] == []


# ------------------------------------------------------------------------------------------------
# The driver's commit killed (SIGKILL) at every fault point, without Spark


def _visible(root: Path) -> dict:
    """The root as its readers see it: hidden staging directories and the lock left aside."""
    from .test_repair import tree

    return {k: v for k, v in tree(root).items()
            if not k.split("/")[-1].startswith(("_acidtool_staging_", ".acidtool-lock"))
            and "/_acidtool_staging_" not in "/" + k}


def _job(root: Path, write_id: str, state: Path, kill_at: int | None = None):
    import subprocess
    import sys

    env = {**os.environ, "ACIDTOOL_STATE_DIR": str(state)}
    env.pop("ACIDTOOL_KILL_AT", None)
    if kill_at is not None:
        env["ACIDTOOL_KILL_AT"] = str(kill_at)
    return subprocess.run([sys.executable, "-m", "tests.helpers.sourcejob", str(root),
                           write_id], env=env, capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])


def _ids(root: Path) -> list:
    out = run("read", root, "--format", "csv").out.splitlines()[1:]
    return sorted(out)


@pytest.mark.parametrize("kill_at", range(1, 13))
def test_a_killed_commit_is_rolled_back_by_undo_or_the_next_write(tmp_path, kill_at):
    """Killed before its "done" record, a commit is rolled back by the next write (which then
    commits its own rows once) or by undo; killed after it, its rows are in, once."""
    import json

    from .test_repair import tree

    t = partitioned(tmp_path)
    before, rows_before, whole = _visible(t), _ids(t), tree(t)
    new = sorted(f'{i},"w{i}","{2 + i % 3}"' for i in range(6))
    state = tmp_path / "state"
    killed = _job(t, "5", state, kill_at)
    if killed.returncode == 0:
        pytest.skip(f"the commit has fewer than {kill_at} fault points")
    assert killed.returncode == -9, killed.stderr
    journals = sorted((state / "journals").glob("hiveacid-*.jsonl")) if \
        (state / "journals").exists() else []
    records = [json.loads(x) for j in journals for x in j.read_text().splitlines()]
    if any(r["record"] == "done" for r in records):
        assert _ids(t) == sorted(rows_before + new)  # committed: its rows, once
    else:  # the next write rolls the dead one back first, then commits its own, once
        again = _job(t, "6", state)
        assert again.returncode == 0, again.stderr
        assert _ids(t) == sorted(rows_before + new)
    for journal in sorted((state / "journals").glob("hiveacid-*.jsonl"),
                          key=lambda j: j.stat().st_mtime_ns, reverse=True):
        undone = run("undo", journal)  # latest first
        assert undone.code == 0, undone.out
    assert _visible(t) == before
    left = tree(t)
    assert ".acidtool-lock" not in left
    if journals:  # killed after its journal began: undo removes its staging directory too
        assert left == whole
    # (killed before: its staging directory is no one's to take yet; repair quarantines it
    # once old, as validate's ACID003 says)


@pytest.mark.slow
def test_a_new_session_finds_the_source_without_register(tmp_path):
    """Spark looks up Python data sources in modules named pyspark_*: a session that never
    called register reads and writes format('hiveacid')."""
    import subprocess
    import sys

    t = partitioned(tmp_path)
    script = (
        "import os, sys\n"
        "from pyspark.sql import SparkSession\n"
        "os.environ['PYSPARK_PYTHON'] = sys.executable\n"
        "s = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false')"
        ".getOrCreate()\n"
        f"print(s.read.format('hiveacid').load({str(t)!r}).count())\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-1] == "6"


@pytest.mark.slow
def test_a_script_of_the_venvs_python_finds_the_source_without_the_venv_on_path(tmp_path):
    """Spark starts its workers with $PYSPARK_PYTHON, else python3 from PATH: a script run as
    .venv/bin/python, without the venv on PATH, that imports acidtool.spark first gets workers
    of its own interpreter (docs/spark.md)."""
    import subprocess
    import sys

    t = partitioned(tmp_path)
    script = (
        "import sys\n"
        "import acidtool.spark\n"
        "from pyspark.sql import SparkSession\n"
        "s = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false')"
        ".getOrCreate()\n"
        f"print(s.read.format('hiveacid').load({str(t)!r}).count())\n")
    env = {k: v for k, v in os.environ.items()
           if k in ("HOME", "JAVA_HOME", "LANG", "TMPDIR", "ACIDTOOL_STATE_DIR")}
    env["PATH"] = "/usr/bin:/bin"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-1] == "6"


def test_a_new_table_is_partitioned_as_asked_and_then_as_its_directories_say(spark, tmp_path):
    t = tmp_path / "new"
    t.mkdir()
    df = spark.createDataFrame([(1, "a", "x"), (2, "b", "y")], "id int, name string, ds string")
    df.write.format("hiveacid").option("partitionColumns", "ds").mode("append").save(str(t))
    assert sorted(os.listdir(t)) == ["ds=x", "ds=y"]
    df.write.format("hiveacid").mode("append").save(str(t))  # the directories say now
    assert sorted(os.listdir(t / "ds=x")) == ["delta_0000001_0000001_0000",
                                              "delta_0000002_0000002_0000"]
    with pytest.raises(Exception, match="partitioned by ds"):
        df.write.format("hiveacid").option("partitionColumns", "name").mode("append") \
            .save(str(t))
    lacking = spark.createDataFrame([(3, "c")], "id int, name string")
    with pytest.raises(Exception, match="no column 'ds'"):
        lacking.write.format("hiveacid").mode("append").save(str(t))
    got = sorted((r.ds, r.id) for r in hiveacid(spark).load(str(t)).collect())
    assert got == [("x", 1), ("x", 1), ("y", 2), ("y", 2)]
    clean(t)


# ------------------------------------------------------------------------------------------------
# Streaming: each micro-batch one delta, committed once


def test_each_micro_batch_commits_one_delta_and_a_restart_goes_on(spark, tmp_path):
    import json

    src, t, check = tmp_path / "in", tmp_path / "s", tmp_path / "checkpoint"
    src.mkdir()
    t.mkdir()

    def drop(name, ids):
        (src / name).write_text("".join(json.dumps({"id": i, "name": f"s{i}"}) + "\n"
                                        for i in ids))

    def run_stream():
        q = (spark.readStream.schema("id int, name string").option("maxFilesPerTrigger", 1)
             .json(str(src)).writeStream.format("hiveacid")
             .option("checkpointLocation", str(check)).trigger(availableNow=True)
             .start(str(t)))
        q.awaitTermination(120)
        assert q.exception() is None, q.exception()

    drop("a.json", range(3))
    drop("b.json", range(3, 5))
    run_stream()  # two batches, one file each: Spark plans each commit's writer again
    drop("c.json", range(5, 7))
    run_stream()  # the same checkpoint: the next batch
    deltas = sorted(n for n in os.listdir(t) if n.startswith("delta_"))
    assert deltas == ["delta_0000001_0000001_0000", "delta_0000002_0000002_0000",
                      "delta_0000003_0000003_0000"], os.listdir(t)
    for d in deltas:
        assert [n for n in os.listdir(t / d) if n.startswith("_acidtool_stream_")]
    assert sorted(r.id for r in hiveacid(spark).load(str(t)).collect()) == list(range(7))
    checked = run("validate", t, "--format", "json")
    assert checked.code == 0, checked.out  # each row's write id is its directory's
    assert not [n for n in os.listdir(t) if n.startswith("_acidtool_staging_")]
    clean(t)


def test_a_micro_batch_run_again_commits_nothing_twice(tmp_path):
    """Spark runs a batch again when it died after the batch's commit and before its
    checkpoint: the second commit finds the first one's marker."""
    import pyarrow as pa

    from acidtool.hiveacid import Written
    from acidtool.hiveacid.stream import commit_batch, for_batch, plan_stream
    from acidtool.hiveacid.write import write_task
    from acidtool.table.options import WriteOptions

    t = tmp_path / "s"
    t.mkdir()
    frame = pa.schema([("id", pa.int32()), ("name", pa.string())])
    job = plan_stream(WriteOptions.of({"path": str(t)}), frame, False)
    rows = pa.RecordBatch.from_pylist([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
                                      schema=frame)
    for _ in range(2):
        files = write_task(for_batch(job, "q-1234567890", 7), iter([rows]), 0, 0)
        commit_batch(job, [Written(files, "q-1234567890")], 7)
    assert [n for n in os.listdir(t) if not n.startswith(".")] == ["delta_0000001_0000001_0000"]
    assert len(run("read", t).out.splitlines()) == 2
    with pytest.raises(Exception, match="appends"):
        plan_stream(WriteOptions.of({"path": str(t)}), frame, True)


def test_dynamic_partitions_typed_by_the_metastore_are_added_there(spark, metastore, tmp_path):
    """A table partitioned by (ds date, h int): rows go to the partitions their values name,
    the metastore gets the partitions it lacks, and a read types the partition columns as the
    metastore says, pruning on them."""
    import datetime as dt

    from acidtool.io.metastore import Metastore as Client

    from .helpers.metastore import create_table

    name = f"typed{metastore.version}"
    location = f"{metastore.warehouse}/{name}"
    create_table(metastore.url, "default", name, "file://" + location,
                 partition_keys=(("ds", "date"), ("h", "int")))
    df = spark.createDataFrame(
        [(1, "a", dt.date(2026, 11, 24), 7), (2, "b", dt.date(2026, 11, 25), 8),
         (3, "c", dt.date(2026, 11, 25), 8)], "id int, name string, ds date, h int")
    df.write.format("hiveacid").option("metastore", metastore.url).mode("append") \
        .save(f"default.{name}")
    with Client(metastore.url) as client:
        parts = client.partitions(client.table("default", name))
    assert sorted(p.name for p in parts) == ["ds=2026-11-24/h=7", "ds=2026-11-25/h=8"]
    read = hiveacid(spark, metastore=metastore.url).load(f"default.{name}")
    assert dict((f.name, f.dataType.simpleString()) for f in read.schema.fields)["ds"] == "date"
    got = sorted((r.id, r.ds, r.h) for r in read.where("h = 8").collect())
    assert got == [(2, dt.date(2026, 11, 25), 8), (3, dt.date(2026, 11, 25), 8)]


def test_no_rows_append_nothing_and_overwrite_with_an_empty_base(spark, tmp_path):
    t = partitioned(tmp_path / "a")
    before = _visible(t)
    empty = spark.createDataFrame([], "id int, name string, ds string")
    empty.write.format("hiveacid").mode("append").save(str(t))
    assert _visible(t) == before
    u = tmp_path / "u"
    u.mkdir()
    frame(spark, 4).write.format("hiveacid").mode("append").save(str(u))
    spark.createDataFrame([], "id int, name string").write.format("hiveacid") \
        .mode("overwrite").save(str(u))
    assert "base_0000002" in os.listdir(u)
    assert hiveacid(spark).load(str(u)).count() == 0
    clean(u)


def test_two_jobs_racing_for_one_write_id_commit_once(tmp_path):
    """Two writes of write id 5, each planned before the other committed: the table's lock
    lets one commit; the other finds the write id taken under the lock and commits nothing."""
    import subprocess
    import sys

    t = partitioned(tmp_path)
    rows_before = _ids(t)
    env = {**os.environ, "ACIDTOOL_STATE_DIR": str(tmp_path / "state")}
    env.pop("ACIDTOOL_KILL_AT", None)
    procs = [subprocess.Popen([sys.executable, "-m", "tests.helpers.sourcejob", str(t), "5"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=Path(__file__).resolve().parents[1])
             for _ in range(2)]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    assert sorted(code != 0 for code, _ in results) == [False, True], results
    (refused,) = [err for code, err in results if code != 0]
    assert "already used" in refused or "another writer committed write id 5" in refused
    assert _ids(t) == sorted(rows_before + [f'{i},"w{i}","{2 + i % 3}"' for i in range(6)])
    assert not [p for p in t.rglob("_acidtool_staging_*")]
    assert not (t / ".acidtool-lock").exists()
