"""A stream into a Hive ACID table: each micro-batch one delta (docs/spark.md)."""

import json
import os

import acidtool.spark

spark = acidtool.spark.session("local[2]")
os.makedirs("click-landing", exist_ok=True)
os.makedirs("clicks-stream", exist_ok=True)


def run_once():  # process what has landed, then stop
    query = (spark.readStream.schema("id int, page string").json("click-landing")
             .writeStream.format("hiveacid")
             .option("checkpointLocation", "clicks-stream-checkpoint")
             .trigger(availableNow=True).start("clicks-stream"))
    query.awaitTermination()


for n, rows in enumerate([[(1, "/home"), (2, "/cart")], [(3, "/home")]]):
    with open(f"click-landing/part-{n}.json", "w") as f:
        f.writelines(json.dumps({"id": i, "page": p}) + "\n" for i, p in rows)
    run_once()  # a micro-batch: one delta, write id one above the table's at the start

print(sorted(os.listdir("clicks-stream")))
spark.read.format("hiveacid").load("clicks-stream").orderBy("id").show()
