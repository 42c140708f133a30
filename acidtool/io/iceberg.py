"""Apache Iceberg through pyiceberg, behind the few operations an export needs: the catalog a
``--catalog`` names, an export's table (created with its first snapshot in one commit), data
files written from Arrow, the key columns of the files already there, and one commit.

pyiceberg's own ``append``/``delete`` make a commit each; an export makes exactly one, so it
drives pyiceberg's snapshot producers (``fast_append``, ``overwrite``) and its Parquet writer
(``_dataframe_to_data_files``) directly. Those private names are used here and nowhere else.
"""

from __future__ import annotations

import itertools
import os
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import pyarrow as pa

from ..core.errors import AcidToolError, DependencyError, ExitStatus, UsageError
from .journal import fault_point

# Where the local catalog of a directory keeps its SQLite database.
LOCAL_DB = "catalog.db"
# The name the tables of a local (directory) catalog are filed under in its database: what
# pyiceberg's own SqlCatalog must be given to see them (docs/export.md says so).
LOCAL_NAME = "default"


class IcebergError(AcidToolError):
    """The Iceberg side refused or failed: nothing of the export was committed."""

    exit_status = ExitStatus.FINDINGS


class CommitConflict(IcebergError):
    """Another writer committed to the Iceberg table while the export ran."""


class _Refused(Exception):
    """The catalog refused the commit (not a CommitFailedException: pyiceberg retries those)."""


def require_pyiceberg() -> None:
    """pyiceberg is installed, or a DependencyError that says how to install it."""
    try:
        import pyiceberg  # noqa: F401
    except ImportError:
        raise DependencyError("export --to iceberg needs pyiceberg: pip install "
                              "'acidtool[iceberg]' (or pip install 'pyiceberg[sql-sqlite]')"
                              ) from None


@dataclass(frozen=True)
class CatalogSpec:
    """What --catalog named, said for people: a configured name, a URI, or a directory."""

    kind: str  # "configured", "sql", "rest", "hive", "directory"
    text: str  # for a directory, its absolute path
    properties: tuple[tuple[str, str], ...] = ()
    given: str = ""  # as --catalog gave it

    def describe(self) -> str:
        if self.kind == "directory":
            shown = (self.given or self.text).rstrip("/")
            return f"local catalog in {shown} (SQLite {shown}/{LOCAL_DB})"
        if self.kind == "configured":
            return f"catalog {self.text!r} (pyiceberg configuration)"
        return f"{self.kind} catalog {self.text}"


def catalog_spec(text: str, warehouse: str | None = None) -> CatalogSpec:
    """``--catalog``: a catalog name from pyiceberg's configuration (``~/.pyiceberg.yaml``,
    ``PYICEBERG_CATALOG__<NAME>__*``); a URI (``sqlite:///f.db``, ``postgresql+psycopg2://``,
    ``http(s)://`` a REST catalog, ``thrift://`` a Hive metastore); or a directory, which
    holds a local SQLite catalog and its file warehouse (made on first use)."""
    require_pyiceberg()
    from pyiceberg.utils.config import Config

    if "://" in text:
        scheme = text.split("://", 1)[0].lower()
        if scheme == "file":
            return _directory(text[len("file://"):], warehouse)
        props = [("uri", text)]
        if warehouse:
            props.append(("warehouse", _file_url(warehouse)))
        if scheme.startswith(("sqlite", "postgresql", "mysql")):
            if not warehouse and scheme.startswith("sqlite"):
                db = text.split(":///", 1)[-1]
                props.append(("warehouse", _file_url(os.path.join(os.path.dirname(db) or ".",
                                                                  "warehouse"))))
            elif not warehouse:
                raise UsageError(f"--catalog {text}: a SQL catalog needs --warehouse (where "
                                 "the table files go, e.g. s3://bucket/warehouse)")
            return CatalogSpec("sql", text, (("type", "sql"), *props))
        if scheme in ("http", "https"):
            return CatalogSpec("rest", text, (("type", "rest"), *props))
        if scheme == "thrift":
            return CatalogSpec("hive", text, (("type", "hive"), *props))
        raise UsageError(f"--catalog {text}: unknown scheme {scheme!r} (sqlite://, "
                         "postgresql://, http(s):// for REST, thrift:// for a Hive metastore, "
                         "a catalog name, or a directory)")
    if Config().get_catalog_config(text.lower()) is not None:
        return CatalogSpec("configured", text)
    if os.sep in text or text.startswith(".") or os.path.isdir(text):
        return _directory(text, warehouse)
    raise UsageError(f"--catalog {text}: no catalog of that name in pyiceberg's configuration "
                     "(~/.pyiceberg.yaml, PYICEBERG_CATALOG__<NAME>__*); for a local catalog "
                     f"in a directory give a path (./{text})")


