"""Writing rows out: JSON lines, CSV, Parquet or ORC, to stdout or to a file committed by rename."""

from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

import pyarrow as pa


def json_lines(table: pa.Table, extra_first: Sequence[tuple[str, pa.Array]] = ()) -> pa.Array:
    from .jsonl import PLAIN, format_parts, object_text

    names = [n for n, _ in extra_first] + list(table.column_names)
    values = [v for _, v in extra_first] + [format_parts(c.combine_chunks(), PLAIN, (n,))
                                           for n, c in zip(table.column_names, table.columns)]
    return object_text(names, values, table.num_rows, suffix="\n")


def _csv_ready(table: pa.Table) -> pa.Table:
    """CSV has no nested values: those columns carry their JSON text."""
    from .jsonl import format_values

    cols = {}
    for name, col in zip(table.column_names, table.columns):
        t = col.type
        if pa.types.is_nested(t):
            cols[name] = format_values(col.combine_chunks())
        else:
            cols[name] = col
    return pa.table(cols)


class RowWriter:
    """jsonl/csv to a stream, parquet/orc to a file written under a temporary name and renamed
    into place only when complete."""

    def __init__(self, fmt: str, output: str | None, stdout, compression: str | None = None):
        import tempfile

        self.fmt, self.output, self.stdout = fmt, output, stdout
        self.compression = compression  # None: pyarrow's default (ORC none, Parquet snappy)
        self.rows = 0
        self._writer: Any = None  # a Parquet or ORC writer, made with the first batch
        self._tmp = None
        if output is not None:
            directory = os.path.dirname(os.path.abspath(output)) or "."
            fd, self._tmp = tempfile.mkstemp(prefix=".acidtool-", dir=directory)
            os.close(fd)
            # mkstemp makes the file 0600; the output is an ordinary file, made as any other
            # (0644 under umask 022), and still appears only complete, by rename.
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(self._tmp, 0o666 & ~mask)
            self._stream = open(self._tmp, "wb")
        else:
            self._stream = stdout
        self._csv_header = True

    def write(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self.rows += table.num_rows
        if self.fmt == "jsonl":
            from .jsonl import lines_buffer

            self._stream.write(lines_buffer(json_lines(table)))
        elif self.fmt == "csv":
            import pyarrow.csv as pacsv

            sink = pa.BufferOutputStream()
            pacsv.write_csv(_csv_ready(table), sink,
                            pacsv.WriteOptions(include_header=self._csv_header))
            self._csv_header = False
            self._stream.write(sink.getvalue().to_pybytes())
        elif self.fmt == "parquet":

            if self._writer is None:
                self._writer = self._parquet(table.schema)
            self._writer.write_table(table.cast(self._writer.schema))
        elif self.fmt == "orc":

            if self._writer is None:
                self._writer = self._orc()
                self._schema = table.schema
            self._writer.write(table.cast(self._schema))
        else:
            raise ValueError(self.fmt)

    def finish(self, schema: pa.Schema | None = None) -> None:
        if self._writer is None and self.fmt in ("parquet", "orc"):
            # (no row at all, and no file read to take the columns from: a file of no
            # columns, which every Parquet and ORC reader opens, not a file of no bytes)
            self.write_empty(schema if schema is not None else pa.schema([]))
        if self._writer is not None:
            self._writer.close()
        self._stream.flush()
        if self._tmp is not None:
            self._stream.close()
            assert self.output is not None, "a temporary file is made for --output only"
            os.replace(self._tmp, self.output)
            self._tmp = None

    def write_empty(self, schema: pa.Schema) -> None:
        if self.fmt == "parquet":

            self._writer = self._parquet(schema)
        elif self.fmt == "orc":
            self._writer = self._orc()
            self._writer.write(schema.empty_table())

    def _parquet(self, schema: pa.Schema):
        import pyarrow.parquet as pq

        codec = {"uncompressed": "none", None: "snappy"}.get(self.compression, self.compression)
        return pq.ParquetWriter(self._stream, schema, compression=codec)

    def _orc(self):
        import pyarrow.orc as paorc

        return paorc.ORCWriter(self._stream, compression=self.compression or "uncompressed")

    def abort(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception:  # noqa: BLE001 - the output is being thrown away anyway
                pass
            self._writer = None
        if self._tmp is not None:
            try:
                self._stream.close()
            finally:
                if os.path.exists(self._tmp):
                    os.remove(self._tmp)
                self._tmp = None


def _prefetched(tables: Iterator[pa.Table], depth: int = 2) -> Iterator[pa.Table]:
    """Produce the next tables on a background thread while the caller writes the current one
    (Arrow's readers and writers release the GIL); at most ``depth`` tables wait in between."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def run():
        try:
            for t in tables:
                if stop.is_set():
                    return
                q.put(t)
            q.put(done)
        except BaseException as exc:  # handed to the consumer, raised there
            q.put(exc)

    worker = threading.Thread(target=run, name="acidtool-read", daemon=True)
    worker.start()
    try:
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while worker.is_alive():
            try:
                q.get_nowait()
            except queue.Empty:
                worker.join(0.01)


def write_empty_dataset(output: str, fmt: str) -> None:
    """A Parquet or ORC dataset of no columns and no rows at ``output`` (a new directory, on
    any filesystem ``fs.resolve`` reaches): one part file, as ``write_rows`` writes for a
    snapshot with no data file, and Spark's ``_SUCCESS``. Spark writes no dataset of no
    columns."""
    import io

    from .fileops import write_new
    from .fs import resolve

    buffer = io.BytesIO()
    writer = RowWriter(fmt, None, buffer)
    writer.finish()
    top = resolve(output)
    top.fs.create_dir(top.path, recursive=True)
    part = top.child(f"part-00000.{fmt}")
    write_new(part, buffer.getvalue())
    write_new(top.child("_SUCCESS"), b"")


def write_rows(tables: Iterator[pa.Table], fmt: str, output: str | None, stdout,
               limit: int | None, prefetch: bool = True, compression: str | None = None) -> int:
    """Write ``tables`` in ``fmt`` to ``output`` (or ``stdout``), at most ``limit`` rows. With
    ``prefetch`` the next tables are made on a thread meanwhile (faster; more in memory)."""
    writer = RowWriter(fmt, output, stdout, compression)
    schema = None
    try:
        for table in (_prefetched(tables) if prefetch else tables):
            schema = schema or table.schema
            if limit is not None:
                room = limit - writer.rows
                if room <= 0:
                    break
                table = table.slice(0, room)
            writer.write(table)
        writer.finish(schema)
    except BaseException:
        writer.abort()
        raise
    return writer.rows
