"""``convert --spark``: the same conversion as a PySpark job, and a function for your own jobs.

The bucket files are written by the same code as in process (``io.deltawriter.BucketWriter``: Arrow's
ORC writer, then Hive's footer metadata), inside Spark's Python workers, straight into the
staging directory of the usual commit. So both paths write the same rows, row ids and
metadata, and no file passes through the driver.

* Unbucketed tables: one task per group of sources (see ``convert.group_sources``: the
  sources that fill a run of bucket files); the task reads its sources in order, as the
  in-process path does, and writes their bucket files. No row crosses between tasks, so
  nothing is shuffled, and no row makes a round trip through the JVM.
* Bucketed tables: a bucket's rows come from every source, so Spark reads the sources,
  computes Hive's hash of the bucket columns (a Python UDF over the same code as in process),
  shuffles the rows by bucket, sorts them by (source, position) within it, and hands each
  task's rows to the writers as Arrow batches (``mapInArrow``).
* ``write_delta(df, ...)`` (your own DataFrame): the DataFrame path, numbered by ``order_by``.

The workers need acidtool and pyarrow, and reach the sources and the table through pyarrow's
filesystems, as the driver does: local[*] always can; on a cluster, install acidtool on the
nodes (and Hadoop's native client for hdfs://).
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ...core.hashing import bucket_number
from ...io.deltawriter import BucketWriter, BucketWriters
from ...io.fs import Location, resolve
from ...io.spark import session, spark_problem
from .delta import (
    ConvertOptions,
    GroupWriter,
    Plan,
    batches_of,
)

_SPARK_TYPES = {
    pa.bool_(): "boolean", pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int",
    pa.int64(): "bigint", pa.float32(): "float", pa.float64(): "double", pa.string(): "string",
    pa.binary(): "binary", pa.date32(): "date",
}


def location_problem(plan: Plan) -> str | None:
    """Spark's workers read the sources and write the files themselves: a filesystem that
    lives inside this process (memory://) is out of their reach."""
    for loc in [plan.target] + [s.loc for s in plan.sources]:
        if loc.url.lower().startswith("memory://"):
            return (f"--spark cannot use {loc.url}: Spark's workers read and write the files "
                    "themselves, and memory:// exists only in this process (drop --spark)")
    return None


def spark_type(t: pa.DataType) -> str:
    if t in _SPARK_TYPES:
        return _SPARK_TYPES[t]
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp"
    if pa.types.is_list(t):
        return f"array<{spark_type(t.value_type)}>"
    if pa.types.is_map(t):
        return f"map<{spark_type(t.key_type)},{spark_type(t.item_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"`{f.name}`:{spark_type(f.type)}" for f in t) + ">"
    raise ValueError(f"no Spark type for {t}")


@contextlib.contextmanager
def _conf(spark, settings: dict[str, str]):
    """SQL settings for the duration of one job, then back as they were (it may be the
    user's own session)."""
    before = {k: spark.conf.get(k) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)


# Arrow batches of 131,072 rows reach the Python workers (Spark's 10,000 makes the per-batch
# work show; a million is slower again). Each source is read whole, by one task, so that
# monotonically_increasing_id() numbers its rows in file order without a coalesce (which
# costs a third more time when combined with it).
_JOB_CONF = {"spark.sql.execution.arrow.maxRecordsPerBatch": str(1 << 17),
             "spark.sql.files.maxPartitionBytes": str(1 << 40),
             "spark.sql.files.minPartitionNum": "1"}


def _ref(loc: Location) -> str:
    """How a worker names a location: the URL, or the absolute path of a local one."""
    return loc.url if "://" in loc.url else loc.path


def _ordered_source(spark, plan: Plan):
    """The sources as one DataFrame with (__file, __pos): each file's rows in file order.

    Each file is read as a single partition (see _JOB_CONF), where
    monotonically_increasing_id() counts rows 0, 1, 2... in order; all of it stays in the JVM."""
    from pyspark.sql import functions as F

    casts = [F.col(f"`{source}`").cast(spark_type(plan.schema.field(target).type)).alias(target)
             for target, source, _ in plan.mapping]
    out = None
    for i, src in enumerate(plan.sources):
        df = spark.read.orc(_ref(src.loc))
        if df.rdd.getNumPartitions() > 1:  # _JOB_CONF reads a file whole; this is a guard
            df = df.coalesce(1)
        df = (df.select(*casts).withColumn("__pos", F.monotonically_increasing_id())
              .withColumn("__file", F.lit(i)))
        out = df if out is None else out.unionByName(df)
    return out


def _placed(plan: Plan, df):
    """The row columns, the bucket (``__b``) and, unbucketed, the row id each row must get
    (``__row``, which the worker checks), in the order the worker must see them."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    o = plan.options
    names = [F.col(f"`{f.name}`") for f in plan.schema]
    if o.buckets:
        kinds, buckets, version = plan.bucket_kinds, o.buckets, o.bucketing_version

        @F.udf(IntegerType())
        def hive_bucket(*values):
            return bucket_number(values, kinds, buckets, version)

        df = df.withColumn("__b", hive_bucket(*[F.col(f"`{c}`") for c in o.bucket_by]))
        # A bucket's rows come from every source: gather each bucket in one task, in order.
        df = df.repartition(buckets, "__b").sortWithinPartitions("__b", "__file", "__pos")
        return df.select(*names, "__b")
    r = o.max_file_rows
    return df.select(*names,
                     (F.col("__group") + F.floor(F.col("__idx") / r)).cast("int").alias("__b"),
                     (F.col("__idx") % r).cast("long").alias("__row"))


def _writer_task(options: ConvertOptions, write_id: int, into: str, columns: list[str]):
    """The function each Spark task runs over its Arrow batches: write every bucket file it
    holds into ``into`` and yield one row (name, rows, bytes) per file."""

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        loc = resolve(into)
        writers = BucketWriters(options.file_format, write_id)
        for batch in batches:
            buckets = pc.run_end_encode(batch.column("__b"))
            start = 0
            for bucket, end in zip(buckets.values.to_pylist(), buckets.run_ends.to_pylist()):
                piece = batch.slice(start, end - start)
                start = end
                writer = writers[bucket]
                if not options.buckets:  # bucketed rows arrive sorted, taking the next ids
                    _check_row_ids(piece.column("__row"), writer.rows, bucket)
                writer.write(piece.select(columns))
        for writer in writers.values():
            yield pa.RecordBatch.from_pylist(
                [dict(zip(_RESULT.names, _finish(loc, writer)))], schema=_RESULT)

    return task


def _check_row_ids(rows: pa.Array, first: int, bucket: int) -> None:
    """Unbucketed, Spark says which row id each row gets; rows must arrive in that order, or
    the file would not be in row id order. Never write such a file."""
    n = len(rows)
    ok = (rows[0].as_py() == first and rows[n - 1].as_py() == first + n - 1
          and (n < 3 or pc.all(pc.equal(pc.subtract(rows.slice(1), rows.slice(0, n - 1)),
                                        1)).as_py()))
    if not ok:
        raise RuntimeError(f"rows of bucket {bucket} reached the writer out of order")


def _finish(loc: Location, writer: BucketWriter) -> tuple[str, int, int, str]:
    """Finish a bucket file and write it into ``loc``: (name, rows, bytes, SHA-256: the
    commit's journal records it, and the driver need not read the file back for it)."""
    import hashlib

    name = writer.fmt.file_name(writer.bucket_id)
    data = writer.finish()
    with loc.fs.open_output_stream(loc.join(name)) as out:
        out.write(data)
    return name, writer.rows, len(data), hashlib.sha256(data).hexdigest()


_RESULT = pa.schema([("name", pa.string()), ("rows", pa.int64()), ("bytes", pa.int64()),
                     ("sha256", pa.string())])


def _group_task(plan: Plan, into: str):
    """The function each task runs for its groups of sources (unbucketed tables)."""
    options, write_id, mapping, schema = plan.options, plan.write_id, plan.mapping, plan.schema

    def task(groups: Iterator[tuple[list[str], int]]) -> Iterator[tuple[str, int, int, str]]:
        loc = resolve(into)
        for sources, first_bucket in groups:
            group = GroupWriter(options, write_id, first_bucket)
            for source in sources:
                for table in batches_of(resolve(source), mapping, schema):
                    group.write(table)
            for writer in group.writers.values():
                yield _finish(loc, writer)

    return task


def _collect(results, plan: Plan, staged: Location) -> dict[str, tuple[int, int, str]]:
    """name -> (rows, bytes, SHA-256) of the files the tasks wrote."""
    written: dict[str, tuple[int, int, str]] = {}
    for name, rows, size, digest in results:
        if name in written:
            raise RuntimeError(f"Spark wrote {name} twice")
        written[name] = (rows, size, digest)
    if not written:  # no rows: Hive's writers still leave an (empty) bucket file
        name, rows, size, digest = _finish(staged, BucketWriter(
            plan.options.file_format, plan.write_id, 0, plan.schema))
        written[name] = (rows, size, digest)
    return written


def _write_groups(spark, plan: Plan, staged: Location) -> dict[str, tuple[int, int, str]]:
    groups = [([_ref(plan.sources[i].loc) for i in g.sources], g.first_bucket)
              for g in plan.groups]
    tasks = spark.sparkContext.parallelize(groups, max(1, len(groups)))
    return _collect(tasks.mapPartitions(_group_task(plan, _ref(staged))).collect(), plan, staged)


def _write_rows(plan: Plan, placed, staged: Location) -> dict[str, tuple[int, int, str]]:
    """Write the rows of a DataFrame from _placed; name -> (rows, bytes, SHA-256)."""
    columns = [f.name for f in plan.schema]
    task = _writer_task(plan.options, plan.write_id, _ref(staged), columns)
    rows = placed.mapInArrow(task, "name string, rows long, bytes long, sha256 string").collect()
    return _collect([(r["name"], r["rows"], r["bytes"], r["sha256"]) for r in rows], plan,
                    staged)


def spark_writer(plan: Plan, master: str | None = None, verbose: bool = False):
    """The --spark conversion, as the writer ``convert.commit`` runs into its staging directory:
    ``commit(plan, spark_writer(plan), started)``."""

    def write(staged: Location) -> dict[str, tuple[int, int, str]]:
        spark = session(master, verbose)
        if not plan.options.buckets:
            return _write_groups(spark, plan, staged)
        with _conf(spark, _JOB_CONF):
            return _write_rows(plan, _placed(plan, _ordered_source(spark, plan)), staged)

    return write


def write_delta(df, table: str, write_id: int, *, schema: str | None = None,
                statement_id: int = 0, buckets: int | None = None,
                bucket_by: Sequence[str] = (), bucketing_version: int = 2,
                max_file_rows: int = 10_000_000, hive_version: str = "4",
                compression: str = "zlib", order_by: Sequence[str] = ()):
    """Write a DataFrame into ``table`` as ``delta_W_W_S`` (for use in your own PySpark code).

    Rows are numbered in ``order_by`` order (default: the DataFrame's partition order). The
    DataFrame's columns must already be the table's. Returns the commit summary."""
    import time

    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from ...core.names import Delta
    from ...core.versions import HiveVersion
    from .delta import Source, bucket_kind_of, commit, existing_deltas

    opts = ConvertOptions(table=table, write_id=str(write_id), statement_id=statement_id,
                          buckets=buckets, bucket_by=tuple(bucket_by),
                          bucketing_version=bucketing_version, max_file_rows=max_file_rows,
                          hive_version=HiveVersion.of(hive_version), compression=compression,
                          schema=schema)
    arrow_schema = pa.schema([pa.field(f.name, _arrow_of(f.dataType)) for f in df.schema])
    target = resolve(table)
    clashes = existing_deltas(target, write_id, statement_id)
    if clashes:
        raise ValueError(f"write id {write_id} is already used in {table}: {clashes}")
    plan = Plan(opts, [], target, write_id, str(Delta(write_id, write_id, statement_id)),
                arrow_schema, [(n, n, "") for n in arrow_schema.names])
    if buckets:
        plan.bucket_kinds = [bucket_kind_of(arrow_schema.field(c).type) for c in bucket_by]
    order = [F.col(c) for c in order_by] or [F.monotonically_increasing_id()]
    # A global row_number puts every row in one task, which then writes every bucket file.
    ordered = (df.withColumn("__file", F.lit(0)).withColumn("__group", F.lit(0))
               .withColumn("__pos", F.row_number().over(Window.orderBy(*order)) - 1)
               .withColumn("__idx", F.col("__pos")))
    total = ordered.count()
    plan.sources = [Source(target, total, arrow_schema)]
    plan.total_rows = total
    started = time.perf_counter()

    def write(staged: Location) -> dict[str, tuple[int, int, str]]:
        with _conf(df.sparkSession, _JOB_CONF):
            return _write_rows(plan, _placed(plan, ordered), staged)

    return commit(plan, write, started)


def _arrow_of(t) -> pa.DataType:
    name = t.simpleString()
    from ...io.arrowtypes import orc_type_to_arrow

    return orc_type_to_arrow(name.replace("integer", "int").replace("long", "bigint")
                             .replace("byte", "tinyint").replace("short", "smallint"))


def spark_usable(p) -> None:
    """Refuse a Spark convert that cannot run (no pyspark, a table Spark's workers cannot
    reach) before anything is written."""
    from ...core.errors import UsageError

    problem = location_problem(p) or spark_problem()
    if problem:
        raise UsageError(problem)
