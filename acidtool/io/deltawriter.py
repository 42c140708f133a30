"""Bucket files as Hive's OrcRecordUpdater writes an INSERT: the ACID event schema written by
Arrow's ORC writer, finished with Hive's footer metadata (hive.acid.key.index, hive.acid.stats,
hive.acid.version). convert writes through it, in process and in Spark's Python workers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as paorc

from ..core.bucket import encode_v1
from ..core.names import bucket_file_name, original_file_name
from ..core.versions import HiveVersion
from .footers import footer_through_pyarrow
from .orcpatch import with_user_metadata


@dataclass(frozen=True)
class FileFormat:
    """How a delta's bucket files are written."""

    hive_version: HiveVersion = HiveVersion.V4
    statement_id: int = 0
    compression: str = "zlib"
    stripe_size: int = 64 * 1024 * 1024
    insert_only: bool = False  # plain ORC files named as Hive 3/4 name an insert-only table's

    def file_name(self, bucket: int) -> str:
        """``bucket_00000`` (full ACID), or ``000000_0`` (insert-only: a task's output file)."""
        return original_file_name(bucket) if self.insert_only else bucket_file_name(bucket)


def acid_metadata(write_id: int, bucket_property: int, stripe_rows: Sequence[int], rows: int,
                  hive_version: str) -> dict[str, bytes]:
    """What OrcRecordUpdater puts in the footer for an insert-only file."""
    entries, end = [], 0
    stripes = list(stripe_rows)
    hive_version = HiveVersion.of(hive_version)
    if hive_version.key_index_may_skip_last_stripe:
        stripes = stripes[:-1]  # Hive 2 writes the last stripe after the metadata
    for n in stripes:
        end += n
        if n:
            entries.append(f"{write_id},{bucket_property},{end - 1};")
    meta = {"hive.acid.key.index": "".join(entries).encode(),
            "hive.acid.stats": f"{rows},0,0".encode()}
    if hive_version.writes_acid_version:
        meta["hive.acid.version"] = b"2"
    return meta


def acid_batch(rows: pa.RecordBatch | pa.Table, write_id: int, bucket_property: int,
               first_row_id: int) -> pa.Table:
    """Insert events for ``rows``: operation 0, both transactions the write id, row ids counting
    on from ``first_row_id``."""
    n = rows.num_rows
    row = pa.StructArray.from_arrays(
        [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in rows.columns],
        fields=list(rows.schema))
    ones = pa.repeat(pa.scalar(1, pa.int64()), n)
    return pa.table({
        "operation": pa.repeat(pa.scalar(0, pa.int32()), n),
        "originalTransaction": pa.repeat(pa.scalar(write_id, pa.int64()), n),
        "bucket": pa.repeat(pa.scalar(bucket_property, pa.int32()), n),
        "rowId": pc.add(pc.cumulative_sum(ones), first_row_id - 1),
        "currentTransaction": pa.repeat(pa.scalar(write_id, pa.int64()), n),
        "row": row,
    })


class BucketWriter:
    """One bucket file, written to memory by Arrow's ORC writer, finished with Hive's metadata.
    Both paths write through it: in process, and in Spark's Python workers."""

    def __init__(self, fmt: FileFormat, write_id: int, bucket_id: int,
                 schema: pa.Schema | None = None):
        """``schema``: the row columns, for a file that may get no row (an empty file still
        says its columns)."""
        self.fmt, self.write_id, self.bucket_id = fmt, write_id, bucket_id
        self.schema = schema
        self.property = (encode_v1(bucket_id, fmt.statement_id)
                         if fmt.hive_version.bucket_codec else bucket_id)
        self.sink = pa.BufferOutputStream()
        self.writer = paorc.ORCWriter(self.sink, compression=fmt.compression,
                                      stripe_size=fmt.stripe_size)
        self.rows = 0

    def write(self, rows: pa.RecordBatch | pa.Table) -> None:
        if rows.num_rows:
            self.writer.write(rows if self.fmt.insert_only else
                              acid_batch(rows, self.write_id, self.property, self.rows))
            self.rows += rows.num_rows

    def finish(self) -> bytes:
        if self.rows == 0:  # Arrow's writer leaves no file without a batch written
            if self.schema is None:
                raise ValueError("an empty bucket file needs its row columns")
            empty = self.schema.empty_table()
            self.writer.write(empty if self.fmt.insert_only else
                              acid_batch(empty, self.write_id, self.property, 0))
        self.writer.close()
        data = self.sink.getvalue().to_pybytes()
        if self.fmt.insert_only:
            return data
        stripes = [s.rows for s in _footer(data).stripes]
        meta = acid_metadata(self.write_id, self.property, stripes, self.rows,
                             self.fmt.hive_version)
        return with_user_metadata(data, meta)


class BucketWriters(dict):
    """bucket id -> its BucketWriter, made the first time a bucket is asked for."""

    def __init__(self, fmt: FileFormat, write_id: int):
        super().__init__()
        self.fmt, self.write_id = fmt, write_id

    def __missing__(self, bucket: int) -> BucketWriter:
        writer = self[bucket] = BucketWriter(self.fmt, self.write_id, bucket)
        return writer


def _footer(data: bytes):
    return footer_through_pyarrow(pa.BufferReader(data))
