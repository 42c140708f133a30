"""``acidtool convert``: Hive's insert layout from raw ORC, safely."""

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as paorc
import pytest

from acidtool.core.hashing import bucket_number

from .helpers.layouts import acid, build, delta, events, with_damaged_stripe
from .helpers.runner import run
from .helpers.shared import REALDATA, require
from .test_validate import datax_table


def raw(path, rows, schema=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table(rows) if schema is None else pa.table(rows, schema=schema)
    paorc.write_table(table, str(path))
    return path


def snapshot(root):
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*"))


def test_converted_delta_is_what_hive_writes(tmp_path):
    src = raw(tmp_path / "land" / "part-0.orc", {"id": pa.array([1, 2, 3], pa.int32()),
                                                 "name": ["a", "b", "c"]})
    table = tmp_path / "t"
    table.mkdir()
    result = run("convert", src, "--table", table, "--write-id", "7", "--format", "json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert summary["directory"] == "delta_0000007_0000007_0000"
    assert summary["files"] == {"bucket_00000": 3}
    assert "write id 7 is committed" in result.err
    d = table / "delta_0000007_0000007_0000"
    assert sorted(p.name for p in d.iterdir()) == ["_acidtool_sources", "_orc_acid_version",
                                                  "bucket_00000"]
    assert (d / "_orc_acid_version").read_bytes() == b"2"
    lines = run("dump", d / "bucket_00000").out.splitlines()
    assert lines[0] == ('{"operation":0,"originalTransaction":7,"bucket":536870912,"rowId":0,'
                        '"currentTransaction":7,"row":{"id":1,"name":"a"}}')
    meta = run("meta", d / "bucket_00000", "--format", "json").json()[0]
    assert meta["user_metadata"] == {"hive.acid.key.index": "7,536870912,2;",
                                     "hive.acid.stats": "3,0,0", "hive.acid.version": "2"}
    assert meta["compression"] == "ZLIB"
    # validate finds nothing at error or warning level
    assert run("validate", table, "--level", "rows", "--fail-on", "warning").code == 0


def test_metadata_has_the_form_of_real_hive3_files(tmp_path):
    real = require(REALDATA / "trino/nationFile25kRowsSortedOnNationKey/bucket_00000")
    ours_src = raw(tmp_path / "s.orc", {"x": pa.array([1], pa.int32())})
    table = tmp_path / "t"
    table.mkdir()
    run("convert", ours_src, "--table", table, "--write-id", "2")
    theirs = run("meta", real, "--format", "json").json()[0]
    ours = run("meta", table / "delta_0000002_0000002_0000/bucket_00000",
               "--format", "json").json()[0]
    assert set(ours["user_metadata"]) == set(theirs["user_metadata"])
    index = re.compile(r"^(\d+,\d+,\d+;)+$")
    for doc in (theirs, ours):
        assert index.match(doc["user_metadata"]["hive.acid.key.index"])
        assert re.match(r"^\d+,0,0$", doc["user_metadata"]["hive.acid.stats"])
        assert doc["user_metadata"]["hive.acid.version"] == "2"
    assert ours["schema"].split(",row:")[0] == theirs["schema"].split(",row:")[0]


def test_many_files_by_max_file_rows_and_write_id_auto(tmp_path):
    # (the table's columns: its delta's, id int and name string)
    src = raw(tmp_path / "s.orc", {"id": pa.array(range(25), pa.int32()),
                                   "name": [f"n{i}" for i in range(25)]})
    table = build(tmp_path / "t", {**delta("delta_0000004_0000004_0000", acid(events(4)))})
    result = run("convert", src, "--table", table, "--write-id", "auto", "--max-file-rows", "10",
                 "--format", "json")
    summary = json.loads(result.out)
    assert summary["directory"] == "delta_0000005_0000005_0000"
    assert summary["files"] == {"bucket_00000": 10, "bucket_00001": 10, "bucket_00002": 5}
    out = [json.loads(x) for x in run("dump", table / summary["directory"], "--decode").out
           .splitlines()]
    assert [(r["bucketId"], r["rowId"]) for r in out][9:12] == [(0, 9), (1, 0), (1, 1)]
    assert [r["row"]["id"] for r in out] == list(range(25))


@pytest.mark.parametrize("version", [1, 2])
def test_bucketed_rows_land_where_hive_puts_them(tmp_path, version):
    ids = list(range(40))
    names = [f"n{i}" for i in ids]
    src = raw(tmp_path / "s.orc", {"id": pa.array(ids, pa.int32()), "name": names})
    table = tmp_path / "t"
    table.mkdir()
    result = run("convert", src, "--table", table, "--write-id", "3", "--buckets", "4",
                 "--bucket-by", "id,name", "--bucketing-version", str(version))
    assert result.code == 0, result.err
    for line in run("dump", table, "--decode", "--with-file").out.splitlines():
        r = json.loads(line)
        expected = bucket_number([r["row"]["id"], r["row"]["name"]], ["int", "string"], 4,
                                 version)
        assert r["bucketId"] == expected
        assert r["file"].endswith(f"bucket_{expected:05d}")
    assert run("validate", table, "--level", "rows", "--fail-on", "warning").code == 0


def test_hive2_form(tmp_path):
    src = raw(tmp_path / "s.orc", {"id": pa.array([1, 2], pa.int32())})
    table = tmp_path / "t"
    table.mkdir()
    assert run("convert", src, "--table", table, "--write-id", "9", "--hive-version", "2",
               "--statement-id", "1").code == 0
    d = table / "delta_0000009_0000009_0001"
    assert sorted(p.name for p in d.iterdir()) == ["_acidtool_sources", "bucket_00000"]
    meta = run("meta", d / "bucket_00000", "--format", "json").json()[0]
    # Hive 2 writes the last stripe after the key index: a one-stripe file has an empty index
    assert meta["user_metadata"] == {"hive.acid.key.index": "", "hive.acid.stats": "2,0,0"}
    rows = [json.loads(x) for x in run("dump", d).out.splitlines()]
    assert {r["bucket"] for r in rows} == {0}
    assert run("validate", table, "--hive-version", "2", "--level", "rows",
               "--fail-on", "warning").code == 0


def test_schema_by_name_position_and_casts(tmp_path):
    src = raw(tmp_path / "s.orc", {"NAME": ["a"], "id": pa.array([1], pa.int32())})
    table = tmp_path / "t"
    table.mkdir()
    ok = run("convert", src, "--table", table, "--write-id", "1", "--schema",
             "struct<id:bigint,name:string>", "--dry-run")
    assert ok.code == 0 and "id (int32 -> int64)" in ok.out
    bad = run("convert", src, "--table", table, "--write-id", "1", "--schema",
              "struct<id:smallint,name:string,extra:int>")
    assert bad.code == 2
    assert "column 'extra' is missing" in bad.err and "int32 cannot be cast safely" in bad.err
    pos = run("convert", src, "--table", table, "--write-id", "1", "--by-position", "--schema",
              "struct<label:string,key:int>", "--format", "json")
    assert pos.code == 0, pos.err
    assert json.loads(run("read", table).out.splitlines()[0]) == {"label": "a", "key": 1}


@pytest.mark.parametrize("setup,args,message", [
    (lambda t: t / "missing.orc", [], "no such file"),
    (lambda t: (t / "x.csv").write_text("a,b\n") and t / "x.csv", [], "not an ORC file"),
    (lambda t: _acid_source(t), [], "already in the ACID event schema"),
    (lambda t: _two_schemas(t), [], "different schemas"),
    (lambda t: raw(t / "s.orc", {"a": [1]}), ["--write-id", "2"], "already used"),
    (lambda t: raw(t / "s.orc", {"a": [1]}), ["--buckets", "2", "--bucket-by", "zz"],
     "no column 'zz'"),
])
def test_bad_input_writes_nothing(tmp_path, setup, args, message):
    table = build(tmp_path / "t", {**delta("delta_0000002_0000002_0000", acid(events(2)))})
    before = snapshot(table)
    source = setup(tmp_path)
    extra = args if "--write-id" in args else ["--write-id", "5", *args]
    result = run("convert", source, "--table", table, *extra)
    assert result.code == 2, result.out
    assert message in result.err
    assert snapshot(table) == before


def _acid_source(tmp):
    path = tmp / "acid.orc"
    path.write_bytes(acid(events(1)))
    return path


def _two_schemas(tmp):
    raw(tmp / "d" / "a.orc", {"a": pa.array([1], pa.int32())})
    raw(tmp / "d" / "b.orc", {"b": ["x"]})
    return tmp / "d"


def test_target_must_be_a_directory(tmp_path):
    src = raw(tmp_path / "s.orc", {"a": [1]})
    (tmp_path / "file").write_text("x")
    assert run("convert", src, "--table", tmp_path / "file", "--write-id", "1").code == 2


def test_failure_while_committing_leaves_the_table_as_it_was(tmp_path, monkeypatch):
    src = raw(tmp_path / "s.orc", {"id": pa.array([1], pa.int32()), "name": ["a"]})
    table = build(tmp_path / "t", {**delta("delta_0000002_0000002_0000", acid(events(2)))})
    before = snapshot(table)
    import acidtool.io.journal

    def boom(src, dst):
        assert Path(src.path).exists()  # staged, not yet moved
        raise OSError("disk full")

    monkeypatch.setattr(acidtool.io.journal, "rename", boom)  # the commit's rename
    result = run("convert", src, "--table", table, "--write-id", "5")
    assert result.code != 0 and "disk full" in result.err
    assert snapshot(table) == before
    assert src.exists()


def test_a_source_damaged_past_its_footer_is_one_line_and_writes_nothing(tmp_path):
    """The plan reads footers; damage inside a stripe shows only while converting."""
    src = raw(tmp_path / "s.orc", {"id": pa.array(range(5000), pa.int32()),
                                   "name": [f"v{i}" for i in range(5000)]})
    src.write_bytes(with_damaged_stripe(src.read_bytes()))
    assert paorc.ORCFile(str(src)).nrows == 5000  # the footer is fine
    with pytest.raises(Exception):
        paorc.ORCFile(str(src)).read()
    table = build(tmp_path / "t", delta("delta_0000002_0000002_0000", acid(events(2))))
    before = snapshot(table)
    result = run("convert", src, "--table", table, "--write-id", "auto")
    assert result.code == 1 and "internal error" not in result.err, result.err
    assert str(src) in result.err and "nothing was written" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert snapshot(table) == before and src.exists()


def test_dry_run_writes_nothing(tmp_path):
    src = raw(tmp_path / "s.orc", {"a": [1]})
    table = tmp_path / "t"
    table.mkdir()
    result = run("convert", src, "--table", table, "--write-id", "auto", "--dry-run")
    assert result.code == 0 and "nothing written" in result.out
    assert list(table.iterdir()) == []


def test_datax_scenario_end_to_end(tmp_path):
    table = datax_table(tmp_path / "orders")
    assert run("validate", table).code == 1
    before = run("read", table)
    # Hive 3.1 and 4.0 fail on a root file whose name gives no bucket id (their own readers,
    # tests/test_hive_raw_files.py), and so does read
    assert before.code == 1 and "bucketId out of range: -1" in before.err, before.err
    root_file = next(p for p in table.iterdir() if p.name.startswith("orders__"))
    stray = next((table / "delta_0000003_0000003_0000").iterdir())
    done = tmp_path / "done"
    result = run("convert", root_file, stray, "--table", table, "--write-id", "auto",
                 "--move-sources", done, "--format", "json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert summary["directory"] == "delta_0000004_0000004_0000"
    name = "acidtool-manifest-delta_0000004_0000004_0000.jsonl"
    assert {p.name for p in done.iterdir()} == {root_file.name, stray.name, name}
    head, *moves, last = [json.loads(x) for x in (done / name).read_text().splitlines()]
    assert head["directory"] == "delta_0000004_0000004_0000" and head["sources"] == 2
    assert [m["rows"] for m in moves] == [1, 1]
    assert [m["to"] for m in moves] == [str(done / root_file.name), str(done / stray.name)]
    assert last == {"done": True, "moved": 2}
    assert run("validate", table).code == 0, run("validate", table).out
    after = [json.loads(x) for x in run("read", table, "--with-row-id").out.splitlines()]
    # Before, Hive failed on the DataX file in the root (and skipped the one in delta 3);
    # after, their rows are proper inserts of write id 4 next to the old ones.
    assert len(after) == 6
    assert sorted(r["ROW__ID"]["writeid"] for r in after) == [1, 1, 2, 2, 4, 4]


@pytest.mark.parametrize("rows,limit,expected", [
    ([3, 2], 10, [((0, 1), (0, 3), 5, 0)]),
    ([3, 2], 4, [((0,), (0,), 3, 0), ((1,), (0,), 2, 1)]),
    ([25], 10, [((0,), (0,), 25, 0)]),
    ([25, 1, 1], 10, [((0,), (0,), 25, 0), ((1, 2), (0, 1), 2, 3)]),
    ([], 10, []),
])
def test_group_sources(rows, limit, expected):
    from acidtool.commands.convert.delta import group_sources

    assert [(g.sources, g.offsets, g.rows, g.first_bucket)
            for g in group_sources(rows, limit)] == expected


def test_spark_refuses_an_in_process_filesystem(tmp_path):
    import fsspec

    mem = fsspec.filesystem("memory")
    mem.mkdir("/spark-refuses/t")
    src = raw(tmp_path / "land" / "a.orc", {"id": [1, 2]})
    result = run("convert", src, "--table", "memory://spark-refuses/t", "--write-id", "1",
                 "--spark")
    assert result.code == 2
    assert "memory://spark-refuses/t" in result.err and "drop --spark" in result.err
    assert mem.ls("/spark-refuses/t") == []


def test_spark_without_java_is_one_line_and_writes_nothing(tmp_path, monkeypatch):
    pytest.importorskip("pyspark")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    src = raw(tmp_path / "land" / "a.orc", {"id": [1, 2]})
    (tmp_path / "t").mkdir()
    result = run("convert", src, "--table", tmp_path / "t", "--write-id", "1", "--spark")
    assert result.code == 2
    assert result.err.count("\n") == 1 and "Java 17" in result.err
    assert list((tmp_path / "t").iterdir()) == []


def test_an_object_store_gets_the_same_duplicate_and_move_checks():
    """On an fsspec store (memory://, as s3:// would be): sources moved, the manifest written,
    the record committed with the delta, and a moved source recognised on a second run."""
    import io

    import fsspec

    fs = fsspec.filesystem("memory")
    root = "/dedupe-store"
    for name, ids in (("a.orc", [1, 2]), ("b.orc", [3])):
        buf = io.BytesIO()
        paorc.write_table(pa.table({"id": pa.array(ids, pa.int32())}), buf)
        fs.pipe(f"{root}/land/{name}", buf.getvalue())
    fs.mkdir(f"{root}/t")
    url = f"memory://{root}"
    first = run("convert", f"{url}/land", "--table", f"{url}/t", "--write-id", "auto",
                "--move-sources", f"{url}/done")
    assert first.code == 0, first.err
    assert sorted(p.rsplit("/", 1)[1] for p in fs.find(f"{root}/done")) == \
        ["a.orc", "acidtool-manifest-delta_0000001_0000001_0000.jsonl", "b.orc"]
    assert f"{root}/t/delta_0000001_0000001_0000/_acidtool_sources" in fs.find(f"{root}/t")
    again = run("convert", f"{url}/done/a.orc", "--table", f"{url}/t", "--write-id", "auto")
    assert again.code == 2 and "was converted already" in again.err, again.err
    assert sorted(json.loads(x)["id"] for x in run("read", f"{url}/t").out.splitlines()) == \
        [1, 2, 3]


def test_a_source_of_no_rows_makes_a_delta_with_an_empty_bucket_file(tmp_path):
    """Hive's writers leave an (empty) bucket file; Arrow's writer leaves no file at all
    without a batch, which once made this fail with 'File size too small'."""
    import pyarrow as pa
    import pyarrow.orc as po

    src = tmp_path / "empty.orc"
    po.write_table(pa.table({"id": pa.array([], pa.int32()), "name": pa.array([], pa.string())}),
                   str(src))
    (tmp_path / "t").mkdir()
    result = run("convert", src, "--table", tmp_path / "t", "--write-id", "1")
    assert result.code == 0, result.err
    bucket = tmp_path / "t" / "delta_0000001_0000001_0000" / "bucket_00000"
    assert po.ORCFile(str(bucket)).nrows == 0
    assert po.ORCFile(str(bucket)).schema.field("row").type == pa.struct(
        [("id", pa.int32()), ("name", pa.string())])
    assert run("read", tmp_path / "t").out == ""
