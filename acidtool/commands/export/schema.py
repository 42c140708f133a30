"""Hive's rows as an Iceberg table holds them (``export --to iceberg``): the types Hive's own
Iceberg integration maps Hive's to, and the column that keeps each row's identity in Hive."""

from __future__ import annotations

import pyarrow as pa

from ...core.errors import UsageError

ROW_ID = "_hive_row_id"  # Hive's ROW__ID (writeid, bucketid, rowid)
FILE_KEY = "_hive_file"  # an insert-only table's data file, relative to the table
EVENT = "__event"  # a row's event transaction, while an incremental export reads




def rows_schema(read_schema: pa.Schema, insert_only: bool) -> pa.Schema:
    """The Arrow schema of the rows an export writes: ROW__ID as ``_hive_row_id`` (or, for an
    insert-only table, ``_hive_file``) first, then the columns as Iceberg types them."""
    fields = []
    for f in read_schema:
        if f.name == "ROW__ID":
            fields.append(pa.field(ROW_ID, f.type))
            continue
        if f.name in (ROW_ID, FILE_KEY):
            raise UsageError(f"the table has a column named {f.name}, the name the export "
                             "gives each row's Hive identity")
        fields.append(pa.field(f.name, iceberg_type(f.type, f.name)))
    if insert_only:
        fields.insert(0, pa.field(FILE_KEY, pa.string()))
    return pa.schema(fields)


def iceberg_type(t: pa.DataType, where: str) -> pa.DataType:
    """As Iceberg's HiveSchemaConverter: tinyint and smallint become int (Iceberg has no
    smaller integer); char, varchar and string, string; timestamp a timestamp without zone
    (Iceberg keeps microseconds); decimal, date, binary, boolean, float, double as they are;
    arrays, maps and structs of these. A union has no Iceberg type."""
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_uint8(t) or \
            pa.types.is_uint16(t):
        return pa.int32()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(i).name,
                                   iceberg_type(t.field(i).type, f"{where}.{t.field(i).name}"))
                          for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(iceberg_type(t.key_type, f"{where}.key"),
                       iceberg_type(t.item_type, f"{where}.value"))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(iceberg_type(t.value_type, f"{where}.element"))
    if pa.types.is_union(t):
        raise UsageError(f"column {where}: a Hive uniontype has no Iceberg type (Hive's own "
                         "Iceberg integration refuses it too)")
    return t


def conform(t: pa.Table, schema: pa.Schema, truncate: bool) -> pa.Table:
    """``t`` (read's columns) as ``schema`` types them; a timestamp with nanoseconds that
    microseconds cannot hold is refused unless ``truncate``."""
    if "ROW__ID" in t.column_names:
        t = t.rename_columns([ROW_ID if n == "ROW__ID" else n for n in t.column_names])
    extra = [n for n in t.column_names if n == EVENT]
    target = pa.schema(list(schema) + [pa.field(EVENT, pa.int64())] * len(extra))
    try:
        return t.select(target.names).cast(target, safe=not truncate)
    except pa.ArrowInvalid as exc:
        if "would lose data" in str(exc) or "truncat" in str(exc).lower():
            raise UsageError(f"a timestamp holds nanoseconds, and Iceberg keeps microseconds "
                             f"({exc}); give --truncate-timestamps to drop them") from None
        raise
