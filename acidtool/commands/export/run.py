"""``acidtool export --to iceberg``: the rows Hive returns at a snapshot, into an Iceberg table,
in one Iceberg commit.

A plan first (``plan_export``, a value): which snapshot is exported, into which table, and
what it will do there: create it, bring it up to date (``--incremental``), or nothing (the
table already holds this very snapshot). Then ``run_export`` reads and writes, and commits
once; a failure or an interruption before that commit leaves the Iceberg table at its last
snapshot.

Every row carries its identity in the Hive table: ``_hive_row_id`` (Hive's ROW__ID,
``writeid, bucketid, rowid``) for a full ACID table, ``_hive_file`` (the data file, relative to
the table) for an insert-only one, whose files never change. ROW__IDs repeat across
partitions, so a row is known by its partition and its ROW__ID. An incremental export
compares the keys the Hive snapshot returns with the keys the Iceberg table holds, partition
by partition: rows whose key Iceberg lacks are appended, rows Iceberg holds whose key Hive no
longer returns are deleted (their files rewritten without them). Hive 2.3 without
split-update keeps a row's ROW__ID through an UPDATE, so there a row whose last event is newer
than the snapshot exported before is replaced as well. Comparing with what the Iceberg table
really holds, rather than with a second read of the old snapshot, stays exact even for a
snapshot that was "everything committed" while a writer was still at work.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass, field
from itertools import groupby
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ...core.errors import UsageError
from ...core.javanum import LONG_MAX
from ...core.names import Delta
from ...core.snapshot import ValidTxnList
from ...core.version import __version__
from ...io import iceberg
from ...table.read import partition_values, valid_mask
from ...table.target import Target
from .rows import Buffer, Job, ReadAhead, group_rows, unit_rows
from .schema import EVENT, FILE_KEY, ROW_ID, rows_schema

if TYPE_CHECKING:
    from ...table.readplan import ReadPlan

# The snapshot summary's properties an export records (docs/export.md lists them).
P_SOURCE = "acidtool.source"
P_VERSION = "acidtool.hive-version"
P_WRITE_IDS = "acidtool.write-ids"  # Hive 3 and 4
P_TXNS = "acidtool.txns"  # Hive 2.3, whose snapshot is a transaction list
P_PARTITIONS = "acidtool.partitions"
P_MODE = "acidtool.mode"
# what the snapshot selects, per partition (a hash of the names and sizes of its directories'
# files): a write id converted below the recorded high watermark changes it, the snapshot
# string not
P_STATE = "acidtool.state"
P_TABLE = "acidtool.hive-table"
P_TOOL = "acidtool.version"


@dataclass(frozen=True)
class ExportOptions:
    catalog: str
    table: str  # NAMESPACE.NAME
    incremental: bool = False
    partitions: tuple[str, ...] = ()
    warehouse: str | None = None
    truncate_timestamps: bool = False


@dataclass(frozen=True)
class Source:
    """What is exported: the table, its Hive, and the snapshot, made concrete (an "everything
    committed" snapshot is recorded as the highest write id the table holds)."""

    url: str
    hive_version: str
    snapshot: str
    has_write_ids: bool
    partitions: tuple[str, ...]
    insert_only: bool
    hive_table: str | None = None
    given: str = ""  # the path (or table name) as the command line gave it
    state: str = ""  # the table's state the snapshot reads (``table_state``)
    # no snapshot given: the highest write id (transaction) found, taken as committed with
    # every one below it
    assumed: int | None = None

    @property
    def shown(self) -> str:
        return self.given or self.url

    def properties(self, mode: str) -> dict[str, str]:
        out = {P_SOURCE: self.url, P_VERSION: self.hive_version,
               P_WRITE_IDS if self.has_write_ids else P_TXNS: self.snapshot,
               P_PARTITIONS: json.dumps(sorted(self.partitions)), P_MODE: mode,
               P_STATE: self.state, P_TOOL: __version__}
        if self.hive_table:
            out[P_TABLE] = self.hive_table
        return out

    def same_as(self, recorded: dict[str, str]) -> bool:
        key = P_WRITE_IDS if self.has_write_ids else P_TXNS
        return (recorded.get(P_SOURCE) == self.url and recorded.get(key) == self.snapshot
                and recorded.get(P_PARTITIONS, "[]") == json.dumps(sorted(self.partitions))
                and recorded.get(P_STATE) == self.state)


@dataclass(frozen=True)
class ExportPlan:
    source: Source
    catalog: iceberg.CatalogSpec
    table: str
    action: str  # "create", "incremental" or "nothing"
    why: str
    previous: dict[str, str] | None = None  # what the last export recorded
    partitions: int = 0  # Hive partitions read

    def describe(self) -> dict:
        prev = self.previous or {}
        return {"action": self.action, "why": self.why, "table": self.table,
                "catalog": self.catalog.describe(), "source": self.source.url,
                "hive_version": self.source.hive_version, "snapshot": self.source.snapshot,
                "previous_snapshot": prev.get(P_WRITE_IDS) or prev.get(P_TXNS),
                "partitions": self.partitions,
                "key_column": FILE_KEY if self.source.insert_only else ROW_ID}


@dataclass
class ExportResult:
    plan: ExportPlan
    snapshot_id: int | None = None
    rows_added: int = 0
    rows_deleted: int = 0
    files_added: int = 0
    files_removed: int = 0
    columns_added: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class ExportWork:
    """What ``plan_export`` read and ``run_export`` goes on with (not part of the plan)."""

    read_plan: ReadPlan
    catalog: Any  # a pyiceberg Catalog
    ident: tuple[str, ...]
    table: Any  # the pyiceberg Table, None when it is to be made
    arrow: pa.Schema  # the Iceberg table's rows, in Arrow
    partition_columns: list[str]
    gone: list = field(default_factory=list)  # files of partitions Hive no longer has
    ahead: ReadAhead | None = None  # the first group's rows, being read (``read_ahead``)


def plan_export(target: Target, opts: ExportOptions, given: str = "", *,
                dry_run: bool = False, read_ahead: bool = False
                ) -> tuple[ExportPlan, ExportWork]:
    """List the Hive table, name the snapshot, look at the Iceberg table: the plan. With
    ``read_ahead``, the first partition's rows are read meanwhile (``rows.ReadAhead``), for
    ``run_export`` to write if the table is new."""
    from ...table.options import ReadOptions
    from ...table.readplan import plan_read

    iceberg.require_pyiceberg()
    ident = iceberg.identifier(opts.table)
    snap = target.snapshot
    version = snap.hive_version
    # the snapshot already resolved (the metastore is not asked for a second, newer one); the
    # metastore still names the table's partition column types and its column names
    path = target.url
    if target.metastore is not None and target.table is not None:
        path = target.table.full_name + (f"/{target.partition.name}" if target.partition
                                         else "")
    read = plan_read(ReadOptions(
        path, str(snap.write_ids) if version.has_write_ids else None,
        str(snap.txns), str(version), metastore=target.metastore,
        table=target.table.full_name if target.table else None,
        insert_only=snap.insert_only, with_row_id=not snap.insert_only))
    # the snapshot made concrete over the whole table (whatever --partition selects), then
    # the units of the partitions asked for
    concrete, top = _concrete(snap, read)
    wanted = {p.strip("/") for p in opts.partitions}
    if wanted:
        have = {u.reader.part.partition for u in read.units}
        missing = sorted(wanted - have)
        if missing:
            raise UsageError(f"--partition {missing[0]}: no such partition in {given or target.url}"
                             f" (it has {', '.join(sorted(have)[:5]) or 'none'}"
                             f"{', ...' if len(have) > 5 else ''})")
        read = dataclasses.replace(read, units=[u for u in read.units
                                                if u.reader.part.partition in wanted])
    readers = {id(u.reader): u.reader for u in read.units}
    source = Source(_source_url(target.url), str(version), concrete, version.has_write_ids,
                    tuple(sorted(p.strip("/") for p in opts.partitions)), snap.insert_only,
                    target.table.full_name if target.table else None, given,
                    table_state(read), top if snap.source == "default" else None)
    columns = _partition_columns(read)
    arrow = rows_schema(read.schema, snap.insert_only)
    ahead = None
    if read_ahead and not dry_run and read.units:
        ahead = ReadAhead(by_partition(read.units)[0], Job(
            arrow, read.schema, opts.truncate_timestamps, snap.insert_only, None, None))
    try:
        plan, work = _plan_iceberg(opts, ident, source, read, readers, arrow, columns,
                                   dry_run)
    except BaseException:
        _drop(ahead)
        raise
    work.ahead = ahead
    return plan, work


def _plan_iceberg(opts: ExportOptions, ident: tuple[str, ...], source: Source, read,
                  readers: dict, arrow: pa.Schema, columns: list[str], dry_run: bool
                  ) -> tuple[ExportPlan, ExportWork]:
    """The Iceberg side of ``plan_export``: the catalog, the table if it exists, the action."""
    spec = iceberg.catalog_spec(opts.catalog, opts.warehouse)
    if dry_run and not iceberg.exists(spec):  # (opening a local catalog makes it)
        catalog, table = None, None
    else:
        catalog = iceberg.open_catalog(spec)
        table = iceberg.load(catalog, ident)
    work = ExportWork(read, catalog, ident, table, arrow, columns)
    name = ".".join(ident)
    plan = ExportPlan(source, spec, name, "create", f"{name} does not exist: it is created "
                      "with the rows of this snapshot, in one commit", None, len(
                          {r.part.partition for r in readers.values()}))
    if table is None:
        if len([f for f in arrow if f.name not in (ROW_ID, FILE_KEY)]) == len(columns):
            raise UsageError(f"{source.shown}: no data file at this snapshot to take the "
                             "table's columns from: nothing to export")
        return plan, work
    previous = next(iceberg.lineage(table, P_SOURCE), None)
    if previous is None:
        raise UsageError(f"{name} exists and holds no acidtool export (no snapshot of it "
                         f"records {P_SOURCE}): export into a new table")
    if previous.get(P_SOURCE) != source.url:
        raise UsageError(f"{name} holds an export of {previous.get(P_SOURCE)}, not of "
                         f"{source.url}: export into a new table")
    prev_snap = previous.get(P_WRITE_IDS) or previous.get(P_TXNS)
    if previous.get(P_VERSION) != source.hive_version:
        raise UsageError(f"{name} was exported with Hive {previous.get(P_VERSION)}'s rules; "
                         f"this export uses Hive {source.hive_version}'s (--hive-version)")
    if source.same_as(previous):
        if source.assumed is not None:  # (the string's table is null: no snapshot was given)
            kind = "write id" if source.has_write_ids else "transaction"
            prev_snap = f"every {kind} up to {source.assumed}"
        return _replace(plan, "nothing", f"{name} already holds this snapshot ({prev_snap}) "
                        "of the table, and the table's files it reads are unchanged: nothing "
                        "to do", previous), work
    if not opts.incremental:
        raise UsageError(f"{name} already holds an export of this table, at {prev_snap}: give "
                         "--incremental to apply what changed since, or export into a new table")
    key = FILE_KEY if source.insert_only else ROW_ID
    if key not in table.schema().column_names:
        raise UsageError(f"{name} has no {key} column (dropped?): an incremental export "
                         "matches rows by it; export into a new table instead")
    return _replace(plan, "incremental", f"{name} holds {prev_snap}: the rows that changed "
                    "since are deleted and appended, in one commit", previous), work


def _replace(plan: ExportPlan, action: str, why: str, previous: dict[str, str]) -> ExportPlan:
    return dataclasses.replace(plan, action=action, why=why, previous=previous)


def _source_url(url: str) -> str:
    return url if "://" in url else os.path.abspath(url)


def table_state(read) -> str:
    """What the snapshot reads, as a hash: per partition, the name of every directory and
    original file it selects, with the names and sizes of their files. Two exports of the same
    snapshot string read different rows when a writer (``convert --write-id 4`` below the
    high watermark, a compaction, a repair) changed the table between them: this tells."""
    import hashlib

    digest = hashlib.sha256()
    parts = {u.reader.part.partition: u.reader.part for u in read.units}
    for name in sorted(parts):
        for e in sorted(parts[name].state.entries, key=lambda e: e.name):
            if e.status in ("selected", "original"):
                files = sorted((f.path, f.size) for f in e.files) if e.is_dir else e.size
                digest.update(json.dumps([name, e.name, files]).encode())
    return digest.hexdigest()[:32]


def _concrete(snap, read) -> tuple[str, int | None]:
    """The snapshot as a list naming its high watermark: "everything committed" becomes
    "everything up to the highest write id (transaction id in Hive 2.3) the table holds"
    (that id second)."""
    version = snap.hive_version
    ids = snap.write_ids if version.has_write_ids else snap.txns
    if ids.high_watermark != LONG_MAX:
        return str(ids), None
    top = 0
    for part in {id(u.reader): u.reader.part for u in read.units}.values():
        for e in part.state.entries:
            p = e.parsed
            if p is not None:
                top = max(top, p.max_write_id if isinstance(p, Delta) else p.write_id)
    if version.has_write_ids:
        return f"{ids.table or 'null'}:{top}:{LONG_MAX}::", top
    return f"{top}:{LONG_MAX}:", top


def _partition_columns(read) -> list[str]:
    if read.partition_types:
        return list(read.partition_types)
    for u in read.units:
        return [k for k, _ in partition_values(u.reader.part.partition)]
    return []


# ------------------------------------------------------------------------------------------------
# Running it: groups of units (a partition's, or one unit), each written by a FileWriter, on the
# driver or on an executor; then the one commit, on the driver


@dataclass
class Counts:
    added: int = 0
    deleted: int = 0

    def __iadd__(self, other: "Counts") -> "Counts":
        self.added += other.added
        self.deleted += other.deleted
        return self


def run_export(plan: ExportPlan, work: ExportWork, opts: ExportOptions,
               progress: Callable[[int, int], None] | None = None,
               runner: Callable | None = None) -> ExportResult:
    """Write and commit. ``runner(job, groups)``, if given, writes the groups elsewhere (on
    Spark) and gives back, per group, the files written, the files dropped and the counts."""
    started = time.monotonic()
    result = ExportResult(plan)
    ahead, work.ahead = work.ahead, None
    if plan.action != "create" or runner is not None:
        _drop(ahead)  # (only a new table's own writes take it)
        ahead = None
    try:
        if plan.action == "nothing":
            return result
        counts, commit = _write(plan, work, opts, result, progress, runner, ahead)
    finally:
        _drop(ahead)  # (closes its files, if the first group did not read them all)
    result.rows_added, result.rows_deleted = counts.added, counts.deleted
    return finished(result, work, commit, started)


def finished(result: ExportResult, work: ExportWork, commit: iceberg.Commit,
             started: float) -> ExportResult:
    """``result`` with what the commit made: its files, the table's snapshot, the time."""
    result.files_added = len(commit.written)
    result.files_removed = len(commit.dropped)
    table = iceberg.load(work.catalog, work.ident)
    snap = table.current_snapshot() if table is not None else None
    result.snapshot_id = snap.snapshot_id if snap is not None else None
    result.seconds = time.monotonic() - started
    return result


def _drop(ahead: ReadAhead | None) -> None:
    if ahead is not None:
        ahead.drop()


def _write(plan: ExportPlan, work: ExportWork, opts: ExportOptions, result: ExportResult,
           progress: Callable[[int, int], None] | None, runner: Callable | None,
           ahead: ReadAhead | None) -> tuple[Counts, iceberg.Commit]:
    """The data files written and committed (or, on failure, removed); ``ahead``: the first
    group's rows, read ahead."""
    mode = "full" if plan.action == "create" else "incremental"
    if plan.action == "create":
        commit = iceberg.Commit.create(work.catalog, work.ident, work.arrow,
                                       work.partition_columns, {})
    else:
        commit = iceberg.Commit.on(work.catalog, work.table)
        if len(work.arrow) > 1 + len(work.partition_columns):  # not an empty snapshot
            result.columns_added = commit.evolve(work.arrow)
    try:
        job = Job(work.arrow, _read_schema(work), opts.truncate_timestamps,
                  plan.source.insert_only, commit.metadata, commit.io, _before_txns(plan))
        groups = _groups(plan, work, job)
        counts = Counts()
        if runner is not None:
            failed = None
            for written, dropped, c, error in runner(job, groups):
                commit.written.extend(written)  # all of them, so that a failure removes all
                for f in dropped:
                    commit.drop(f)
                counts += c
                failed = failed or error
            if failed is not None:
                raise failed
        else:
            done = [0]

            def unit_done() -> None:
                done[0] += 1
                if progress:
                    progress(done[0], len(work.read_plan.units))

            for i, (units, tasks) in enumerate(groups):
                rows = ahead.rows() if i == 0 and ahead is not None else None
                counts += run_group(commit, job, units, tasks, unit_done, rows)
        if plan.action == "incremental" and not plan.source.partitions:
            # partitions Hive no longer has (dropped, or emptied): all their rows go
            for task in work.gone:
                commit.drop(task.file)
                counts.deleted += task.file.record_count
        commit.commit(plan.source.properties(mode))
    except BaseException:
        commit.abandon()
        raise
    return counts, commit


def _read_schema(work: ExportWork) -> pa.Schema:
    return work.read_plan.schema


def _groups(plan: ExportPlan, work: ExportWork, job: Job) -> list[tuple[list, list | None]]:
    """The groups of units to write: for a new table, each partition's units (on Spark each
    unit alone); for an incremental export, each partition's units with the Iceberg table's
    files of that partition (``work.gone`` is left with the files of partitions Hive no longer
    has)."""
    groups = by_partition(work.read_plan.units)
    if plan.action == "create":
        return [(units, None) for units in groups]
    table = work.table
    existing = iceberg.files_by_partition(table)
    spec, schema = table.spec(), table.schema()
    if job.before is not None:
        for u in work.read_plan.units:
            u.reader.with_event = u.reader.legacy
    out: list[tuple[list, list | None]] = []
    for units in groups:
        pkey = iceberg.partition_key(spec, schema, partition_row(units[0], work))
        out.append((units, existing.pop(pkey, [])))
    work.gone = [task for tasks in existing.values() for task in tasks]
    return out


def by_partition(units: list) -> list[list]:
    """The read plan's units in groups, a partition's each."""
    return [list(g) for _, g in groupby(units, key=lambda u: id(u.reader))]


def run_group(writer: iceberg.FileWriter, job: Job, units: list, tasks: list | None,
              unit_done: Callable[[], None] | None = None,
              rows: Iterator[pa.Table | None] | None = None) -> Counts:
    """One group written: a new table's units (``rows``: theirs, read ahead), or a partition
    brought up to date (``tasks``, its Iceberg files). ``unit_done()`` is told as each unit
    has been read."""
    if tasks is None:
        return _write_units(writer, job, units, unit_done, rows)
    return _sync_partition(writer, job, units, tasks, unit_done)


def _write_units(writer: iceberg.FileWriter, job: Job, units: list,
                 unit_done: Callable[[], None] | None = None,
                 rows: Iterator[pa.Table | None] | None = None) -> Counts:
    """Every row of ``units`` (of one partition; ``rows``, where they are being read already)
    into new data files."""
    buffer = Buffer(writer)
    for t in group_rows(units, job) if rows is None else rows:
        if t is not None:
            buffer.add(t)
        elif unit_done:
            unit_done()
    buffer.flush()
    writer.settle()
    return Counts(added=buffer.rows)


def _keys(t: pa.Table, insert_only: bool) -> pa.Table:
    """The key columns of rows (``k0``.. without the partition, which is the same for all)."""
    if insert_only:
        return pa.table({"k0": t.column(FILE_KEY)})
    rid = t.column(ROW_ID).combine_chunks()
    return pa.table({"k0": rid.field(0), "k1": rid.field(1), "k2": rid.field(2)})


def _minus(rows: pa.Table, keys: pa.Table, other: pa.Table) -> pa.Table:
    """The rows of ``rows`` (whose keys are ``keys``) whose key is not among ``other``'s."""
    if other.num_rows == 0 or rows.num_rows == 0:
        return rows
    pos = keys.append_column("__pos", pa.array(range(rows.num_rows), pa.int64()))
    kept = pos.join(other, keys=list(keys.column_names), join_type="left anti")
    at = kept.column("__pos")
    return rows.take(pc.take(at, pc.sort_indices(at)))  # (a join keeps no order)


def _sync_partition(writer: iceberg.FileWriter, job: Job, units: list, tasks: list,
                    unit_done: Callable[[], None] | None = None) -> Counts:
    """One partition brought up to date: rows whose key the Iceberg table's ``tasks`` (its
    files of this partition) lack are appended; files holding keys Hive no longer returns are
    rewritten without them (or dropped)."""
    insert_only, key_column = job.insert_only, job.key_column
    files = iceberg.read_columns(job.metadata, job.io, tasks, [key_column])
    held = pa.concat_tables([_keys(f.keys, insert_only) for f in files]) if files else \
        _keys(pa.table({key_column: pa.array([], job.arrow.field(key_column).type)}),
              insert_only)
    buffer = Buffer(writer)
    kept_keys = []
    for unit in units:
        for t in unit_rows(unit, job):
            keys = _keys(t, insert_only)
            changed = None
            if EVENT in t.column_names:  # a legacy UPDATE keeps the ROW__ID: the row changed
                assert job.before is not None, "events are read only with the snapshot before"
                changed = pc.invert(valid_mask(job.before, t.column(EVENT).combine_chunks()))
                t = t.drop_columns([EVENT])
            same = t if changed is None else t.filter(pc.invert(changed))
            kept_keys.append(keys if changed is None else keys.filter(pc.invert(changed)))
            new = _minus(same, _keys(same, insert_only), held)
            if changed is not None:
                new = pa.concat_tables([new, t.filter(changed)])
            buffer.add(new)
        if unit_done:
            unit_done()
    buffer.flush()
    kept = pa.concat_tables(kept_keys) if kept_keys else held.slice(0, 0)
    counts = Counts(added=buffer.rows)
    for f in files:
        counts.deleted += _drop_rows(writer, job, f, kept)
    writer.settle()
    return counts


def _drop_rows(writer: iceberg.FileWriter, job: Job, f: iceberg.FileKeys, kept: pa.Table
               ) -> int:
    """Rewrite one Iceberg data file without its rows whose key Hive no longer returns; how
    many rows went."""
    keys = _keys(f.keys, job.insert_only)
    gone = _minus(keys, keys, kept)
    if gone.num_rows == 0:
        return 0
    writer.drop(f.task.file)
    if gone.num_rows < keys.num_rows:
        rows = iceberg.read_file(job.metadata, job.io, f.task)
        writer.write(_minus(rows, _keys(rows, job.insert_only), gone))
    return gone.num_rows


def _before_txns(plan: ExportPlan) -> ValidTxnList | None:
    """Hive 2.3's snapshot exported before, which tells a legacy table's rows updated since."""
    prev = plan.previous or {}
    if plan.action != "incremental" or plan.source.has_write_ids or P_TXNS not in prev:
        return None
    return ValidTxnList.parse_any(prev[P_TXNS])


def partition_row(unit, work: ExportWork) -> pa.Table:
    """One row holding a unit's typed partition values (its partition's Iceberg key)."""
    values = dict(unit.values)
    cols = {c: pa.array([values.get(c)], work.arrow.field(c).type)
            for c in work.partition_columns}
    return pa.table(cols) if cols else pa.table({"_": [0]})
