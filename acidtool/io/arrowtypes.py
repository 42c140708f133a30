"""Hive's ORC column types (as a footer or a metastore spells them) as Arrow types."""

from __future__ import annotations

import functools

import pyarrow as pa

from ..core.errors import UsageError
from ..core.orctypes import TypeStringError, canonical, split_top, struct_fields

ORC_TO_ARROW = {
    "boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(),
    "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(), "string": pa.string(),
    "binary": pa.binary(), "date": pa.date32(), "timestamp": pa.timestamp("ns"),
}

@functools.lru_cache(maxsize=1024)  # (a table's files spell the same few types)
def orc_type_to_arrow(text: str) -> pa.DataType:
    t = canonical(text)
    if t in ORC_TO_ARROW:
        return ORC_TO_ARROW[t]
    if t.startswith(("varchar(", "char(")):
        return pa.string()
    if t.startswith("decimal("):
        precision, scale = (int(x) for x in t[len("decimal("):-1].split(","))
        return pa.decimal128(precision, scale)
    if t.startswith("array<"):
        return pa.list_(orc_type_to_arrow(t[len("array<"):-1]))
    if t.startswith("struct<"):
        return pa.struct([pa.field(n, orc_type_to_arrow(ft)) for n, ft in struct_fields(t)])
    if t.startswith("map<"):
        try:
            key, value = split_top(t[len("map<"):-1])
        except (TypeStringError, ValueError):  # unbalanced, or not two types
            pass
        else:
            return pa.map_(orc_type_to_arrow(key), orc_type_to_arrow(value))
    raise UsageError(f"unsupported column type {text!r}")
