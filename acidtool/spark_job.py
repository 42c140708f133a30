"""``convert --spark``: the same conversion as a PySpark job, and a function for your own jobs.

Rows get the same bucket, the same row id and the same file as in process: sources in path order,
each read as one partition so ``zipWithIndex`` gives every row its position in its file; the
bucket is Hive's hash computed by the same code (a Python UDF) for bucketed tables, the running
row count for unbucketed ones. Spark writes one ORC file per bucket (``partitionBy`` on the
bucket), which the driver renames to ``bucket_NNNNN`` and completes with Hive's footer metadata
before the usual staged commit.
"""

from __future__ import annotations

import shutil
import uuid
from typing import Sequence

import pyarrow as pa

from .convert import STAGING_PREFIX, Plan, acid_metadata, _footer
from .core.bucket import encode_v1
from .core.hashing import bucket_number
from .core.names import bucket_file_name
from .fs import list_tree, read_bytes
from .orcpatch import with_user_metadata

_SPARK_TYPES = {
    pa.bool_(): "boolean", pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int",
    pa.int64(): "bigint", pa.float32(): "float", pa.float64(): "double", pa.string(): "string",
    pa.binary(): "binary", pa.date32(): "date",
}


def spark_problem() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "--spark needs pyspark: pip install 'acidtool[spark]'"
    import os

    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and os.path.exists(
            os.path.join(java_home, "bin", "java"))):
        return ("--spark needs Java 17 (e.g. `apt-get install openjdk-17-jre-headless`, or "
                "set JAVA_HOME)")
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


