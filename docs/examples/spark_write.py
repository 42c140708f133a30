"""Append to, and overwrite partitions of, a Hive ACID table from Spark (docs/spark.md)."""

import os

import acidtool.spark

spark = acidtool.spark.session("local[2]")
os.makedirs("visits", exist_ok=True)  # the table's directory (Hive's CREATE TABLE makes it)

day1 = spark.createDataFrame([(1, "/home", "2026-11-24"), (2, "/cart", "2026-11-24"),
                              (3, "/home", "2026-11-25")], "id int, page string, ds string")
(day1.write.format("hiveacid").mode("append")
 .option("partitionColumns", "ds")  # a new table without a metastore: say how it is partitioned
 .save("visits"))  # write id 1: a delta in each partition

fixed = spark.createDataFrame([(2, "/checkout", "2026-11-24")], "id int, page string, ds string")
fixed.write.format("hiveacid").mode("overwrite").save("visits")  # base_0000002 in ds=2026-11-24

spark.read.format("hiveacid").load("visits").orderBy("ds", "id").show()
