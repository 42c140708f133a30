"""Spark's own read plan for a Hive ACID table (``read_table``'s default where the layout
allows and it reads sooner): no Python on the executors and no row through a Python worker.

The driver plans as ``acidtool read`` does (``table.readplan.plan_read``: getAcidState per
partition, the snapshot's files). Then each partition's rows are Spark's own operators:

* its data files are read by Spark's vectorized ORC reader, one scan per row shape (files
  written before ``ADD COLUMNS`` have fewer row columns, read as nulls), with all six event
  columns asked for: ORC takes a file whose top-level columns are the ACID ones for an ACID
  file and fails unless the reader asks for the same six (a pruned ask gets a
  ClassCastException). The filter keeps the insert events (operation 0) whose
  currentTransaction the snapshot sees, and touches each of the six columns with a test
  that is always true, so that Spark's column pruning keeps them all (``row`` only by its
  first field: the rest of ``row`` is pruned when a query does not use it);
* its delete deltas' events (operation 2, a currentTransaction the snapshot sees) are read
  the same way, ``row`` as an empty struct, made masks of 64 row ids each, broadcast and
  joined (see ``_deletes``; docs/spark.md has the alternatives measured);
* its partition values are literals, so a filter on a partition column leaves the other
  partitions' scans out of the plan before any file is opened.

An insert-only table's ORC files are the rows themselves: a scan per shape, nothing else.
Hive 2.3's legacy layout (update and delete events beside the inserts, no delete deltas) is
its merge as a window: of each row's events the latest wins (``_latest``).

Layouts whose rows are not the files' events are read by the ``hiveacid`` source instead
(``native_plan`` says which): original and LOAD DATA files (Hive numbers their synthetic
ROW__IDs by position), insert-only tables' Parquet and text files, a delta a streaming writer
still has open (a ``_flush_length`` side file: only part of the file is committed), files
Spark's Hadoop client is not given here (object stores acidtool reaches through fsspec), and
a file whose footer cannot be read or whose event columns are not Hive's (the source says why
in one line). ``NativePlan.slower`` says where the source reads sooner.

The join matches a delete event to the rows of its whole partition by the full key, as the
bucket property is part of it; Hive matches within the delete file's bucket (by file name),
which differs only where a file's name and its rows' bucket property disagree (validate's
ACID012): such a partition is read by the source (``_misplaced``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..core.facts import event_ranges, footer_is_acid, row_shape
from ..core.names import FLUSH_LENGTH_SUFFIX
from ..core.snapshot import LONG_MAX, IdList
from ..table.read import PartitionReader, partition_values
from ..table.readplan import ReadPlan, typed

EVENTS = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction")
EVENT_TYPES = ("int", "bigint", "int", "bigint", "bigint")
# the key columns as the plan carries them beside the row's (names no table column takes)
KEY = {"originalTransaction": "__acid_writeid", "bucket": "__acid_bucket",
       "rowId": "__acid_rowid"}


@dataclass(frozen=True)
class Scan:
    """Data files of one partition whose row columns have the same names and types."""

    files: tuple[str, ...]  # as Spark reads them (URLs)
    names: tuple[str, ...]
    types: tuple[pa.DataType, ...]
    statement: int = 0  # (Hive 2.3's legacy layout: of the files' directory, for the merge)


@dataclass(frozen=True)
class Part:
    values: tuple[tuple[str, Any], ...]  # each partition column and its typed value
    scans: tuple[Scan, ...]
    deletes: tuple[str, ...]  # its delete deltas' files
    row_names: tuple[str, ...] | None  # the names the table gives the row columns
    rows: int = 0
    delete_masks: int = 0
    plain: bool = False  # an insert-only table's: rows, not events
    legacy: bool = False  # Hive 2.3's layout without split-update: a row's latest event wins
    # (min, max) of the delete events' originalTransaction, bucket and rowId, by the files'
    # statistics (None: a file gives none)
    delete_ranges: tuple[tuple[int, int], ...] | None = None


# Measured (benchmarks/bench_spark_read.py, 10M rows, local[2]): the delete step costs Spark's
# plan about 0.06 us a row (the join's probe) and 1.2 us a mask of deleted row ids (their
# scan, masks and broadcast), the source's merge about 0.17 us a row over Spark's scan: past
# about one mask in ten rows the source reads a table sooner.
DELETES_PAST = 0.10
# A scan (and a delete scan) per partition: planning costs the driver about 0.1 s a partition.
PARTITIONS_PAST = 200


@dataclass(frozen=True)
class NativePlan:
    schema: pa.Schema  # the DataFrame's, as the source would give it
    parts: tuple[Part, ...]
    ids: IdList
    partition_columns: tuple[str, ...]
    rows: int = 0  # the data files' events (their footers' counts)
    delete_masks: int = 0  # at most (``_masks``)

    def slower(self) -> str | None:
        """Why the ``hiveacid`` source would read this sooner (None: it would not)."""
        if len(self.parts) > PARTITIONS_PAST:
            return (f"{len(self.parts)} partitions (Spark's plan holds a scan of each: the "
                    "driver plans for about 0.1 s a partition)")
        if self.delete_masks > DELETES_PAST * max(self.rows, 1):
            masks = f"{self.delete_masks:,} mask" + ("s" if self.delete_masks > 1 else "")
            return (f"its deletes make up to {masks} of 64 row ids for {self.rows:,} rows: "
                    f"past {DELETES_PAST:.0%}, the source's per-bucket merge is faster than "
                    "Spark's join")
        return None


def native_plan(plan: ReadPlan) -> NativePlan | str:
    """The plan Spark's own operators can run, or why the ``hiveacid`` source reads this one."""
    readers: dict[int, PartitionReader] = {}
    for unit in plan.units:
        readers.setdefault(id(unit.reader), unit.reader)
    parts = []
    ids = None
    for r in readers.values():
        part = _part(r, plan)
        if isinstance(part, str):
            return part
        ids = r.ids
        if part.scans:
            parts.append(part)
    keys = tuple(plan.partition_types) or tuple(
        k for r in list(readers.values())[:1] for k, _ in partition_values(r.part.partition))
    return NativePlan(plan.schema, tuple(parts), ids if ids is not None else IdList(), keys,
                      sum(p.rows for p in parts), sum(p.delete_masks for p in parts))