def _directory(path: str, warehouse: str | None) -> CatalogSpec:
    root = os.path.abspath(os.path.expanduser(path))
    if os.path.exists(root) and not os.path.isdir(root):
        raise UsageError(f"--catalog {path}: not a directory")
    db = os.path.join(root, LOCAL_DB)
    return CatalogSpec("directory", root, (("type", "sql"), ("uri", f"sqlite:///{db}"),
                                           ("warehouse", _file_url(warehouse or root))), path)


def _file_url(path: str) -> str:
    if "://" in path:
        return path
    return "file://" + os.path.abspath(os.path.expanduser(path))


def exists(spec: CatalogSpec) -> bool:
    """False for a local (directory) catalog not made yet; any other is taken to exist."""
    return spec.kind != "directory" or os.path.exists(os.path.join(spec.text, LOCAL_DB))


def open_catalog(spec: CatalogSpec):
    from pyiceberg.catalog import load_catalog

    _keep_nested_nulls()
    if spec.kind == "directory":
        os.makedirs(spec.text, exist_ok=True)
    name, props = LOCAL_NAME, dict(spec.properties)
    if spec.kind == "configured":
        from pyiceberg.utils.config import Config

        # read now: pyiceberg reads its environment once, when it is first imported
        name = spec.text.lower()
        props = {k: str(v) for k, v in (Config().get_catalog_config(name) or {}).items()}
    for attempt in range(3):
        try:
            return load_catalog(name, **props)
        except (ValueError, OSError, ImportError) as exc:
            raise UsageError(f"--catalog {spec.text}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - SQLAlchemy's, from a SQL catalog
            # a SQL catalog makes its own tables when first opened: two exports making the
            # same new catalog at once race there, and the loser finds them made; opened
            # again, it uses them
            if "already exists" not in str(exc) or attempt == 2:
                raise
    raise AssertionError("unreachable")


def identifier(text: str) -> tuple[str, ...]:
    parts = tuple(p for p in text.split("."))
    if len(parts) < 2 or not all(parts):
        raise UsageError(f"--table {text!r}: give NAMESPACE.NAME (e.g. lake.orders)")
    return parts


_PATCHED = [False]


def _keep_nested_nulls() -> None:
    """pyiceberg 0.12's ArrowProjectionVisitor, which every write and read of a data file goes
    through, rebuilds a list of structs and a map whose values are structs from their offsets
    alone (its work-around for apache/arrow#38809), and so drops their null bitmap: a NULL
    list or map is written as an empty one. The array it rebuilt gets its nulls back here
    (copied first: Arrow takes no null mask with the offsets of a slice)."""
    if _PATCHED[0]:
        return
    from pyiceberg.io.pyarrow import ArrowProjectionVisitor

    for name in ("list", "map"):
        original = getattr(ArrowProjectionVisitor, name)

        def with_nulls(self, field_type, array, *rest, _original=original):
            out = _original(self, field_type, array, *rest)
            if out is None or array is None or array.null_count == 0 or \
                    out.null_count == array.null_count:
                return out
            out = pa.concat_arrays([out])
            mask = array.is_null()
            if isinstance(out, pa.MapArray):
                return pa.MapArray.from_arrays(out.offsets, out.keys, out.items, out.type,
                                               mask=mask)
            return type(out).from_arrays(out.offsets, out.values, out.type, mask=mask)

        setattr(ArrowProjectionVisitor, name, with_nulls)
    _PATCHED[0] = True


# ------------------------------------------------------------------------------------------------
# Schemas


def iceberg_schema(arrow: pa.Schema):
    """Iceberg's schema of an Arrow schema (every field optional, as Hive's own Iceberg
    integration makes them), with fresh field ids."""
    from pyiceberg.io.pyarrow import _ConvertToIcebergWithoutIDs, visit_pyarrow
    from pyiceberg.schema import assign_fresh_schema_ids

    return assign_fresh_schema_ids(visit_pyarrow(arrow, _ConvertToIcebergWithoutIDs()))


def identity_spec(schema, columns: Iterable[str]):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform

    return PartitionSpec(*[PartitionField(source_id=schema.find_field(c).field_id,
                                          field_id=1000 + i, transform=IdentityTransform(),
                                          name=c)
                           for i, c in enumerate(columns)])


# ------------------------------------------------------------------------------------------------
# One export's commit


# writes in flight at once (``FileWriter.write_behind``): pyiceberg writes a file (Parquet,
# ZSTD, each column's statistics) about 1.5 times as long as ``read`` reads its rows, so one
# writer thread kept the reader waiting (10,000,000 rows: 4.7 s against 3.6 s with two)
BEHIND = 2


class FileWriter:
    """Data files of one commit, written from Arrow: on the driver, or on a Spark executor
    (everything it holds pickles; each writer names its files by a uuid of its own)."""

    def __init__(self, metadata, io) -> None:
        _keep_nested_nulls()  # (on an executor too)
        self.metadata = metadata
        self.io = io
        self.written: list = []  # DataFile
        self.dropped: list = []  # DataFile
        self._uuid = uuid.uuid4()
        self._counter = itertools.count(0)
        self._writer: Any = None  # the threads that write behind (write_behind)
        self._pending: list = []  # their writes not yet settled

    def write(self, table: pa.Table) -> list:
        """``table``'s rows as Parquet data files of this commit (one partition's rows, or
        any: pyiceberg splits them by the spec)."""
        from pyiceberg.io.pyarrow import _dataframe_to_data_files

        if table.num_rows == 0:
            return []
        files = list(_dataframe_to_data_files(table_metadata=self.metadata, df=table,
                                              io=self.io, write_uuid=self._uuid,
                                              counter=self._counter))
        self.written.extend(files)
        fault_point()
        return files

    def write_behind(self, table: pa.Table) -> None:
        """``write``, on threads of their own while the caller reads on (ORC's decoding and
        Parquet's encoding both leave Python's lock): up to ``BEHIND`` writes in flight, so
        that memory holds at most ``BEHIND`` + 1 buffers of rows. ``settle`` waits for them
        (and raises the first error)."""
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        if len(self._pending) >= BEHIND:
            done, left = wait(self._pending, return_when=FIRST_COMPLETED)
            self._pending = list(left)
            for future in done:
                future.result()
        if self._writer is None:
            self._writer = ThreadPoolExecutor(BEHIND, thread_name_prefix="acidtool-export")
        self._pending.append(self._writer.submit(self.write, table))

    def settle(self) -> None:
        pending, self._pending = self._pending, []
        errors = []
        for future in pending:  # (each waited for, so that none writes on after)
            try:
                future.result()
            except BaseException as exc:  # noqa: BLE001 - the first is raised below
                errors.append(exc)
        if errors:
            raise errors[0]

    def drop(self, data_file) -> None:
        self.dropped.append(data_file)

    def remove_written(self) -> None:
        """Remove the data files this writer wrote (a write under way is let end first, so
        that its files go too): best effort, an orphan file harms nothing."""
        pending, self._pending = self._pending, []
        for future in pending:
            future.cancel()
            try:
                future.result()
            except BaseException:  # noqa: BLE001 - its files (if any) are removed below
                pass
        for f in self.written:
            try:
                self.io.delete(f.file_path)
            except Exception:  # noqa: BLE001
                pass
        self.written.clear()


class Commit(FileWriter):
    """One Iceberg commit being made: the files written (removed again if it never commits),
    the files it drops, and the snapshot properties it records."""

    def __init__(self, catalog, ident: tuple[str, ...], txn) -> None:
        super().__init__(txn.table_metadata, txn._table.io)
        self.catalog = catalog
        self.ident = ident
        self.txn = txn  # a pyiceberg Transaction (a create-table transaction: a new table)
        self.committed = False

    @classmethod
    def create(cls, catalog, ident: tuple[str, ...], arrow: pa.Schema,
               partition_columns: list[str], properties: dict[str, str]) -> "Commit":
        try:
            catalog.create_namespace_if_not_exists(ident[:-1])
        except Exception:  # noqa: BLE001 - a concurrent export made it meanwhile: fine
            # (pyiceberg's SQL catalog lets SQLite's UNIQUE failure through as IntegrityError,
            # not NamespaceAlreadyExistsError)
            if not catalog.namespace_exists(ident[:-1]):
                raise
        fault_point()
        schema = iceberg_schema(arrow)
        txn = catalog.create_table_transaction(ident, schema=schema,
                                               partition_spec=identity_spec(
                                                   schema, partition_columns),
                                               properties=properties)
        return cls(catalog, ident, txn)

    @classmethod
    def on(cls, catalog, table) -> "Commit":
        return cls(catalog, table.name(), table.transaction())

    def evolve(self, arrow: pa.Schema) -> list[str]:
        """Columns the Hive table gained since the last export, added to the Iceberg schema in
        this commit; their names."""
        have = set(self.metadata.schema().column_names)
        new = [f.name for f in arrow if f.name not in have]
        if new:
            with self.txn.update_schema() as update:
                update.union_by_name(iceberg_schema(arrow))
            self.metadata = self.txn.table_metadata
        return new

    def commit(self, properties: dict[str, str]) -> None:
        """The one commit: the files written added, the dropped ones removed, ``properties``
        in the snapshot's summary. A table changed meanwhile by another writer refuses it
        (pyiceberg asserts the snapshot this commit started from)."""
        from pyiceberg.exceptions import CommitFailedException, TableAlreadyExistsError

        self.settle()
        self._no_retry()
        try:
            producer = self.txn.update_snapshot(snapshot_properties=properties)
            with (producer.overwrite(commit_uuid=self._uuid) if self.dropped
                  else producer.fast_append()) as snap:
                if self.dropped:
                    snap.commit_uuid = self._uuid
                for f in self.dropped:
                    snap.delete_data_file(f)
                for f in self.written:
                    snap.append_data_file(f)
            fault_point()
            self.txn.commit_transaction()
            self.committed = True  # from here on the files written are the table's
            fault_point()
        except (CommitFailedException, TableAlreadyExistsError, _Refused) as exc:
            self.abandon()
            raise CommitConflict(f"{'.'.join(self.ident)} was changed by another writer "
                                 f"while this export ran ({exc}); nothing of this export was "
                                 "committed: run it again") from None

    def _no_retry(self) -> None:
        """pyiceberg retries a commit another writer got in before, re-applying it on top of
        that writer's snapshot. This commit's changes were worked out from the snapshot it
        started from (rows appended because that snapshot lacked them), and on another they
        would duplicate or lose rows: a refused commit is refused, never retried."""
        table = self.txn._table
        do_commit = table._do_commit

        def once(*args, **kwargs):
            from pyiceberg.exceptions import CommitFailedException

            try:
                return do_commit(*args, **kwargs)
            except CommitFailedException as exc:
                raise _Refused(str(exc)) from None

        table._do_commit = once

    def abandon(self) -> None:
        """Remove the data files written, when no snapshot holds them (the commit did not
        happen): best effort. Never after the commit, whatever failed after it."""
        if not self.committed:
            self.remove_written()


def load(catalog, ident: tuple[str, ...]):
    """The table, or None when it does not exist."""
    from pyiceberg.exceptions import NoSuchTableError

    try:
        return catalog.load_table(ident)
    except NoSuchTableError:
        return None


def lineage(table, key: str) -> Iterator[dict[str, str]]:
    """The summaries' properties of the table's current snapshot and its ancestors, newest
    first, that carry ``key``."""
    from pyiceberg.table.snapshots import ancestors_of

    for snap in ancestors_of(table.current_snapshot(), table.metadata):
        props = dict(snap.summary.additional_properties) if snap.summary else {}
        if key in props:
            yield props


def partition_key(spec, schema, values: pa.Table) -> str:
    """One partition's key as Iceberg spells its path (``p=a/q=1``), from a table whose first
    row holds the partition columns' values; "" for an unpartitioned table."""
    from pyiceberg.io.pyarrow import _determine_partitions

    if spec.is_unpartitioned():
        return ""
    part = next(iter(_determine_partitions(spec, schema, values.slice(0, 1))))
    return spec.partition_to_path(part.partition_key.partition, schema)


def partition_record(spec, schema, values: pa.Table):
    """One partition's values as Iceberg's manifest holds them (a Record), from a table whose
    first row holds the partition columns' values."""
    from pyiceberg.io.pyarrow import _determine_partitions
    from pyiceberg.typedef import Record

    if spec.is_unpartitioned():
        return Record()
    return next(iter(_determine_partitions(spec, schema, values.slice(0, 1)))
                ).partition_key.partition


def adopt_parquet(metadata, io, url: str, partition):
    """A Parquet file already in the table's location (written by Spark, its columns with
    the Iceberg schema's field ids) as a DataFile of ``partition``: its statistics from its
    footer, as pyiceberg's ``add_files`` takes them, and its partition as given rather than
    guessed from them."""
    import pyarrow.parquet as pq
    from pyiceberg.io.pyarrow import (
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat

    source = io.new_input(url)
    with source.open() as stream:
        footer = pq.read_metadata(stream)
    schema = metadata.schema()
    stats = data_file_statistics_from_parquet_metadata(
        parquet_metadata=footer, stats_columns=compute_statistics_plan(schema, metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(schema))
    return DataFile.from_args(
        content=DataFileContent.DATA, file_path=url, file_format=FileFormat.PARQUET,
        partition=partition, file_size_in_bytes=len(source), sort_order_id=None,
        spec_id=metadata.default_spec_id, equality_ids=None, key_metadata=None,
        **stats.to_serialized_dict())


@dataclass(frozen=True)
class FileKeys:
    """One data file of the table (its scan task) and the keys of its rows."""

    task: Any
    keys: pa.Table


def files_by_partition(table) -> dict[str, list]:
    """The current snapshot's scan tasks, by partition key."""
    if table.current_snapshot() is None:
        return {}
    spec, schema = table.spec(), table.schema()
    out: dict[str, list] = {}
    for task in table.scan().plan_files():
        key = "" if spec.is_unpartitioned() else spec.partition_to_path(task.file.partition,
                                                                        schema)
        out.setdefault(key, []).append(task)
    return out


def read_columns(metadata, io, tasks: list, columns: list[str]) -> list[FileKeys]:
    """Just ``columns`` of each file (with its delete files applied)."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan

    schema = metadata.schema().select(*columns)
    scan = ArrowScan(metadata, io, schema, AlwaysTrue())
    return [FileKeys(task, scan.to_table([task])) for task in tasks]


def read_file(metadata, io, task) -> pa.Table:
    """Every column of one file (its delete files applied)."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan

    return ArrowScan(metadata, io, metadata.schema(), AlwaysTrue()).to_table([task])
