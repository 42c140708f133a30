"""``acidtool ls``: output, partitions, exit statuses and bad input."""

import os

import pytest

from acidtool.core.listing import PathInfo
from acidtool.core.partitions import split_partitions

from .helpers.layout import build
from .helpers.runner import run, run_process

SIMPLE = ["base_0000005/bucket_00000", "base_0000005/_orc_acid_version",
          "delta_0000006_0000006_0000/bucket_00000", "delta_0000003_0000003_0000/bucket_00000",
          "delete_delta_0000007_0000007_0000/bucket_00000", "part-00000-abc.snappy.orc",
          "_SUCCESS", ".hive-staging_hive_2024/-ext-10000/000000_0"]


def test_json_schema_keys(tmp_path):
    table = build(tmp_path / "t", SIMPLE)
    result = run("ls", table, "--format", "json")
    assert result.code == 0, result.err
    doc = result.json()
    assert doc["path"] == str(table) and doc["hive_version"] == "4"
    (part,) = doc["partitions"]
    assert part["partition"] == ""
    assert part["base"] == "base_0000005"
    assert part["deltas"] == ["delta_0000006_0000006_0000", "delete_delta_0000007_0000007_0000"]
    assert set(part["obsolete"]) == {"delta_0000003_0000003_0000", "part-00000-abc.snappy.orc"}
    assert part["aborted"] == [] and part["original_files"] == [] and part["error"] is None
    by_name = {e["name"]: e for e in part["entries"]}
    assert by_name["_SUCCESS"]["status"] == "ignored"
    assert by_name["part-00000-abc.snappy.orc"]["foreign"] is True
    assert by_name["delete_delta_0000007_0000007_0000"] | {"reason": None} == {
        "name": "delete_delta_0000007_0000007_0000", "kind": "delete_delta", "status": "selected",
        "reason": None, "write_id": None, "min_write_id": 7, "max_write_id": 7, "statement_id": 0,
        "visibility_txn_id": 0, "is_dir": True, "foreign": False, "files": 1, "bytes": 3}


def test_files_flag_lists_files(tmp_path):
    table = build(tmp_path / "t", SIMPLE)
    doc = run("ls", table, "--format", "json", "--files").json()
    base = next(e for e in doc["partitions"][0]["entries"] if e["name"] == "base_0000005")
    assert [(f["path"], f["kind"]) for f in base["file_list"]] == [
        ("_orc_acid_version", "acid_version"), ("bucket_00000", "bucket")]
    text = run("ls", table, "--files").out
    assert "|- bucket_00000" in text and "|- _orc_acid_version" in text


def test_table_output_has_summary_and_rows(tmp_path):
    table = build(tmp_path / "t", SIMPLE)
    out = run("ls", table).out
    first = out.splitlines()[0]
    assert first.startswith("(table root): base base_0000005, 2 deltas read (1 delete)")
    assert "delta_0000003_0000003_0000/" in out and "covered by base_0000005" in out


def test_snapshot_options_change_the_selection(tmp_path):
    table = build(tmp_path / "t", SIMPLE)
    doc = run("ls", table, "--format", "json", "--write-ids", "db.t:6:9223372036854775807::").json()
    assert doc["partitions"][0]["deltas"] == ["delta_0000006_0000006_0000"]
    doc = run("ls", table, "--format", "json", "--write-ids", "db.t:7:6:6:").json()
    assert doc["partitions"][0]["deltas"] == ["delete_delta_0000007_0000007_0000"]


