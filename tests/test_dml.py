"""DELETE and UPDATE (``acidtool.spark.AcidTable``, ``acidtool delete``/``update``) on tables
Hive's own writer made, judged by Hive 3.1's and 4.0's own readers: the rows they return after
the change, the changed rows' new ROW__IDs, the untouched rows' old ones; then validate, undo,
and the refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from acidtool.core.bucket import encode_v1
from acidtool.core.errors import UsageError

from .helpers.layouts import acid, events
from .helpers.runner import run
from .test_hive_rows import first_writes

pytestmark = pytest.mark.spark
ALL = "t:{}:9223372036854775807::"


@pytest.fixture(params=["3", "4"], ids=["hive3.1", "hive4.0"])
def judge(request):
    return request.param, request.getfixturevalue({"3": "hive31", "4": "hive40"}[request.param])


@pytest.fixture
def hive_table(judge, tmp_path) -> Path:
    """Write ids 1 (buckets 0 and 1) and 2 (two statements), by Hive's own writer."""
    table = tmp_path / "t"
    first_writes(judge[1], str(table))
    return table


def hive_rows(judge, table: Path, hwm: int) -> dict:
    """{(writeId, bucketProperty, rowId): [id, name]} as Hive's merged ACID scan returns."""
    return {rid: values for rid, values in judge[1].read(str(table), ALL.format(hwm), buckets=2)}


def test_delete_and_update_are_read_by_hive_as_sql_would_leave_them(spark, judge, hive_table):
    from acidtool.spark import AcidTable

    version, _ = judge
    before = hive_rows(judge, hive_table, 2)
    t = AcidTable.for_path(spark, str(hive_table), hive_version=version)
    gone = t.delete("id = 101 OR name = 'w2-s1'", write_id=3)
    assert (gone["deleted"], gone["updated"], gone["inserted"]) == (2, 0, 0)
    changed = t.update("id < 2", set={"name": "upper(name)", "id": "id + 1000"}, write_id=4)
    assert (changed["deleted"], changed["updated"], changed["inserted"]) == (0, 2, 0)
    after = hive_rows(judge, hive_table, 4)
    expected = {rid: v for rid, v in before.items()
                if v[0] not in ("101", "0", "1") and v[1] != "w2-s1"}
    assert {rid: v for rid, v in after.items() if rid[0] < 4} == expected  # untouched kept
    new = sorted(v for rid, v in after.items() if rid[0] == 4)
    assert new == [["1000", "B0-0"], ["1001", "B0-1"]]
    # the new rows are in the old rows' bucket, rowIds counted from 0, write id 4
    assert sorted(rid for rid in after if rid[0] == 4) == [(4, encode_v1(0), 0),
                                                            (4, encode_v1(0), 1)]
    assert run("validate", hive_table, "--level", "rows", "--hive-version", version).code == 0
    # undo of the update takes it back (journal), and Hive reads the table as after the delete
    assert run("undo", changed["journal"]).code == 0
    assert hive_rows(judge, hive_table, 4) == {rid: v for rid, v in before.items()
                                               if v[0] != "101" and v[1] != "w2-s1"}


def test_a_condition_that_matches_nothing_writes_nothing(spark, tmp_path):
    from acidtool.spark import AcidTable

    table = made(tmp_path)
    before = sorted(p.name for p in table.iterdir())
    result = AcidTable.for_path(spark, str(table), hive_version=3).delete("id > 99",
                                                                          write_id=3)
    assert (result["deleted"], result["journal"], result["directories"]) == (0, None, [])
    assert sorted(p.name for p in table.iterdir()) == before


def made(tmp_path: Path) -> Path:
    table = tmp_path / "t"
    for w in (1, 2):
        d = table / f"delta_{w:07d}_{w:07d}_0000"
        d.mkdir(parents=True)
        (d / "bucket_00000").write_bytes(acid(events(w, 3), hive_version="3"))
        (d / "_orc_acid_version").write_bytes(b"2")
    return table


@pytest.mark.parametrize("call,message", [
    (lambda t: t.delete("id = 1", write_id=2), "holds write ids up to 2"),
    (lambda t: t.delete("id ==== 1", write_id=3), "does not parse"),
    (lambda t: t.update("id = 1", set={"nope": "1"}, write_id=3), "no such column"),
    (lambda t: t.update("id = 1", set={"name": "no_such_function(name)"}, write_id=3),
     "does not parse"),
    (lambda t: t.delete("id = 1", write_id="auto"), "metastore"),
])
def test_refused_changes_write_nothing(spark, tmp_path, call, message):
    from acidtool.spark import AcidTable

    table = made(tmp_path)
    before = sorted(p.name for p in table.iterdir())
    with pytest.raises(UsageError, match=message):
        call(AcidTable.for_path(spark, str(table), hive_version=3))
    assert sorted(p.name for p in table.iterdir()) == before


