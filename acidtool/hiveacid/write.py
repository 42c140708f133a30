"""Writing through the ``hiveacid`` source: ``df.write.format("hiveacid").mode(...).save(PATH)``.

One job writes one directory per table partition it writes: ``delta_W_W_SSSS`` (append) or
``base_W`` (overwrite: Hive's INSERT OVERWRITE), with one write id W for the whole job.

* The driver plans (``plan_write``, in Spark's Python worker on the driver): the table, its
  Hive version and kind, the columns (the metastore's, else those of the table's files, else
  the DataFrame's), the bucketing, the write id (a number, or ``auto``: with a metastore one
  it allocates in a transaction it opens, without one the next above every write id in the
  table), and a hidden staging directory of the job's own in the table.
* Each task writes its rows as Hive's writer writes an INSERT (``io.deltawriter``) into its own
  directory below the staging one (an attempt's files never meet another's), and returns the
  list of its files. Unbucketed, task k writes bucket file k of each partition it has rows
  for; bucketed, each row goes to the bucket Hive's hash gives it, and a bucket written by
  several tasks is merged into one file at the commit (its row ids renumbered).
* The driver's ``commit`` takes the table's lock, checks again that no directory of the write
  id appeared, journals every rename it will make (one action: each partition's directory, and
  each partition directory it makes), makes them back to back, shielded from signals, and
  commits the metastore transaction. Any failure takes out again what it renamed in and aborts;
  a commit killed between two renames is rolled back by the next ``hiveacid`` write to the
  table, or by ``acidtool undo JOURNAL``. ``abort`` removes the staging directory and aborts
  the transaction: the table is as it was.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ..core.catalog import TableInfo, escape_partition_value, partition_values
from ..core.errors import UsageError
from ..core.names import ACIDTOOL_STAGING_PREFIX, Base, Delta
from ..io.deltawriter import BucketWriter, FileFormat
from ..io.fs import Location, resolve

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
TASKS = ".tasks"  # below the staging directory: each task attempt's own directory


@dataclass(frozen=True)
class Staged:
    """One file a task wrote: the table partition it belongs to ("" for none), its bucket,
    where it is (relative to the job's staging directory), its rows and bytes."""

    partition: str
    bucket: int
    rel: str
    rows: int
    size: int
    sha256: str = ""


@dataclass(frozen=True)
class Job:
    """What every task and the commit need, planned once on the driver (it pickles)."""

    table: str  # the table's directory
    partition: str | None  # a static partition (k=v[/k2=v2]), or None
    keys: tuple[str, ...]  # dynamic: the partition columns taken from the rows
    write_id: int
    overwrite: bool
    fmt: FileFormat
    schema: pa.Schema  # the row columns written, in the table's names and types
    columns: tuple[str, ...]  # the DataFrame's column for each of them
    staging: str  # the job's staging directory (hidden, in the table)
    buckets: int | None = None
    bucket_by: tuple[str, ...] = ()
    bucket_kinds: tuple[str, ...] = ()
    bucketing_version: int = 2
    metastore: str | None = None
    transaction: int = 0  # the metastore transaction (0: none)
    lock: int = 0
    info: TableInfo | None = None  # the metastore's table

    @property
    def directory(self) -> str:
        if self.overwrite:
            return str(Base(self.write_id))
        return str(Delta(self.write_id, self.write_id, self.fmt.statement_id))


# ------------------------------------------------------------------------------------------------
# Tasks


def write_task(job: Job, batches: Iterator[pa.RecordBatch], task: int, attempt: int
               ) -> list[Staged]:
    """One task's rows written into its own directory below the staging one."""
    if not job.buckets and job.fmt.hive_version.bucket_codec and task > 4095:
        raise UsageError(f"task {task}: an unbucketed table's files are numbered by task, and a "
                         "bucket property holds at most 4096: coalesce the DataFrame to 4096 "
                         "partitions or fewer")
    mine = f"{TASKS}/{task}-{attempt}"
    writers: dict[tuple[str, int], BucketWriter] = {}
    beats = _Heartbeat(job)
    for batch in batches:
        beats.maybe()
        table = pa.Table.from_batches([batch])
        for part, rows in _by_partition(job, table):
            rows = conform(job, rows)
            for bucket, piece in _by_bucket(job, rows, task):
                key = (part, bucket)
                if key not in writers:
                    writers[key] = BucketWriter(job.fmt, job.write_id, bucket)
                writers[key].write(piece)
    root = resolve(job.staging)
    out = []
    for (part, bucket), writer in sorted(writers.items()):
        data = writer.finish()
        rel = f"{mine}/{part}/{bucket}" if part else f"{mine}/{bucket}"
        _make_dirs(root, rel.rsplit("/", 1)[0])
        loc = root.child(rel)
        with loc.fs.open_output_stream(loc.path) as f:
            f.write(data)
        out.append(Staged(part, bucket, rel, writer.rows, len(data),
                          hashlib.sha256(data).hexdigest()))
    return out


def _make_dirs(root: Location, rel: str) -> None:
    """The directories of ``rel`` below the job's staging directory, never the staging
    directory itself: a task still running after the job was aborted (its staging directory
    removed) fails rather than making it again."""
    at = root
    for part in rel.split("/"):
        at = at.child(part)
        try:
            at.fs.create_dir(at.path, recursive=False)
        except FileExistsError:
            pass
        except OSError:
            if at.fs.get_file_info(at.path).type.name != "Directory":
                raise


def _by_partition(job: Job, table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    """The rows of each table partition, by the static partition or the rows' own values."""
    if not job.keys:
        if job.partition:
            _require_static(job, table)
        yield job.partition or "", table
        return
    columns = [_column(table, k) for k in job.keys]
    texts = [pc.cast(c, pa.string()) if not pa.types.is_string(c.type) else c for c in columns]
    names_ = pa.array([
        "/".join(f"{escape_partition_value(k)}={_partition_text(v)}"
                 for k, v in zip(job.keys, values))
        for values in zip(*[t.to_pylist() for t in texts])], pa.string())
    encoded = pc.dictionary_encode(names_)
    for i, name in enumerate(encoded.dictionary.to_pylist()):
        yield name, table.filter(pc.equal(encoded.indices, i))


def _partition_text(value: str | None) -> str:
    if value is None or value == "":
        return DEFAULT_PARTITION
    return escape_partition_value(value)


def _require_static(job: Job, table: pa.Table) -> None:
    """A DataFrame carrying the partition columns of a static ``partition`` must hold that
    partition's values only: rows are never written where their values say otherwise."""
    assert job.partition is not None
    for key, value in partition_values(job.partition):
        col = next((n for n in table.column_names if n.lower() == key.lower()), None)
        if col is None:
            continue
        text = pc.cast(table.column(col), pa.string())
        if not pc.all(pc.equal(text, value)).as_py():
            raise UsageError(f"option partition={job.partition}: the DataFrame's column {col} "
                             f"holds other values than {value!r} (drop the option to write "
                             "each row to the partition its values name)")


def _column(table: pa.Table, name: str):
    for n in table.column_names:
        if n.lower() == name.lower():
            return table.column(n)
    raise UsageError(f"the DataFrame has no column {name!r} (a partition column of the table)")


def conform(job: Job, table: pa.Table) -> pa.Table:
    """The rows in the table's columns: picked by name, cast to the table's types."""
    arrays = []
    for name, target in zip(job.columns, job.schema):
        col = table.column(name)
        if col.type != target.type:
            try:
                col = pc.cast(col, target.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise UsageError(f"column {name}: {col.type} does not fit the table's "
                                 f"{target.type} ({exc})") from None
        arrays.append(col)
    return pa.table(arrays, schema=job.schema)


def _by_bucket(job: Job, rows: pa.Table, task: int) -> Iterator[tuple[int, pa.Table]]:
    if not job.buckets:
        yield task, rows
        return
    from ..commands.convert.delta import hive_buckets

    ids = hive_buckets(rows, job.bucket_by, job.bucket_kinds, job.buckets,
                       job.bucketing_version)
    encoded = pc.dictionary_encode(ids)
    for i, bucket in enumerate(encoded.dictionary.to_pylist()):
        yield bucket, rows.filter(pc.equal(encoded.indices, i))


class _Heartbeat:
    """A task heartbeats the job's metastore transaction at most once a minute while it
    writes: the driver's planning process is gone by then, and the metastore aborts a
    transaction that is silent for hive.txn.timeout (300 s)."""

    EVERY = 60.0

    def __init__(self, job: Job):
        self.job = job
        self.last = time.monotonic()

    def maybe(self) -> None:
        if not self.job.transaction or time.monotonic() - self.last < self.EVERY:
            return
        from ..io.metastore import Metastore

        assert self.job.metastore is not None
        with Metastore(self.job.metastore) as client:
            client.heartbeat(self.job.lock, self.job.transaction)
        self.last = time.monotonic()


def new_staging(table: Location) -> Location:
    return table.child(f"{ACIDTOOL_STAGING_PREFIX}{uuid.uuid4().hex[:12]}")

