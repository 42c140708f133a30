"""Reading a stripe with pyorc when pyarrow cannot: timestamps outside Arrow's nanosecond range.

Timestamps arrive as (seconds, nanoseconds) and leave as their ``java.sql.Timestamp`` text, dates as
day numbers; the result is an Arrow batch whose timestamp columns are strings.
"""

from __future__ import annotations

import pyarrow as pa
import pyorc
from pyorc.enums import TypeKind

from ..core.javafmt import java_timestamp
from .orc import OrcSource


class _Timestamp:
    @staticmethod
    def from_orc(seconds, nanoseconds, timezone):
        return java_timestamp(seconds, nanoseconds)

    @staticmethod
    def to_orc(*args):  # pragma: no cover - reading only
        raise NotImplementedError


class _Date:
    @staticmethod
    def from_orc(days):
        return days

    @staticmethod
    def to_orc(*args):  # pragma: no cover - reading only
        raise NotImplementedError


def _arrow_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _arrow_type(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(_arrow_type(t.key_type), _arrow_type(t.item_type))
    if pa.types.is_list(t):
        return pa.list_(_arrow_type(t.value_type))
    return t


def _convert(value, t: pa.DataType):
    if value is None:
        return None
    if pa.types.is_struct(t):
        return {f.name: _convert(v, f.type) for f, v in zip(t, value)}
    if pa.types.is_map(t):
        return [(_convert(k, t.key_type), _convert(v, t.item_type)) for k, v in value.items()]
    if pa.types.is_list(t):
        return [_convert(v, t.value_type) for v in value]
    return value


def read_stripe_java_timestamps(src: OrcSource, index: int) -> pa.RecordBatch:
    raw = src.reopen_bytes()
    import io

    converters: dict = {TypeKind.TIMESTAMP: _Timestamp, TypeKind.DATE: _Date}
    reader = pyorc.Reader(io.BytesIO(raw), converters=converters,
                          struct_repr=pyorc.StructRepr.TUPLE)
    rows = list(reader.read_stripe(index))
    schema = src.file.schema
    arrays = []
    for i, fld in enumerate(schema):
        target = _arrow_type(fld.type)
        values = [_convert(r[i], fld.type) for r in rows]
        if pa.types.is_date32(target):
            arrays.append(pa.array(values, pa.int32()).cast(pa.date32()))
        else:
            arrays.append(pa.array(values, target))
    return pa.RecordBatch.from_arrays(arrays, names=schema.names)
