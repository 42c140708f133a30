"""Hive ACID tables as a Spark data source named ``hiveacid`` (Spark 4's Python Data Source API).

    acidtool.spark.register(spark)              # or nothing: see pyspark_hiveacid
    spark.read.format("hiveacid").option("writeIds", "...").load("/warehouse/t")
    df.write.format("hiveacid").mode("append").save("/warehouse/t")

Planning runs in Spark's Python worker on the driver, with acidtool's own code; the rows are
read and written by the executors. The read plan, and the options (the CLI's flags in camel
case), are the table layer's (``acidtool.table.readplan``, ``acidtool.table.options``: the
export plans with them too, with or without Spark); ``write.py`` stages each task's files and
``job.py`` commits them on the driver through the commit protocol of every acidtool writer;
``stream.py`` does it per micro-batch. The source's classes are in ``source.py``, which imports
pyspark: its names are handed out from here when first asked for (``from acidtool.hiveacid
import HiveAcidSource``).
"""

from __future__ import annotations


def __getattr__(name: str):
    import importlib

    if name.startswith("__") or name == "source":  # (a submodule not imported yet)
        raise AttributeError(name)
    return getattr(importlib.import_module(f"{__name__}.source"), name)
