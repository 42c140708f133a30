"""acidtool against a real HDFS (MiniDFSCluster on 127.0.0.1, through WebHDFS): the same tables
on HDFS and on the local disk give the same output, for every command that reads a table, and
convert commits into HDFS by one rename."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as paorc
import pytest

from acidtool.demo import build_demo
from acidtool.io.acidwrite import DELETE

from .helpers.layouts import acid, build, delta, events
from .helpers.runner import run

pytestmark = pytest.mark.spark

SNAPSHOT = "shop.orders:5:9223372036854775807::5"


@pytest.fixture(scope="module")
def tables(minidfs, tmp_path_factory):
    """(local root, HDFS root) holding the same tables: the demo table and a partitioned one."""
    local = tmp_path_factory.mktemp("local") / "warehouse"
    build_demo(local / "demo")
    part = local / "parts"
    for ds in ("ds=1", "ds=2"):
        build(part / ds, {**delta("delta_0000001_0000001_0000", acid(events(1, 3))),
                          **delta("delta_0000002_0000002_0000", acid(events(2, 2)))})
    fs = minidfs.filesystem()
    root = f"/acidtool-tests/{local.parent.name}"
    for path in sorted(local.rglob("*")):
        target = f"{root}/{path.relative_to(local)}"
        if path.is_dir():
            fs.makedirs(target, exist_ok=True)
        else:
            fs.pipe_file(target, path.read_bytes())
    return local, minidfs.url(root)


def same(local_out: str, remote_out: str, local: Path, remote: str) -> None:
    assert local_out.replace(str(local), "ROOT") == remote_out.replace(remote, "ROOT")


@pytest.mark.parametrize("args", [
    ["ls", "demo", "--write-ids", SNAPSHOT, "--format", "json"],
    ["ls", "parts", "--format", "json", "--files"],
    ["validate", "demo", "--level", "rows", "--format", "json"],
    ["validate", "parts", "--level", "rows"],
    ["read", "demo", "--write-ids", SNAPSHOT, "--with-row-id"],
    ["read", "parts", "--format", "csv"],
    ["dump", "demo", "--all", "--with-file"],
    ["meta", "demo/base_0000002/bucket_00000", "--format", "json"],
], ids=lambda a: " ".join(a[:2]))
def test_hdfs_gives_what_the_local_disk_gives(tables, args):
    local, remote = tables
    command, target, *rest = args
    on_disk = run(command, local / target, *rest)
    on_hdfs = run(command, f"{remote}/{target}", *rest)
    assert on_hdfs.code == on_disk.code, on_hdfs.err
    assert on_disk.out, "nothing to compare"
    same(on_disk.out, on_hdfs.out, local, remote)


def test_convert_commits_into_hdfs(tables, minidfs, tmp_path):
    local, remote = tables
    land = tmp_path / "land"
    land.mkdir()
    paorc.write_table(pa.table({"id": pa.array(range(5), pa.int32()),
                                "name": [f"x{i}" for i in range(5)]}), str(land / "a.orc"))
    fs = minidfs.filesystem()
    table = f"{remote}/converted"
    fs.makedirs(table.split(f"{minidfs.http_port}", 1)[1], exist_ok=True)
    result = run("convert", land, "--table", table, "--write-id", "7", "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["directory"] == "delta_0000007_0000007_0000"
    listing = run("ls", table, "--format", "json", "--files").json()
    names = [e["name"] for e in listing["partitions"][0]["entries"]]
    assert names == ["delta_0000007_0000007_0000"]  # no staging directory left behind
    rows = [json.loads(x) for x in run("read", table, "--with-row-id").out.splitlines()]
    assert [(r["ROW__ID"]["rowid"], r["id"]) for r in rows] == [(i, i) for i in range(5)]
    assert run("validate", table, "--level", "rows").code == 0


def test_hdfs_scheme_without_libhdfs_is_one_line_naming_webhdfs(minidfs):
    result = run("ls", f"hdfs://127.0.0.1:{minidfs.rpc_port}/acidtool-tests")
    if result.code == 0:
        pytest.skip("libhdfs is installed here: hdfs:// works")
    assert result.code == 2 and result.err.count("\n") == 1
    assert "webhdfs://" in result.err


@pytest.mark.parametrize("args", [
    ["ls", "demo", "--write-ids", SNAPSHOT, "--format", "json"],
    ["read", "parts", "--format", "csv"],
    ["validate", "demo", "--level", "rows", "--format", "json"],
], ids=lambda a: " ".join(a[:2]))
def test_hdfs_scheme_over_webhdfs_gives_what_webhdfs_gives(tables, minidfs, monkeypatch, args):
    """ACIDTOOL_WEBHDFS: hdfs://NN:RPC/... read over the NameNode's WebHDFS port, the URL kept
    as typed (as a metastore's locations are hdfs://)."""
    local, remote = tables
    command, target, *rest = args
    monkeypatch.setenv("ACIDTOOL_WEBHDFS", str(minidfs.http_port))
    rpc = remote.replace(f"webhdfs://127.0.0.1:{minidfs.http_port}",
                         f"hdfs://127.0.0.1:{minidfs.rpc_port}")
    over_http = run(command, f"{remote}/{target}", *rest)
    over_rpc_name = run(command, f"{rpc}/{target}", *rest)
    assert over_rpc_name.code == over_http.code, over_rpc_name.err
    assert over_http.out
    assert over_rpc_name.out.replace(rpc, "ROOT") == over_http.out.replace(remote, "ROOT")


def test_repair_applies_and_undoes_on_hdfs(minidfs, tmp_path, monkeypatch):
    """The DataX case on HDFS: plan, apply (renames on the NameNode), validate clean, the rows,
    undo, and the tree as it was (names and bytes)."""
    from .helpers.layouts import ROW, plain

    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))
    fs = minidfs.filesystem()
    root = f"/acidtool-tests/repair-{tmp_path.name}"
    layout = {**delta("delta_0000001_0000001_0000", acid(events(1, 2))),
              "part-0000.orc": plain(ROW, [(10, "x")]),
              "delta_0000001_0000001_0000/bucket_00000 (1)": acid(events(1, 1, bucket=1))}
    for rel, data in layout.items():
        fs.pipe_file(f"{root}/{rel}", data)
    table = minidfs.url(root)

    def tree():
        return {p: fs.cat_file(p) if fs.isfile(p) else "dir"
                for p in fs.find(root, withdirs=True)}

    before = tree()
    planned = run("repair", table, "--write-id", "2", "--format", "json")
    assert planned.code == 1 and tree() == before
    assert sorted(a["kind"] for a in planned.json()["actions"]) == ["rename", "rewrap"]
    applied = run("repair", table, "--write-id", "2", "--apply", "--format", "json")
    assert applied.code == 0, applied.out + applied.err
    assert run("validate", table, "--level", "rows").code == 0
    rows = sorted(json.loads(x)["id"] for x in run("read", table).out.splitlines())
    assert rows == [0, 0, 1, 10]
    assert run("undo", applied.json()["journal"]).code == 0
    assert tree() == before


