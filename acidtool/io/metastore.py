"""A Hive metastore client: the few calls acidtool makes, over ``io/thrift.py``.

Why a small client of its own rather than a package (docs/metastore.md says more): the Python
packages are generated from one Hive version's IDL and each breaks on another version.
``hmsclient`` has no write-id calls; ``hive-metastore-client`` pins an old thrift and reads
Hive 2.3's ``set<i64>`` of open transactions as nothing. Reading answers by field id, without a
schema, the same code talks to 2.3, 3.1 and 4.0, and needs no dependency. The calls used exist
in all three, except the write-id ones (3.x and 4.x) and ``get_open_txns_req`` (4.x), whose
"Invalid method name" tells the versions apart. ``get_table_req`` is used, not ``get_table``,
which Hive 4 removed.
"""

from __future__ import annotations

import getpass
import os
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..core.catalog import (
    Column,
    MetastoreError,
    PartitionInfo,
    TableInfo,
    partition_name,
    txn_list,
    write_id_list,
)
from ..core.snapshot import ValidTxnList, ValidWriteIdList
from ..core.versions import HiveVersion
from . import thrift
from .thrift import BOOL, I16, I32, I64, LIST, MAP, STRING, STRUCT

INSERT_ONLY_TABLES = 2  # ClientCapability, in every metastore IDL that has it
DEFAULT_PORT = 9083
# LockType, LockLevel, DataOperationType and LockState as hive_metastore.thrift numbers them
SHARED_READ, SHARED_WRITE = 1, 2  # (EXCLUSIVE is 3)
OP_SELECT = 1
LEVEL_TABLE, LEVEL_PARTITION = 2, 3
OP_INSERT = 2
LOCK_STATES = {1: "ACQUIRED", 2: "WAITING", 3: "ABORT", 4: "NOT_ACQUIRED"}
TXN_STATES = {1: "committed", 2: "aborted", 3: "open"}
# The declared exceptions of the calls made, by their id in the result struct
_EXCEPTIONS = {
    "get_table_req": {1: "MetaException", 2: "NoSuchObjectException"},
    "get_partitions": {1: "NoSuchObjectException", 2: "MetaException"},
    "get_partition_by_name": {1: "MetaException", 2: "NoSuchObjectException"},
    "get_valid_write_ids": {1: "NoSuchTxnException", 2: "MetaException"},
    "commit_txn": {1: "NoSuchTxnException", 2: "TxnAbortedException"},
    "abort_txn": {1: "NoSuchTxnException"},
    "lock": {1: "NoSuchTxnException", 2: "TxnAbortedException"},
    "check_lock": {1: "NoSuchTxnException", 2: "TxnAbortedException", 3: "NoSuchLockException"},
    "heartbeat": {1: "NoSuchLockException", 2: "NoSuchTxnException", 3: "TxnAbortedException"},
    "allocate_table_write_ids": {1: "NoSuchTxnException", 2: "TxnAbortedException",
                                 3: "MetaException"},
    "add_partition": {1: "InvalidObjectException", 2: "AlreadyExistsException",
                      3: "MetaException"},
    "drop_partition_by_name": {1: "NoSuchObjectException", 2: "MetaException"},
    "get_tables": {1: "MetaException"},
}
COMPACTION_TYPES = {1: "minor", 2: "major", 3: "rebalance"}


def parse_url(url: str) -> tuple[str, int]:
    """``thrift://HOST[:PORT]`` (Hive's hive.metastore.uris form; the first of a list)."""
    first = url.split(",")[0].strip()
    parts = urlsplit(first if "://" in first else f"thrift://{first}")
    if parts.scheme != "thrift" or not parts.hostname:
        raise MetastoreError(f"--metastore {url!r}: give thrift://HOST:PORT (hive.metastore.uris)")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise MetastoreError(f"--metastore {url!r}: the port is not a number") from None
    return parts.hostname, port


