"""The public Python API: ``acidtool.open_table(url).snapshot(...).to_arrow()``.

A ``Table`` is a table or partition directory on any filesystem acidtool reads; its ``snapshot``
is a ``Snapshotted``: the rows Hive would return for it, as Arrow tables, batches or pandas.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import pyarrow as pa

from .ls import TableState, inspect_table
from .read import BATCH_ROWS, PartitionReader
from .rownames import row_names_of
from .target import resolve


@dataclass
class Snapshotted:
    table: TableState
    with_row_id: bool = False
    columns: Sequence[str] | None = None
    memory_limit: int | None = None
    batch_rows: int = BATCH_ROWS  # at most, in a table of rows (a reader wanting few: fewer)
    # the table's column names from the metastore (Hive 2.3's files say only _col0.._colN)
    column_names: Sequence[str] | None = None
    # the metastore's partition keys: (name, Hive type) each (none without a metastore)
    partition_keys: Sequence[tuple[str, str]] = ()

    @functools.cached_property
    def _readers(self) -> list[PartitionReader]:
        """One reader a partition, made once (row names and rows come from the same plans)."""
        return [PartitionReader(part, self.table.snapshot, with_row_id=self.with_row_id,
                                columns=self.columns, memory_limit=self.memory_limit,
                                batch_rows=self.batch_rows)
                for part in self.table.partitions]

    def tables(self, progress: Callable[[int, int], None] | None = None
               ) -> Iterator[pa.Table]:
        """Tables of rows. Readers match row columns by position, and Hive 2.3 names them
        _col0.. in inserts but _col1.. in updates (and by name after compaction): every file's
        row columns take the names ``row_names_of`` gives the table. ``progress(done, total)``
        is told as each piece of work (a bucket of a partition, a file, a legacy partition)
        is read."""
        readers = self.readers()
        if progress is None:
            for reader in readers:
                yield from reader.tables()
            return
        units = [(reader, unit) for reader in readers for unit in reader.units()]
        for done, (reader, unit) in enumerate(units, 1):
            yield from reader.unit_tables(unit)
            progress(done, len(units))

    def readers(self) -> list[PartitionReader]:
        """One reader a partition, each told the row column names the table's files give."""
        shapes = [(reader, shape) for reader in self._readers for shape in reader.row_shapes()]
        require_one_row_schema(shapes)
        names = row_names_of(names for _, (_, names, _) in shapes)
        if names and self.column_names and len(names) <= len(self.column_names):
            names = list(self.column_names[:len(names)])  # by position, as Hive reads them
        others = {}
        widest: list[tuple[str, str]] = []
        for _, (_, file_names, types) in shapes:
            renamed = names if names and len(names) == len(file_names) else file_names
            others.update({n: t for n, t in zip(renamed, types) if n not in others})
            if len(types) > len(widest):
                widest = list(zip(renamed, types))
        # (each file's columns after require_one_row_schema: a prefix of the widest's)
        typed = _arrow_types(dict(widest))
        narrower = any(len(types) < len(widest) for _, (_, _, types) in shapes)
        row_columns = [(n, typed[n]) for n, _ in widest] \
            if narrower and len(typed) == len(widest) else []
        for reader in self._readers:
            reader.row_names = names
            reader.others = _arrow_types(others) if self.columns else {}
            reader.row_columns = row_columns
        return self._readers

    def to_batches(self) -> pa.RecordBatchReader:
        """A streaming reader; the schema is that of the first batch."""
        iterator = self.tables()
        first = next(iterator, None)
        if first is None:
            return pa.RecordBatchReader.from_batches(pa.schema([]), iter(()))
        schema = first.schema

        def batches():
            for t in [first]:
                yield from t.to_batches()
            for t in iterator:
                yield from t.cast(schema).to_batches() if t.schema != schema else t.to_batches()
        return pa.RecordBatchReader.from_batches(schema, batches())

    def to_arrow(self) -> pa.Table:
        """Every row in one table. Files written before an ALTER TABLE ... ADD COLUMNS lack the
        new columns: their rows get nulls there, as Hive reads them (in ``to_batches`` too:
        every table has the widest files' row columns, ``readers``)."""
        tables = list(self.tables())
        if not tables:
            return self.to_batches().read_all()
        return pa.concat_tables(tables, promote_options="permissive")

    def to_pandas(self):
        return self.to_arrow().to_pandas()


