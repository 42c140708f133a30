"""``convert --write-id auto --metastore ...``: the delta written inside a metastore transaction,
as Hive's own writer does it.

1. open a transaction; take a shared-write lock on the table (or partition), waiting while
   another writer holds a conflicting one;
2. allocate the table's write id for it (Hive 3/4; Hive 2.3 numbers deltas by the transaction
   id itself);
3. heartbeat the transaction and lock from a thread while the files are written;
4. write and commit the delta directory (one rename), add the partition if the metastore lacks
   it, and commit the transaction.

Any failure, SIGINT or SIGTERM aborts the transaction and leaves the table as it was (a delta
already renamed into place is removed again: it is this run's own output). After a SIGKILL the
metastore times the transaction out (``hive.txn.timeout``, 300 s by default) and aborts it; the
staging directory left behind is hidden from Hive, and ``acidtool repair`` quarantines it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

from ...core.catalog import MetastoreError, PartitionInfo, TableInfo, partition_values
from ...core.names import Delta
from ...core.versions import HiveVersion
from ...io.fs import kind_of

# Heartbeats: Hive's clients beat at half of hive.txn.timeout (300 s): a beat a minute is safe
# against a timeout shortened to two minutes.
HEARTBEAT_SECONDS = 60.0
LOCK_WAIT_SECONDS = 300.0


@dataclass
class Transaction:
    """An open transaction of the metastore at ``url`` that writes to ``table``."""

    url: str
    table: TableInfo
    partition: str | None  # k=v/k2=v2, or None for the table
    txn: int = 0
    lock: int = 0
    write_id: int = 0
    committed: bool = False
    # a compactor's transaction (Hive 4's _vT): a shared-read lock, no write id allocated
    compactor: bool = False

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._beats: threading.Thread | None = None
        self.problem: str | None = None  # what a failed heartbeat said

    def open(self, client, version: HiveVersion) -> "Transaction":
        self.txn = client.open_txn()
        try:
            self.lock, state = client.lock(self.txn, self.table, self.partition,
                                           read=self.compactor)
            deadline = time.monotonic() + LOCK_WAIT_SECONDS
            while state == "WAITING" and time.monotonic() < deadline:
                time.sleep(1.0)
                state = client.check_lock(self.lock, self.txn)
            if state != "ACQUIRED":
                raise MetastoreError(f"the metastore did not grant the lock on "
                                     f"{self.table.full_name} ({state})")
            if not self.compactor:
                self.write_id = (client.allocate_write_id(self.txn, self.table)
                                 if version.has_write_ids else self.txn)
        except BaseException:
            self.abort(client)
            raise
        self._beats = threading.Thread(target=self._heartbeat, name="acidtool-heartbeat",
                                       daemon=True)
        self._beats.start()
        return self

    def _heartbeat(self) -> None:
        from ...io.metastore import Metastore

        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                with Metastore(self.url) as client:
                    client.heartbeat(self.lock, self.txn)
            except MetastoreError as exc:  # the commit then fails and says so
                self.problem = str(exc)

    def stop_beats(self) -> None:
        self._stop.set()
        if self._beats is not None:
            self._beats.join(timeout=5)

    def commit(self, client) -> None:
        self.stop_beats()
        client.commit_txn(self.txn)
        self.committed = True

    def abort(self, client) -> None:
        self.stop_beats()
        try:
            client.abort_txn(self.txn)
        except MetastoreError:
            pass  # the metastore aborts it when it times out


def convert_in_transaction(source_patterns, opts, info: TableInfo, url: str, *, dry_run: bool,
                           spark: bool, master: str | None, verbose: bool, progress):
    """Plan, then write and commit inside a metastore transaction (see the module's text)."""
    from ...io.metastore import Metastore
    from .delta import ConvertResult, commit, plan, write_files

    started = time.perf_counter()
    p = plan(source_patterns, opts, settle=not dry_run)  # every check, a provisional write id
    if spark:
        from .spark import spark_usable

        spark_usable(p)
    if dry_run:
        return ConvertResult(p, None)
    with Metastore(url) as client:
        part, part_name = _partition(client, info, opts.partition)
        txn = Transaction(url, info, part_name).open(client, opts.hive_version)
        try:
            p = _at_write_id(p, txn.write_id)
            if spark:
                from .spark import spark_writer

                files = spark_writer(p, master, verbose)
            else:
                files = write_files(p, progress and (lambda d: progress(d, p.total_rows)))
            summary = commit(p, files, started)
            added = False
            try:
                if part_name is not None and part is None:
                    client.add_partition(info, [v for _, v in partition_values(part_name)],
                                         p.target.url)
                    added = True
                if txn.problem:
                    raise MetastoreError(f"heartbeat failed: {txn.problem}")
                txn.commit(client)
            except BaseException:
                _remove(p)
                if added and part_name is not None:
                    try:
                        client.drop_partition(info, part_name)
                    except MetastoreError:
                        pass  # the failure that brought us here is the one to tell
                raise
        except BaseException:
            if not txn.committed:
                txn.abort(client)
            raise
    summary.transaction = txn.txn
    return ConvertResult(p, summary)


def _partition(client, info: TableInfo, partition: str | None
               ) -> tuple[PartitionInfo | None, str | None]:
    """The metastore's partition (None when it does not exist yet) and its name."""
    if not info.partition_keys:
        if partition:
            raise MetastoreError(f"{info.full_name} is not partitioned: drop --partition")
        return None, None
    if not partition:
        raise MetastoreError(f"{info.full_name} is partitioned by "
                             f"{', '.join(k.name for k in info.partition_keys)}: give "
                             "--partition k=v")
    keys = [k for k, _ in partition_values(partition.strip("/"))]
    if [k.lower() for k in keys] != [k.name.lower() for k in info.partition_keys]:
        raise MetastoreError(f"--partition {partition}: {info.full_name} is partitioned by "
                             f"{'/'.join(k.name for k in info.partition_keys)}")
    name = partition.strip("/")
    try:
        return client.partition(info, name), name
    except MetastoreError:
        return None, name


def _at_write_id(p, write_id: int):
    """The plan with the write id the metastore allocated (and its directory name)."""
    from .delta import ConvertError

    directory = str(Delta(write_id, write_id, p.options.statement_id))
    if kind_of(p.target.child(directory)) != "missing":
        raise ConvertError(f"the metastore allocated write id {write_id}, but "
                           f"{p.target.url}/{directory} exists already: the table's directory "
                           "holds writes the metastore does not know of (nothing was written)")
    return replace(p, write_id=write_id, directory=directory)


def _remove(p) -> None:
    """Take this run's committed delta out again (the transaction will not commit)."""
    final = p.target.child(p.directory)
    try:
        p.target.fs.delete_dir(final.path)
    except (OSError, FileNotFoundError):
        pass


def for_metastore(opts):
    """The options with what the metastore says of the table filled in: its location (and the
    partition's), Hive version, kind, bucketing and columns. Returns (options, TableInfo)."""
    from ...table.target import resolve

    target = resolve(opts.table, metastore=opts.metastore, hive_version=opts.hive_version,
                     insert_only=opts.insert_only, snapshot=False)
    info = target.table
    assert info is not None, "a metastore target names its table"
    table = target.url if target.partition is None else info.location
    partition = opts.partition
    if target.partition is not None:  # named as db.t/k=v
        partition = partition or target.partition.name
    changes = dict(table=table, partition=partition, hive_version=target.snapshot.hive_version,
                   insert_only=target.snapshot.insert_only)
    if opts.buckets is None and info.bucketed:
        changes.update(buckets=info.num_buckets, bucket_by=_bucket_columns(info, opts.schema),
                       bucketing_version=info.bucketing_version)
    if opts.schema is None and info.columns:
        changes.update(schema=info.schema)
    return replace(opts, **changes), info


def _bucket_columns(info: TableInfo, schema: str | None) -> tuple[str, ...]:
    """The table's bucketing columns, named as ``--schema`` names them: by position, since a
    schema of Hive 2.3's positional names (_col0..) is the same columns."""
    if not schema:
        return info.bucket_cols
    from ...core.errors import UsageError
    from ...core.orctypes import TypeStringError, struct_fields

    try:
        given = [name for name, _ in struct_fields(schema)]
    except TypeStringError as exc:
        raise UsageError(f"--schema: {exc}") from None
    names = [c.name.lower() for c in info.columns]
    if [n.lower() for n in given] == names or len(given) != len(names):
        return info.bucket_cols
    return tuple(given[names.index(c.lower())] for c in info.bucket_cols
                 if c.lower() in names)