class Metastore:
    """One connection to a metastore; ``version`` is asked once."""

    def __init__(self, url: str, timeout: float = 30.0):
        self.url = url
        host, port = parse_url(url)
        try:
            self.conn = thrift.Connection(host, port, timeout)
        except OSError as exc:
            raise MetastoreError(f"cannot reach the metastore at {host}:{port}: "
                                 f"{exc.strerror or exc}") from None
        self._version: HiveVersion | None = None
        self.calls = 0  # calls made on this connection (doctor says how many)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Metastore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the wire -------------------------------------------------------------------------
    def call(self, name: str, args: list | None = None):
        self.calls += 1
        try:
            result = self.conn.call(name, args or [])
        except thrift.ApplicationError:
            raise
        except (OSError, thrift.ThriftError) as exc:
            raise MetastoreError(f"the metastore at {self.url} did not answer {name}: "
                                 f"{getattr(exc, 'strerror', None) or exc}") from None
        for fid, exc_name in _EXCEPTIONS.get(name, {}).items():
            if fid in result:
                raise thrift.RemoteError(name, fid, f"{exc_name}: "
                                         f"{result[fid].get(1, '') if isinstance(result[fid], dict) else ''}")
        return result.get(0)

    def _answer(self, name: str, args: list | None = None, what: str = ""):
        """``call`` with the metastore's own refusals as one line."""
        try:
            return self.call(name, args)
        except thrift.ApplicationError as exc:
            raise MetastoreError(f"the metastore at {self.url} cannot {what or name}: "
                                 f"{exc}") from None
        except thrift.RemoteError as exc:
            raise MetastoreError(f"the metastore refused {what or name}: {exc.message}") from None

    # -- which Hive -----------------------------------------------------------------------
    @property
    def version(self) -> HiveVersion:
        """2 when the write-id API is missing ("Invalid method name"), 3 when 4.0's
        ``get_open_txns_req`` is, else 4."""
        if self._version is None:
            self._version = HiveVersion.V4
            for probe, older in (("get_valid_write_ids", HiveVersion.V2),
                                 ("get_open_txns_req", HiveVersion.V3)):
                args: list = ([(1, STRUCT, [(1, LIST, (STRING, [])), (2, STRING, "")])]
                        if probe == "get_valid_write_ids" else
                        [(1, STRUCT, [(1, LIST, (I32, []))])])
                try:
                    self.call(probe, args)
                except thrift.ApplicationError as exc:
                    if exc.kind == 1 or "Invalid method name" in str(exc):
                        self._version = older
                        break
                    # any other failure: the method is there (it failed on the probe)
                except thrift.RemoteError:
                    pass  # the method exists (it refused the empty request)
        return self._version

    # -- tables ---------------------------------------------------------------------------
    def table(self, db: str, name: str) -> TableInfo:
        try:
            request: list = [(1, STRING, db), (2, STRING, name)]
            if self.version != HiveVersion.V2:
                # ClientCapabilities([INSERT_ONLY_TABLES]), as Hive's own client sends: a
                # stock 3.1 or 4.0 metastore (metastore.client.capability.check) refuses an
                # insert-only table to a client that does not say it reads them
                request.append((3, STRUCT, [(1, LIST, (I32, [INSERT_ONLY_TABLES]))]))
            result = self.call("get_table_req", [(1, STRUCT, request)])
        except thrift.RemoteError as exc:
            if exc.field == 2:
                raise MetastoreError(f"the metastore at {self.url} has no table {db}.{name}") \
                    from None
            raise MetastoreError(f"the metastore refused table {db}.{name}: {exc.message}") \
                from None
        except thrift.ApplicationError as exc:
            raise MetastoreError(f"the metastore at {self.url} cannot read table {db}.{name}: "
                                 f"{exc}") from None
        return _table(result[1])

    def partitions(self, table: TableInfo) -> list[PartitionInfo]:
        parts = self._answer("get_partitions", [(1, STRING, table.db), (2, STRING, table.name),
                                                (3, I16, -1)],
                             f"list the partitions of {table.full_name}") or []
        return [_partition(table, p) for p in parts]

    def partition(self, table: TableInfo, name: str) -> PartitionInfo:
        try:
            part = self.call("get_partition_by_name", [(1, STRING, table.db),
                                                       (2, STRING, table.name),
                                                       (3, STRING, name)])
        except thrift.RemoteError as exc:
            raise MetastoreError(f"the metastore has no partition {name} of "
                                 f"{table.full_name}" + (f" ({exc.message})" if exc.field == 1
                                                          else "")) from None
        return _partition(table, part)

    def add_partition(self, table: TableInfo, values: list[str], location: str
                      ) -> PartitionInfo:
        sd = _storage(table, location)
        part = [(1, LIST, (STRING, values)), (2, STRING, table.db), (3, STRING, table.name),
                (4, I32, 0), (5, I32, 0), (6, STRUCT, sd), (7, MAP, (STRING, STRING, {}))]
        answer = self._answer("add_partition", [(1, STRUCT, part)],
                              f"add a partition to {table.full_name}")
        return _partition(table, answer)

    def drop_partition(self, table: TableInfo, name: str) -> None:
        """The partition out of the metastore, its files left where they are."""
        self._answer("drop_partition_by_name", [(1, STRING, table.db), (2, STRING, table.name),
                                                (3, STRING, name), (4, BOOL, False)],
                     f"drop partition {name} of {table.full_name}")

    # -- snapshots ------------------------------------------------------------------------
    def txn_states(self) -> dict[int, str]:
        """Every transaction the metastore still lists: "open" or "aborted" (Hive 2.3's
        transaction list does not tell them apart)."""
        r = self._answer("get_open_txns_info", [], "list open transactions")
        return {t[1]: TXN_STATES.get(t[2], str(t[2])) for t in r.get(2, [])}

    def txns(self) -> ValidTxnList:
        r = self._answer("get_open_txns", [], "list open transactions")
        legacy = self.version is HiveVersion.V2
        return txn_list(r.get(1, 0), r.get(2, []), r.get(3), thrift.binary(r.get(4)),
                        legacy=legacy)

    def write_ids(self, table: TableInfo, txns: ValidTxnList) -> ValidWriteIdList:
        found = self.write_id_lists([table.full_name], txns.text(ranges=False))
        if table.full_name.lower() not in found:
            raise MetastoreError(f"the metastore gave no write ids for {table.full_name}")
        return found[table.full_name.lower()]

    def write_id_lists(self, names: list[str], txns: str) -> dict[str, ValidWriteIdList]:
        """The valid write ids of several tables (db.table) in one call, at the snapshot
        ``txns`` (a ValidTxnList's text): lower-cased name -> list."""
        r = self._answer("get_valid_write_ids",
                         [(1, STRUCT, [(1, LIST, (STRING, names)), (2, STRING, txns)])],
                         f"give the valid write ids of {', '.join(names[:3])}")
        return {str(t.get(1, "")).lower(): write_id_list(
            str(t.get(1, "")), t.get(2, 0), t.get(3, []), t.get(4), thrift.binary(t.get(5)))
            for t in r.get(1, [])}

    # -- what doctor reads (reads only) ---------------------------------------------------
    def table_names(self, db: str, pattern: str = "*") -> list[str]:
        return [str(n) for n in self._answer("get_tables", [(1, STRING, db),
                                                            (2, STRING, pattern)],
                                             f"list the tables of {db}") or []]

    def txn_infos(self) -> tuple[int, list[TxnRecord]]:
        """The transaction high watermark, and every transaction still listed (open or
        aborted) with who opened it and when (``started``: ms since the epoch, None where the
        metastore does not say: 2.3)."""
        r = self._answer("get_open_txns_info", [], "list open transactions")
        return int(r.get(1, 0)), [
            TxnRecord(int(t[1]), TXN_STATES.get(t.get(2), str(t.get(2))), str(t.get(3, "")),
                      str(t.get(4, "")), t.get(8) or None) for t in r.get(2, [])]

    def compactions(self) -> list[CompactionRecord]:
        """The compaction queue and its history (SHOW COMPACTIONS), one call."""
        r = self._answer("show_compact", [(1, STRUCT, [])], "list compactions")
        return [CompactionRecord(
            str(c.get(1, "")), str(c.get(2, "")), str(c.get(3) or ""),
            COMPACTION_TYPES.get(c.get(4), str(c.get(4))), str(c.get(5, "")), c.get(13),
            c.get(7) or None, c.get(15) or None, str(c.get(14) or ""))
            for c in r.get(1, [])]

    def locks(self) -> list[LockRecord]:
        """Every lock (SHOW LOCKS), one call."""
        r = self._answer("show_locks", [(1, STRUCT, [])], "list locks")
        return [LockRecord(str(x.get(2, "")), str(x.get(3) or ""), str(x.get(4) or ""),
                           x.get(7) or None) for x in r.get(1, [])]

    # -- a writer's transaction -----------------------------------------------------------
    def open_txn(self) -> int:
        r = self._answer("open_txns", [(1, STRUCT, [(1, I32, 1), (2, STRING, _user()),
                                                    (3, STRING, socket.gethostname()),
                                                    (4, STRING, "acidtool")])],
                         "open a transaction")
        return r[1][0]

    def commit_txn(self, txn: int) -> None:
        self._answer("commit_txn", [(1, STRUCT, [(1, I64, txn)])], f"commit transaction {txn}")

    def abort_txn(self, txn: int) -> None:
        self._answer("abort_txn", [(1, STRUCT, [(1, I64, txn)])], f"abort transaction {txn}")

    def allocate_write_id(self, txn: int, table: TableInfo) -> int:
        r = self._answer("allocate_table_write_ids",
                         [(1, STRUCT, [(1, STRING, table.db), (2, STRING, table.name),
                                       (3, LIST, (I64, [txn]))])],
                         f"allocate a write id of {table.full_name}")
        return r[1][0][2]

    def lock(self, txn: int, table: TableInfo, partition: str | None, *,
             read: bool = False) -> tuple[int, str]:
        """A shared-write lock on the table or partition, as a writer takes (or with ``read``
        a shared-read one, as Hive 4's compactor takes): (id, state)."""
        kind, op = (SHARED_READ, OP_SELECT) if read else (SHARED_WRITE, OP_INSERT)
        component = [(1, I32, kind), (2, I32, LEVEL_PARTITION if partition else LEVEL_TABLE),
                     (3, STRING, table.db), (4, STRING, table.name), (5, STRING, partition),
                     (6, I32, op), (7, BOOL, True)]
        r = self._answer("lock", [(1, STRUCT, [(1, LIST, (STRUCT, [component])), (2, I64, txn),
                                               (3, STRING, _user()),
                                               (4, STRING, socket.gethostname()),
                                               (5, STRING, "acidtool")])],
                         f"lock {table.full_name}")
        return r[1], LOCK_STATES.get(r[2], str(r[2]))

    def check_lock(self, lock: int, txn: int) -> str:
        r = self._answer("check_lock", [(1, STRUCT, [(1, I64, lock), (2, I64, txn)])],
                         f"check lock {lock}")
        return LOCK_STATES.get(r[2], str(r[2]))

    def heartbeat(self, lock: int, txn: int) -> None:
        self._answer("heartbeat", [(1, STRUCT, [(1, I64, lock), (2, I64, txn)])],
                     f"heartbeat transaction {txn}")


