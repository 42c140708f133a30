"""``acidtool doctor``: gathers what ``core.doctor`` judges, reading only.

Metastore calls are batched: the transactions, the compaction queue and (Hive 2.3) the locks
once for the whole run; the valid write ids of all the tables in one call (and one more per
open transaction older than --older-than, to learn which tables it holds back); per table its
definition and, when partitioned, its partitions. The files are listed once per table and
selected at the metastore's snapshot, as ``ls --metastore`` does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from ...core.catalog import MetastoreError, TableInfo, parse_table_name
from ...core.doctor import Compaction, Dir, HmsFinding, OpenTxn, TableView, diagnose
from ...core.errors import UsageError
from ...core.names import Base
from ...core.snapshot import LONG_MAX, Snapshot, ValidTxnList
from ...io.fs import kind_of, resolve
from ...io.metastore import Metastore

BATCH = 100  # tables per get_valid_write_ids call


@dataclass
class DoctorReport:
    metastore: str
    hive_version: str
    tables: list[tuple[str, list[HmsFinding]]] = field(default_factory=list)
    calls: int = 0  # metastore calls made

    @property
    def findings(self) -> int:
        return sum(len(f) for _, f in self.tables)

    def as_dict(self) -> dict:
        return {"metastore": self.metastore, "hive_version": self.hive_version,
                "tables": [{"table": name, "findings": [f.as_dict() for f in found]}
                           for name, found in self.tables]}


def doctor(names: list[str], metastore: str, older_than: float = 3600.0,
           progress: Callable[[int, int], None] | None = None,
           missing_ok: bool = False) -> DoctorReport:
    """Diagnose the tables ``names`` (db.table, db.table/k=v, db.*) against the metastore;
    ``missing_ok``: a name the metastore does not know is left out (report's guesses)."""
    with Metastore(metastore) as client:
        version = client.version
        targets = _tables(client, names, missing_ok)
        txns = client.txns()
        hwm, infos = client.txn_infos()
        compactions = client.compactions()
        locks = client.locks() if not version.has_write_ids else []
        now = time.time() * 1000
        aborted = frozenset(i.id for i in infos if i.state == "aborted")
        old = [i for i in infos if i.state == "open" and
               (i.started is None or now - i.started >= older_than * 1000)]
        lists = _write_id_lists(client, [t.full_name for t, _ in targets], txns) \
            if version.has_write_ids else {}
        holders = _holders(client, targets, old, hwm, lists) if version.has_write_ids else \
            {(lk.db.lower(), lk.table.lower()): {lk.txn} for lk in locks if lk.txn}
        report = DoctorReport(metastore, str(version))
        for i, (info, only) in enumerate(targets, 1):
            key = (info.db.lower(), info.name.lower())
            view = TableView(info.full_name, version, info.location, older_than=older_than,
                             partitioned=bool(info.partition_keys), txns=txns,
                             write_ids=lists.get(info.full_name.lower()),
                             aborted_txns=aborted if not version.has_write_ids else frozenset())
            view.open_txns = [OpenTxn(o.id, o.user, o.host,
                                      None if o.started is None else (now - o.started) / 1000,
                                      o.id in holders.get(key, set())) for o in old]
            view.compactions = [Compaction(c.id, c.partition, c.type, c.state,
                                           _age(c, now), c.error)
                                for c in compactions
                                if (c.db.lower(), c.table.lower()) == key]
            _files(client, view, info, only, version)
            found = diagnose(view)
            if only is not None:
                found = [f for f in found if f.partition in ("", only)]
            report.tables.append((info.full_name, found))
            if progress:
                progress(i, len(targets))
        report.calls = client.calls
    return report


def _age(c, now: float) -> float | None:
    since = c.enqueued or c.start
    return None if not since else (now - since) / 1000


def _tables(client: Metastore, names: list[str], missing_ok: bool = False
            ) -> list[tuple[TableInfo, str | None]]:
    """The tables named (db.* expands to the database's transactional tables), each with the
    one partition asked for, if any."""
    out: list[tuple[TableInfo, str | None]] = []
    for name in names:
        if name.endswith(".*") and parse_table_name(name[:-2] + ".x") is not None:
            db = name[:-2].lower()
            for t in sorted(client.table_names(db)):
                info = client.table(db, t)
                if info.transactional:
                    out.append((info, None))
            continue
        parsed = parse_table_name(name)
        if parsed is None:
            raise UsageError(f"{name}: give db.table, db.table/k=v or db.*")
        db, table, part = parsed
        try:
            info = client.table(db, table)
        except MetastoreError:
            if missing_ok:
                continue
            raise
        if not info.transactional:
            if missing_ok:
                continue
            raise MetastoreError(f"{info.full_name} is not a transactional table")
        out.append((info, part))
    return out


def _write_id_lists(client: Metastore, names: list[str], txns: ValidTxnList) -> dict:
    out: dict = {}
    for i in range(0, len(names), BATCH):
        out.update(client.write_id_lists(names[i:i + BATCH], txns.text(ranges=False)))
    return out


def _holders(client: Metastore, targets, old, hwm: int, lists: dict) -> dict:
    """(db, table) -> the old open transactions that hold its lowest open write id: for each
    such transaction, the tables' write ids at a snapshot where it alone is open."""
    out: dict = {}
    names = [t.full_name for t, _ in targets]
    for o in old:
        alone = ValidTxnList(high_watermark=hwm, min_open=o.id, exceptions=(o.id,))
        for name, ids in _write_id_lists(client, names, alone).items():
            current = lists.get(name)
            if current is not None and ids.min_open == current.min_open < LONG_MAX:
                db, _, table = name.partition(".")
                out.setdefault((db, table), set()).add(o.id)
    return out


def _files(client: Metastore, view: TableView, info: TableInfo, only: str | None,
           version) -> None:
    """The directories on disk at the metastore's snapshot, and the partitions on disk and
    in the metastore."""
    from ...table.ls import inspect_table

    root = resolve(info.location)
    if info.partition_keys:
        for hp in client.partitions(info):
            if only is None or hp.name == only:
                view.hms_partitions[hp.name] = (hp.location,
                                                kind_of(resolve(hp.location)) == "dir")
    if kind_of(root) != "dir":
        return
    assert view.txns is not None
    snap = Snapshot(version, view.write_ids, view.txns, info.insert_only)
    state = inspect_table(root, snap)
    for part in state.partitions:
        if only is not None and part.partition != only:
            continue
        if part.partition:
            view.disk_partitions[part.partition] = part.location.url
        for e in part.state.entries:
            p = e.parsed
            if p is None or not e.is_dir:
                continue
            low = 0 if isinstance(p, Base) else p.min_write_id
            view.dirs.append(Dir(part.partition, part.location.child(e.name).url, e.name, low,
                                 p.max_write_id, isinstance(p, Base), e.status))