def test_partitioned_table_reports_every_partition(tmp_path):
    table = build(tmp_path / "t", [
        "ds=2024-01-01/hr=00/delta_0000001_0000001_0000/bucket_00000",
        "ds=2024-01-01/hr=01/delta_0000002_0000002_0000/bucket_00000",
        "ds=2024-01-02/hr=00/base_0000003/bucket_00000",
        "ds=2024-01-02/hr=00/delta_0000001_0000001_0000/bucket_00000",
        "ds=2024-01-02/stray_file",
        "ds=2024-01-02/.hidden",
    ])
    doc = run("ls", table, "--format", "json").json()
    assert [p["partition"] for p in doc["partitions"]] == [
        "ds=2024-01-01/hr=00", "ds=2024-01-01/hr=01", "ds=2024-01-02/hr=00"]
    assert doc["partitions"][2]["base"] == "base_0000003"
    assert doc["partitions"][2]["path"] == f"{table}/ds=2024-01-02/hr=00"
    assert [s["path"] for s in doc["stray"]] == ["ds=2024-01-02/stray_file"]
    # a partition directory given directly is a single partition named ""
    doc = run("ls", table / "ds=2024-01-01" / "hr=01", "--format", "json").json()
    assert [p["partition"] for p in doc["partitions"]] == [""]


def test_split_partitions_keeps_unpartitioned_tables_whole():
    paths = [PathInfo("delta_1_1/bucket_0", 3), PathInfo("a=b_is_not_a_dir", 3)]
    parts, stray = split_partitions(paths)
    assert [p.name for p in parts] == [""] and stray == []


def test_hive_failure_exits_1_and_still_prints_json(tmp_path):
    table = build(tmp_path / "t", ["delta_abc/bucket_00000", "delta_0000001_0000001_0000/bucket_0"])
    result = run("ls", table, "--format", "json")
    assert result.code == 1
    part = result.json()["partitions"][0]
    assert part["error"]["kind"] == "invalid_name" and "delta_abc" in part["error"]["message"]
    assert part["deltas"] == []
    assert {e["name"]: e["status"] for e in part["entries"]}["delta_abc"] == "invalid"
    assert "delta_abc" in result.err and "Traceback" not in result.err


def test_not_enough_history(tmp_path):
    table = build(tmp_path / "t", ["base_0000010/bucket_00000", "delta_0000011_0000011_0000/x"],
                  contents={"base_0000010/_metadata_acid":
                            '{"thisFileVersion":"0","dataFormat":"compacted"}'})
    build(table, ["base_0000010/_metadata_acid"],
          contents={"base_0000010/_metadata_acid":
                    '{"thisFileVersion":"0","dataFormat":"compacted"}'})
    result = run("ls", table, "--format", "json", "--write-ids", "db.t:12:5:5:")
    assert result.code == 1
    assert result.json()["partitions"][0]["error"]["kind"] == "not_enough_history"