def _part(r: PartitionReader, plan: ReadPlan) -> Part | str:
    legacy = r.legacy and not r.snapshot.insert_only
    buckets = {} if r.snapshot.insert_only else r.bucket_files()
    if legacy:
        why = _legacy_unfit(r, buckets)
        if why:
            return why
    if not (r.part.location.is_local or r.part.location.url.startswith("hdfs://")):
        return f"files on {r.part.location.url.split(':', 1)[0]}, reached through fsspec"
    listed = {p.path for p in r.part.listing.paths if not p.is_dir}
    if r.snapshot.insert_only:
        data, dels = r.insert_only_files(), []
        unfit = _unfit_plain
    else:
        data = [rel for b in sorted(buckets.values()) for rel in b[0]]
        dels = [rel for b in sorted(buckets.values()) for rel in b[1]]
        unfit = _unfit
    footers = {rel: r.footer(rel) for rel in data + dels}  # one read each, used below
    shapes: dict[tuple, list[str]] = {}
    for rel in data + dels:
        why = unfit(r, rel, footers[rel], listed)
        if why:
            return why
    for rel in data:
        footer = footers[rel]
        assert footer is not None
        names, orc_types = row_shape(footer)
        try:
            types = tuple(_arrow_type(t) for t in orc_types)
        except Exception:  # a type acidtool's Arrow reading maps and this one does not
            return f"a row column type Spark's ORC reader is not asked for here ({rel})"
        if not names:
            return f"a file whose row has no columns ({rel})"
        statement = _statement(r, rel) if legacy else 0
        shapes.setdefault((tuple(names), types, statement), []).append(
            r.part.location.url_of(rel))
    values = tuple((k, typed(v, plan.partition_types.get(k, pa.string())))
                   for k, v in partition_values(r.part.partition))
    scans = tuple(Scan(tuple(files), names, types, statement)
                  for (names, types, statement), files in shapes.items())
    return Part(values, scans, tuple(r.part.location.url_of(rel) for rel in dels),
                tuple(r.row_names) if r.row_names else None,
                sum(getattr(footers[rel], "rows", 0) for rel in data),
                sum(_masks(footers[rel]) for rel in dels), plain=r.snapshot.insert_only,
                delete_ranges=_ranges([footers[rel] for rel in dels]), legacy=legacy)


def _legacy_unfit(r: PartitionReader, buckets: dict) -> str | None:
    """Why Hive 2.3's merge of this partition is not one latest-event-wins over all its
    events: a file outside a base or delta (Hive merges each original file with its bucket's
    deltas as a split of its own), or two base files of one bucket (two splits)."""
    seen = set()
    for bucket, (data, _) in buckets.items():
        for rel in data:
            entry = r.state.entry(rel.split("/", 1)[0]) if "/" in rel else None
            if entry is None:
                return f"Hive 2.3's legacy layout with original files ({rel})"
            if entry.kind == "base":
                if bucket in seen:
                    return f"Hive 2.3's legacy layout with two base files of bucket {bucket}"
                seen.add(bucket)
    return None


