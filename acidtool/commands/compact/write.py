"""Writing a compaction's directories into its staging directory, one bucket file at a time:
in this process, or one Spark task per share of (partition, bucket) files (``--spark``).

A partition's work is cut into ``BucketJob`` values (a major compaction's merge unit, a minor
compaction's files of one bucket, an insert-only table's files); ``run_jobs`` writes each into
the staging directory and returns what it wrote, with the bytes' hash. On Spark an executor
opens the partition itself (``read``'s ``PartitionReader``, the same merge) and runs the same
``run_jobs``; the driver then completes the directories (an empty one still gets a file, and
Hive's markers) and commits.

Files are written as Hive's compactor writes them (``io.eventwriter``): events come out in
(originalTransaction, bucket, rowId) order, streamed; a bucket whose inputs do not arrive in that
order is written again from memory, sorted.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa

from ...core.compact import Job
from ...core.errors import PathError, UsageError
from ...core.names import FLUSH_LENGTH_SUFFIX, bucket_file_name
from ...core.snapshot import Snapshot
from ...io.eventwriter import EventFileWriter
from ...io.fs import Location, resolve
from ...io.journal import sha256_of
from ...io.orc import ACID_COLUMNS, open_orc
from ...io.plain import plain_batches, plain_schema
from ...table.ls import PartitionState, inspect_table
from ...table.read import PartitionReader
from ...table.rownames import row_named, row_names_of

ACID_VERSION_FILE = "_orc_acid_version"
METADATA_FILE = "_metadata_acid"
COMPACTED_MARKER = b'{"thisFileVersion":"0","dataFormat":"compacted"}'
PLAIN_FILE = "000000_0"
# Bucket files written at once, and the rows of a batch read: two writers of batches of 256K
# rows keep a compaction of 2.5M-row buckets under 1 GB (benchmarks/bench_compact.py); larger
# batches only add memory (Arrow reads ahead), smaller ones add time.
WORKERS = 2
COMPACT_BATCH_ROWS = 1 << 18


@dataclass(frozen=True)
class BucketJob:
    directory: str  # the directory it goes into (base_N, delta_M_N, delete_delta_M_N)
    file: str  # bucket_0000N, or 000000_0 for an insert-only table
    source: tuple  # ("unit", a merge unit) | ("files", rels) | ("plain", rels)
    compression: str


@dataclass(frozen=True)
class Staged:
    """One file written into the staging directory."""

    directory: str
    file: str
    rows: int
    sha256: str
    size: int


def files_read(part: PartitionState, job: Job) -> list[str]:
    """The data files (relative to the partition) in what the job reads."""
    out = []
    for name in job.reads:
        entry = part.state.entry(name) if "/" not in name else None
        if entry is None or not entry.is_dir:  # an original file (in a union subdirectory)
            out.append(name)
            continue
        out.extend(f"{name}/{f.path}" for f in entry.files
                   if not any(c.startswith(("_", ".")) for c in f.path.split("/"))
                   and not f.path.endswith(FLUSH_LENGTH_SUFFIX))
    return out


def reader_of(part: PartitionState, compactor: Snapshot,
              column_names: tuple[str, ...] | None) -> PartitionReader:
    """``read``'s reader of the partition at the compactor's snapshot, its row struct named
    by the table's columns where they are known."""
    reader = PartitionReader(part, compactor)
    names = row_names_of(reader.row_layouts())
    if names and column_names and len(names) <= len(column_names):
        names = list(column_names[:len(names)])
    reader.row_names = names
    reader.batch_rows = COMPACT_BATCH_ROWS
    return reader


def bucket_jobs(reader: PartitionReader, job: Job, insert_only: bool) -> list[BucketJob]:
    """The files a job writes, each with what it is made of."""
    first = job.writes[0]
    if insert_only:
        return [BucketJob(first.name, PLAIN_FILE, ("plain", tuple(files_read(reader.part, job))),
                          first.compression)]
    if job.kind == "major":
        return [BucketJob(first.name, bucket_file_name(unit[1]), ("unit", unit),
                          first.compression) for unit in reader.compaction_units()]
    wanted = job.inputs
    by_kind = {w.kind: w for w in job.writes}
    out = []
    for bucket, (data, deletes) in sorted(reader.bucket_files().items()):
        data = [r for r in data if r.split("/", 1)[0] in wanted]
        deletes = [r for r in deletes if r.split("/", 1)[0] in wanted]
        groups = [("delta", data), ("delete_delta", deletes)] if "delete_delta" in by_kind \
            else [("delta", data + deletes)]  # a legacy table: one delta of every event
        for kind, rels in groups:
            if rels:
                w = by_kind[kind]
                out.append(BucketJob(w.name, bucket_file_name(bucket), ("files", tuple(rels)),
                                     w.compression))
    return out


