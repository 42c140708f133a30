"""A Hive ACID table in Spark SQL (docs/spark.md)."""

import acidtool.spark

spark = acidtool.spark.session("local[2]")
spark.sql("CREATE TABLE visits USING hiveacid OPTIONS (path 'visits')")
spark.sql("INSERT INTO visits VALUES (4, '/search', '2026-11-25')")
spark.sql("SELECT ds, count(*) AS visits FROM visits GROUP BY ds ORDER BY ds").show()
