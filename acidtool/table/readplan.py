"""Reading through the ``hiveacid`` source: the plan made on the driver, one Spark input
partition per unit of work, Arrow batches out.

The plan is ``acidtool read``'s: the table listed once, getAcidState per partition, and the
units ``PartitionReader.units`` gives (a split-update bucket, an insert-only file, a Hive 2.3
legacy partition). Each input partition carries its own partition's reader and unit, so a task
receives only what it reads. Partition columns are typed as the metastore says (strings without
one, Hive's ``__HIVE_DEFAULT_PARTITION__`` a null). Partitions are pruned before any file is
opened: by the ``partitions`` option, and by the filters Spark pushes on partition columns.
"""

from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import pyarrow as pa

from ..core.errors import AcidToolError, UsageError
from ..io.arrowtypes import orc_type_to_arrow
from ..io.orc import ACID_COLUMNS
from .options import ReadOptions
from .read import PartitionReader, partition_values
from .rownames import row_named
from .snapshot import Snapshotted, Table

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


@dataclass(frozen=True)
class Unit:
    """One Spark task's work: a unit of one partition, and that partition's typed values."""

    reader: PartitionReader
    unit: tuple[str, Any]
    values: tuple[tuple[str, Any], ...]  # (partition column, its value) each


@dataclass
class ReadPlan:
    options: ReadOptions
    schema: pa.Schema  # what the units yield, partition columns typed
    units: list[Unit]
    partition_types: dict[str, pa.DataType]

    def partitions(self) -> list[str]:
        return sorted({u.reader.part.partition for u in self.units})


def plan_read(options: ReadOptions, *, with_schema: bool = True) -> ReadPlan:
    """The read's units (and, ``with_schema``, its Arrow schema, from one data file's footer;
    a reader given the schema opens no file before its tasks do)."""
    o = options
    snap: Snapshotted = Table(o.path, o.metastore).snapshot(
        o.write_ids, o.txns, o.hive_version, table=o.table, with_row_id=o.with_row_id,
        columns=list(o.columns) or None, insert_only=o.insert_only)
    readers = snap.readers()
    insert_only = snap.table.snapshot.insert_only
    if o.partitions:
        have = {r.part.partition for r in readers}
        unknown = [p for p in o.partitions if p not in have]
        if unknown:
            raise UsageError(f"hiveacid: option partitions: no partition {unknown[0]!r} in "
                             f"{o.path} (it has {', '.join(sorted(have)[:5]) or 'none'})")
        readers = [r for r in readers if r.part.partition in o.partitions]
    types = {name: orc_type_to_arrow(hive) for name, hive in snap.partition_keys}
    schema = output_schema(readers, insert_only) if with_schema else pa.schema([])
    schema = pa.schema([pa.field(f.name, types[f.name]) if f.name in types else f
                        for f in schema])
    units: list[Unit] = []
    for r in readers:
        values = tuple((k, typed(v, types.get(k, pa.string())))
                       for k, v in partition_values(r.part.partition))
        units.extend(Unit(r, unit, values) for unit in r.units())
    return ReadPlan(o, schema, units, types)


def typed(value: str, t: pa.DataType) -> Any:
    """A partition value from its directory name, as a value of the column's type."""
    if value == DEFAULT_PARTITION:
        return None
    try:
        if pa.types.is_integer(t):
            return int(value)
        if pa.types.is_floating(t):
            return float(value)
        if pa.types.is_decimal(t):
            return decimal.Decimal(value)
        if pa.types.is_boolean(t):
            return value.strip().lower() == "true"
        if pa.types.is_date(t):
            return datetime.date.fromisoformat(value)
        if pa.types.is_timestamp(t):
            return datetime.datetime.fromisoformat(value)
    except ValueError:
        return None  # Hive reads a value its type cannot hold as null
    return value


def output_schema(readers: Sequence[PartitionReader], insert_only: bool) -> pa.Schema:
    """The Arrow schema of what the readers yield, from the first data file's footer (no rows
    read): an empty batch of its row type through the reader's own output."""
    from ..io.orc import open_orc
    from ..io.plain import plain_schema

    def candidates(reader: PartitionReader) -> Iterator[tuple[str, bool]]:
        """The files the snapshot reads, the one with the most row columns first (Hive adds
        columns at the end and reads files by position: after ALTER TABLE ... ADD COLUMNS the
        older files lack the new columns, which read as nulls); then, for a snapshot that
        reads none (every write id aborted or open), any data file of a base or delta,
        unreadable ones passed over (an aborted write's may be half written)."""
        files = widths[id(reader)]
        yield from ((rel, True) for rel in sorted(files, key=lambda r: -files[r]))
        for e in reader.part.state.entries:
            if e.kind in ("base", "delta"):
                yield from ((f"{e.name}/{f.path}", False) for f in e.files if not f.is_dir
                            and not f.path.startswith(("_", ".")) and "/" not in f.path
                            and not f.path.endswith("_flush_length"))

    # each data file's count of row columns, from its footer, once
    widths = {id(r): {rel: _width(r, rel) for rel in r.data_files()} for r in readers}
    for reader in sorted(readers, key=lambda r: (not widths[id(r)],
                                                  -max(widths[id(r)].values(), default=-1))):
        for rel, read in candidates(reader):
            try:
                if insert_only:
                    row = pa.struct(list(plain_schema(reader.part.location, rel)))
                else:
                    arrow = open_orc(reader.part.location, rel).file.schema
                    row = arrow.field("row").type if list(arrow.names) == list(ACID_COLUMNS) \
                        else pa.struct(list(arrow))
            except AcidToolError:
                if read:
                    raise
                continue
            empty = row_named(pa.array([], row), reader.row_names)
            events = pa.RecordBatch.from_arrays(
                [pa.array([], pa.int64()), pa.array([], pa.int32()), pa.array([], pa.int64()),
                 empty], names=["originalTransaction", "bucket", "rowId", "row"])
            return reader.output(events).schema
    fields = [("ROW__ID", pa.struct([("writeid", pa.int64()), ("bucketid", pa.int32()),
                                     ("rowid", pa.int64())]))] if readers and \
        readers[0].with_row_id else []
    return pa.schema(fields)