def event_schema(reader: PartitionReader, files: list[str]) -> pa.Schema:
    """The ACID event schema of the files read: the row struct of the widest (named as read),
    so that the columns an ALTER TABLE ... ADD COLUMNS gave the newer files are kept, and the
    older files' rows are null there (``conform``, by position), as Hive's compactor writes
    them. The widest is found from the footers the reader holds; only it is opened."""
    if not files:
        raise UsageError(f"{reader.part.location.url}: nothing to compact (no data file)")
    widths = [len(shape[0]) if (shape := reader.row_shape(rel)) is not None else -1
              for rel in files]
    src = open_orc(reader.part.location, files[widths.index(max(widths))])
    if src.is_acid:
        row = src.schema.field(5).type
        if reader.row_names and pa.types.is_struct(row) and \
                row.num_fields == len(reader.row_names):
            row = pa.struct([row.field(i).with_name(n)
                             for i, n in enumerate(reader.row_names)])
    else:
        row = pa.struct([src.schema.field(i).with_name(n) for i, n in
                         enumerate(reader.row_names or list(src.schema.names))])
    return pa.schema([pa.field(n, t) for n, t in zip(
        ACID_COLUMNS, [pa.int32(), pa.int64(), pa.int32(), pa.int64(), pa.int64(), row])])


def run_jobs(reader: PartitionReader, jobs: list[BucketJob], schema: pa.Schema | None,
             version, staging: Location, workers: int | None = None) -> list[Staged]:
    """Write each job's file into ``staging`` (through a local file when it is remote, its
    upload checked by its hash); a file that would hold no row is not written. Files are
    written ``workers`` at a time (default: ``WORKERS``, at most one a CPU): Arrow's ORC
    writer and zlib work outside the GIL, and each file streams, so memory grows with the
    workers, not with the table."""
    def one(job: BucketJob) -> Staged | None:
        os.makedirs(os.path.join(local, job.directory), exist_ok=True)
        path = os.path.join(local, job.directory, job.file)
        kind, what = job.source
        if kind == "plain":
            rows = _write_plain(reader, list(what), path, version, job.compression)
        elif kind == "unit":
            rows = _write_sorted(path, schema, version, job.compression,
                                 functools.partial(reader.unit_events, what),
                                 current_desc=False)
        else:
            rows = _write_sorted(path, schema, version, job.compression,
                                 functools.partial(_events_of_files, reader, list(what)),
                                 current_desc=True)
        return _stage(path, staging, job.directory, job.file, rows) if rows else None

    workers = min(len(jobs), workers or min(WORKERS, os.cpu_count() or 1))
    with _local_dir(staging) as local:
        if workers <= 1:
            done = [one(job) for job in jobs]
        else:
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="acidtool-compact")
            try:
                done = list(pool.map(one, jobs))
            except BaseException:
                # a signal or a failure: no writer may still be adding files to the staging
                # directory when it is rolled back
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            pool.shutdown(wait=True)
    return [s for s in done if s is not None]


def put_file(staging: Location, directory: str, name: str, data: bytes | None,
             schema: pa.Schema | None = None, version=None, compression: str = "") -> Staged:
    """A small file the driver adds: a marker's ``data``, or (None) an ACID file of no rows."""
    with _local_dir(staging) as local:
        os.makedirs(os.path.join(local, directory), exist_ok=True)
        path = os.path.join(local, directory, name)
        if data is None:
            EventFileWriter(path, schema, version, compression).finish()
        else:
            with open(path, "xb") as f:
                f.write(data)
        return _stage(path, staging, directory, name, 0)


@contextlib.contextmanager
def _local_dir(staging: Location) -> Iterator[str]:
    """Where files are written before ``_stage``: the staging directory itself when it is
    local, else a local temporary directory, removed afterwards."""
    if staging.is_local:
        yield staging.path
        return
    local = tempfile.mkdtemp(prefix="acidtool-compact-")
    try:
        yield local
    finally:
        shutil.rmtree(local, ignore_errors=True)


