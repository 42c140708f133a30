"""``acidtool doctor``: the metastore's view of a table against its files (no IO here).

The facts (``TableView``) are gathered by ``commands/check/doctor.py``: the directories on disk
with getAcidState's status at the metastore's snapshot, the partitions on disk and in the
metastore, the table's valid write ids, the old open transactions that hold the table back, and
the table's compactions. ``diagnose`` judges them with the rules HMS001-HMS008 (``HMS_RULES``,
which ``rules`` and ``explain`` list beside validate's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .snapshot import LONG_MAX, ValidTxnList, ValidWriteIdList
from .versions import HiveVersion

MAX_LISTED = 1000  # write ids a finding lists at most (the message says how many there are)


@dataclass(frozen=True)
class HmsRule:
    code: str
    name: str
    severity: str
    summary: str
    what: str
    why: str
    fix: str


HMS_RULES = {r.code: r for r in (
    HmsRule("HMS001", "write-id-never-allocated", "error",
            "A directory of write ids the metastore never allocated for the table",
            "A base or delta on disk whose write ids are above the table's high-water mark in "
            "the metastore (Hive 2.3: above the transaction high-water mark).",
            "Every reader's snapshot stops at the high-water mark: Hive returns none of these "
            "rows, and the metastore may later hand the same write id to another writer.",
            "Re-load the rows under a write id the metastore allocates: `acidtool convert "
            "--write-id auto --metastore ...` from a copy of the files, then move the "
            "directory out of the table."),
    HmsRule("HMS002", "aborted-not-cleaned", "warning",
            "A directory of aborted write ids, not cleaned yet",
            "A base or delta on disk all of whose write ids the metastore lists as aborted.",
            "Readers skip it; it stays until Hive's Cleaner runs after a compaction (which "
            "also lets the metastore forget the aborted transaction).",
            "Let a compaction run (`ALTER TABLE ... COMPACT 'minor'`), or move it out with "
            "`acidtool repair --select ACID021 --apply` and a snapshot."),
    HmsRule("HMS003", "committed-write-id-missing", "error",
            "A committed write id with no directory on disk",
            "A write id the metastore lists as committed for the table that no base or delta "
            "on disk holds.",
            "Its rows are gone: a directory was deleted or moved by hand, or the table's "
            "files were replaced (a copy, a restore) behind the metastore's back.",
            "Find where its delta went (a backup, a trash directory) and put it back; if the "
            "rows are truly gone, say so to the table's users."),
    HmsRule("HMS004", "partition-not-in-metastore", "warning",
            "A partition directory the metastore does not list",
            "A k=v directory under the table that is not one of the table's partitions in "
            "the metastore.",
            "Hive never reads it: queries do not see its rows.",
            "`MSCK REPAIR TABLE t` (or `ALTER TABLE t ADD PARTITION (...)`) adds it, if its "
            "rows belong to the table; otherwise move it out."),
    HmsRule("HMS005", "partition-location-missing", "error",
            "A partition whose location does not exist",
            "A partition the metastore lists whose directory is not on the filesystem.",
            "Queries that reach it fail (FileNotFoundException) or return nothing for it.",
            "Restore the directory, or `ALTER TABLE t DROP PARTITION (...)` if it is gone for "
            "good."),
    HmsRule("HMS006", "old-open-transaction", "warning",
            "An old open transaction holds the table's lowest open write id",
            "An open transaction, older than --older-than, that holds the table's minimum "
            "open write id (Hive 2.3: holds a lock on the table).",
            "Hive's Cleaner removes nothing at or above the lowest open write id: obsolete "
            "directories pile up, and compactions stop below it.",
            "Find the client that opened it (user, host in the finding); if it is dead, "
            "`ABORT TRANSACTIONS <txn>`."),
    HmsRule("HMS007", "compaction-stuck", "warning",
            "A compaction failed, did not initiate, or is stuck",
            "A compaction of the table in the metastore's queue that failed or did not "
            "initiate (and none of the same partition succeeded since), or has been initiated "
            "or working for longer than --older-than (Hive 2.3's and 3.1's metastores keep no "
            "time for an initiated compaction: reported whatever its age).",
            "Deltas keep piling up: every read merges more files; after repeated failures the "
            "Initiator stops asking for compactions of the partition.",
            "Read the error (SHOW COMPACTIONS), fix its cause, and compact again (`ALTER "
            "TABLE ... COMPACT 'major'`, or `acidtool compact --apply` offline)."),
    HmsRule("HMS008", "cleaner-behind", "info",
            "Obsolete directories the Cleaner should have removed",
            "Directories a newer base or delta covers, in a partition where no open write id "
            "holds the Cleaner back.",
            "They take space and listing time; Hive no longer reads them.",
            "Run the Cleaner (a compaction of the partition queues it), or `acidtool repair "
            "--select ACID021 --apply --metastore ...`."),
)}


@dataclass(frozen=True)
class Dir:
    """A base or delta directory on disk, with its status at the metastore's snapshot."""

    partition: str  # "" for an unpartitioned table
    path: str
    name: str
    min_write_id: int
    max_write_id: int
    base: bool
    status: str  # getAcidState's: selected, obsolete, aborted, ignored...


