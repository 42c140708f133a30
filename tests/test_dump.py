"""``acidtool dump``: orc-tools' JSON lines, filters, streaming files and bad input."""

import datetime
import io
import json
import struct
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pyarrow.orc as paorc
import pyorc
import pytest

from acidtool.core.bucket import encode_v1
from acidtool.demo import build_demo
from acidtool.io.acidwrite import DELETE, INSERT, Event, write_acid_file

from .helpers.layouts import acid, build, delta, events, plain
from .helpers.orcfiles import (
    ALL_TYPES,
    UTC,
    all_types_rows,
    reference_lines,
    write_orc,
    write_timestamps,
)
from .helpers.runner import run, run_imports


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return build_demo(tmp_path_factory.mktemp("demo") / "orders")


def test_every_type_matches_the_row_at_a_time_reference(tmp_path):
    path = write_orc(tmp_path / "all.orc", ALL_TYPES, all_types_rows())
    result = run("dump", path)
    assert result.code == 0, result.err
    assert result.out.splitlines() == reference_lines(path)


@pytest.mark.parametrize("value,expected", [
    (datetime.datetime(2020, 5, 13, 17, 10, tzinfo=UTC), "2020-05-13 17:10:00.0"),
    (datetime.datetime(1969, 12, 31, 23, 59, 58, 500000, tzinfo=UTC), "1969-12-31 23:59:58.5"),
    (datetime.datetime(1900, 1, 1, 0, 0, 0, 1, tzinfo=UTC), "1900-01-01 00:00:00.000001"),
    # outside Arrow's nanosecond range: read through pyorc; Julian calendar before 1582-10-15
    (datetime.datetime(1500, 3, 1, 12, 0, tzinfo=UTC), "1500-02-20 12:00:00.0"),
    (datetime.datetime(1582, 10, 15, tzinfo=UTC), "1582-10-15 00:00:00.0"),
    (datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC), "9999-12-31 23:59:59.0"),
])
def test_timestamps(tmp_path, value, expected):
    path = write_orc(tmp_path / "ts.orc", "struct<t:timestamp>", [(value,)])
    assert run("dump", path).out == f'{{"t":"{expected}"}}\n'
    assert reference_lines(path) == [f'{{"t":"{expected}"}}']


def test_nanosecond_timestamps(tmp_path):
    buf = write_timestamps(tmp_path / "ns.orc", [(1589389800, 123456789), (0, 1),
                                                 (-2, 500000000), (-1, 999999999)])
    # The last one is the ORC format's blind spot: an instant in (-1 s, 0) with a fraction is
    # stored with seconds 0 (the writers' old rounding), and ORC Java reads it back as
    # 00:00:00.999999999 too; the Spark tests check this against ORC Java itself.
    assert run("dump", buf).out.splitlines() == [
        '{"t":"2020-05-13 17:10:00.123456789"}', '{"t":"1970-01-01 00:00:00.000000001"}',
        '{"t":"1969-12-31 23:59:58.5"}', '{"t":"1970-01-01 00:00:00.999999999"}']


@pytest.mark.parametrize("typ,value,expected", [
    ("decimal(12,3)", Decimal("1.500"), '"1.5"'),
    ("decimal(12,3)", Decimal("-12.340"), '"-12.34"'),
    ("decimal(12,3)", Decimal("-0.000"), '"0"'),
    ("decimal(12,3)", Decimal("100.000"), '"100"'),
    ("decimal(38,0)", Decimal("99999999999999999999999999999999999999"),
     '"99999999999999999999999999999999999999"'),
    ("decimal(38,37)", Decimal("0.0000000000000000000000000000000000001"),
     '"0.0000000000000000000000000000000000001"'),
    ("decimal(10,2)", Decimal("-99999999.99"), '"-99999999.99"'),
    ("double", 1e-5, "1.0E-5"), ("double", 5000.0, "5000.0"), ("double", 12345678.9, "1.23456789E7"),
    ("double", 0.001, "0.001"), ("double", 9999999.0, "9999999.0"), ("double", -1e300, "-1.0E300"),
    ("float", 0.1, "0.10000000149011612"), ("float", 16777216.0, "1.6777216E7"),
    ("date", datetime.date(1582, 10, 14), '"1582-10-04"'),
    ("date", datetime.date(9999, 12, 31), '"9999-12-31"'),
    ("string", "ü\u2029\x7f", '"ü\\u2029\x7f"'),
    ("binary", b"\x80\x01", "[128,1]"),
    ("char(3)", "a", '"a"'),
])
def test_value_spellings(tmp_path, typ, value, expected):
    path = write_orc(tmp_path / "v.orc", f"struct<v:{typ}>", [(value,)])
    assert run("dump", path).out == f'{{"v":{expected}}}\n'


