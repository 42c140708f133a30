"""convert's schema mapping: the sources' columns onto the table's (--schema), by name or by
position, with only the casts that lose nothing; and whether they fit the table's own files."""

from __future__ import annotations

import pyarrow as pa

from ...core.errors import AcidToolError, UsageError
from ...core.listing import PathInfo
from ...core.names import Base, files_in_acid_dirs, original_files, parse_dir_name
from ...core.orctypes import TypeStringError, struct_fields
from ...core.versions import HiveVersion
from ...io.arrowtypes import orc_type_to_arrow
from ...io.fs import Location, list_tree
from ...table.rownames import positional_names

# Casts that never lose information (Hive's own schema evolution allows these too).
_WIDER = {
    pa.int8(): {pa.int16(), pa.int32(), pa.int64()},
    pa.int16(): {pa.int32(), pa.int64()},
    pa.int32(): {pa.int64()},
    pa.float32(): {pa.float64()},
}




def _castable(src: pa.DataType, dst: pa.DataType) -> bool:
    if src == dst:
        return True
    if dst in _WIDER.get(src, set()):
        return True
    if pa.types.is_integer(src) and pa.types.is_decimal(dst):
        return dst.precision - dst.scale >= {8: 3, 16: 5, 32: 10, 64: 19}[src.bit_width]
    if pa.types.is_decimal(src) and pa.types.is_decimal(dst):
        return dst.scale >= src.scale and dst.precision - dst.scale >= src.precision - src.scale
    if pa.types.is_timestamp(src) and pa.types.is_timestamp(dst):
        return True
    if pa.types.is_large_string(src) and pa.types.is_string(dst):
        return True
    return False


def map_schema(sources: list, schema: str | None, by_position: bool
               ) -> tuple[pa.Schema, list[tuple[str, str, str]]]:
    """The table's columns and, per column, (table column, source column, cast). Without
    --schema every source must have the first one's schema; with it, each source on its own
    must fit it (by name or position, every cast safe), so an int32 source and an int64 source
    both go into a bigint column."""
    first = sources[0].schema
    if schema is None:
        for s in sources[1:]:
            if s.schema != first:
                raise UsageError(
                    f"sources have different schemas: {sources[0].loc.url} has "
                    f"{first.to_string(show_schema_metadata=False)!r}, {s.loc.url} has "
                    f"{s.schema.to_string(show_schema_metadata=False)!r}; give --schema to "
                    "cast them to the table's columns")
        return first, [(f.name, f.name, "") for f in first]
    try:
        target = pa.schema([pa.field(n, orc_type_to_arrow(t)) for n, t in
                            struct_fields(schema)])
    except TypeStringError as exc:
        raise UsageError(f"--schema: {exc}") from None
    problems: list[str] = []
    mappings = []
    for s in sources:
        found = _fit(s.schema, target, by_position, problems,
                     s.loc.url if len(sources) > 1 else "")
        mappings.append(found)
    if not problems:
        names = {tuple(src for _, src, _ in m) for m in mappings}
        if len(names) > 1:
            problems.append("the sources name their columns differently: "
                            + "; ".join(", ".join(n) for n in sorted(names)))
    if problems:
        raise UsageError("schema does not fit: " + "; ".join(problems))
    mapping = []
    for i, (column, source, _) in enumerate(mappings[0]):
        casts = sorted({m[i][2] for m in mappings if m[i][2]})
        mapping.append((column, source, ", ".join(casts)))
    return target, mapping


def _fit(schema: pa.Schema, target: pa.Schema, by_position: bool, problems: list[str],
         where: str) -> list[tuple[str, str, str]]:
    """One source schema's mapping onto the table's columns; what does not fit goes to
    ``problems``."""
    prefix = f"{where}: " if where else ""
    if by_position:
        if len(target) != len(schema):
            problems.append(f"{prefix}the source has {len(schema)} columns, --schema has "
                            f"{len(target)}" if where else
                            f"the sources have {len(schema)} columns, --schema has "
                            f"{len(target)}")
        pairs = list(zip(target, schema))
    else:
        by_name = {f.name.lower(): f for f in schema}
        pairs = []
        for t in target:
            s = by_name.pop(t.name.lower(), None)
            if s is None:
                problems.append(f"{prefix}column {t.name!r} is missing from the sources")
            else:
                pairs.append((t, s))
        for extra in by_name.values():
            problems.append(f"{prefix}source column {extra.name!r} is not in --schema")
    mapping = []
    for t, s in pairs:
        if not _castable(s.type, t.type):
            problems.append(f"{prefix}column {t.name!r}: {s.type} cannot be cast safely to "
                            f"{t.type}")
        mapping.append((t.name, s.name, "" if s.type == t.type else f"{s.type} -> {t.type}"))
    return mapping


def require_table_fit(table: Location, schema: pa.Schema, version: HiveVersion | None,
                      insert_only: bool, kind_known: bool, listed: list | None = None) -> None:
    """The rows written must be the table's. Its kind (unless ``kind_known``: a metastore's):
    ACID event files (``bucket_N``) in its bases and deltas are a full-ACID table's, plain
    files only an insert-only table's. Its columns: those of its newest data file (the highest
    write id's: the table's after any ALTER TABLE ... ADD COLUMNS), by type, and by name unless
    Hive 2.3 named them by position (``_col0``..). ``listed``: the table's listing, where the
    caller has it already."""
    from ...core.facts import row_shape
    from ...core.names import kind_problem
    from ...io.footers import read_footer

    paths = list_tree(table) if listed is None else listed
    problem = None if kind_known else kind_problem(paths, insert_only)
    if problem:
        raise UsageError(f"{table.url}: {problem}; nothing was written")
    newest = _newest_data_file(paths, version)
    if newest is None:
        return
    facts = read_footer(table, newest.path, newest.size, None)
    if facts.footer is None:
        return  # not readable: validate says why
    names, types = row_shape(facts.footer)
    try:
        arrow = [orc_type_to_arrow(t) for t in types]
    except (TypeStringError, UsageError):
        return  # a type --schema cannot spell: left to validate (ACID019)
    positional = positional_names(names)
    same = len(names) == len(schema) and all(
        a == f.type and (positional or n.lower() == f.name.lower())
        for n, a, f in zip(names, arrow, schema))
    if not same:
        have = ", ".join(f"{n} {t}" for n, t in zip(names, types))
        want = ", ".join(f"{f.name} {f.type}" for f in schema)
        raise UsageError(f"the rows do not fit the table: {table.url}/{newest.path} holds "
                         f"({have}), the sources give ({want}); Hive would read the new delta "
                         "by position in the table's columns. Give --schema with the table's "
                         "columns to cast them (safe casts only), or convert into another "
                         "table; nothing was written")


def _newest_data_file(paths, version: HiveVersion | None) -> PathInfo | None:
    """The data file of the base or insert delta with the highest write id (of any partition),
    hidden and side files left out; in a table of original files only (converted to ACID,
    nothing written since), its last original file named as Hive names them (``000000_0``)."""
    best: tuple[int, str] | None = None
    found = None
    for p, directory in files_in_acid_dirs(paths):
        try:
            acid = parse_dir_name(directory, version or HiveVersion.V4)
        except AcidToolError:
            continue
        if acid is None or getattr(acid, "delete", False):
            continue
        key = (acid.write_id if isinstance(acid, Base) else acid.max_write_id, p.path)
        if best is None or key > best:
            best, found = key, p
    if found is None:
        found = max(original_files(paths), key=lambda p: p.path, default=None)
    return found