def _statement(r: PartitionReader, rel: str) -> int:
    """The statement id of a file's directory (Hive 2.3's merge breaks ties by it)."""
    parsed = r.state.entry(rel.split("/", 1)[0]).parsed
    return max(parsed.statement_id, 0) if parsed is not None else 0


def _key_ranges(footer) -> tuple[tuple[int, int] | None, ...]:
    """The (min, max) statistics of an event file's originalTransaction, bucket and rowId
    (None where it gives none)."""
    top = footer.top_level()
    return footer.int_ranges((top[1][1], top[2][1], top[3][1]))


def _ranges(footers: list) -> tuple[tuple[int, int], ...] | None:
    """The (min, max) of originalTransaction, bucket and rowId over delete delta files, by
    their statistics (None: one of them gives none)."""
    out: list[tuple[int, int]] = []
    for footer in footers:
        if footer is None or not footer.rows:
            continue
        found = [f for f in _key_ranges(footer) if f is not None]
        if len(found) < 3:
            return None
        out = [(min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(out, found)] if out \
            else found
    return tuple(out) if out else None


def _masks(footer) -> int:
    """How many masks of 64 row ids (``_deletes``) a delete delta's file makes at most: one an
    event, and no more than its row ids' span in 64s for each write id it names (by its
    statistics)."""
    if footer is None or not footer.rows:
        return 0
    writes, _, row_ids = _key_ranges(footer)
    if writes is None or row_ids is None:
        return footer.rows
    blocks = (row_ids[1] >> _BITS) - (row_ids[0] >> _BITS) + 1
    return min(footer.rows, blocks * (writes[1] - writes[0] + 1))


def _unfit_plain(r: PartitionReader, rel: str, footer, listed: set[str]) -> str | None:
    """Why Spark's ORC reader cannot read an insert-only table's file as it is."""
    if footer is None:
        return f"an insert-only table's Parquet or text files ({rel})"
    if footer_is_acid(footer):
        return f"a file of ACID events in an insert-only table ({rel})"
    return None


def _unfit(r: PartitionReader, rel: str, footer, listed: set[str]) -> str | None:
    """Why Spark's ORC reader cannot take this file's events (its ``footer``) as they are
    (None: it can)."""
    if rel + FLUSH_LENGTH_SUFFIX in listed:
        return f"a delta a streaming writer has open ({rel} has a _flush_length file)"
    if footer is None:
        return f"a file that is not readable ORC ({rel})"
    if not footer_is_acid(footer):
        return f"original or LOAD DATA files, read with synthetic ROW__IDs ({rel})"
    top = footer.top_level()
    if tuple(footer.type_string(c) for _, c in top[:5]) != EVENT_TYPES or \
            footer.types[top[5][1]].kind != "struct":
        return f"a file whose event columns are not Hive's types ({rel})"
    return _misplaced(r, rel, footer)


def _misplaced(r: PartitionReader, rel: str, footer) -> str | None:
    """Why the join over the whole partition could match other rows than Hive's, which
    applies a delete delta's file to the data files of its bucket (by name): a file whose
    rows' bucket property (by its statistics) is not its name's bucket, or says nothing."""
    from ..core.bucket import BucketCodecError, decode
    from ..core.names import parse_bucket_id

    ranges = event_ranges(footer)
    if not footer.rows:
        return None
    if ranges is None or ranges[2] is None:
        return f"a file without statistics of its bucket column ({rel})"
    try:
        named = parse_bucket_id(rel.rsplit("/", 1)[-1], r.version)[0]
        low, high = (decode(v) for v in ranges[2])
    except (ValueError, BucketCodecError):
        named, low, high = -1, None, None
    if low is None or high is None or not named == low.bucket_id == high.bucket_id or \
            low.codec_version != high.codec_version:
        return (f"rows whose bucket property is not their file's bucket ({rel}): Hive "
                "matches a delete delta's file to its bucket's data files")
    return None


@functools.lru_cache(maxsize=None)
def _arrow_type(orc_type: str) -> pa.DataType:
    from ..io.arrowtypes import orc_type_to_arrow

    return orc_type_to_arrow(orc_type)


# ------------------------------------------------------------------------------------------------
# The DataFrame


def to_frame(spark, plan: NativePlan):
    """The DataFrame of the plan, built of Spark's own operators. (Expressions are SQL text:
    one call into Spark's JVM each, where building them of Column objects costs one per
    operator, a second per partition of a wide table.)"""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    target = from_arrow_schema(plan.schema)
    frames = []
    for part in plan.parts:
        rows = _union([_scan(spark, s, part, plan, target) for s in part.scans])
        if part.legacy:
            rows = _latest(rows)
        if part.deletes:
            rows = rows.join(F.broadcast(_deletes(spark, part, plan.ids)),
                             _keys(part), "left_outer").where(_NOT_DELETED)
        frames.append(rows.select(*_output(part, plan, target)))
    if not frames:
        return spark.createDataFrame([], target)
    return _union(frames)


def _latest(events):
    """Hive 2.3's merge: of each row's events (by its ROW__ID) the one of the highest
    currentTransaction, then statement id, wins; a row whose winner is a delete is gone."""
    order = ("row_number() OVER (PARTITION BY __acid_writeid, __acid_bucket, __acid_rowid "
             "ORDER BY __acid_current DESC, __acid_statement DESC) AS __acid_n")
    return events.selectExpr("*", order).where("__acid_n = 1 AND __acid_op <> 2")


def _union(frames: list):
    """One DataFrame of many, unioned as a balanced tree (a plan thousands of partitions
    deep would take Spark's analyser as long)."""
    while len(frames) > 1:
        frames = [a.union(b) if b is not None else a
                  for a, b in zip(frames[::2], frames[1::2] + [None])]
    return frames[0]


def _event_schema(row):
    from pyspark.sql.types import IntegerType, LongType, StructField, StructType

    kinds = (IntegerType(), LongType(), IntegerType(), LongType(), LongType())
    return StructType([StructField(n, t) for n, t in zip(EVENTS, kinds)]
                      + [StructField("row", row)])


def _q(name: str) -> str:
    """A name quoted for Spark SQL."""
    return "`" + name.replace("`", "``") + "`"


def _always(column: str) -> str:
    """A test that holds for every value, null or not, that Spark keeps: the column is read."""
    return f"({column} IS NULL OR {column} IS NOT NULL)"


def _events_filter(operation: int | None, ids: IdList, row: str) -> str:
    """The events of one kind (None: of every kind) whose currentTransaction the snapshot sees
    (isWriteIdValid: a null is not valid), each event column (and ``row`` by ``row``)
    touched."""
    test = [f"operation = {operation}" if operation is not None else _always("operation"),
            "currentTransaction IS NOT NULL"]
    if ids.high_watermark < LONG_MAX:
        test.append(f"currentTransaction <= {ids.high_watermark}")
    if ids.exceptions:
        test.append(f"currentTransaction NOT IN ({', '.join(map(str, ids.exceptions))})")
    test += [_always(name) for name in KEY] + [_always(row)]
    return " AND ".join(test)


def _scan(spark, scan: Scan, part: Part, plan: NativePlan, target):
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import StructField, StructType

    row = StructType([StructField(n, from_arrow_type(t)) for n, t in zip(scan.names, scan.types)])
    if part.plain:  # an insert-only table's files: the rows themselves, every one read
        events, prefix, columns = spark.read.schema(row).orc(list(scan.files)), "", []
    else:
        events = spark.read.schema(_event_schema(row)).orc(list(scan.files))
        events = events.where(_events_filter(None if part.legacy else 0, plan.ids,
                                             f"row.{_q(scan.names[0])}"))
        prefix = "row."
        columns = [F.expr(f"{old} AS {new}") for old, new in KEY.items()]
        if part.legacy:  # what the merge orders and judges by
            columns += [F.expr("operation AS __acid_op"),
                        F.expr("currentTransaction AS __acid_current"),
                        F.expr(f"{scan.statement} AS __acid_statement")]
        if part.deletes:
            columns += [F.expr(c) for c in _key_columns(part, rows=True)]
    # the file's row columns by the names the table gives them (by position when there are
    # as many, as acidtool read does), each cast to the DataFrame's type
    names = part.row_names if part.row_names and len(part.row_names) == len(scan.names) \
        else scan.names
    by_name = dict(zip(names, scan.names))
    for field in _row_fields(plan, target):
        value = F.expr(f"{prefix}{_q(by_name[field.name])}") if field.name in by_name \
            else F.lit(None)
        columns.append(value.cast(field.dataType).alias(field.name))
    return events.select(*columns)


def _row_fields(plan: NativePlan, target) -> list:
    """The DataFrame's row columns (not the ROW__ID, not the partition columns)."""
    skip = set(plan.partition_columns) | {"ROW__ID"}
    return [f for f in target.fields if f.name not in skip]


# The delete step: each delete event is a bit of a mask of 64 consecutive row ids of one
# (originalTransaction, bucket); the masks, not the events, are broadcast and joined (left
# outer, a row meeting at most one mask), and a row whose bit is set is left out. Hive's
# writers number a delta's rows 0, 1, 2...: a DELETE of many rows of a write leaves several
# bits a mask, and Spark's broadcast, which costs by the entry, costs that much less. Where
# the delete files' statistics bound the three keys in 62 bits, the key is one bigint (a
# row outside the bounds gets none: no delete names it), which Spark's hash join takes
# fastest (LongHashedRelation). Measured with a delete event every tenth row (6.4 a mask):
# 2.37x a plain read for an anti join of the events, 1.85x for the masks, 1.45-1.65x with
# the one-bigint key.
_BITS = 6
_GROUP = ("__acid_writeid", "__acid_bucket", "__acid_block")
_NOT_DELETED = (f"__acid_mask IS NULL OR (shiftright(__acid_mask, CAST(pmod(__acid_rowid, "
                f"{1 << _BITS}) AS INT)) & 1) = 0")


def _packed(part: Part) -> str | None:
    """The one-bigint key of an event, as SQL over its columns (None: the statistics do not
    bound the keys in 62 bits)."""
    if part.delete_ranges is None:
        return None
    (w0, w1), (b0, b1), (r0, r1) = part.delete_ranges
    k0, k1 = r0 >> _BITS, r1 >> _BITS
    nb, nk = b1 - b0 + 1, k1 - k0 + 1
    if (w1 - w0 + 1) * nb * nk >= 1 << 62:
        return None
    # (each expression once: Spark 4 makes a repeated one a column of its own, passing
    # `row` whole beside it, and the scan would read all of `row`)
    return (f"CASE WHEN originalTransaction >= {w0} AND originalTransaction <= {w1} AND "
            f"bucket >= {b0} AND bucket <= {b1} AND rowId >= {k0 << _BITS} AND "
            f"rowId <= {(k1 << _BITS) | ((1 << _BITS) - 1)} THEN ((originalTransaction - {w0})"
            f" * {nb} + (CAST(bucket AS BIGINT) - {b0})) * {nk} + (shiftright(rowId, {_BITS})"
            f" - {k0}) END")


def _keys(part: Part) -> list[str]:
    """The names of the columns the rows and the masks are joined on."""
    return ["__acid_key"] if _packed(part) else list(_GROUP)


def _key_columns(part: Part, rows: bool = False) -> list[str]:
    """The join's key columns as SQL over an event's columns (for the ``rows`` side, those
    its ``KEY`` columns are not already)."""
    packed = _packed(part)
    if packed:
        return [f"{packed} AS __acid_key"]
    ids = [] if rows else [f"originalTransaction AS {_GROUP[0]}", f"bucket AS {_GROUP[1]}"]
    return ids + [f"shiftright(rowId, {_BITS}) AS {_GROUP[2]}"]


def _deletes(spark, part: Part, ids: IdList):
    """The delete events' masks: the key of 64 row ids of a (writeid, bucket), the mask of
    its deleted row ids."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    events = spark.read.schema(_event_schema(StructType([]))).orc(list(part.deletes))
    keys = events.where(_events_filter(2, ids, "row")).selectExpr(
        *_key_columns(part),
        f"shiftleft(1L, CAST(pmod(rowId, {1 << _BITS}) AS INT)) AS __acid_bit")
    return keys.groupBy(*_keys(part)).agg(F.expr("bit_or(__acid_bit) AS __acid_mask"))


def _output(part: Part, plan: NativePlan, target) -> list:
    from pyspark.sql import functions as F

    values = dict(part.values)
    # a column every row has, for a test that always holds (below)
    fields = _row_fields(plan, target)
    anchor = KEY["rowId"] if not part.plain else _q(fields[0].name) if fields else None
    out = []
    for field in target.fields:
        if field.name == "ROW__ID":
            value = "named_struct('writeid', {}, 'bucketid', {}, 'rowid', {})".format(
                *KEY.values())
        elif field.name in values:
            value = _literal(values[field.name])
        else:
            out.append(F.col(_q(field.name)))  # (cast already)
            continue
        # a literal or a struct Spark makes is never null; the source's columns may be: the
        # same schema through a CASE whose test always holds
        column = F.expr(f"CASE WHEN {_always(anchor)} THEN {value} END" if anchor else value)
        out.append(column.cast(field.dataType).alias(field.name))
    return out


def _literal(value: Any) -> str:
    """A partition value as Spark SQL text (cast to the column's type after)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value.isoformat(sep=" ") if hasattr(value, "hour") else str(value)
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
