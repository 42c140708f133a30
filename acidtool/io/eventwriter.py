"""One compacted file, streamed to a local file by Arrow's ORC writer and finished with what
Hive's compactor puts in the footer: ``hive.acid.key.index`` (the last (originalTransaction,
bucket, rowId) of each stripe; Hive 2.3 leaves out the last stripe), ``hive.acid.stats``
(inserts, updates, deletes) and, for Hive 3 and 4, ``hive.acid.version`` = 2. An insert-only
table's files are plain ORC. The footer is patched in place at the file's tail, so a file of any
size never sits in memory."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as paorc

from ..core.versions import HiveVersion
from .orcpatch import with_user_metadata

ORC_COMPRESSION = {"zlib": "zlib", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd",
                   "none": "uncompressed"}
KEY = ("originalTransaction", "bucket", "rowId")


class EventFileWriter:
    def __init__(self, path: str, schema: pa.Schema, version: HiveVersion, compression: str,
                 *, plain: bool = False, stripe_size: int = 64 * 1024 * 1024):
        self.path, self.schema, self.version, self.plain = path, schema, version, plain
        self.writer = paorc.ORCWriter(path, compression=ORC_COMPRESSION[compression],
                                      stripe_size=stripe_size)
        self.rows = 0
        self.stats = [0, 0, 0]  # inserts, updates, deletes

    def write(self, events: pa.Table | pa.RecordBatch) -> None:
        if not events.num_rows:
            return
        if isinstance(events, pa.RecordBatch):
            events = pa.Table.from_batches([events])
        events = conform(events, self.schema)
        if not self.plain:
            counts = pc.value_counts(events.column("operation"))
            for item in counts.to_pylist():
                if 0 <= item["values"] <= 2:
                    self.stats[item["values"]] += item["counts"]
        self.writer.write(events)
        self.rows += events.num_rows

    def finish(self) -> int:
        """Close the file and write Hive's metadata into its footer; its size."""
        if self.rows == 0:
            self.writer.write(self.schema.empty_table())
        self.writer.close()
        if not self.plain:
            _append_metadata(self.path, self._metadata())
        return os.path.getsize(self.path)

    def _metadata(self) -> dict[str, bytes]:
        f = paorc.ORCFile(self.path)
        stripes = list(range(f.nstripes))
        if self.version.key_index_may_skip_last_stripe:
            stripes = stripes[:-1]
        index = []
        for i in stripes:
            keys = f.read_stripe(i, columns=list(KEY))
            if keys.num_rows:
                last = [keys.column(k)[keys.num_rows - 1].as_py() for k in KEY]
                index.append(f"{last[0]},{last[1]},{last[2]};")
        meta = {"hive.acid.key.index": "".join(index).encode(),
                "hive.acid.stats": ",".join(map(str, self.stats)).encode()}
        if self.version.writes_acid_version:
            meta["hive.acid.version"] = b"2"
        return meta


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` in ``schema``: the same columns, a ``row`` struct taken by position (Hive
    2.3's files name its fields by position, ``_col0..`` or ``_col1..``)."""
    if table.schema == schema:
        return table
    columns = []
    for i, field in enumerate(schema):
        col = table.column(i)
        if col.type != field.type:
            col = _by_position(col.combine_chunks(), field.type)
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=schema)


def _by_position(arr: pa.Array, to: pa.DataType) -> pa.Array:
    if pa.types.is_struct(to) and pa.types.is_struct(arr.type):
        fields = []
        for i, field in enumerate(to):
            if i < arr.type.num_fields:
                fields.append(_by_position(arr.field(i), field.type))
            else:
                fields.append(pa.nulls(len(arr), field.type))
        return pa.StructArray.from_arrays(fields, fields=list(to),
                                          mask=arr.is_null() if arr.null_count else None)
    return arr.cast(to)


def _append_metadata(path: str, items: dict[str, bytes]) -> None:
    """Add ORC user metadata to a finished file in place: only its tail (the postscript, at
    most 256 bytes) changes (orcpatch.with_user_metadata, applied to the tail)."""
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        start = max(0, size - 256)
        f.seek(start)
        tail = f.read()
        new_tail = with_user_metadata(tail, items, size)
        f.seek(start)
        f.truncate()
        f.write(new_tail)
        f.flush()
        os.fsync(f.fileno())