def test_multi_stripe_file_and_row_count(tmp_path):
    rows = [(i, f"name-{i % 97}", i * 0.5) for i in range(60_000)]
    path = write_orc(tmp_path / "big.orc", "struct<i:int,s:string,d:double>", rows,
                     stripe_size=64 * 1024)
    assert pyorc.Reader(open(path, "rb")).num_of_stripes > 1
    out = run("dump", path).out.splitlines()
    assert out == reference_lines(path)
    assert out[59_999] == '{"i":59999,"s":"name-53","d":29999.5}'


def test_empty_orc_file_prints_nothing(tmp_path):
    path = write_orc(tmp_path / "empty.orc", "struct<i:int>", [])
    result = run("dump", path)
    assert (result.code, result.out) == (0, "")


def test_acid_rows_and_delete_events(demo):
    out = run("dump", demo / "delete_delta_0000004_0000004_0000").out
    assert out == ('{"operation":2,"originalTransaction":1,"bucket":536870912,"rowId":1,'
                   '"currentTransaction":4,"row":null}\n')


def test_table_target_dumps_what_hive_reads_in_ls_order(demo):
    files = [__import__("json").loads(line)["file"]
             for line in run("dump", demo, "--with-file").out.splitlines()]
    assert sorted(set(files), key=files.index) == [
        "base_0000002/bucket_00000", "delta_0000003_0000003_0000/bucket_00000",
        "delete_delta_0000004_0000004_0000/bucket_00000", "delta_0000005_0000005_0000/bucket_00000"]
    # with a snapshot in which write id 5 aborted, its delta is not read
    files = run("dump", demo, "--with-file", "--write-ids",
                "shop.orders:5:9223372036854775807::5").out
    assert "delta_0000005" not in files
    everything = run("dump", demo, "--with-file", "--all").out
    assert "delta_0000002_0000002_0000/bucket_00000" in everything
    assert "orders__6f1c9e2a" in everything  # the foreign file, printed as plain rows


def test_decode_and_with_file(demo):
    line = run("dump", demo / "delete_delta_0000004_0000004_0000", "--decode", "--with-file").out
    assert line == ('{"operation":2,"originalTransaction":1,"bucket":536870912,"rowId":1,'
                    '"currentTransaction":4,"bucketId":0,"statementId":0,"codecVersion":1,'
                    '"op":"delete","row":null,"file":"bucket_00000"}\n')


def test_filters(tmp_path):
    events = [Event(INSERT, 7, encode_v1(b, s), i, 7, (i,))
              for b, s in ((0, 0), (1, 0), (1, 2)) for i in range(3)]
    events += [Event(DELETE, 3, encode_v1(1, 0), 0, 9, None)]
    events.sort(key=lambda e: (e.original_transaction, e.bucket, e.row_id))
    path = tmp_path / "bucket_00001"
    with open(path, "wb") as f:
        write_acid_file(f, "struct<x:int>", events)

    def rows(*args):
        return [__import__("json").loads(x) for x in run("dump", path, *args).out.splitlines()]

    assert len(rows()) == 10
    assert {r["bucket"] for r in rows("--bucket", "1")} == {536936448, 536936450}
    assert [r["operation"] for r in rows("--operation", "delete")] == [2]
    assert len(rows("--write-id", "9")) == 1 and len(rows("--write-id", "7")) == 9
    assert len(rows("--operation", "insert", "--bucket", "0")) == 3
    assert len(rows("--limit", "4")) == 4
    assert rows("--columns", "x", "--operation", "insert", "--limit", "1")[0]["row"] == {"x": 0}
    assert rows("--operation", "delete", "--columns", "x")[0]["row"] is None


def test_columns_on_plain_files_and_unknown_column(tmp_path):
    path = write_orc(tmp_path / "p.orc", "struct<a:int,b:string,c:double>", [(1, "x", 2.0)])
    assert run("dump", path, "--columns", "c,a").out == '{"c":2.0,"a":1}\n'
    result = run("dump", path, "--columns", "a,nope")
    assert result.code == 2 and "unknown column 'nope'" in result.err and result.out == ""


def test_limit_across_files(demo):
    assert len(run("dump", demo, "--limit", "4").out.splitlines()) == 4
    assert run("dump", demo, "--limit", "0").out == ""


