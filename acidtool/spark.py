"""Hive ACID tables read into Spark, without Hive: ``acidtool.spark.read_table(spark, ...)``, a
thin user of the ``hiveacid`` data source (``acidtool.hiveacid``), which is the one read path
on Spark (``read --spark`` too).

Planning happens on the driver, with acidtool's core: the partitions, getAcidState, which files
and which delete deltas each bucket reads (``commands.read.PartitionReader``). The rows are read
and merged on the executors, one task per unit of work: a (partition, bucket) of a
split-update table, a file of an insert-only table, a partition of Hive 2.3's legacy layout. A
task runs the very code ``acidtool read`` runs for its unit (its write-id filter, its anti join
with the bucket's delete events, the synthetic ROW__IDs of original files) and hands Arrow
batches to Spark; no row passes through the driver.

The DataFrame has the table's columns (the metastore's names when ``metastore`` is given), the
partition columns (typed as the metastore says, strings without one), and ``ROW__ID``
(struct<writeid, bucketid, rowid>) when asked.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from typing import Sequence

# Spark starts its Python workers (and looks up Python data sources such as ``hiveacid``)
# with $PYSPARK_PYTHON, else `python3` from PATH: a script run by a virtual environment's
# python without that environment on PATH would get another interpreter, without acidtool.
# Read when a SparkContext starts: set here, so that importing acidtool.spark before making
# the session is enough.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def session(master: str | None = None, verbose: bool = False):
    """The active SparkSession, or a new one on ``master`` (``local[*]`` by default) whose JVM
    start-up lines and log go to a log file rather than the console."""
    from .io.spark import session as quiet_session

    return quiet_session(master, verbose)


def register(spark) -> None:
    """Make the ``hiveacid`` data source known to ``spark`` (a SparkSession). Without it, Spark
    finds the source itself wherever acidtool is installed (the ``pyspark_hiveacid`` module)."""
    from .hiveacid import register as register_source

    _require_workers_python(spark)
    register_source(spark)


def _require_workers_python(spark) -> None:
    """A session made before acidtool.spark was imported may run workers whose Python has no
    acidtool (a venv's python run without the venv on PATH): said in one line with the fix,
    rather than Spark's DATA_SOURCE_NOT_FOUND. Only on a local master (a cluster's workers
    are the cluster's)."""
    sc = spark.sparkContext
    if not str(sc.master).startswith("local"):
        return
    problem = _python_problem(getattr(sc, "pythonExec", None) or "python3")
    if problem:
        from .core.errors import UsageError

        raise UsageError(problem)


@functools.lru_cache(maxsize=None)
def _python_problem(python: str) -> str | None:
    found = shutil.which(python)
    if found is None:
        return (f"Spark's Python workers run {python!r}, which is not found: set "
                f"PYSPARK_PYTHON={sys.executable} before the SparkSession starts (or import "
                "acidtool.spark first)")
    if os.path.realpath(found) == os.path.realpath(sys.executable):
        return None
    try:
        ok = subprocess.run([found, "-c", "import acidtool, pyarrow, pyspark"], cwd="/",
                            capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if ok:
        return None
    return (f"Spark's Python workers run {found}, which cannot import acidtool, pyarrow and "
            f"pyspark (this script "
            f"runs {sys.executable}): set PYSPARK_PYTHON={sys.executable} before the "
            "SparkSession starts, or import acidtool.spark before making it")


def read_table(spark, path: str, write_ids: str | None = None, txns: str | None = None,
               hive_version: str | int | None = None, *, with_row_id: bool = False,
               columns: Sequence[str] | None = None, metastore: str | None = None,
               table: str | None = None, insert_only: bool = False,
               partitions: Sequence[str] = ()):
    """The rows Hive returns for the snapshot, as a ``pyspark.sql.DataFrame``. ``path``: a
    table or partition directory, or with ``metastore`` a ``db.table`` name."""
    import json

    register(spark)
    options = {"writeIds": write_ids, "txns": txns,
               "hiveVersion": str(hive_version) if hive_version is not None else None,
               "metastore": metastore, "table": table,
               "insertOnly": "true" if insert_only else None,
               "withRowId": "true" if with_row_id else None,
               "columns": json.dumps(list(columns)) if columns else None,
               "partitions": json.dumps(list(partitions)) if partitions else None}
    from .hiveacid import acidtool_errors

    reader = spark.read.format("hiveacid")
    for key, value in options.items():
        if value is not None:
            reader = reader.option(key, value)
    with acidtool_errors():  # planned in Spark's Python worker: its errors said as ours
        return reader.load(path)
