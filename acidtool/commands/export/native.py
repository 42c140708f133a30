"""``acidtool export --to iceberg --spark`` of a new table by Spark's own parts: the rows are
the DataFrame of the native read plan (``hiveacid/native.py``; the caller builds it from the
export's own read plan, so that it reads the very files the plan lists and records), written
by Spark's Parquet writer straight into the Iceberg table's location, each column with its
Iceberg field id, one directory per Hive partition. The driver then reads each file's footer
for its statistics, gives it its partition's values, and makes the one commit as
``run_export`` does (or removes every file written). The executors run no Python: they need
neither acidtool nor pyiceberg.

Where it does not apply (``native_unfit``: an incremental export, an insert-only table, list
or map columns, timestamps without ``--truncate-timestamps``) the export runs as before, its
groups on Spark's executors (``spark.py``)."""

from __future__ import annotations

import time
import uuid

import pyarrow as pa

from ...core.errors import AcidToolError
from ...io import iceberg
from ...io.fileops import fault_point
from ...io.spark import quoted
from .run import ExportOptions, ExportPlan, ExportResult, ExportWork, by_partition, finished, partition_row
from .schema import ROW_ID

PART = "__acid_part"  # the Hive partition's position, by which Spark makes a directory each
FIELD_ID = "parquet.field.id"  # Spark writes a column's metadata of this key as its field id


def native_unfit(plan: ExportPlan, work: ExportWork, opts: ExportOptions) -> str | None:
    """Why Spark's own parts cannot make this export as ``run_export`` would (None: they
    can)."""
    if plan.action != "create":
        return "an incremental export matches keys with the Iceberg table's files"
    if plan.source.insert_only:
        return "an insert-only table's rows are keyed by their file"
    for f in work.arrow:
        if f.name == PART or f.name.startswith("__acid_key"):
            return f"a column named {f.name}, a name the export's plan gives a column of its own"
        if _has(f.type, lambda t: pa.types.is_list(t) or pa.types.is_map(t)):
            return f"a list or map column ({f.name}): Spark writes no field id for its values"
        if _has(f.type, pa.types.is_timestamp) and not opts.truncate_timestamps:
            return (f"a timestamp column ({f.name}): Spark's ORC reader drops nanoseconds, "
                    "which the export refuses to without --truncate-timestamps")
    return None


def _has(t: pa.DataType, test) -> bool:
    if test(t):
        return True
    if pa.types.is_struct(t):
        return any(_has(t.field(i).type, test) for i in range(t.num_fields))
    return False


def run_export_native(plan: ExportPlan, work: ExportWork, frame) -> ExportResult:
    """Write and commit a new Iceberg table of ``frame`` (the native plan's DataFrame of
    ``work.read_plan``, ROW__ID included)."""
    started = time.monotonic()
    result = ExportResult(plan)
    commit = iceberg.Commit.create(work.catalog, work.ident, work.arrow,
                                   work.partition_columns, {})
    staging = f"{commit.metadata.location.rstrip('/')}/data/acidtool-{uuid.uuid4().hex}"
    try:
        parts = _partitions(work, commit.metadata)
        _write(_prepared(frame, work, commit.metadata, [values for values, _ in parts]),
               staging, commit.metadata.properties.get("write.parquet.compression-codec",
                                                       "zstd"))
        fault_point()  # (Spark's files in the table's location, none of them committed)
        commit.written.extend(_adopted(staging, commit, [record for _, record in parts]))
        commit.commit(plan.source.properties("full"))
    except BaseException as exc:
        if not commit.committed:  # (then every file is the table's)
            commit.abandon()
            _remove(staging)
        if isinstance(exc, Exception) and not isinstance(exc, AcidToolError):
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise AcidToolError(f"{plan.source.shown}: Spark's export failed, and nothing "
                                f"was committed: {first}") from exc
        raise
    result.rows_added = sum(f.record_count for f in commit.written)
    return finished(result, work, commit, started)


def _partitions(work: ExportWork, metadata) -> list[tuple[tuple, object]]:
    """Each Hive partition's values (in ``work.partition_columns``' order) and the Record of
    them the manifest holds, in the order of ``PART``."""
    spec, schema = metadata.spec(), metadata.schema()
    out = []
    for units in by_partition(work.read_plan.units):
        values = dict(units[0].values)
        out.append((tuple(values.get(k) for k in work.partition_columns),
                    iceberg.partition_record(spec, schema, partition_row(units[0], work))))
    return out