def test_synthetic_row_ids_for_original_files(tmp_path):
    table = tmp_path / "t"
    write_orc(table / "000000_0", "struct<id:int>", [(1,), (2,)])
    write_orc(table / "000000_0_copy_1", "struct<id:int>", [(3,)])
    write_orc(table / "000001_0", "struct<id:int>", [(4,)])
    out = [__import__("json").loads(x) for x in
           run("dump", table, "--synthetic-row-ids").out.splitlines()]
    assert [(r["bucket"], r["rowId"], r["row"]["id"]) for r in out] == [
        (536870912, 0, 1), (536870912, 1, 2), (536870912, 2, 3), (536936448, 0, 4)]
    assert all(r["originalTransaction"] == 0 == r["currentTransaction"] for r in out)
    # Hive 2 numbers rows per file and uses the plain bucket id; it has no _copy_N pattern,
    # so the copy reads with bucket -1 (tests/test_hive_raw_files.py)
    out = [__import__("json").loads(x) for x in run(
        "dump", table, "--synthetic-row-ids", "--hive-version", "2").out.splitlines()]
    assert [(r["bucket"], r["rowId"]) for r in out] == [(0, 0), (0, 1), (-1, 0), (1, 0)]
    # a single file target gets the same ids as inside its table
    one = run("dump", table / "000000_0_copy_1", "--synthetic-row-ids").out
    assert '"rowId":2,' in one
    # without the flag, original rows print as plain objects
    assert run("dump", table / "000001_0").out == '{"id":4}\n'


def _streaming_file(tmp_path: Path) -> tuple[Path, int]:
    """What a Hive streaming writer leaves while a transaction batch is open: a committed prefix
    that ends in an (intermediate) ORC footer, followed by bytes of the batch not yet committed."""
    d = tmp_path / "delta_0000001_0000002"
    d.mkdir()
    path = d / "bucket_00000"
    buf = io.BytesIO()
    w = pyorc.Writer(buf, "struct<operation:int,originalTransaction:bigint,bucket:int,"
                     "rowId:bigint,currentTransaction:bigint,row:struct<x:int>>")
    w.writerows([(0, 1, 536870912, i, 1, (i,)) for i in range(2)])
    w.close()
    committed = len(buf.getvalue())
    path.write_bytes(buf.getvalue() + b"\x17uncommitted stripe bytes of write id 2")
    return path, committed


def test_open_streaming_file_reads_up_to_the_flushed_length(tmp_path):
    path, committed = _streaming_file(tmp_path)
    side = path.with_name("bucket_00000_flush_length")
    side.write_bytes(struct.pack(">qq", 0, committed))
    for target in (path, path.parent, path.parent.parent):
        result = run("dump", target)
        assert result.code == 0, result.err
        assert len(result.out.splitlines()) == 2
        assert f"committed {committed} of {path.stat().st_size} bytes" in result.err
    meta = run("meta", path, "--format", "json").json()[0]
    assert meta["flush_length"]["committed"] == committed and meta["rows"] == 2
    side.unlink()
    result = run("dump", path)  # without the side file the uncommitted tail is read too
    assert result.code == 1 and "not readable as ORC" in result.err


@pytest.mark.parametrize("content,message", [
    (b"", "found but is not readable"), (b"\x00" * 12, "partial length")])
def test_unreadable_flush_length_is_an_error(tmp_path, content, message):
    path, _ = _streaming_file(tmp_path)
    path.with_name("bucket_00000_flush_length").write_bytes(content)
    result = run("dump", path)
    assert result.code == 1 and message in result.err and result.out == ""


