"""read_table: a Hive ACID table as a DataFrame of Spark's own plan (docs/spark.md)."""

import acidtool.spark

spark = acidtool.spark.session("local[2]")  # or your own SparkSession

# native=True: Spark's own plan even though this small table's deletes are past the 5% where
# the default would take the source (docs/spark.md, Speed)
df = acidtool.spark.read_table(spark, "demo-table", native=True,
                               write_ids="shop.orders:5:9223372036854775807::")
cheap = df.where("amount > 1").select("item")
cheap.explain()
print(sorted(r.item for r in cheap.collect()))
