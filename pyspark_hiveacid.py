"""Spark finds Python data sources by themselves in modules named ``pyspark_*`` that define
``DefaultSource``: with acidtool installed, ``spark.read.format("hiveacid")`` works in every
session, no ``register`` call needed."""

from acidtool.hiveacid import HiveAcidSource as DefaultSource

__all__ = ["DefaultSource"]