def _width(reader: PartitionReader, rel: str) -> int:
    """How many row columns a data file holds, from its footer (0 when unreadable)."""
    if reader.snapshot.insert_only:
        return 0  # (plain files: the first one read gives the columns)
    shape = reader.row_shape(rel)
    return len(shape[0]) if shape is not None else 0


def typed_as(unit: Unit, schema: pa.Schema) -> Unit:
    """The unit with its partition values typed as ``schema`` (Spark's, perhaps the user's
    own) types those columns."""
    names = set(schema.names)
    values = tuple((k, typed(v, schema.field(k).type) if k in names else v)
                   for k, v in partition_values(unit.reader.part.partition))
    return Unit(unit.reader, unit.unit, values)


def unit_batches(unit: Unit, target: pa.Schema) -> Iterator[pa.RecordBatch]:
    """A unit's rows as batches of ``target`` (Spark's Arrow form of the output schema)."""
    types = dict(unit.values)
    for t in unit.reader.unit_tables(unit.unit):
        for name, value in types.items():  # typed partition columns, not the path's strings
            if name in t.column_names:
                i = t.column_names.index(name)
                kind = target.field(name).type
                t = t.set_column(i, name, pa.nulls(t.num_rows, kind) if value is None else
                                 pa.repeat(pa.scalar(value, kind), t.num_rows))
        for f in target:  # a column added since this file was written reads as nulls
            if f.name not in t.column_names:
                t = t.append_column(f.name, pa.nulls(t.num_rows, f.type))
        t = t.select(target.names).cast(target, safe=False)
        yield from t.to_batches()


# ------------------------------------------------------------------------------------------------
# Pruning: the filters Spark pushes, on partition columns only


class _CannotJudge(Exception):
    pass


def keeps(filter_, values: dict[str, Any]) -> bool | None:
    """Whether a partition whose columns hold ``values`` passes ``filter_`` (a
    ``pyspark.sql.datasource`` filter: SQL's three-valued logic, a null comparison is not
    true, nor is its negation); None when the filter is not on one partition column or cannot
    be judged from the values (Spark applies it then)."""
    try:
        return _truth(filter_, values) is True
    except _CannotJudge:
        return None


def _truth(filter_, values: dict[str, Any]) -> bool | None:
    """True, False, or None for SQL's null (unknown)."""
    kind = type(filter_).__name__
    if kind == "Not":
        inner = _truth(filter_.child, values)
        return None if inner is None else not inner
    attribute = getattr(filter_, "attribute", None)
    if attribute is None or len(attribute) != 1 or attribute[0] not in values:
        raise _CannotJudge
    v = values[attribute[0]]
    if kind == "IsNull":
        return v is None
    if kind == "IsNotNull":
        return v is not None
    want: Any = getattr(filter_, "value", None)
    if kind == "EqualNullSafe":
        return v == want
    if v is None:
        if kind in _COMPARISONS or kind == "In":
            return None
        raise _CannotJudge
    try:
        if kind == "In":
            return True if v in want else (None if None in want else False)
        if kind in _COMPARISONS:
            return None if want is None else bool(_COMPARISONS[kind](v, want))
    except TypeError:
        raise _CannotJudge from None
    raise _CannotJudge


_COMPARISONS = {
    "EqualTo": lambda v, w: v == w, "GreaterThan": lambda v, w: v > w,
    "GreaterThanOrEqual": lambda v, w: v >= w, "LessThan": lambda v, w: v < w,
    "LessThanOrEqual": lambda v, w: v <= w,
    "StringStartsWith": lambda v, w: str(v).startswith(w),
    "StringEndsWith": lambda v, w: str(v).endswith(w),
    "StringContains": lambda v, w: w in str(v),
}


def prune(units: list[Unit], filters: list) -> tuple[list[Unit], list]:
    """The units of the partitions that every filter judged here keeps, and the filters left
    for Spark: a filter is judged here only when it can be, for every partition."""
    left = []
    kept = list(units)
    for f in filters:
        verdicts = [keeps(f, dict(u.values)) for u in units]
        if not units or any(v is None for v in verdicts):
            left.append(f)
            continue
        kept = [u for u, v in zip(units, verdicts) if v and u in kept]
    return kept, left