def test_bad_files_are_reported_and_the_rest_dumped(tmp_path):
    good = write_orc(tmp_path / "good.orc", "struct<i:int>", [(1,)])
    data = good.read_bytes()
    (tmp_path / "text.orc").write_text("id,name\n1,x\n")
    (tmp_path / "zero.orc").write_bytes(b"")
    (tmp_path / "cut.orc").write_bytes(data[: len(data) // 2])
    result = run("dump", tmp_path / "text.orc", tmp_path / "zero.orc", tmp_path / "cut.orc", good)
    assert result.code == 1
    assert result.out == '{"i":1}\n'
    errors = result.err.strip().splitlines()
    assert len(errors) == 3
    assert "text.orc: not an ORC file" in errors[0]
    assert "zero.orc: empty file (0 bytes)" in errors[1]
    assert "cut.orc: not readable as ORC" in errors[2]


def test_directory_without_orc_files(tmp_path):
    (tmp_path / "empty_table").mkdir()
    result = run("dump", tmp_path / "empty_table")
    assert result.code == 1 and "no ORC data files" in result.err


def test_missing_target_is_exit_2():
    result = run("dump", "/no/such/file.orc")
    assert result.code == 2 and "no such file" in result.err


def test_closed_pipe_ends_quietly(tmp_path):
    rows = [(i, "x" * 50) for i in range(200_000)]
    path = write_orc(tmp_path / "many.orc", "struct<i:int,s:string>", rows)
    proc = subprocess.run(f"{sys.executable} -m acidtool dump {path} | head -1", shell=True,
                          capture_output=True, text=True, executable="/bin/bash")
    assert proc.stdout == '{"i":0,"s":"' + "x" * 50 + '"}\n'
    assert proc.stderr == ""
    status = subprocess.run(f"set -o pipefail; {sys.executable} -m acidtool dump {path} | head -1"
                            " >/dev/null", shell=True, executable="/bin/bash")
    assert status.returncode == 0


def test_union_prints_its_selected_branch(tmp_path):
    path = write_orc(tmp_path / "u.orc", "struct<u:uniontype<int,string>,l:array<uniontype<int,"
                     "string>>>", [(5, [1, "a"]), ("x", []), (None, None)])
    assert run("dump", path).out.splitlines() == [
        '{"u":5,"l":[1,"a"]}', '{"u":"x","l":[]}', '{"u":null,"l":null}']


# Each command's process, started as the console starts it: (argv, its exit status); T is a
# clean table, D one with a raw file in its root, L a landing directory. Writers and readers
# alike hand pyarrow Python values and Arrow only.
_PANDAS_FREE = {
    "dump": (["dump", "T/delta_0000001_0000001_0000/bucket_00000"], 0),
    "read": (["read", "T"], 0),
    "validate-rows": (["validate", "D", "--level", "rows"], 1),
    "repair-plan": (["repair", "D", "--write-id", "2"], 1),
    "repair-apply": (["repair", "D", "--write-id", "2", "--apply"], 0),
    "compact-apply": (["compact", "T", "--major", "--apply"], 0),
    "convert": (["convert", "L", "--table", "T", "--write-id", "2"], 0),
}


@pytest.mark.parametrize("command", sorted(_PANDAS_FREE))
def test_commands_without_spark_leave_pandas_out(tmp_path, command, monkeypatch):
    """pyarrow's pandas shim imports pandas, when installed, the first time a Python value
    becomes an Arrow one (a second and more of a small command's time with the suite running,
    a third of a second on an idle machine): a process that runs no Spark never needs it. A
    library process that calls main(argv) keeps pyarrow's pandas support whole."""
    import importlib.util

    if importlib.util.find_spec("pandas") is None:
        pytest.skip("pandas is not installed: nothing to leave out")
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))
    clean = delta("delta_0000001_0000001_0000", acid(events(1, n=3)))
    build(tmp_path / "T", clean)
    build(tmp_path / "D", {**clean, "part-0000.orc": plain()})
    build(tmp_path / "L", {"part-0001.orc": plain()})
    argv, status = _PANDAS_FREE[command]
    monkeypatch.chdir(tmp_path)  # (the command's process starts there: T, D and L are its)
    result, imported = run_imports("pandas", *argv)
    assert result.code == status, result.err
    assert imported is False


@pytest.mark.parametrize("small_stripe_bytes", [1 << 20, 0], ids=["by-stripe", "streamed"])
def test_both_ways_of_reading_rows_agree(tmp_path, monkeypatch, small_stripe_bytes):
    """Files of small stripes are read a stripe at a time by the ORC reader, others streamed
    in batches through Arrow's dataset scanner: the same output either way, for every type,
    timestamps Arrow cannot hold, many stripes, and read's delete handling."""
    import acidtool.io.orc

    monkeypatch.setattr(acidtool.io.orc, "SMALL_STRIPE_BYTES", small_stripe_bytes)
    path = write_orc(tmp_path / "all.orc", ALL_TYPES, all_types_rows())
    assert run("dump", path).out.splitlines() == reference_lines(path)
    far = datetime.datetime(1500, 3, 1, 12, 0, tzinfo=UTC)
    ts = write_orc(tmp_path / "ts.orc", "struct<t:timestamp>",
                   [(datetime.datetime(2020, 5, 13, tzinfo=UTC),), (far,)])
    assert run("dump", ts).out.splitlines() == reference_lines(ts)
    many = write_orc(tmp_path / "many.orc", "struct<i:bigint,s:string>",
                     [(i * 7_919_000_003 % 2**60, f"s{i}") for i in range(30_000)],
                     stripe_size=4096)
    assert paorc.ORCFile(str(many)).nstripes > 1
    assert run("dump", many).out.splitlines() == reference_lines(many)
    table = build(tmp_path / "t", {
        **delta("delta_0000001_0000001_0000", acid(events(1, n=5))),
        **delta("delete_delta_0000002_0000002_0000", acid(events(1, n=2, op=DELETE,
                                                                 current=2)))})
    out = run("read", table, "--with-row-id")
    assert [json.loads(line)["ROW__ID"]["rowid"] for line in out.out.splitlines()] == [2, 3, 4]