@pytest.mark.parametrize("args,message", [
    (["ls", "/definitely/not/here"], "no such file or directory"),
    (["ls", "{file}"], "is a file"),
    (["ls", "{dir}", "--write-ids", "garbage"], "write-id list"),
    (["ls", "{dir}", "--write-ids", "t:abc:5"], "not a number"),
    (["ls", "{dir}", "--txns", "1:2:3:4:5"], "transaction list"),
    (["ls", "{dir}", "--hive-version", "2", "--write-ids", "t:5:5::"], "Hive 2 has no write ids"),
    (["ls", "nosuchscheme://x/y"], "unknown URL scheme"),
    (["ls", "s3://bucket/table"], "s3:// needs an extra package"),
    (["ls", "hdfs://namenode:8020/warehouse/t"], "hdfs:// needs Hadoop"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    (tmp_path / "f").write_text("x")
    args = [a.format(file=tmp_path / "f", dir=tmp_path) for a in args]
    result = run(*args)
    assert result.code == 2, (result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.err
    assert result.out == ""


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any directory")
def test_permission_denied(tmp_path):
    locked = tmp_path / "locked"
    build(locked, ["delta_1_1/bucket_0"])
    locked.chmod(0)
    try:
        result = run("ls", locked)
    finally:
        locked.chmod(0o755)
    assert result.code == 2 and "permission denied" in result.err


def test_usage_error_from_the_parser_exits_2(tmp_path):
    assert run("ls", tmp_path, "--hive-version", "5").code == 2
    assert run("ls").code == 2


def test_memory_filesystem_url():
    import fsspec
    mem = fsspec.filesystem("memory")
    for p in ["/acid/t/delta_0000001_0000001_0000/bucket_00000", "/acid/t/base_0000002/bucket_0"]:
        mem.pipe(p, b"abc")
    doc = run("ls", "memory://acid/t", "--format", "json").json()
    assert doc["partitions"][0]["base"] == "base_0000002"
    assert doc["partitions"][0]["obsolete"] == ["delta_0000001_0000001_0000"]


def test_file_url(tmp_path):
    table = build(tmp_path / "t", ["delta_0000001_0000001_0000/bucket_00000"])
    doc = run("ls", f"file://{table}", "--format", "json").json()
    assert doc["partitions"][0]["deltas"] == ["delta_0000001_0000001_0000"]


def test_traceback_only_when_asked(tmp_path):
    result = run_process("ls", "/definitely/not/here")
    assert result.code == 2 and "Traceback" not in result.err
    result = run_process("ls", "/definitely/not/here", "--traceback")
    assert result.code == 2 and "Traceback" in result.err  # the status stays the error's


def test_ls_writes_nothing(tmp_path):
    table = build(tmp_path / "t", SIMPLE)
    before = sorted((p, p.stat().st_mtime_ns) for p in table.rglob("*"))
    run("ls", table, "--format", "json", "--files")
    assert sorted((p, p.stat().st_mtime_ns) for p in table.rglob("*")) == before


def test_decode_bucket():
    result = run("decode", "bucket", "536936448", "--format", "json")
    assert result.json() == {"encoded": 536936448, "hex": "0x20010000", "codec_version": 1,
                             "bucket_id": 1, "statement_id": 0}
    assert run("decode", "bucket", "1073741824").code == 2
    assert "V1" in run("decode", "bucket", "0x20010003").out


def test_decode_write_ids():
    doc = run("decode", "write-ids", "db.t:100:4:4,7:5", "--format", "json").json()
    assert doc == {"table": "db.t", "high_watermark": 100, "min_open": 4, "open": [4, 7],
                   "aborted": [5], "canonical": "db.t:100:4:4,7:5"}
    doc = run("decode", "write-ids", "--txns", "--hive-version", "2", "150:121:99:121",
              "--format", "json").json()
    assert doc["exceptions"] == [99, 121]
    multi = run("decode", "write-ids", "9$db.a:5:9223372036854775807::$db.b:3:2:2:",
                "--format", "json").json()
    assert multi["transaction"] == 9 and [x["table"] for x in multi["lists"]] == ["db.a", "db.b"]
    assert run("decode", "write-ids", "nonsense").code == 2


def test_help_teaches():
    out = run("ls", "--help").out
    assert "--write-ids" in out and "Exit status" in out and "Examples" in out


def test_ls_of_a_local_table_does_not_import_pyarrow(tmp_path):
    """Importing pyarrow is a third of the time of an ls of a small local table, which needs
    none of it (the listing is os.scandir, markers are read with open)."""
    import subprocess
    import sys

    table = build(tmp_path / "t", ["base_0000002/bucket_00000", "base_0000002/_metadata_acid",
                                   "delta_0000003_0000003_0000/bucket_00000"])
    (table / "base_0000002" / "_metadata_acid").write_text(
        '{"thisFileVersion": "0", "dataFormat": "compacted"}')
    code = ("import sys\nfrom acidtool.cli.main import main\n"
            "try:\n    main(['ls', sys.argv[1], '--format', 'json'])\n"
            "except SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
            "print('pyarrow' in sys.modules, file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(table)], capture_output=True,
                          text=True, check=True)
    assert '"base": "base_0000002"' in proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == "False"
