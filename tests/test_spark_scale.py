"""``validate --spark`` and ``ls --recursive --spark``: the same findings, order and exit
status as the run without Spark, on random warehouses and on every real Hive table in
../shared/realdata; ``--output`` writes the findings as a Parquet dataset."""

from __future__ import annotations

import json
import random

import pyarrow.parquet as pq
import pytest

from .helpers.layouts import acid, build, delta, events, plain
from .helpers.runner import run
from .helpers.shared import REALDATA, require

pytestmark = pytest.mark.spark
MASTER = ["--spark", "--master", "local[2]"]


def warehouse(root, rng: random.Random):
    """Databases of tables, partitioned or not, with damage of several kinds."""
    for t in range(rng.randint(2, 5)):
        table = root / f"db{t % 2}.db" / f"t{t}"
        parts = [""] if rng.random() < 0.4 else [f"ds={d}" for d in range(rng.randint(1, 6))]
        for part in parts:
            layout = {}
            for w in range(1, rng.randint(2, 13)):
                layout.update(delta(f"delta_{w:07d}_{w:07d}_0000", acid(events(w, rng.randint(
                    1, 30)))))
            damage = rng.random()
            if damage < 0.2:
                layout["part-00000.orc"] = plain()  # a foreign file
            elif damage < 0.35:
                layout["delta_0000001_0000001_0000/bucket_00000"] = b"not orc"
            elif damage < 0.5:
                layout["base_0000003/bucket_00000"] = acid(events(3, 4))
            build(table / part if part else table, layout)
    return root


def _same(args: list) -> None:
    plain_run = run(*args)
    on_spark = run(*args, *MASTER)
    assert on_spark.code == plain_run.code, on_spark.err
    assert on_spark.out == plain_run.out
    assert plain_run.out


@pytest.mark.parametrize("seed", range(4))
def test_validate_on_spark_finds_what_validate_finds(spark, tmp_path, seed):
    root = warehouse(tmp_path / "w", random.Random(seed))
    level = ["--level", "rows"] if seed % 2 else []
    _same(["validate", "-r", root, "--format", "json", *level])
    _same(["validate", "-r", root, "--format", "jsonl"])


@pytest.mark.parametrize("seed", range(2))
def test_ls_on_spark_lists_what_ls_lists(spark, tmp_path, seed):
    root = warehouse(tmp_path / "w", random.Random(100 + seed))
    _same(["ls", "-r", root, "--format", "json", "--files"])
    _same(["ls", "-r", root])


@pytest.mark.parametrize("fmt", ["html", "json"])
def test_report_on_spark_is_the_report_without_it(spark, tmp_path, fmt):
    # each partition summed up (and drawn) on the executors, as in forked processes here
    root = warehouse(tmp_path / "w", random.Random(200))
    for t in range(2):  # a table of 30 partitions: shares of several, its first 12 drawn
        for d in range(30):
            build(root / "db9.db" / f"wide{t}" / f"ds={d:02d}",
                  delta("delta_0000001_0000001_0000", acid(events(1))))
    pages = []
    for extra in ([], MASTER):
        out = tmp_path / f"r{len(pages)}.{fmt}"
        result = run("report", "-r", root, "--format", fmt, "-o", out, *extra)
        assert result.code == 0, result.err
        pages.append(out.read_text())
    assert pages[0] == pages[1] and "wide1" in pages[0]
    if fmt == "html":
        assert "... and 18 more partitions" in pages[0]


def test_every_real_table_on_spark(spark):
    root = require(REALDATA)
    _same(["validate", "-r", root, "--format", "json", "--level", "rows"])
    _same(["ls", "-r", root, "--format", "json"])


def test_output_writes_the_findings_as_parquet(spark, tmp_path):
    root = warehouse(tmp_path / "w", random.Random(7))
    out = tmp_path / "out"
    result = run("validate", "-r", root, "--format", "json", *MASTER, "--output", out)
    doc = json.loads(result.out)
    findings = pq.read_table(out / "findings").to_pylist()
    assert [(f["path"], f["code"], f["message"]) for f in findings] == [
        (f["path"], f["code"], f["message"]) for f in doc["findings"]]
    tables = pq.read_table(out / "tables").to_pylist()
    assert len(tables) == doc["summary"]["tables"]
    assert sum(t["error"] for t in tables) == doc["summary"]["error"]
    for f in findings:  # every finding belongs to its table, and its partition is k=v
        assert f["path"].startswith(f["table"])
        assert all("=" in c for c in f["partition"].split("/") if c)
    again = run("validate", "-r", root, "--output", out)
    assert again.code == 2 and "never overwrites" in again.err


def test_spark_without_recursive_is_refused_for_ls(tmp_path):
    assert run("ls", tmp_path, "--spark").code == 2


@pytest.mark.parametrize("seed", range(2))
def test_compaction_plan_on_spark_plans_what_it_plans_here(spark, tmp_path, seed):
    root = warehouse(tmp_path / "w", random.Random(200 + seed))
    _same(["compaction-plan", "-r", root, "--format", "json", "--set",
           "hive.compactor.delta.num.threshold=4"])
    _same(["compaction-plan", "-r", root, "--format", "sql"])


def _fails_on_three(share):
    from acidtool.core.errors import OrcReadError

    if 3 in share:
        raise OrcReadError("unit 3: not ORC")
    return sum(share)


def test_an_executors_acidtool_error_keeps_its_class(spark):
    """Its class says the exit status: an OrcReadError on an executor is an OrcReadError on
    the driver (exit 1), not Spark's wrapped text."""
    from acidtool.core.errors import OrcReadError
    from acidtool.io.spark_jobs import spark_map

    assert sum(out for _, out in spark_map(sum, list(range(10)), "local[2]")) == 45
    with pytest.raises(OrcReadError, match="unit 3: not ORC"):
        list(spark_map(_fails_on_three, list(range(10)), "local[2]"))