@dataclass(frozen=True)
class OpenTxn:
    txn: int
    user: str
    host: str
    age: float | None  # seconds; None: the metastore does not say (Hive 2.3)
    holds: bool  # holds the table's minimum open write id (2.3: a lock on the table)


@dataclass(frozen=True)
class Compaction:
    id: int | None
    partition: str
    type: str
    state: str
    age: float | None  # seconds since it was enqueued or started
    error: str = ""


@dataclass
class TableView:
    table: str  # db.table
    version: HiveVersion
    location: str
    dirs: list[Dir] = field(default_factory=list)
    disk_partitions: dict[str, str] = field(default_factory=dict)  # name -> path
    hms_partitions: dict[str, tuple[str, bool]] = field(default_factory=dict)  # name -> (loc, exists)
    partitioned: bool = False
    write_ids: ValidWriteIdList | None = None  # Hive 3, 4
    txns: ValidTxnList | None = None
    open_txns: list[OpenTxn] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    older_than: float = 3600.0
    # Hive 2.3: the aborted transactions (its transaction list does not tell them from open)
    aborted_txns: frozenset = frozenset()


@dataclass(frozen=True)
class HmsFinding:
    code: str
    severity: str
    partition: str
    path: str
    message: str
    write_ids: tuple[int, ...] = ()
    txn: int | None = None
    compaction: dict | None = None

    def as_dict(self) -> dict:
        out: dict = {"code": self.code, "severity": self.severity, "partition": self.partition,
                     "path": self.path, "write_ids": list(self.write_ids), "txn": self.txn,
                     "message": self.message}
        if self.compaction is not None:
            out["compaction"] = self.compaction
        return out


def finding(code: str, partition: str, path: str, message: str, **more) -> HmsFinding:
    return HmsFinding(code, HMS_RULES[code].severity, partition, path, message, **more)


def diagnose(t: TableView) -> list[HmsFinding]:
    """Every finding of the rules over one table's view, in code order."""
    out = [*_never_allocated(t), *_aborted(t), *_missing(t), *_partitions(t), *_open(t),
           *_compactions(t), *_cleaner(t)]
    return sorted(out, key=lambda f: (f.code, f.partition, f.path))


def _ids(lo: int, hi: int) -> tuple[int, ...]:
    return tuple(range(lo, min(hi, lo + MAX_LISTED - 1) + 1))


def _count(lo: int, hi: int) -> str:
    n = hi - lo + 1
    return f"write id {lo}" if n == 1 else f"write ids {lo}-{hi} ({n:,})"


def _high_watermark(t: TableView) -> int:
    ids = t.write_ids if t.version.has_write_ids else t.txns
    return ids.high_watermark if ids is not None else LONG_MAX


def _never_allocated(t: TableView):
    hwm = _high_watermark(t)
    kind = "write id" if t.version.has_write_ids else "transaction"
    for d in t.dirs:
        if d.max_write_id > hwm:
            lo = max(d.min_write_id, hwm + 1)
            them = "it" if lo == d.max_write_id else "them"
            yield finding("HMS001", d.partition, d.path,
                          f"{d.name}: {_count(lo, d.max_write_id)} above the metastore's "
                          f"{kind} high-water mark {hwm}: the metastore never allocated {them} "
                          "for this table, so Hive returns none of its rows; re-load them with "
                          "`acidtool convert --write-id auto --metastore ...`",
                          write_ids=_ids(lo, d.max_write_id))


def _aborted_ids(t: TableView) -> ValidWriteIdList | ValidTxnList | None:
    return t.write_ids if t.version.has_write_ids else t.txns


def _aborted(t: TableView):
    ids = _aborted_ids(t)
    if ids is None:
        return
    for d in t.dirs:
        span = range(d.min_write_id, d.max_write_id + 1)
        if d.base or len(span) > MAX_LISTED or \
                not all(ids.is_aborted(w) or w in t.aborted_txns for w in span):
            continue
        yield finding("HMS002", d.partition, d.path,
                      f"{d.name}: {_count(d.min_write_id, d.max_write_id)}, aborted in the "
                      "metastore: readers skip it, and it stays until the Cleaner runs after "
                      "a compaction (`ALTER TABLE ... COMPACT 'minor'`)",
                      write_ids=tuple(span))