def test_hdfs_scheme_over_webhdfs_converts_dumps_and_meta(tables, minidfs, tmp_path,
                                                          monkeypatch):
    """The writing and file-level commands through hdfs:// paths and ACIDTOOL_WEBHDFS."""
    local, remote = tables
    monkeypatch.setenv("ACIDTOOL_WEBHDFS", str(minidfs.http_port))
    rpc = remote.replace(f"webhdfs://127.0.0.1:{minidfs.http_port}",
                         f"hdfs://127.0.0.1:{minidfs.rpc_port}")
    land = tmp_path / "land"
    land.mkdir()
    paorc.write_table(pa.table({"id": pa.array(range(3), pa.int32()),
                                "name": ["a", "b", "c"]}), str(land / "a.orc"))
    minidfs.filesystem().makedirs(remote.split(str(minidfs.http_port), 1)[1] + "/viarpc",
                                  exist_ok=True)
    result = run("convert", land, "--table", f"{rpc}/viarpc", "--write-id", "4")
    assert result.code == 0, result.err
    assert [json.loads(x)["id"] for x in run("read", f"{rpc}/viarpc").out.splitlines()] == \
        [0, 1, 2]
    for command in (["dump", f"{rpc}/demo", "--all"],
                    ["meta", f"{rpc}/demo/base_0000002/bucket_00000", "--format", "json"]):
        over_rpc_name = run(*command)
        over_http = run(command[0], command[1].replace(rpc, remote), *command[2:])
        assert over_rpc_name.code == over_http.code == 0, over_rpc_name.err
        assert over_rpc_name.out.replace(rpc, "ROOT") == over_http.out.replace(remote, "ROOT")


def test_compact_writes_through_a_local_file_and_undoes_on_hdfs(minidfs, tmp_path,
                                                                  monkeypatch):
    """A remote table: each file is written locally, uploaded into the staging directory on
    HDFS and its hash checked, then renamed in on the NameNode; undo puts the tree back."""
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))
    fs = minidfs.filesystem()
    root = f"/acidtool-tests/compact-{tmp_path.name}"
    layout = {**delta("delta_0000001_0000001_0000", acid(events(1, 3))),
              **delta("delta_0000002_0000002_0000", acid(events(2, 2, bucket=1)))}
    for rel, data in layout.items():
        fs.pipe_file(f"{root}/{rel}", data)
    table = minidfs.url(root)
    before_tree = {p: fs.cat_file(p) if fs.isfile(p) else "dir"
                   for p in fs.find(root, withdirs=True)}
    before = sorted(run("read", table, "--with-row-id").out.splitlines())
    done = run("compact", table, "--major", "--apply", "--format", "json")
    assert done.code == 0, done.err
    (written,) = done.json()["partitions"][0]["written"]
    assert written == "base_0000002"
    assert sorted(fs.ls(f"{root}/{written}", detail=False)) == [
        f"{root}/{written}/{n}" for n in ("_acidtool_run", "_metadata_acid", "_orc_acid_version",
                                          "bucket_00000")]
    assert not [p for p in fs.ls(root, detail=False) if "_acidtool_staging_" in p]
    assert sorted(run("read", table, "--with-row-id").out.splitlines()) == before
    assert run("undo", done.json()["journal"]).code == 0
    assert {p: fs.cat_file(p) if fs.isfile(p) else "dir"
            for p in fs.find(root, withdirs=True)} == before_tree


