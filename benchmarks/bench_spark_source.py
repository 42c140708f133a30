"""Benchmark for issue #29: the ``hiveacid`` Spark data source on local[2], in one session.

* Read: ``spark.read.format("hiveacid").load(table)`` of a base of 10,000,000 rows in 4 buckets
  with 1,000,000 deletes, against ``spark.read.orc(files)`` of a plain copy of the same rows
  (Spark's ORC reader cannot read the ACID files themselves). Each is consumed by a hash of
  every column (Spark's ``noop`` sink would let the plain read skip its columns). Target: at
  most 1.3x.
* Append: ``df.write.format("hiveacid").mode("append")`` of the 10,000,000 rows into an empty
  table, against ``df.write.orc`` of the same DataFrame with the same codec (ZLIB, what Hive
  writes). Target: at most 1.2x.

Also measured, as the floor of any Python data source on this machine: a Python data source
that does nothing but hand Spark the plain copy's rows as pyarrow reads them, and one that
does nothing but write each task's rows with pyarrow's ORC writer. The ratios against them
say what acidtool adds to what Spark's Python Data Source API costs.

Usage: python benchmarks/bench_spark_source.py [--rows N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_spark_read import BUCKETS, best, build, consume  # noqa: E402


def floor_sources(spark) -> None:
    """The do-nothing Python sources: ``plainorc`` reads files, ``plainorcw`` writes them."""
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )

    class Reader(DataSourceReader):
        def __init__(self, files):
            self.files = files

        def partitions(self):
            return [InputPartition(f) for f in self.files]

        def read(self, partition):
            import pyarrow.orc as paorc

            yield from paorc.ORCFile(partition.value).read().to_batches()

    class Writer(DataSourceArrowWriter):
        def __init__(self, out):
            self.out = out

        def write(self, iterator):
            import pyarrow as pa
            import pyarrow.orc as paorc
            from pyspark import TaskContext

            w = paorc.ORCWriter(f"{self.out}/part-{TaskContext.get().partitionId()}.orc",
                                compression="zlib")
            for batch in iterator:
                w.write(pa.Table.from_batches([batch]))
            w.close()
            return WriterCommitMessage()

    class Plain(DataSource):
        @classmethod
        def name(cls):
            return "plainorc"

        def schema(self):
            return self.options["schema"]

        def reader(self, schema):
            return Reader(self.options["files"].split(","))

    class PlainWriter(DataSource):
        @classmethod
        def name(cls):
            return "plainorcw"

        def writer(self, schema, overwrite):
            return Writer(self.options["path"])

    spark.dataSource.register(Plain)
    spark.dataSource.register(PlainWriter)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from acidtool.io.spark import session
    from acidtool.spark import register

    spark = session("local[2]")
    register(spark)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "orders"
        files = build(root, args.rows)
        expected = args.rows - args.rows // 10
        assert spark.read.format("hiveacid").load(str(root)).count() == expected

        schema = spark.read.orc(files).schema.simpleString()[len("struct<"):-1] \
            .replace(":", " ")
        floor_sources(spark)
        reads = {
            "plain": lambda: consume(spark.read.orc(files)),
            "floor": lambda: consume(spark.read.format("plainorc").option("files", ",".join(
                files)).option("schema", schema).load()),
            "ours": lambda: consume(spark.read.format("hiveacid").load(str(root))),
        }
        t = {k: best(3, f) for k, f in reads.items()}
        print(f"{args.rows:,} rows, {args.rows // 10:,} deletes, {BUCKETS} buckets, local[2]")
        print(f"read: spark.read.orc of a plain copy, no deletes: {t['plain']:.2f} s")
        print(f"read: a do-nothing Python data source (pyarrow) of the copy: {t['floor']:.2f} s")
        print(f"read: spark.read.format('hiveacid'): {t['ours']:.2f} s")
        print(f"read RATIO: {t['ours'] / t['plain']:.2f}x (target <= 1.3x); "
              f"{t['ours'] / t['floor']:.2f}x the do-nothing Python source, which is "
              f"{t['floor'] / t['plain']:.2f}x Spark's reader")

        df = spark.read.orc(files)
        df.cache().count()  # every write starts from the same rows in memory
        n = [0]

        def out() -> Path:
            n[0] += 1
            return Path(tmp) / f"out-{n[0]}"

        def write(fmt: str):
            target = out()
            if fmt == "orc":
                df.write.option("compression", "zlib").orc(str(target))
            else:
                target.mkdir()
                df.write.format(fmt).mode("append").save(str(target))
            shutil.rmtree(target)

        w = {k: best(3, lambda k=k: write(k)) for k in ("orc", "plainorcw", "hiveacid")}
        print(f"append: df.write.orc, ZLIB: {w['orc']:.2f} s")
        print(f"append: a do-nothing Python data source (pyarrow, ZLIB): {w['plainorcw']:.2f} s")
        print(f"append: df.write.format('hiveacid'): {w['hiveacid']:.2f} s")
        print(f"append RATIO: {w['hiveacid'] / w['orc']:.2f}x (target <= 1.2x); "
              f"{w['hiveacid'] / w['plainorcw']:.2f}x the do-nothing Python source, which is "
              f"{w['plainorcw'] / w['orc']:.2f}x Spark's writer")
    spark.stop()


if __name__ == "__main__":
    main()