def test_tables_hive_allows_no_row_level_change_on_are_refused(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.orc as po

    from acidtool.spark import AcidTable

    table = made(tmp_path)
    with pytest.raises(UsageError, match="Hive 2.3"):
        AcidTable.for_path(spark, str(table), hive_version=2)
    plain = tmp_path / "io" / "delta_0000001_0000001_0000"
    plain.mkdir(parents=True)
    po.write_table(pa.table({"id": [1, 2]}), str(plain / "000000_0"))
    with pytest.raises(UsageError, match="insert-only"):
        AcidTable.for_path(spark, str(tmp_path / "io"), hive_version=3)


def test_the_command_line_deletes_and_updates_and_says_what_it_did(spark, tmp_path):
    table = made(tmp_path)
    result = run("delete", table, "--where", "id = 1", "--write-id", "3", "--hive-version",
                 "3", "--format", "json")
    assert result.code == 0, result.err
    doc = result.json()
    assert (doc["write_id"], doc["deleted"]) == (3, 2) and doc["journal"]
    result = run("update", table, "--set", "name=concat(name, '!')", "--where", "id = 2",
                 "--write-id", "4", "--hive-version", "3")
    assert result.code == 0, result.err
    assert "0 rows deleted, 2 updated" in result.out and "delta_0000004_0000004_0000" in result.out
    rows = run("read", table, "--hive-version", "3").out
    assert '"id":1' not in rows and rows.count('"name":"n2!"') == 2
    dry = run("delete", table, "--where", "id = 0", "--write-id", "5", "--hive-version", "3",
              "--dry-run", "--format", "json")
    assert dry.code == 0 and dry.json()["deleted"] == 2 and not dry.json()["directories"]
    assert not (table / "delete_delta_0000005_0000005_0000").exists()
    refused = run("delete", table, "--where", "id = 0", "--write-id", "4", "--hive-version",
                  "3")
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1, refused.err


@pytest.mark.parametrize("deleted, said", [(1, "t: 1 row deleted,"), (2, "t: 2 rows deleted,"),
                                           (0, "t: 0 rows deleted,")])
def test_the_summary_says_row_or_rows(deleted, said):
    from acidtool.cli.output_writes import dml_text

    text = dml_text("t", {"deleted": deleted, "updated": 0, "inserted": 0, "write_id": 5,
                          "dry_run": False, "directories": [], "journal": "j.jsonl"})
    assert text.startswith(said), text


CHANGE = """
import sys
import pyarrow as pa
from acidtool.commands.dml.write import write_changes
from acidtool.table.snapshot import Table
from acidtool.table.target import resolve

path, wid, match = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = Table(path).snapshot(hive_version="3", with_row_id=True).to_arrow()
rows = rows.filter(pa.compute.equal(rows.column("id"), match))
rid = rows.column("ROW__ID").combine_chunks()
n = rows.num_rows
deleted = pa.table({"partition": [""] * n, "writeid": rid.field("writeid"),
                    "bucketid": rid.field("bucketid"), "rowid": rid.field("rowid")})
inserted = pa.table({"partition": [""] * n, "bucketid": rid.field("bucketid"),
                     "id": rows.column("id"), "name": pa.array(["changed"] * n)})
write_changes(resolve(path, hive_version="3"), wid, deleted, inserted, updated=n)
"""


def names_of(table: Path) -> list[tuple[int, str]]:
    from acidtool.table.snapshot import Table

    rows = Table(str(table)).snapshot(hive_version="3").to_arrow()
    if not rows.num_rows:  # (no columns either: nothing to take them from)
        return []
    return sorted(zip(rows.column("id").to_pylist(), rows.column("name").to_pylist()))


@pytest.mark.parametrize("kill_at", range(1, 13))
def test_an_update_killed_at_any_point_is_before_or_after_once_the_next_change_runs(
        tmp_path, kill_at):
    """SIGKILL at each fault point of an update (two renames): the next change rolls a
    half-done one back, so the table ends as before or as after it, never between."""
    import os
    import subprocess
    import sys

    table = made(tmp_path)
    before = names_of(table)
    env = {**os.environ, "ACIDTOOL_STATE_DIR": str(tmp_path / "state"),
           "ACIDTOOL_KILL_AT": str(kill_at)}
    subprocess.run([sys.executable, "-c", CHANGE, str(table), "3", "1"], env=env, timeout=120)
    env.pop("ACIDTOOL_KILL_AT")
    done = subprocess.run([sys.executable, "-c", CHANGE, str(table), "4", "2"], env=env,
                          timeout=120, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    after_second = [(i, "changed" if i == 2 else n) for i, n in before]
    both = [(i, "changed" if i in (1, 2) else n) for i, n in before]
    assert names_of(table) in (sorted(after_second), sorted(both))
    assert not [n for n in os.listdir(table) if n.startswith("_acidtool_staging")]
    assert run("validate", table, "--level", "rows", "--hive-version", "3").code == 0


def test_write_id_auto_commits_the_change_in_the_metastore(spark, metastore, tmp_path):
    """As convert --write-id auto: a transaction, Hive's lock, the write id allocated, and the
    commit after the renames; readers that take the metastore's snapshot see the change."""
    from acidtool.io.metastore import Metastore as Client
    from acidtool.spark import AcidTable

    from .test_doctor import commit, delta, put

    name = f"dml{tmp_path.name[-6:].replace('-', '_')}"
    location = Path(metastore.warehouse) / name
    location.mkdir(parents=True)
    from .helpers.metastore import create_table

    create_table(metastore.url, "default", name, "file://" + str(location))
    with Client(metastore.url) as client:
        info = client.table("default", name)
    w = commit(metastore, info)
    put(metastore, location, delta(w), w)
    if metastore.version == "2":
        with pytest.raises(UsageError, match="Hive 2.3"):
            AcidTable.for_name(spark, f"default.{name}", metastore=metastore.url)
        return
    t = AcidTable.for_name(spark, f"default.{name}", metastore=metastore.url)
    result = t.delete("id = 1", write_id="auto")
    assert result["deleted"] == 1 and result["transaction"] and result["write_id"] == w + 1
    with Client(metastore.url) as client:
        txns = client.txns()
        assert result["transaction"] not in txns.exceptions
        assert client.write_ids(info, txns).high_watermark == w + 1
    rows = run("read", f"default.{name}", "--metastore", metastore.url)
    assert rows.code == 0 and '"id":1,' not in rows.out and '"id":0,' in rows.out


def test_merge_deletes_updates_and_inserts_under_one_write_id(spark, judge, hive_table):
    from acidtool.spark import AcidTable

    before = hive_rows(judge, hive_table, 2)
    source = spark.createDataFrame([(100, "new-b1"), (0, "x"), (200, "gone"), (999, "fresh")],
                                   "id int, name string")
    t = AcidTable.for_path(spark, str(hive_table), hive_version=judge[0])
    result = (t.merge(source, "t.id = s.id", write_id=3)
              .when_matched_delete(condition="s.name = 'gone'")
              .when_matched_update(set={"name": "s.name"})
              .when_not_matched_insert(values={"id": "s.id", "name": "s.name"})
              .execute())
    assert (result["deleted"], result["updated"], result["inserted"]) == (1, 2, 1)
    after = hive_rows(judge, hive_table, 3)
    untouched = {rid: v for rid, v in before.items() if v[0] not in ("0", "100", "200")}
    assert {rid: v for rid, v in after.items() if rid[0] < 3} == untouched
    assert sorted((rid[1], v[0], v[1]) for rid, v in after.items() if rid[0] == 3) == [
        (encode_v1(0), "0", "x"), (encode_v1(0), "999", "fresh"),
        (encode_v1(1), "100", "new-b1")]  # updated rows stay in their buckets
    assert run("validate", hive_table, "--level", "rows", "--hive-version", judge[0]).code == 0


def test_merge_refuses_a_target_row_two_source_rows_match(spark, tmp_path):
    from acidtool.spark import AcidTable

    table = made(tmp_path)
    before = sorted(p.name for p in table.iterdir())
    source = spark.createDataFrame([(1, "a"), (1, "b")], "id int, name string")
    with pytest.raises(UsageError, match="more than one source row"):
        (AcidTable.for_path(spark, str(table), hive_version=3)
         .merge(source, "t.id = s.id", write_id=3)
         .when_matched_update(set={"name": "s.name"}).execute())
    assert sorted(p.name for p in table.iterdir()) == before


def test_a_table_of_original_files_hive_converted_is_changed_as_hive_reads_it(spark, judge,
                                                                               tmp_path):
    """Trino's copy of a Hive table converted to ACID: original files (synthetic ROW__IDs,
    writeid 0) and a delete delta; no ACID insert file to take the row's columns from."""
    import shutil

    from acidtool.spark import AcidTable

    from .helpers.shared import REALDATA, require

    table = tmp_path / "nation"
    shutil.copytree(Path(require(REALDATA)) / "trino" / "fullacidNationTableWithOriginalFiles",
                    table)
    t = AcidTable.for_path(spark, str(table), hive_version=judge[0])
    assert t.delete("n_regionkey = 1", write_id=10000002)["deleted"] == 4
    assert t.update("n_nationkey = 0", set={"n_comment": "upper(n_name)"},
                    write_id=10000003)["updated"] == 1
    rows = judge[1].read(str(table), ALL.format(10000003),
                         columns=("n_nationkey", "n_name", "n_regionkey", "n_comment"),
                         types=("int", "string", "int", "string"))
    assert len(rows) == 20 and not [v for _, v in rows if v[2] == "1"]
    assert [(rid, v) for rid, v in rows if rid[0] == 10000003] == [
        ((10000003, encode_v1(0), 0), ["0", "ALGERIA", "0", "ALGERIA"])]


def test_changes_compactions_undos_cleans_and_exports_in_sequence_keep_hives_rows(spark,
                                                                                  tmp_path):
    """A sequence a user runs over some days: deletes and updates between compactions, a
    clean, undos (of a change, of a compaction older than later writes, of a delete whose
    delta a minor compaction took in and the clean removed) and incremental exports. After
    each step the rows are the model's, validate finds nothing, and the Iceberg table holds
    exactly what Hive reads. An undo either takes its write back whole or refuses and changes
    nothing."""
    from acidtool.spark import AcidTable

    from .test_export import iceberg_rows, read_rows

    table, lake = made(tmp_path), tmp_path / "lake"
    snap = ("--hive-version", "3", "--write-ids", ALL.format(20))
    t = AcidTable.for_path(spark, str(table), hive_version="3")
    model = names_of(table)

    def check(where: str) -> None:
        assert names_of(table) == model, where
        valid = run("validate", table, "--level", "rows", *snap)
        assert valid.code == 0, (where, valid.out)
        done = run("export", table, "--to", "iceberg", "--catalog", lake, "--table", "s.t",
                   *snap, "--incremental")
        assert done.code == 0, (where, done.err)
        assert iceberg_rows(lake) == read_rows(table, *snap), where

    def undo(journal, where: str, restored: list) -> None:
        nonlocal model
        done = run("undo", journal)
        assert done.code in (0, 1), (where, done.out, done.err)
        if done.code == 0:
            model = restored
        check(f"{where} ({'done' if done.code == 0 else 'refused'})")

    check("start")
    t.delete("id = 0", write_id=3)
    model = [r for r in model if r[0] != 0]
    check("delete")
    before = model
    changed = t.update("id = 1", set={"name": "concat(name, '!')"}, write_id=4)
    model = sorted((i, n + "!" if i == 1 else n) for i, n in model)
    check("update")
    undo(changed["journal"], "undo of the update", before)
    changed = t.update("id = 1", set={"name": "concat(name, '?')"}, write_id=5)
    before, model = model, sorted((i, n + "?" if i == 1 else n) for i, n in model)
    check("update again")
    gone = t.delete("id = 2", write_id=6)
    before_gone, model = model, [r for r in model if r[0] != 2]
    check("delete 2")
    assert run("compact", table, "--minor", *snap, "--apply").code == 0
    check("minor compaction")
    cleaned = run("repair", table, *snap, "--select", "ACID021", "--apply", "--min-age", "0")
    assert cleaned.code == 0, cleaned.err
    assert not (table / "delete_delta_0000006_0000006_0000").exists()  # in the minor's now
    check("clean")
    undo(gone["journal"], "undo of delete 2 after the clean", before_gone)
    undo(changed["journal"], "undo of the update after the clean", before)
    assert run("compact", table, "--major", *snap, "--apply", "--journal",
               tmp_path / "major.jsonl").code == 0
    check("major compaction")
    t.delete("id = 1", write_id=7)
    model = [r for r in model if r[0] != 1]
    check("delete after the major compaction")
    undo(tmp_path / "major.jsonl", "undo of the major compaction", model)
    assert run("repair", table, *snap, "--select", "ACID021", "--apply", "--min-age",
               "0").code == 0
    check("clean again")
    assert not model
