"""``convert --spark`` writes what the in-process path writes (rows, row ids, ACID metadata)."""

import json

import pyarrow as pa
import pyarrow.orc as paorc
import pytest

from .helpers.runner import run

pytestmark = pytest.mark.spark


def sources(root):
    root.mkdir(parents=True)
    paorc.write_table(pa.table({"id": pa.array(range(30), pa.int32()),
                                "name": [f"n{i}" for i in range(30)]}), str(root / "p0.orc"))
    paorc.write_table(pa.table({"id": pa.array(range(30, 45), pa.int32()),
                                "name": [f"n{i}" for i in range(30, 45)]}), str(root / "p1.orc"))
    return root


def acid_meta(table):
    return [{k: v for k, v in m["user_metadata"].items() if k.startswith("hive.acid")}
            for m in run("meta", table, "--format", "json").json()]


@pytest.mark.parametrize("args", [["--max-file-rows", "20"], ["--max-file-rows", "50"],
                                  ["--buckets", "4", "--bucket-by", "id,name"],
                                  ["--buckets", "3", "--bucket-by", "name",
                                   "--bucketing-version", "1", "--hive-version", "2"]])
def test_spark_and_in_process_write_the_same(spark, tmp_path, args):
    land = sources(tmp_path / "land")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert run("convert", land, "--table", a, "--write-id", "3", *args).code == 0
    result = run("convert", land, "--table", b, "--write-id", "3", "--spark", *args)
    assert result.code == 0, result.err
    dump_a = run("dump", a, "--decode", "--with-file").out
    assert dump_a and dump_a == run("dump", b, "--decode", "--with-file").out
    assert acid_meta(a) == acid_meta(b)
    assert run("validate", b, "--level", "rows", "--fail-on", "warning",
               *(["--hive-version", "2"] if "2" in args[-1:] else [])).code == 0


def test_write_delta_from_a_dataframe(spark, tmp_path):
    from acidtool import write_delta  # the public entry, as docs/convert.md shows it

    table = tmp_path / "t"
    table.mkdir()
    df = spark.createDataFrame([(i, f"n{i}") for i in range(10)], "id int, name string")
    summary = write_delta(df, str(table), 5, order_by=["id"])
    assert summary.files == {"bucket_00000": 10}
    out = [json.loads(x) for x in run("read", table, "--with-row-id").out.splitlines()]
    assert [(r["ROW__ID"]["rowid"], r["id"]) for r in out] == [(i, i) for i in range(10)]


@pytest.mark.slow
@pytest.mark.parametrize("verbose", [False, True])
def test_spark_keeps_the_console_to_acidtools_lines(tmp_path, verbose):
    """A fresh process starts its own JVM: its start-up lines and log4j's WARN lines go to a
    log file unless --verbose."""
    from .helpers.runner import run_process

    land = sources(tmp_path / "land")
    (tmp_path / "t").mkdir()
    result = run_process("convert", land, "--table", tmp_path / "t", "--write-id", "1",
                         "--spark", "--master", "local[1]", *(["--verbose"] if verbose else []))
    assert result.code == 0, result.err
    assert result.out.startswith("committed ")
    foreign = [line for line in result.err.splitlines() if not line.startswith("acidtool: ")]
    assert bool(foreign) is verbose, result.err