def test_the_hiveacid_source_writes_and_reads_on_hdfs(minidfs, spark, tmp_path, monkeypatch):
    """df.write.format("hiveacid") into a table on HDFS (its tasks stage there, the driver
    renames on the NameNode), then read back through the source and by acidtool read."""
    from acidtool.spark import register

    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))
    register(spark)
    fs = minidfs.filesystem()
    root = f"/acidtool-tests/source-{tmp_path.name}"
    fs.makedirs(f"{root}/t", exist_ok=True)
    table = minidfs.url(f"{root}/t")
    df = spark.createDataFrame([(i, f"h{i}", "a" if i % 2 else "b") for i in range(6)],
                               "id int, name string, ds string")
    df.write.format("hiveacid").option("partitionColumns", "ds").mode("append").save(table)
    assert sorted(p.rsplit("/", 1)[-1] for p in fs.ls(f"{root}/t", detail=False)) == \
        ["ds=a", "ds=b"]
    assert not [p for p in fs.find(root, withdirs=True) if "_acidtool_staging_" in p]
    got = spark.read.format("hiveacid").load(table).collect()
    assert sorted((r.ds, r.id) for r in got) == [("a", 1), ("a", 3), ("a", 5), ("b", 0),
                                                 ("b", 2), ("b", 4)]
    assert len(run("read", table).out.splitlines()) == 6
    # Spark's own plan (read_table's default) reads the same rows from hdfs:// (acidtool
    # plans over WebHDFS, Spark's Hadoop client reads by RPC), and a partition filter leaves
    # the other partition's files out; a webhdfs:// table goes through the source (the
    # WebHDFS client in Spark's Hadoop lacks its shaded Jersey classes)
    from acidtool.spark import read_table_and_why

    assert "fsspec" in read_table_and_why(spark, table)[1]
    monkeypatch.setenv("ACIDTOOL_WEBHDFS", str(minidfs.http_port))
    native, why = read_table_and_why(spark, f"hdfs://127.0.0.1:{minidfs.rpc_port}{root}/t")
    assert why is None
    assert sorted((r.ds, r.id) for r in native.collect()) == sorted((r.ds, r.id) for r in got)
    one = native.where("ds = 'a'")
    # the two partitions' files are one relation of Spark's, each partition reading its own
    # by _metadata.file_path (acidtool's hdfs:// strings are Spark's): ds=b's are never
    # opened, so garbage in them changes nothing
    assert {f.rsplit("/", 3)[-3] for f in one.inputFiles()} == {"ds=a", "ds=b"}
    for f in fs.find(f"{root}/t/ds=b"):
        if f.rsplit("/", 1)[-1].startswith("bucket_"):
            fs.pipe_file(f, b"not ORC" * 100)
    assert sorted(r.id for r in one.collect()) == [1, 3, 5]


def test_export_native_reads_an_hdfs_table_as_the_export_in_process(minidfs, spark, tmp_path,
                                                                     monkeypatch):
    """export --spark --native of a partitioned table on HDFS (Spark's own reader by RPC,
    acidtool planning over WebHDFS) into a local catalog: the rows, partitions and ROW__IDs
    the export in process writes."""
    pytest.importorskip("pyiceberg", reason="pyiceberg is not installed")
    from .test_export import export, iceberg_rows

    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ACIDTOOL_WEBHDFS", str(minidfs.http_port))
    fs = minidfs.filesystem()
    root = f"/acidtool-tests/export-{tmp_path.name}"
    for part in ("ds=a", "ds=b"):
        for name, data in delta("delta_0000001_0000001_0000", acid(events(1, n=4))).items():
            fs.pipe(f"{root}/t/{part}/{name}", data)
    fs.pipe(f"{root}/t/ds=a/delete_delta_0000002_0000002_0000/bucket_00000",
            acid(events(1, n=1, op=DELETE, current=2)))
    table = f"hdfs://127.0.0.1:{minidfs.rpc_port}{root}/t"
    native = export(table, tmp_path / "native", "--spark", "--native")
    assert native.code == 0 and "Spark's own ORC reader" in native.err, native.err
    assert export(table, tmp_path / "lake").code == 0
    want = iceberg_rows(tmp_path / "lake")
    assert len(want) == 7 and iceberg_rows(tmp_path / "native") == want