def _prepared(frame, work: ExportWork, metadata, values: list[tuple]):
    """``frame`` as the Iceberg table's columns, in its order, each typed as it is and with
    its field id; with partition columns, each row's ``PART``: the position of its values
    among ``values``, found by a join with a broadcast table of them."""
    from pyspark.sql import functions as F

    schema = metadata.schema()
    columns = []
    for f in work.arrow:
        source = "ROW__ID" if f.name == ROW_ID else f.name
        ice = schema.find_field(f.name)
        kind = _typed(frame.schema[source].dataType, ice.field_type)
        columns.append(F.col(quoted(source)).cast(kind).alias(f.name,
                                                          metadata={FIELD_ID: ice.field_id}))
    keys = work.partition_columns
    if not keys:
        return frame.select(*columns)
    index = frame.sparkSession.createDataFrame(
        [v + (i,) for i, v in enumerate(values)], _index_schema(frame, keys))
    on = [F.col(quoted(k)).eqNullSafe(F.col(f"__acid_key{i}")) for i, k in enumerate(keys)]
    return frame.join(F.broadcast(index), on=on, how="left").select(*columns, F.col(PART))


def _index_schema(frame, keys: list[str]):
    from pyspark.sql.types import IntegerType, StructField, StructType

    return StructType([StructField(f"__acid_key{i}", frame.schema[k].dataType)
                       for i, k in enumerate(keys)] + [StructField(PART, IntegerType())])


def _typed(kind, ice):
    """The Spark type a column is written as: Iceberg's (int for tinyint and smallint), each
    struct field with its field id."""
    from pyspark.sql.types import ByteType, IntegerType, ShortType, StructField, StructType

    if isinstance(kind, StructType):
        fields = []
        for f in kind.fields:
            sub = next(x for x in ice.fields if x.name == f.name)
            fields.append(StructField(f.name, _typed(f.dataType, sub.field_type), True,
                                      {FIELD_ID: sub.field_id}))
        return StructType(fields)
    if isinstance(kind, (ByteType, ShortType)):
        return IntegerType()
    return kind


def _write(frame, staging: str, codec: str) -> None:
    """Spark writes the rows (a directory a partition, where there is ``PART``), its
    timestamps as Iceberg's microseconds."""
    conf = frame.sparkSession.conf
    key = "spark.sql.parquet.outputTimestampType"
    before = conf.get(key)
    conf.set(key, "TIMESTAMP_MICROS")
    try:
        writer = frame.write.mode("errorifexists").option("compression", codec)
        if PART in frame.columns:
            writer = writer.partitionBy(PART)
        writer.parquet(staging)
    finally:
        conf.set(key, before)


def _adopted(staging: str, commit: iceberg.Commit, records: list) -> list:
    """The DataFiles of the Parquet files Spark wrote below ``staging`` (its other files, such
    as ``_SUCCESS`` and checksums, removed)."""
    from ...io.fileops import remove_file
    from ...io.fs import list_tree, resolve

    top = resolve(staging)
    files = []
    for info in list_tree(top):
        if info.is_dir:
            continue
        name = info.path.rsplit("/", 1)[-1]
        if not name.endswith(".parquet") or name.startswith((".", "_")):
            remove_file(top.child(info.path))
            continue
        head, _, rest = info.path.partition("/")
        # (a partitioned table's files are in PART=N/, an unpartitioned one's, its one
        # Record's, at the top)
        at = head[len(PART) + 1:] if rest and head.startswith(f"{PART}=") else \
            "0" if not rest and len(records) == 1 else ""
        if not at.isdigit() or int(at) >= len(records):
            raise AcidToolError(f"{top.url_of(info.path)}: a file of no partition the "
                                "export read")
        record = records[int(at)]
        adopted = iceberg.adopt_parquet(commit.metadata, commit.io, top.url_of(info.path),
                                        record)
        if adopted.record_count == 0:  # (Spark writes a file of no rows for no rows)
            remove_file(top.child(info.path))
            continue
        files.append(adopted)
    return files


def _remove(staging: str) -> None:
    """Best effort: the staging directory and whatever is in it (the files a commit never
    held harm nothing, but are litter)."""
    from ...io.fileops import remove_tree
    from ...io.fs import resolve

    try:
        remove_tree(resolve(staging))
    except Exception:  # noqa: BLE001
        pass
