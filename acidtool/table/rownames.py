"""The names and shape of a table's row columns, by position as Hive reads them: Hive 2.3's
SQL writers name them ``_col0..`` in inserts and ``_col1..`` in updates, and a DELETE's row may
have fewer fields."""

from __future__ import annotations

import re
from typing import Iterable, Sequence

import pyarrow as pa


def row_named(row: pa.Array, names: Sequence[str] | None) -> pa.Array:
    """``row`` with its fields renamed by position to ``names`` (when it has as many)."""
    if names is None or not pa.types.is_struct(row.type) or row.type.num_fields != len(names) \
            or [f.name for f in row.type] == list(names):
        return row
    fields = [row.type.field(i).with_name(n) for i, n in enumerate(names)]
    return pa.StructArray.from_arrays([row.field(i) for i in range(len(names))], fields=fields,
                                      mask=row.is_null() if row.null_count else None)


def positional_names(names: Sequence[str]) -> bool:
    """Names a Hive 2.3 SQL writer gave (``_col0``, ``_col1``...): they say nothing but the
    position."""
    return bool(names) and all(_POSITIONAL.fullmatch(n) for n in names)


_POSITIONAL = re.compile(r"_col\d+")


def row_names_of(layouts: Iterable[list[str]]) -> list[str] | None:
    """The names a table's row columns take in every output, from the files' own: the first real
    names met, else ``_col0.._colN-1`` whichever positional names the files have (so a snapshot
    that reads only UPDATE files, ``_col1..``, shows the same columns as one that reads INSERT
    files)."""
    first = None
    for names in layouts:
        if not positional_names(names):
            return list(names)
        first = first or names
    return [f"_col{i}" for i in range(len(first))] if first else None


def conformed(parts: list[pa.Table]) -> list[pa.Table]:
    """Event tables whose ``row`` structs differ (Hive 2.3 names an UPDATE's fields
    ``_col1..`` and gives a DELETE's row fewer fields, or none) made one type, by position as
    Hive reads them: the first table's fields (the first of the most fields: a file written
    after an ALTER TABLE ... ADD COLUMNS has more), each taken from the same position (cast to
    its type when it can be) or null where a file has fewer."""
    types = [p.column("row").type for p in parts]
    target = max(types, key=lambda t: t.num_fields if pa.types.is_struct(t) else -1)
    if all(p.column("row").type == target for p in parts) or not pa.types.is_struct(target):
        return parts
    out = []
    for p in parts:
        row = p.column("row").combine_chunks()
        if row.type != target and pa.types.is_struct(row.type):
            arrays = []
            for i, field in enumerate(target):
                if i < row.type.num_fields:
                    value = row.field(i)
                    try:
                        value = value.cast(field.type) if value.type != field.type else value
                    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                        value = pa.nulls(len(row), field.type) if value.null_count == len(
                            value) else value
                else:
                    value = pa.nulls(len(row), field.type)
                arrays.append(value)
            row = pa.StructArray.from_arrays(arrays, fields=list(target),
                                             mask=row.is_null() if row.null_count else None)
            p = p.set_column(p.schema.get_field_index("row"), "row", row)
        out.append(p)
    return out
