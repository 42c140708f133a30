"""Writing ORC files in Hive's ACID event layout (with pyorc, which can set ORC user metadata).

Used for the bundled demo table and for test fixtures; ``convert`` builds on it. The footer gets
what Hive's OrcRecordUpdater writes: ``hive.acid.key.index`` (the last (originalTransaction, bucket,
rowId) of every stripe, ``otid,bucket,rowid;`` each), ``hive.acid.stats`` (inserts,updates,deletes)
and, for Hive 3+, ``hive.acid.version`` = 2.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, BinaryIO, Sequence

import pyorc

from ..core.versions import HiveVersion

ACID_FIELDS = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction", "row")
INSERT, UPDATE, DELETE = 0, 1, 2


def acid_schema(row_type: str) -> str:
    return ("struct<operation:int,originalTransaction:bigint,bucket:int,rowId:bigint,"
            f"currentTransaction:bigint,row:{row_type}>")


@dataclass(frozen=True)
class Event:
    operation: int
    original_transaction: int
    bucket: int
    row_id: int
    current_transaction: int
    row: tuple | None

    def as_tuple(self) -> tuple:
        return (self.operation, self.original_transaction, self.bucket, self.row_id,
                self.current_transaction, self.row)


_COMPRESSION = {
    "none": pyorc.CompressionKind.NONE, "zlib": pyorc.CompressionKind.ZLIB,
    "snappy": pyorc.CompressionKind.SNAPPY, "lz4": pyorc.CompressionKind.LZ4,
    "zstd": pyorc.CompressionKind.ZSTD, "lzo": pyorc.CompressionKind.LZO,
}


def _write(sink: BinaryIO, schema: str, rows: Sequence[tuple], metadata: dict[str, bytes],
           compression: str, stripe_size: int, options: dict[str, Any]) -> None:
    writer = pyorc.Writer(sink, schema, compression=_COMPRESSION[compression],
                          stripe_size=stripe_size, **options)
    writer.writerows(rows)
    for key, value in metadata.items():
        writer.set_user_metadata(**{key: value})
    writer.close()


def stripe_row_counts(data: bytes) -> list[int]:
    reader = pyorc.Reader(io.BytesIO(data))
    return [len(stripe) for stripe in reader.iter_stripes()]


def key_index(events: Sequence[Event], stripe_rows: Sequence[int], last_stripe: bool = True) -> str:
    """``hive.acid.key.index``. Hive 2.3 leaves out the last stripe (it flushes it after writing
    the metadata); Hive 3 writes every stripe."""
    out, end = [], 0
    counts = list(stripe_rows) if last_stripe else list(stripe_rows)[:-1]
    for n in counts:
        end += n
        if n:
            e = events[end - 1]
            out.append(f"{e.original_transaction},{e.bucket},{e.row_id};")
    return "".join(out)


def write_acid_file(sink: BinaryIO, row_type: str, events: Sequence[Event], *,
                    hive_version: str = "3", compression: str = "zlib",
                    stripe_size: int = 64 * 1024 * 1024, key_index_text: str | None = None,
                    with_key_index: bool = True, with_acid_version: bool | None = None,
                    **options: Any) -> None:
    """Write ``events`` (already in (originalTransaction, bucket, rowId) order) as one ACID file.

    ``key_index_text``, ``with_key_index`` and ``with_acid_version`` override what Hive would
    write (tests build damaged files with them)."""
    version = HiveVersion.of(hive_version)
    schema = acid_schema(row_type)
    rows = [e.as_tuple() for e in events]
    stats = (sum(e.operation == INSERT for e in events), sum(e.operation == UPDATE for e in events),
             sum(e.operation == DELETE for e in events))
    metadata = {"hive.acid.stats": ",".join(map(str, stats)).encode()}
    if with_acid_version if with_acid_version is not None else version.writes_acid_version:
        metadata["hive.acid.version"] = b"2"
    if with_key_index:
        if key_index_text is None:
            # The stripe layout is only known after writing; the data is deterministic, so a
            # first write tells where stripes end and the second carries the matching index.
            probe = io.BytesIO()
            _write(probe, schema, rows, {}, compression, stripe_size, options)
            key_index_text = key_index(events, stripe_row_counts(probe.getvalue()),
                                       not version.key_index_may_skip_last_stripe)
        metadata = {"hive.acid.key.index": key_index_text.encode(), **metadata}
    _write(sink, schema, rows, metadata, compression, stripe_size, options)


def write_plain_file(sink: BinaryIO, row_type: str, rows: Sequence[tuple], *,
                     compression: str = "zlib", **options: Any) -> None:
    """A plain (non-ACID) ORC file, as DataX or ``df.write.orc`` would leave it."""
    _write(sink, row_type, rows, {}, compression, 64 * 1024 * 1024, options)