def _missing(t: TableView):
    """HMS003, Hive 3 and 4 (write ids are the table's own; 2.3's transactions are not)."""
    ids = t.write_ids
    if not t.version.has_write_ids or ids is None or ids.high_watermark >= LONG_MAX:
        return
    top_base = max((d.max_write_id for d in t.dirs if d.base), default=0)
    held = [(d.min_write_id, d.max_write_id) for d in t.dirs if not d.base]
    missing = [w for w in range(top_base + 1, ids.high_watermark + 1)
               if ids.is_valid(w) and not any(lo <= w <= hi for lo, hi in held)]
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        many = len(missing) > 1
        yield finding("HMS003", "", t.location,
                      f"{'write ids' if many else 'write id'} {shown}: committed in the "
                      f"metastore ({len(missing):,}), with no base or delta on disk holding "
                      f"{'them' if many else 'it'}: {'their' if many else 'its'} rows are "
                      "gone; find where the directories went and put them back",
                      write_ids=tuple(missing[:MAX_LISTED]))


def _partitions(t: TableView):
    if not t.partitioned:
        return
    for name, path in sorted(t.disk_partitions.items()):
        if name and name not in t.hms_partitions:
            yield finding("HMS004", name, path,
                          f"{name} is on disk but not a partition in the metastore: Hive never "
                          f"reads it; `MSCK REPAIR TABLE {t.table}` adds it (or move it out)")
    for name, (location, exists) in sorted(t.hms_partitions.items()):
        if not exists:
            yield finding("HMS005", name, location,
                          f"{name}: its location does not exist: queries that reach it fail; "
                          f"restore it, or `ALTER TABLE {t.table} DROP PARTITION (...)`")


def _age(seconds: float) -> str:
    s = int(seconds)
    return f"{s}s" if s < 120 else f"{s // 60}m" if s < 7200 else \
        f"{s // 3600}h" if s < 172800 else f"{s // 86400}d"


def _open(t: TableView):
    for o in t.open_txns:
        if not o.holds or (o.age is not None and o.age < t.older_than):
            continue
        since = f"open for {_age(o.age)}" if o.age is not None else "open (since when the " \
            "metastore does not say)"
        what = "the table's lowest open write id" if t.version.has_write_ids else \
            "a lock on the table"
        yield finding("HMS006", "", t.location,
                      f"transaction {o.txn} ({o.user}@{o.host}), {since}, holds {what}: Hive's "
                      "Cleaner removes nothing at or above it; if its client is gone, `ABORT "
                      f"TRANSACTIONS {o.txn}`", txn=o.txn)


STUCK = ("initiated", "working")
FAILED = ("failed", "did not initiate", "refused")


def _compactions(t: TableView):
    done_after: dict[str, int] = {}
    for c in t.compactions:
        if c.state in ("succeeded", "ready for cleaning", "cleaning") and c.id is not None:
            done_after[c.partition] = max(done_after.get(c.partition, -1), c.id)
    for c in t.compactions:
        about = {"id": c.id, "type": c.type, "state": c.state}
        label = f"{c.type} compaction {c.id}" + (f" of {c.partition}" if c.partition else "")
        path = t.disk_partitions.get(c.partition, t.location)
        if c.state in FAILED:
            if c.id is not None and done_after.get(c.partition, -1) > c.id:
                continue  # a later compaction of the partition succeeded
            yield finding("HMS007", c.partition, path,
                          f"{label} {c.state}"
                          + (f" ({c.error})" if c.error else "")
                          + ": deltas keep piling up; read SHOW COMPACTIONS, fix the cause "
                          "and compact again", compaction=about)
        elif c.state in STUCK and (c.age is None or c.age >= t.older_than):
            # (Hive 2.3's and 3.1's metastores keep no time for an initiated compaction)
            since = f"for {_age(c.age)}" if c.age is not None else \
                "(since when the metastore does not say)"
            yield finding("HMS007", c.partition, path,
                          f"{label} {c.state} {since}: no worker "
                          "is taking it (hive.compactor.worker.threads) or it hangs",
                          compaction=about)


def _cleaner(t: TableView):
    ids = t.write_ids if t.version.has_write_ids else t.txns
    lowest_open = ids.min_open if ids is not None else LONG_MAX
    by_part: dict[str, list[Dir]] = {}
    for d in t.dirs:
        if d.status == "obsolete" and d.max_write_id < lowest_open:
            by_part.setdefault(d.partition, []).append(d)
    for part, dirs in sorted(by_part.items()):
        names = ", ".join(d.name for d in dirs[:5]) + (" ..." if len(dirs) > 5 else "")
        path = t.disk_partitions.get(part, t.location)
        yield finding("HMS008", part, path,
                      f"{len(dirs)} obsolete director{'ies' if len(dirs) > 1 else 'y'} "
                      f"({names}) that no open transaction holds back: Hive's Cleaner should "
                      "have removed them; a compaction of the partition queues it, or "
                      "`acidtool repair --select ACID021 --apply --metastore ...`")
