"""``acidtool ls`` on the real Hive/Trino/Impala directories in ../shared/realdata."""

import pytest

from acidtool.core.raw import raw_read

from .helpers.runner import run
from .helpers.shared import REALDATA, require

TRINO = "trino"
QUBOLE = "qubole-presto/presto-hive/src/test/resources"
HIVE = "hive/data/files"

# (directory, args, base, deltas, obsolete, original files, foreign entries)
CASES = [
    (f"{TRINO}/nation_delete_deltas", [], None,
     ["delete_delta_0000003_0000003_0000", "delete_delta_0000004_0000004_0000"], [], [], []),
    # Trino's "statement-less delete delta after minor compaction" fix: the compacted
    # delete_delta_4_4 supersedes delete_delta_4_4_0000.
    (f"{TRINO}/fullacid_delete_delta_test", [], None,
     ["delete_delta_0000004_0000004", "delete_delta_0000007_0000007_0000"],
     ["delete_delta_0000004_0000004_0000"], [], []),
    (f"{TRINO}/dummy_id_data_orc", [], None, ["delete_delta_10000001_10000001_0000"], [],
     ["000000_0", "000001_0", "000002_0", "000002_0_copy_1", "000002_0_copy_2"], []),
    (f"{QUBOLE}/dummy_id_data_orc", [], None,
     ["delete_delta_0000001_0000001_0000", "delete_delta_0000002_0000002_0000"], [],
     ["000000_0", "000001_0", "000002_0", "000002_0_copy_1", "000002_0_copy_2"], []),
    (f"{TRINO}/fullacidNationTableWithOriginalFiles", [], None,
     ["delete_delta_10000001_10000001_0000"], [], ["000000_0"], []),
    (f"{TRINO}/spark_bucketed_nation", [], None, [], [],
     ["part-00000-0a72da44-98a5-4b85-a513-2b2e82ec274f_00000.c000.snappy.orc",
      "part-00000-0a72da44-98a5-4b85-a513-2b2e82ec274f_00001.c000.snappy.orc",
      "part-00000-0a72da44-98a5-4b85-a513-2b2e82ec274f_00002.c000.snappy.orc"],
     ["part-00000-0a72da44-98a5-4b85-a513-2b2e82ec274f_00000.c000.snappy.orc",
      "part-00000-0a72da44-98a5-4b85-a513-2b2e82ec274f_00001.c000.snappy.orc",
      "part-00000-0a72da44-98a5-4b85-a513-2b2e82ec274f_00002.c000.snappy.orc"]),
    (f"{HIVE}/test_hcube_2.db/tbl1", [], None,
     ["delta_0000001_0000001_0000", "delta_0000002_0000002_0000", "delta_0000003_0000003_0000"],
     [], [], []),
    (f"{HIVE}/test_hcube_2.db/tbl1", ["--write-ids", "test_hcube_2.tbl1:3:2:2:"], None,
     ["delta_0000001_0000001_0000", "delta_0000003_0000003_0000"], [], [], []),
    (f"{HIVE}/test_hcube_2.db/tbl2", ["--hive-version", "3"], None,
     ["delta_0000001_0000001_0000", "delta_0000002_0000002_0000"], [], [], []),
    (f"{HIVE}/repl_dump/hive/test_hcube_2/tbl6/fld1=1/data", [], None,
     ["delta_0000001_0000001_0000"], [], [], []),
    (f"{HIVE}/load_data_job_acid", [], None, [], [],
     ["20180918230307-b382b8c7-271c-4025-be64-4a68f4db32e5_0_0",
      "20180918230307-b382b8c7-271c-4025-be64-4a68f4db32e5_1_0"],
     ["20180918230307-b382b8c7-271c-4025-be64-4a68f4db32e5_0_0",
      "20180918230307-b382b8c7-271c-4025-be64-4a68f4db32e5_1_0"]),
    (f"{TRINO}/acid_version_validation/acid_version_hive_3", [], None, [], [], ["00000_0"], []),
]


def _status(part: dict, args: list) -> int:
    """1 where Hive's reader fails on what the selection takes: an original file (no base)
    whose name gives no bucket id, under Hive 3 and 4 (Hive 2.3 reads it with bucket -1)."""
    hive2 = "--hive-version" in args and args[args.index("--hive-version") + 1] == "2"
    failing = not hive2 and part["base"] is None and any(
        raw_read(f.rsplit("/", 1)[-1]).outcome == "fails" for f in part["original_files"])
    assert bool(part["read_error"]) == failing, part["read_error"]
    return 1 if failing or part["error"] else 0


@pytest.mark.parametrize("rel,args,base,deltas,obsolete,originals,foreign", CASES,
                         ids=[f"{c[0].split('/')[-1]}{'-' + c[1][1] if c[1] else ''}"
                              for c in CASES])
def test_realdata_selection(rel, args, base, deltas, obsolete, originals, foreign):
    path = require(REALDATA / rel)
    result = run("ls", path, "--format", "json", *args)
    (part,) = result.json()["partitions"]
    assert result.code == _status(part, args), result.err
    assert part["base"] == base
    assert part["deltas"] == deltas
    assert sorted(part["obsolete"]) == sorted(obsolete)
    assert part["original_files"] == originals
    assert sorted(e["name"] for e in part["entries"] if e["foreign"]) == sorted(foreign)
    hidden = [e for e in part["entries"] if e["name"].startswith(("_", "."))]
    assert all(e["status"] == "ignored" for e in hidden)


def test_realdata_repl_dump_partitions():
    path = require(REALDATA / HIVE / "repl_dump/hive/test_hcube_2/tbl6")
    doc = run("ls", path, "--format", "json").json()
    assert [p["partition"] for p in doc["partitions"]] == ["fld1=1", "fld1=2"]
    # the dump keeps each partition's deltas below a data/ directory, which Hive reads as
    # an original directory of the partition
    # (hidden names such as _orc_acid_version are skipped at every level)
    assert doc["partitions"][0]["original_files"] == [
        "data/delta_0000001_0000001_0000/bucket_00000"]
    assert [s["path"] for s in doc["stray"]] == []


def test_every_realdata_directory_lists(tmp_path):
    root = require(REALDATA)
    dirs = sorted({p.parent for p in root.rglob("*") if p.is_file()})
    assert len(dirs) > 20
    acid_dirs = folders = 0
    for d in dirs:
        result = run("ls", d, "--format", "json")
        if d.name.startswith(("base_", "delta_", "delete_delta_")):
            # a directory of a table, not one: refused, naming the table directory to give
            acid_dirs += 1
            assert result.code == 2 and f"give the table (or partition) directory, {d.parent}" \
                in result.err, (d, result.err)
            continue
        if "holds tables (" in result.err:  # a folder of tables (issue 39): refused, -r named
            assert result.code == 2 and "--recursive" in result.err, (d, result.err)
            folders += 1
            continue
        doc = result.json()
        assert doc["partitions"], d
        for part in doc["partitions"]:
            assert result.code == _status(part, []) or result.code == 1, (d, result.err)
        assert result.code == max(_status(p, []) for p in doc["partitions"]), (d, result.err)
    assert acid_dirs > 5
    assert folders == 3  # realdata itself, hive/data/files and a replication dump's database