def _stage(path: str, staging: Location, directory: str, name: str, rows: int) -> Staged:
    digest = _sha256_file(path)
    size = os.path.getsize(path)
    if not staging.is_local:
        from pyarrow.fs import LocalFileSystem, copy_files

        dest = staging.child(directory).child(name)
        copy_files(path, dest.path, source_filesystem=LocalFileSystem(),
                   destination_filesystem=staging.fs)
        if sha256_of(dest) != digest:
            raise PathError(f"{dest.url}: the upload does not hold the bytes written")
    return Staged(directory, name, rows, digest, size)


def _sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def on_executor(url: str, compactor: Snapshot, column_names: tuple[str, ...] | None,
                schema: pa.Schema | None, staging_url: str, jobs: list[BucketJob]
                ) -> list[Staged]:
    """A Spark task: open the partition here and write its share of files (``--spark``)."""
    (part,) = inspect_table(url, compactor).partitions
    reader = reader_of(part, compactor, column_names)
    return run_jobs(reader, jobs, schema, compactor.hive_version, resolve(staging_url))


# ------------------------------------------------------------------------------------------------
# The writers


def _write_plain(reader: PartitionReader, files: list[str], path: str, version,
                 compression: str) -> int:
    """An insert-only table: the rows of its files, one after another, into one file, in the
    columns of the widest (an older file's rows null in those an ADD COLUMNS added since)."""
    schemas = [plain_schema(reader.part.location, rel) for rel in files]
    widest = max(schemas, key=len, default=None)
    writer: EventFileWriter | None = None
    for rel in files:
        for batch in plain_batches(reader.part.location, rel, reader.batch_rows):
            table_schema = widest if widest is not None and \
                len(widest) > batch.num_columns else batch.schema
            columns = list(batch.columns) + [pa.nulls(batch.num_rows, f.type)
                                             for f in list(table_schema)[batch.num_columns:]]
            row = row_named(pa.StructArray.from_arrays(columns, names=table_schema.names),
                            reader.row_names)
            table = pa.table({f.name: row.field(i) for i, f in enumerate(row.type)})
            if writer is None:
                writer = EventFileWriter(path, table.schema, version, compression, plain=True)
            writer.write(table)
    if writer is None:
        raise UsageError(f"{reader.part.location.url}: the insert-only files read hold no "
                         "rows to compact")
    writer.finish()
    return writer.rows


def _events_of_files(reader: PartitionReader, rels: list[str]) -> Iterable:
    for rel in rels:
        yield from reader.events_of(rel)


def _write_sorted(path: str, schema: Any, version, compression: str,
                  batches: Callable[[], Iterable], current_desc: bool) -> int:
    """Stream events into one file, checking that they come in Hive's order; when they do not,
    write the file again from memory, sorted. The rows written (no file for none)."""
    writer = EventFileWriter(path, schema, version, compression)
    last = None
    ordered = True
    for batch in batches():
        if not batch.num_rows:
            continue
        ok, last = _in_order(batch, last, current_desc)
        if not ok:
            ordered = False
            break
        writer.write(batch)
    if ordered:
        if writer.rows == 0:
            writer.writer.close()
            os.unlink(path)
            return 0
        writer.finish()
        return writer.rows
    writer.writer.close()
    os.unlink(path)
    table = pa.concat_tables([pa.Table.from_batches([b]) if isinstance(b, pa.RecordBatch)
                              else b for b in batches() if b.num_rows],
                             promote_options="permissive")
    keys = [("originalTransaction", "ascending"), ("bucket", "ascending"),
            ("rowId", "ascending")]
    if current_desc:
        keys.append(("currentTransaction", "descending"))
    table = table.take(pa.compute.sort_indices(table, sort_keys=keys))
    writer = EventFileWriter(path, schema, version, compression)
    writer.write(table)
    writer.finish()
    return writer.rows


def _in_order(batch, last, current_desc: bool) -> tuple[bool, tuple | None]:
    """Whether a batch's keys (originalTransaction, bucket, rowId[, -currentTransaction])
    never go down, from the last key before it."""
    cols = [np.asarray(batch.column(k)) for k in ("originalTransaction", "bucket", "rowId")]
    if current_desc:
        cols.append(-np.asarray(batch.column("currentTransaction")))
    if last is not None:
        cols = [np.concatenate([[v], c]) for v, c in zip(last, cols)]
    if len(cols[0]) > 1:
        greater = np.zeros(len(cols[0]) - 1, dtype=bool)
        equal = np.ones(len(cols[0]) - 1, dtype=bool)
        for c in cols:
            greater |= equal & (c[1:] > c[:-1])
            equal &= c[1:] == c[:-1]
        if not (greater | equal).all():
            return False, last
    return True, tuple(int(c[-1]) for c in cols)