def session(master: str | None = None):
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    options = "--add-opens=java.base/java.net=ALL-UNNAMED"
    builder = (SparkSession.builder.appName("acidtool convert")
               .master(master or "local[*]")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", options)
               .config("spark.executor.extraJavaOptions", options))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _ordered_source(spark, plan: Plan):
    """The sources as one DataFrame with (__file, __pos): each file's rows in file order.

    Each file is read as a single partition, where monotonically_increasing_id() counts rows
    0, 1, 2... in order; all of it stays in the JVM. For unbucketed tables the files of one
    group (see convert.group_sources) share a partition and ``__idx`` numbers their rows, so
    no two partitions write the same bucket file and nothing is shuffled."""
    from pyspark.sql import functions as F

    spark.conf.set("spark.sql.files.maxPartitionBytes", str(1 << 40))
    casts = [F.col(f"`{source}`").cast(spark_type(plan.schema.field(target).type)).alias(target)
             for target, source, _ in plan.mapping]

    def one(i):
        src = plan.sources[i]
        df = spark.read.orc(src.loc.url if "://" in src.loc.url else src.loc.path)
        return (df.coalesce(1).select(*casts)
                .withColumn("__pos", F.monotonically_increasing_id())
                .withColumn("__file", F.lit(i)))

    if plan.options.buckets:
        frames = [one(i) for i in range(len(plan.sources))]
    else:
        frames = []
        for g in plan.groups:
            parts = [one(i).withColumn("__idx", F.col("__pos") + F.lit(off))
                     for i, off in zip(g.sources, g.offsets)]
            group = parts[0]
            for part in parts[1:]:
                group = group.unionByName(part)
            frames.append(group.coalesce(1).withColumn("__group", F.lit(g.first_bucket)))
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def events_dataframe(plan: Plan, df):
    """Add the ACID event columns and the bucket (``__b``) to an ordered source DataFrame."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    o = plan.options
    names = [f.name for f in plan.schema]
    if o.buckets:
        kinds = plan.bucket_kinds
        buckets, version = o.buckets, o.bucketing_version

        @F.udf(IntegerType())
        def hive_bucket(*values):
            return bucket_number(values, kinds, buckets, version)

        df = df.withColumn("__b", hive_bucket(*[F.col(f"`{c}`") for c in o.bucket_by]))
        w = Window.partitionBy("__b").orderBy("__file", "__pos")
        df = df.withColumn("rowId", F.row_number().over(w) - 1)
    else:
        r = o.max_file_rows
        df = df.withColumn("__b", (F.col("__group") + F.floor(F.col("__idx") / r)).cast("int")) \
               .withColumn("rowId", (F.col("__idx") % r).cast("long"))
    if o.hive_version == "2":
        prop = F.col("__b")
    else:
        prop = F.lit(encode_v1(0, o.statement_id)) + F.shiftleft(F.col("__b"), 16)
    w_id = F.lit(plan.write_id).cast("long")
    return df.select(
        F.lit(0).cast("int").alias("operation"), w_id.alias("originalTransaction"),
        prop.cast("int").alias("bucket"), F.col("rowId").cast("long").alias("rowId"),
        w_id.alias("currentTransaction"),
        F.struct(*[F.col(f"`{n}`") for n in names]).alias("row"), F.col("__b"))


def write_files_spark(plan: Plan, master: str | None = None) -> dict[str, bytes]:
    spark = session(master)
    events = events_dataframe(plan, _ordered_source(spark, plan))
    scratch = plan.target.child(f"{STAGING_PREFIX}spark_{uuid.uuid4().hex[:12]}")
    url = scratch.url if "://" in scratch.url else scratch.path
    try:
        # Rows reach the writer in row-id order within each bucket; with concurrent output
        # writers Spark writes them as they come instead of sorting every task by bucket.
        spark.conf.set("spark.sql.maxConcurrentOutputFileWriters", "256")
        if plan.options.buckets:
            # A bucket's rows come from every source: gather each bucket in one sorted task.
            events = events.repartition(plan.options.buckets, "__b").sortWithinPartitions(
                "rowId")
        (events
         .write.partitionBy("__b").option("compression", plan.options.compression
                                          if plan.options.compression != "uncompressed"
                                          else "none")
         .orc(url))
        return _collect(plan, scratch)
    finally:
        try:
            scratch.fs.delete_dir(scratch.path)
        except (OSError, FileNotFoundError):
            pass


def _collect(plan: Plan, scratch) -> dict[str, bytes]:
    o = plan.options
    files: dict[str, bytes] = {}
    for info in list_tree(scratch):
        name = info.path.rsplit("/", 1)[-1]
        if info.is_dir or not info.path.startswith("__b=") or name.startswith((".", "_")):
            continue
        bucket = int(info.path.split("/")[0][len("__b="):])
        data = read_bytes(scratch, info.path)
        footer = _footer(data)
        prop = bucket if o.hive_version == "2" else encode_v1(bucket, o.statement_id)
        meta = acid_metadata(plan.write_id, prop, [s.rows for s in footer.stripes],
                             footer.rows, o.hive_version)
        key = bucket_file_name(bucket)
        if key in files:
            raise RuntimeError(f"Spark wrote more than one file for {key}")
        files[key] = with_user_metadata(data, meta)
    return files


def write_delta(df, table: str, write_id: int, *, schema: str | None = None,
                statement_id: int = 0, buckets: int | None = None,
                bucket_by: Sequence[str] = (), bucketing_version: int = 2,
                max_file_rows: int = 10_000_000, hive_version: str = "4",
                compression: str = "zlib", order_by: Sequence[str] = ()):
    """Write a DataFrame into ``table`` as ``delta_W_W_S`` (for use in your own PySpark code).

    Rows are numbered in ``order_by`` order (default: the DataFrame's partition order). The
    DataFrame's columns must already be the table's. Returns the commit summary."""
    import time

    from pyspark.sql import functions as F

    from .convert import ConvertOptions, Plan, _existing, commit
    from .core.names import Delta
    from .fs import resolve

    opts = ConvertOptions(table=table, write_id=str(write_id), statement_id=statement_id,
                          buckets=buckets, bucket_by=tuple(bucket_by),
                          bucketing_version=bucketing_version, max_file_rows=max_file_rows,
                          hive_version=hive_version, compression=compression, schema=schema)
    arrow_schema = pa.schema([pa.field(f.name, _arrow_of(f.dataType)) for f in df.schema])
    target = resolve(table)
    clashes = _existing(target, write_id, statement_id)
    if clashes:
        raise ValueError(f"write id {write_id} is already used in {table}: {clashes}")
    plan = Plan(opts, [], target, write_id, str(Delta(write_id, write_id, statement_id)),
                arrow_schema, [(n, n, "") for n in arrow_schema.names])
    if buckets:
        from .convert import _kind_of
        plan.bucket_kinds = [_kind_of(arrow_schema.field(c).type) for c in bucket_by]
    order = [F.col(c) for c in order_by] or [F.monotonically_increasing_id()]
    from pyspark.sql import Window

    # A global row_number puts every row in one task, which then writes every bucket file.
    ordered = (df.withColumn("__file", F.lit(0)).withColumn("__group", F.lit(0))
               .withColumn("__pos", F.row_number().over(Window.orderBy(*order)) - 1)
               .withColumn("__idx", F.col("__pos")))
    total = ordered.count()
    from .convert import Source
    plan.sources = [Source(target, total, arrow_schema)]
    plan.total_rows = total
    started = time.perf_counter()
    spark = df.sparkSession
    events = events_dataframe(plan, ordered)
    scratch = target.child(f"{STAGING_PREFIX}spark_{uuid.uuid4().hex[:12]}")
    try:
        if buckets:
            events = events.repartition(buckets, "__b")
        (events.sortWithinPartitions("__b", "rowId").write.partitionBy("__b")
         .option("compression", compression).orc(scratch.path))
        files = _collect(plan, scratch)
    finally:
        try:
            scratch.fs.delete_dir(scratch.path)
        except (OSError, FileNotFoundError):
            pass
    del spark
    return commit(plan, files, started)


def _arrow_of(t) -> pa.DataType:
    name = t.simpleString()
    from .convert import orc_type_to_arrow

    return orc_type_to_arrow(name.replace("integer", "int").replace("long", "bigint")
                             .replace("byte", "tinyint").replace("short", "smallint"))
