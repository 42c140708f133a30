"""The rows an export writes: a unit's (``unit_rows``), a group's (``group_rows``), buffered
into data files of a good size (``Buffer``), and a new table's first rows read ahead
(``ReadAhead``) while ``plan_export`` opens the Iceberg side."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generator, Iterator

import pyarrow as pa

from ...core.snapshot import ValidTxnList
from .schema import EVENT, FILE_KEY, ROW_ID, conform

if TYPE_CHECKING:
    from ...io.iceberg import FileWriter

# What the rows of one partition may hold in memory before they are written as a data file.
FLUSH_BYTES = 128 << 20


@dataclass(frozen=True)
class Job:
    """What writing a group of units needs, wherever it runs (it pickles): the rows' schema,
    the Iceberg table's metadata (the table's, or the one being created) and its FileIO."""

    arrow: pa.Schema
    read_schema: pa.Schema
    truncate: bool
    insert_only: bool
    metadata: object
    io: object
    # Hive 2.3's snapshot exported before (an incremental export of a legacy table)
    before: ValidTxnList | None = None

    @property
    def key_column(self) -> str:
        return FILE_KEY if self.insert_only else ROW_ID


def unit_rows(unit, job: Job) -> Iterator[pa.Table]:
    """One unit's rows as the export writes them (partition columns typed)."""
    from ...table.readplan import unit_batches

    read_schema = job.read_schema
    if unit.reader.with_event:
        read_schema = read_schema.append(pa.field(EVENT, pa.int64()))
    for batch in unit_batches(unit, read_schema):
        t = pa.Table.from_batches([batch])
        if job.insert_only:
            part = unit.reader.part.partition
            rel = f"{part}/{unit.unit[1]}" if part else unit.unit[1]
            t = t.add_column(0, FILE_KEY, pa.array([rel] * t.num_rows, pa.string()))
        yield conform(t, job.arrow, job.truncate)


def group_rows(units: list, job: Job) -> Generator[pa.Table | None, None, None]:
    """The rows of a group's units in turn, None after each unit's last."""
    for unit in units:
        yield from unit_rows(unit, job)
        yield None


class Buffer:
    """Rows of one partition held until they make a data file of a good size."""

    def __init__(self, writer: "FileWriter"):
        self.writer = writer
        self.tables: list[pa.Table] = []
        self.bytes = 0
        self.rows = 0

    def add(self, t: pa.Table) -> None:
        if t.num_rows == 0:
            return
        self.tables.append(t)
        self.bytes += t.nbytes
        self.rows += t.num_rows
        if self.bytes >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.tables:
            self.writer.write_behind(pa.concat_tables(self.tables))
        self.tables, self.bytes = [], 0


class ReadAhead:
    """The first group's rows, up to a data file's worth (FLUSH_BYTES), read on a thread of
    their own while ``plan_export`` opens the Iceberg side: importing pyiceberg and
    SQLAlchemy and opening the catalog take about 0.6 s of Python, and reading ORC and
    applying deletes leave Python's lock. A new table's export writes them first
    (``rows``); any other ``drop``s them."""

    def __init__(self, units: list, job: Job) -> None:
        self._rows = group_rows(units, job)
        self._head: list[pa.Table | None] = []
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="acidtool-read-ahead",
                                        daemon=True)
        self._thread.start()

    def _read(self) -> None:
        size = 0
        try:
            for item in self._rows:
                self._head.append(item)
                size += 0 if item is None else item.nbytes
                if size >= FLUSH_BYTES or self._stop.is_set():
                    return
        except BaseException as exc:  # noqa: BLE001 - raised again by rows()
            self._error = exc

    def rows(self) -> Iterator[pa.Table | None]:
        """The group's rows: those read ahead, then the rest as they are read."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        head, self._head = self._head, []
        return itertools.chain(head, self._rows)

    def drop(self) -> None:
        """Stop reading ahead (after the batch under way) and let go of what was read; the
        files it had open are closed."""
        self._stop.set()
        self._thread.join()
        self._head = []
        self._rows.close()
