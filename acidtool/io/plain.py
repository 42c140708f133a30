"""Rows of plain data files in any format an insert-only table may hold: ORC and Parquet are
read (told apart by their magic bytes, as Hive's own readers would not: the table says its
format); any other format is one clear error naming the file."""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from ..core.errors import OrcReadError
from .fs import Location, open_input_file, read_bytes
from .orc import open_orc, scan_batches


def data_format(loc: Location, rel: str) -> str:
    """``orc``, ``parquet``, ``empty`` or ``other``, from the file's first bytes."""
    head = read_bytes(loc, rel, 4)
    if not head:
        return "empty"
    if head[:3] == b"ORC":
        return "orc"
    if head == b"PAR1":
        return "parquet"
    return "other"


def plain_batches(loc: Location, rel: str, batch_rows: int, threads: bool = True
                  ) -> Iterator[pa.RecordBatch]:
    """The rows of one plain data file, a batch at a time."""
    kind = data_format(loc, rel)
    if kind == "empty":
        return
    if kind == "orc":
        src = open_orc(loc, rel)
        yield from scan_batches(src, batch_size=batch_rows, use_threads=threads,
                                batch_readahead=0, fragment_readahead=0)
        return
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            with open_input_file(loc, rel) as f:
                yield from pq.ParquetFile(f).iter_batches(batch_size=batch_rows,
                                                          use_threads=threads)
        except (pa.ArrowInvalid, OSError) as exc:
            raise OrcReadError(f"{loc.url_of(rel)}: unreadable Parquet: {exc}") from None
        return
    raise OrcReadError(f"{loc.url_of(rel)}: neither ORC nor Parquet (a text, Avro or JSON "
                       "file?): read takes the ORC and Parquet data files of insert-only "
                       "tables; other formats are not supported")


def plain_schema(loc: Location, rel: str) -> pa.Schema:
    """A plain data file's Arrow schema, from its footer (no rows read); empty for an empty
    file."""
    kind = data_format(loc, rel)
    if kind == "orc":
        return open_orc(loc, rel).file.schema
    if kind == "parquet":
        import pyarrow.parquet as pq

        with open_input_file(loc, rel) as f:
            return pq.ParquetFile(f).schema_arrow
    return pa.schema([])