def _arrow_types(orc_types: dict[str, str]) -> dict[str, pa.DataType]:
    from ..io.arrowtypes import orc_type_to_arrow

    out = {}
    for name, orc_type in orc_types.items():
        try:
            out[name] = orc_type_to_arrow(orc_type)
        except Exception:  # a type Arrow's ORC reading gives no equivalent of: asked for, it fails
            continue
    return out


def require_one_row_schema(shapes: list) -> None:
    """Hive reads every file's row columns by position into the table's columns: files whose
    types differ other than by columns added at the end (ALTER TABLE ... ADD COLUMNS) hold
    another table's rows, and no reading of them is Hive's without the table's own columns.
    ``shapes``: (reader, (file, names, types)) of each data file read."""
    from ..core.errors import MixedSchemaError
    from ..core.orctypes import normalize

    widest: tuple = ()
    where = ""
    widest_shape: tuple[list[str], list[str]] = ([], [])
    for reader, (rel, names, types) in shapes:
        mine = tuple(normalize(t) for t in types)
        short, long = sorted((mine, widest), key=len)
        if long[:len(short)] != short:
            def text(ns, ts):
                return ", ".join(f"{n} {t}" for n, t in zip(ns, ts))

            raise MixedSchemaError(
                f"the files read hold rows of different schemas: {where} has "
                f"({text(*widest_shape)}), {reader.part.location.url}/{rel} has "
                f"({text(names, types)}). Hive reads each by position into the table's "
                "columns; acidtool does not guess them: `acidtool validate --level metadata` "
                "names the odd files (ACID019), move them out or rewrite them with "
                "`acidtool convert --schema`")
        if len(mine) > len(widest) or not where:
            widest, where = mine, f"{reader.part.location.url}/{rel}"
            widest_shape = (names, types)


def _require_insert_only(state: TableState) -> None:
    """--insert-only refused where the files say full ACID: its ACID event files would be read
    as six columns of plain rows."""
    from ..core.errors import UsageError
    from ..core.names import kind_problem

    problem = kind_problem([p for part in state.partitions for p in part.listing.paths], True)
    if problem:
        raise UsageError(f"{state.location.url}: {problem}")


# What a row may cost in memory while it is read, filtered, converted and written: the
# --memory-limit batch size is the limit over this (10,000,000 rows with 1,000,000 deletes read
# with --memory-limit 256M, batches of 131,072 rows: benchmarks/bench_read.py --memory).
ROW_BYTES = 2048


@dataclass
class Table:
    """``acidtool.open_table(url)``: a table or partition directory on any filesystem; with
    ``metastore="thrift://HOST:PORT"`` also a table named ``db.table`` (or ``db.table/k=v``),
    whose snapshot is then the metastore's unless one is given."""

    url: str
    metastore: str | None = None

    def snapshot(self, write_ids: str | None = None, txns: str | None = None,
                 hive_version: str | int | None = None, *, table: str | None = None,
                 with_row_id: bool = False, columns: Sequence[str] | None = None,
                 memory_limit: int | None = None, limit: int | None = None,
                 insert_only: bool = False) -> Snapshotted:
        """``memory_limit`` (bytes): above it, one bucket's delete keys are not held at once
        but streamed in chunks, at the cost of reading the delete deltas again per batch.
        Under a ``memory_limit`` the data is also read in smaller batches (a row of the table
        is taken to cost up to 2 KiB once decoded, filtered and converted), on one thread.
        ``limit``: the caller wants at most that many rows, so files are read in batches of
        about that size (the rows themselves are still all there to take). ``insert_only``:
        an insert-only (micro-managed) table, whose ORC or Parquet data files are plain."""
        target = resolve(self.url, metastore=self.metastore, hive_version=hive_version,
                         write_ids=write_ids, txns=txns, table=table, insert_only=insert_only)
        batch_rows = BATCH_ROWS
        if memory_limit is not None:
            batch_rows = min(batch_rows, max(memory_limit // ROW_BYTES, 1024))
        if limit is not None:
            batch_rows = min(batch_rows, max(limit, 1024))
        keys = [(c.name, c.type) for c in target.table.partition_keys] if target.table else []
        state = inspect_table(target.url, target.snapshot)
        if insert_only and target.table is None:  # (a metastore's table: its own kind)
            _require_insert_only(state)
        return Snapshotted(state, with_row_id, columns, memory_limit, batch_rows,
                           target.column_names, keys)

    def to_arrow(self) -> pa.Table:
        """Everything committed, Hive 4 rules."""
        return self.snapshot().to_arrow()
