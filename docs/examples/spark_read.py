"""Read a Hive ACID table into Spark through the hiveacid source (docs/spark.md)."""

import acidtool.spark

spark = acidtool.spark.session("local[2]")  # or your own SparkSession
acidtool.spark.register(spark)  # optional: Spark finds the source wherever acidtool is installed

df = (spark.read.format("hiveacid")
      .option("writeIds", "shop.orders:5:9223372036854775807::")
      .option("withRowId", "true")
      .load("demo-table"))
df.printSchema()
df.orderBy("id").show(truncate=False)