@dataclass(frozen=True)
class TxnRecord:
    id: int
    state: str  # "open" or "aborted"
    user: str
    host: str
    started: int | None  # ms since the epoch


@dataclass(frozen=True)
class CompactionRecord:
    db: str
    table: str
    partition: str
    type: str  # "major", "minor"
    state: str  # "initiated", "working", "ready for cleaning", "failed", "did not initiate"...
    id: int | None
    start: int | None  # ms since the epoch
    enqueued: int | None  # ms since the epoch (4.0)
    error: str


@dataclass(frozen=True)
class LockRecord:
    db: str
    table: str
    partition: str
    txn: int | None


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid()) if hasattr(os, "getuid") else "acidtool"


def _columns(items) -> tuple[Column, ...]:
    return tuple(Column(str(c.get(1, "")), str(c.get(2, ""))) for c in items or [])


def _table(t: dict) -> TableInfo:
    sd = t.get(7) or {}
    return TableInfo(db=str(t.get(2, "")), name=str(t.get(1, "")),
                     location=str(sd.get(2) or ""), columns=_columns(sd.get(1)),
                     partition_keys=_columns(t.get(8)), num_buckets=int(sd.get(6, -1)),
                     bucket_cols=tuple(str(c) for c in sd.get(8) or []),
                     parameters=dict(t.get(9) or {}), input_format=str(sd.get(3) or ""),
                     table_type=str(t.get(12) or ""))


def _partition(table: TableInfo, p: dict) -> PartitionInfo:
    values = tuple(str(v) for v in p.get(1) or [])
    return PartitionInfo(values, str((p.get(6) or {}).get(2) or ""),
                         partition_name(table.partition_keys, values))


def _storage(table: TableInfo, location: str) -> list:
    """A partition's StorageDescriptor: the table's, at ``location``."""
    cols = [[(1, STRING, c.name), (2, STRING, c.type)] for c in table.columns]
    serde: list = [(2, STRING, "org.apache.hadoop.hive.ql.io.orc.OrcSerde"),
             (3, MAP, (STRING, STRING, {}))]
    return [(1, LIST, (STRUCT, cols)), (2, STRING, location),
            (3, STRING, table.input_format or "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"),
            (4, STRING, "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"), (5, BOOL, False),
            (6, I32, table.num_buckets), (7, STRUCT, serde),
            (8, LIST, (STRING, list(table.bucket_cols))), (9, LIST, (STRUCT, [])),
            (10, MAP, (STRING, STRING, {}))]
