"""The bytes of the files a repair writes, made before any step is taken (repair_apply.py).

A re-wrap goes through convert's own writer; a key index is rebuilt in the footer alone; a
sort rewrites the events with Arrow's ORC writer, and is refused if that would change a
column's type; a streaming file is cut at its last flush."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.orc as paorc

from ...core.errors import AcidToolError, ExitStatus
from ...core.names import ACID_VERSION_FILE
from ...core.orcproto import parse_postscript
from ...core.repair import (
    Action,
    RebuildKeyIndex,
    RecoverStreaming,
    Rewrap,
    SortEvents,
    WriteMarker,
)
from ...core.versions import HiveVersion
from ...io.footers import footer_through_pyarrow
from ...io.fs import Location, read_bytes
from ...io.orcpatch import replace_user_metadata
from ..convert.delta import ConvertOptions, write_files
from ..convert.delta import Plan as ConvertPlan
from ..convert.delta import plan as convert_plan
from ..convert.sources import SOURCES_FILE, record

SORT_KEYS = [("originalTransaction", "ascending"), ("bucket", "ascending"),
             ("rowId", "ascending")]
_POSITIONAL = re.compile(r"_col[0-9]+")


class BuildError(AcidToolError):
    exit_status = ExitStatus.FINDINGS


def new_files(action: Action, plan) -> dict[str, bytes]:
    """File name -> bytes of what ``action`` writes (a re-wrap: its delta's files)."""
    if isinstance(action, Rewrap):
        return rewrapped(action, plan)
    if isinstance(action, WriteMarker):
        return {ACID_VERSION_FILE: b"2"}
    new, _ = rewritten(action, plan)
    return {action.target.rsplit("/", 1)[-1]: new}


def rewritten(action: Action, plan) -> tuple[bytes, bytes]:
    """The new bytes of a file an action rewrites in place, and its old bytes."""
    data = read_bytes(plan.root, action.target)
    if isinstance(action, RebuildKeyIndex):
        return replace_user_metadata(
            data, {"hive.acid.key.index": action.key_index.encode()}), data
    if isinstance(action, SortEvents):
        return sorted_events(data, plan.hive_version), data
    if isinstance(action, RecoverStreaming):
        return data[:action.length], data
    if isinstance(action, WriteMarker):
        return b"2", data
    raise BuildError(f"{action.kind}: nothing to write")


def rewrapped(action: Rewrap, plan) -> dict[str, bytes]:
    """A re-wrap's delta: convert's bucket files, the version marker, and the provenance
    record of its source (``_acidtool_sources``: no later convert or repair takes the same
    bytes again). The source is named by its location, never as a pattern: a file called
    ``*.orc`` is that one file."""
    p = rewrap_plan(action, plan.root, plan.hive_version, plan.row_type)
    files = {name: data for name, (data, _) in write_files(p).items()}
    if plan.hive_version.writes_acid_version:
        files[ACID_VERSION_FILE] = b"2"
    files[SOURCES_FILE] = record(p.sources, p.fingerprints, action.write_id)
    return files


def rewrap_plan(action: Rewrap, root: Location, hive_version: HiveVersion,
                row_type: str | None) -> ConvertPlan:
    """Convert's plan of a re-wrap: the source mapped to the table's row type (by position
    where the table's files name their columns _col0.._colN). Raises UsageError where the
    source does not fit: ``plan_repair`` asks this before it plans the re-wrap."""
    assert action.dest is not None, "a re-wrap names its delta"
    partition = action.dest.rsplit("/", 1)[0] if "/" in action.dest else ""
    target = root.child(partition) if partition else root
    by_position = row_type is not None and all(
        _POSITIONAL.fullmatch(n) for n in _field_names(row_type))
    opts = ConvertOptions(table=target.url, write_id=str(action.write_id),
                          statement_id=action.statement_id,
                          hive_version=hive_version, schema=row_type,
                          by_position=by_position, allow_duplicates=True,
                          another_statement=True)
    return convert_plan([root.child(action.target)], opts)


def _field_names(struct: str) -> list[str]:
    from ...core.orctypes import struct_fields

    return [n for n, _ in struct_fields(struct)]


def sorted_events(data: bytes, version) -> bytes:
    """An ACID file's events sorted by (originalTransaction, bucket, rowId), its user metadata
    kept and its key index made anew for the new stripes."""
    before = footer_through_pyarrow(pa.BufferReader(data))
    table = paorc.ORCFile(pa.BufferReader(data)).read()
    names = [f.name for f in table.schema]
    keys = [(next(n for n in names if n.lower() == k.lower()), o) for k, o in SORT_KEYS]
    table = table.sort_by(keys)
    compression = parse_postscript(data, len(data)).compression.lower()
    sink = pa.BufferOutputStream()
    writer = paorc.ORCWriter(sink, compression=compression if compression != "none"
                             else "uncompressed")
    writer.write(table)
    writer.close()
    out = sink.getvalue().to_pybytes()
    after = footer_through_pyarrow(pa.BufferReader(out))
    if after.type_string() != before.type_string():
        raise BuildError(f"rewriting would change the schema from {before.type_string()} to "
                         f"{after.type_string()}")
    ends, total = [], 0
    for rows in after.stripe_rows:
        total += rows
        ends.append(total)
    otid, bucket, rowid = (table.column(k).to_pylist() for k, _ in keys)
    index = "".join(f"{otid[e - 1]},{bucket[e - 1]},{rowid[e - 1]};" for e in ends if e)
    meta = dict(before.metadata)
    meta["hive.acid.key.index"] = index.encode()
    return replace_user_metadata(out, meta)
