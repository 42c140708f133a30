"""What `acidtool export` writes, read back by Spark with Apache Iceberg's own runtime (a Spark
4.1 of its own: tests/helpers/icebergspark.py): every Hive type, a partitioned table after an
incremental export with deletes, an insert-only table, and one exported with --spark. Spark's
rows must be pyiceberg's, which are `acidtool read`'s (tests/test_export.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acidtool.io.acidwrite import DELETE

from .helpers import icebergspark
from .helpers.layouts import acid, build, delta, events, plain
from .helpers.orcfiles import ALL_TYPES, all_types_rows, write_orc
from .helpers.runner import run
from .test_export import catalog, export, in_part

pytestmark = pytest.mark.spark
pytest.importorskip("pyiceberg", reason="pyiceberg is not installed (pip install -e '.[iceberg]')")


def canonical(rows) -> list[str]:
    return sorted(json.dumps(icebergspark.normal(r), sort_keys=True) for r in rows)


def pyiceberg_rows(lake: Path, name: str = "s.t") -> list[str]:
    return canonical(catalog(lake).load_table(name).scan().to_arrow().to_pylist())


NAMES = ["s.all_types", "s.parts", "s.mm"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Three tables exported into one catalog."""
    root = tmp_path_factory.mktemp("exports")
    lake = root / "lake"
    # every Hive type
    src = write_orc(root / "land" / "all.orc", ALL_TYPES, all_types_rows())
    (root / "all").mkdir()
    assert run("convert", src.parent, "--table", root / "all", "--write-id", "1").code == 0
    assert export(root / "all", lake, name=NAMES[0]).code == 0
    # partitioned, then a delete and inserts, exported incrementally
    table = root / "parts"
    for part in ("p=a", "p=b"):
        build(table, in_part(part, delta("delta_0000001_0000001_0000", acid(events(1, n=3)))))
    assert export(table, lake, name=NAMES[1]).code == 0
    build(table, {**in_part("p=a", delta("delete_delta_0000002_0000002_0000",
                                         acid(events(1, n=1, op=DELETE, current=2)))),
                  **in_part("p=b", delta("delta_0000003_0000003_0000", acid(events(3, n=2))))})
    result = export(table, lake, "--incremental", name=NAMES[1])
    assert result.json()["rows_deleted"] == 1
    # insert-only
    mm = build(root / "mm", {"delta_0000001_0000001_0000/000000_0": plain(rows=[(1, "a")]),
                             "base_0000002/000000_0": plain(rows=[(2, "b"), (3, None)])})
    assert export(mm, lake, "--insert-only", name=NAMES[2]).code == 0
    return lake


@pytest.fixture(scope="module")
def spark_rows(exported):
    why = icebergspark.problem()
    if why:
        pytest.skip(f"Spark {icebergspark.PYSPARK} with Iceberg's runtime: {why}")
    return icebergspark.read_tables([(str(exported), name) for name in NAMES])


@pytest.mark.parametrize("which", [0, 1, 2], ids=["all-types", "incremental", "insert-only"])
def test_spark_with_icebergs_runtime_reads_what_pyiceberg_reads(exported, spark_rows, which):
    got = canonical(spark_rows[which])
    assert got and got == pyiceberg_rows(exported, NAMES[which])


def test_nulls_of_nested_types_reach_spark_as_nulls(exported, spark_rows):
    """pyiceberg's projection alone would have written the NULL map of structs as {}."""
    row = next(r for r in spark_rows[0] if r["b"] is None and r["i"] is None)
    assert row["ms"] is None and row["l"] is None and row["st"] is None
