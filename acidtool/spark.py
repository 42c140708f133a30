"""Hive ACID tables read into Spark, without Hive: ``acidtool.spark.read_table(spark, ...)``.

Planning happens on the driver, with acidtool's core: the partitions, getAcidState, which files
and which delete deltas each bucket reads (``commands.read.PartitionReader``). The rows are read
and merged on the executors, one task per unit of work: a (partition, bucket) of a
split-update table, a file of an insert-only table, a partition of Hive 2.3's legacy layout. A
task runs the very code ``acidtool read`` runs for its unit (its write-id filter, its anti join
with the bucket's delete events, the synthetic ROW__IDs of original files) and hands Arrow
batches to Spark (``mapInArrow``); no row passes through the driver.

The DataFrame has the table's columns (the metastore's names when ``metastore`` is given), the
partition columns (strings), and ``ROW__ID`` (struct<writeid, bucketid, rowid>) when asked.
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa

from .api import Table
from .commands.read import PartitionReader
from .commands.rownames import row_named
from .io.orc import ACID_COLUMNS


def read_table(spark, path: str, write_ids: str | None = None, txns: str | None = None,
               hive_version: str | int | None = None, *, with_row_id: bool = False,
               columns: Sequence[str] | None = None, metastore: str | None = None,
               table: str | None = None, insert_only: bool = False):
    """The rows Hive returns for the snapshot, as a ``pyspark.sql.DataFrame``. ``path``: a
    table or partition directory, or with ``metastore`` a ``db.table`` name."""
    snap = Table(path, metastore).snapshot(write_ids, txns, hive_version, table=table,
                                           with_row_id=with_row_id, columns=columns,
                                           insert_only=insert_only)
    readers = snap.readers()
    units = [(i, unit) for i, reader in enumerate(readers) for unit in reader.units()]
    schema = output_schema(readers, snap.table.snapshot.insert_only)
    from pyspark.sql.pandas.types import from_arrow_schema

    spark_schema = from_arrow_schema(schema)
    if not units:
        return spark.createDataFrame([], spark_schema)
    sc = spark.sparkContext
    plan = sc.broadcast((readers, units, schema))

    def task(batches):
        readers_, units_, target = plan.value
        for batch in batches:
            for k in batch.column(0).to_pylist():
                i, unit = units_[k]
                for t in readers_[i].unit_tables(unit):
                    if t.schema != target:
                        t = t.select(target.names).cast(target)
                    yield from t.to_batches()

    ids = spark.createDataFrame(sc.parallelize([(k,) for k in range(len(units))],
                                               len(units)), "unit int")
    return ids.mapInArrow(task, spark_schema)


def output_schema(readers: list[PartitionReader], insert_only: bool) -> pa.Schema:
    """The Arrow schema of what the readers yield, from the first data file's footer (no rows
    read): an empty batch of its row type through the reader's own output."""
    for reader in readers:
        for rel in _data_files(reader):
            from .io.orc import open_orc
            from .io.plain import plain_schema

            if insert_only:
                row = pa.struct(list(plain_schema(reader.part.location, rel)))
            else:
                arrow = open_orc(reader.part.location, rel).file.schema
                row = arrow.field("row").type if list(arrow.names) == list(ACID_COLUMNS) \
                    else pa.struct(list(arrow))
            empty = row_named(pa.array([], row), reader.row_names)
            events = pa.RecordBatch.from_arrays(
                [pa.array([], pa.int64()), pa.array([], pa.int32()), pa.array([], pa.int64()),
                 empty], names=["originalTransaction", "bucket", "rowId", "row"])
            return reader._output(events).schema
    fields = [("ROW__ID", pa.struct([("writeid", pa.int64()), ("bucketid", pa.int32()),
                                     ("rowid", pa.int64())]))] if readers and \
        readers[0].with_row_id else []
    return pa.schema(fields)


def _data_files(reader: PartitionReader) -> list[str]:
    if reader.snapshot.insert_only:
        return reader.insert_only_files()
    buckets, legacy = reader._plan
    return [f.rel for f in legacy + [f for b in sorted(buckets) for f in buckets[b].data]]
