"""``acidtool compact``: Hive's compaction, offline, in this process.

``plan_compaction`` says per partition what a major or minor compaction reads and writes
(``core.compact``), at the compactor's snapshot. ``compact`` carries the plan out through the
commit protocol every writer uses: the table's lock for the whole run, a journal, a staging
directory of a unique hidden name per partition (a ``Scratch`` step), the new directories written
there, the inputs checked unchanged, then each directory renamed into the partition (``PlaceDir``
steps). Nothing is deleted: the directories compacted stay, obsolete, for Hive's Cleaner (or
``repair --select ACID021``). ``undo JOURNAL`` removes what a compaction wrote.

Files are written as Hive's compactor writes them (``io.eventwriter``): the merge is ``read``'s
own (``PartitionReader.unit_events``), a bucket at a time, streamed to disk; events come out in
(originalTransaction, bucket, rowId) order, and a bucket whose inputs do not arrive in that order
is written again from memory, sorted.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import pyarrow as pa

from ..core.compact import Job, Written, plan_job, stops_below
from ..core.compaction import Settings, compactor_snapshot, decide
from ..core.errors import AcidToolError, Interrupted, PathError, Terminated, UsageError
from ..core.names import ACIDTOOL_STAGING_PREFIX, FLUSH_LENGTH_SUFFIX, bucket_file_name
from ..core.snapshot import Snapshot
from ..io.commit import LockedError, TableLock, exclusive_journal, require_inside, shielded, table_of
from ..io.eventwriter import EventFileWriter
from ..io.fs import Location, resolve
from ..io.journal import (
    JOURNAL_VERSION,
    Journal,
    PlaceDir,
    Scratch,
    Step,
    exists,
    fault_point,
    read_journal,
    remove_empty_dir,
    sha256_of,
    state_dir,
    step_of,
)
from ..io.orc import ACID_COLUMNS, open_orc
from ..io.plain import plain_batches
from .ls import PartitionState, inspect_table
from .read import PartitionReader
from .repair_apply import (
    finish_interrupted,
    journal_unfinished,
    require_journal_inside,
    roll_back,
)
from .rownames import row_named, row_names_of
from .target import Target

ACID_VERSION_FILE = "_orc_acid_version"
METADATA_FILE = "_metadata_acid"
COMPACTED_MARKER = b'{"thisFileVersion":"0","dataFormat":"compacted"}'


@dataclass(frozen=True)
class CompactOptions:
    kind: str | None = None  # "major", "minor", or None: what the Initiator would pick
    partition: str | None = None  # only this partition (k=v[/k2=v2])
    journal: str | None = None
    visibility: int | None = None  # Hive 4: the compactor's transaction (``_vT``)
    settings: Settings = field(default_factory=Settings.of)


@dataclass(frozen=True)
class PartitionJob:
    partition: str
    url: str
    job: Job
    files_in: int = 0
    events_in: int = 0

    def as_dict(self) -> dict:
        return {"partition": self.partition, "path": self.url, **self.job.as_dict(),
                "files_in": self.files_in, "events_in": self.events_in}


@dataclass(frozen=True)
class CompactPlan:
    path: str
    snapshot: Snapshot  # the reader's snapshot given
    compactor: Snapshot  # the compactor's, made of it
    parts: tuple[PartitionJob, ...]
    column_names: tuple[str, ...] | None = None

    @property
    def due(self) -> list[PartitionJob]:
        return [p for p in self.parts if p.job.kind]

    @property
    def blocked(self) -> list[PartitionJob]:
        return [p for p in self.parts if p.job.blocked]


@dataclass
class CompactResult:
    plan: CompactPlan
    journal: str | None
    written: dict[str, dict] = field(default_factory=dict)  # partition -> what was written
    failed: dict[str, str] = field(default_factory=dict)  # partition -> why
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed


# ------------------------------------------------------------------------------------------------
# The plan


def plan_compaction(target: Target, opts: CompactOptions) -> CompactPlan:
    snap = target.snapshot
    compactor = compactor_snapshot(snap)
    table = inspect_table(target.url, compactor)
    parts = [p for p in table.partitions
             if opts.partition is None or p.partition == opts.partition.strip("/")]
    if opts.partition is not None and not parts:
        known = ", ".join(p.partition for p in table.partitions[:5] if p.partition)
        raise UsageError(f"--partition {opts.partition}: no such partition in {target.url}"
                         + (f" (it has {known}...)" if known else " (it is not partitioned)"))
    stop = stops_below(snap, compactor)
    props = target.table.parameters if target.table is not None else None
    settings = opts.settings.for_table(props)
    out = []
    for part in parts:
        kind, reason = opts.kind, ""
        if kind is None and part.state.error is None:
            decision = decide(part.state, snap.hive_version, settings,
                              insert_only=snap.insert_only)
            kind, reason = decision.kind, "the Initiator's choice: " + decision.reason
        job = plan_job(part.state, kind, snap.hive_version, reason=reason,
                       insert_only=snap.insert_only, visibility=opts.visibility,
                       stops_below=stop)
        files = _files_read(part, job) if job.kind else []
        events = 0
        if files and not snap.insert_only:
            reader = PartitionReader(part, compactor)
            for rel in files:
                footer = reader.footer(rel)
                events += footer.rows if footer is not None else 0
        out.append(PartitionJob(part.partition, part.location.url, job, len(files), events))
    names = tuple(target.column_names) if target.column_names else None
    return CompactPlan(target.url, snap, compactor, tuple(out), names)


def _files_read(part: PartitionState, job: Job) -> list[str]:
    """The data files (relative to the partition) in what the job reads."""
    out = []
    for name in job.reads:
        entry = part.state.entry(name)
        if not entry.is_dir:
            out.append(name)
            continue
        out.extend(f"{name}/{f.path}" for f in entry.files
                   if not any(c.startswith(("_", ".")) for c in f.path.split("/"))
                   and not f.path.endswith(FLUSH_LENGTH_SUFFIX))
    return out


# ------------------------------------------------------------------------------------------------
# Apply


def compact(target: Target, opts: CompactOptions,
            progress: Callable[[str], None] | None = None) -> CompactResult:
    """Take the table's lock, roll back what an interrupted compaction of it left, plan once
    under the lock, and compact every partition that is due."""
    started = time.perf_counter()
    root = resolve(target.url)
    lock = TableLock(table_of(root), None, "compact").acquire()
    restore = False
    try:
        restore = _finish_stale(lock)
        plan = plan_compaction(target, opts)
        if not plan.due:
            return CompactResult(plan, None, elapsed=time.perf_counter() - started)
        run = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:8]
        path = os.path.abspath(opts.journal) if opts.journal else \
            str(state_dir() / "journals" / f"compact-{run}.jsonl")
        exclusive_journal(path)
        lock.name_journal(path)
        journal = Journal(path)
        result = CompactResult(plan, path)
        try:
            journal.record(record="begin", version=JOURNAL_VERSION, run=run, path=root.url,
                           quarantine="", hive_version=str(plan.snapshot.hive_version),
                           command="compact", compactor_snapshot=plan.compactor.describe())
            ids = {p.partition: f"a{i}" for i, p in enumerate(plan.due, 1)}
            journal.record(record="plan", actions=[{"id": ids[p.partition], "action": "compact",
                                                    **p.as_dict()} for p in plan.due])
            for p in plan.due:
                if progress:
                    progress(f"{p.job.kind} compaction of {p.partition or '(table root)'}: "
                             f"{p.files_in} files, {p.events_in:,} events")
                _compact_one(plan, p, ids[p.partition], journal, result)
            journal.record(record="end", result="ok" if result.ok else "failed")
        finally:
            journal.close()
        result.elapsed = time.perf_counter() - started
        return result
    finally:
        lock.release(restore=restore)


def _finish_stale(lock: TableLock) -> bool:
    """Roll back the unfinished work of a compaction that died holding this table's lock.
    True when the lock belongs to another command's unfinished run (it is put back)."""
    stale = lock.stale
    if stale is None or not lock.stale_is_ours() or not stale.get("journal"):
        return False
    journal = stale["journal"]
    if not journal_unfinished(journal):
        return False
    records = read_journal(journal)
    if records[0].get("command") != "compact":
        raise _Refused(f"an interrupted repair (journal {journal}) holds this table's lock: "
                       f"finish it with `acidtool repair {records[0].get('path')} --apply`, or "
                       f"`acidtool undo {journal}`, then compact")
    require_journal_inside(records, resolve(records[0]["path"]))
    finish_interrupted(records)
    for rec in records:  # a finished partition's staging directory, empty, left by the kill
        for item in rec.get("actions", []) if rec.get("record") == "steps" else []:
            for raw in item["steps"]:
                step = step_of(raw)
                if isinstance(step, Scratch) and exists(step.path):
                    remove_empty_dir(step.path)
    Journal(journal).record(record="end", result="rolled back by the next compaction")
    return False


class _Refused(LockedError):
    pass


def _compact_one(plan: CompactPlan, p: PartitionJob, aid: str, journal: Journal,
                 result: CompactResult) -> None:
    ploc = resolve(p.url)
    table = table_of(ploc)
    staging = ploc.child(f"{ACIDTOOL_STAGING_PREFIX}{uuid.uuid4().hex[:12]}")
    require_inside(table, staging, *[ploc.child(w.name) for w in p.job.writes],
                   what="the compaction")
    scratch = Scratch(staging)
    taken: list[Step] = []
    journal.record(record="steps", actions=[{"id": aid, "steps": [scratch.record()]}])
    try:
        taken.append(scratch)
        scratch.take()
        (part,) = inspect_table(p.url, plan.compactor).partitions
        written = _write_outputs(plan, p, part, staging)
        fault_point()  # everything staged
        _require_unchanged(plan, p, _read_entries(part, p.job))
        # a delete delta goes in before its delta: each alone hides rows, so the two renames
        # run back to back, shielded from signals (docs/compact.md)
        order = sorted(p.job.writes, key=lambda w: w.kind != "delete_delta")
        places = [PlaceDir(staging.child(w.name), ploc.child(w.name),
                           tuple(sorted(written[w.name]["sha256"].items()))) for w in order]
        journal.record(record="steps", actions=[{"id": aid,
                                                  "steps": [s.record() for s in places]}])
        with shielded():
            for place in places:
                taken.append(place)
                place.take()
        journal.record(record="done", ids=[aid])
        try:
            remove_empty_dir(staging)  # emptied by the renames
        except OSError:
            pass
        result.written[p.partition] = {w: {k: v for k, v in info.items() if k != "sha256"}
                                       for w, info in written.items()}
    except KeyboardInterrupt as exc:
        problems = roll_back(taken)
        with shielded():
            journal.record(record="interrupted", id=aid, problems=problems)
        raise Interrupted(f"interrupted while compacting {p.url}, which was rolled back"
                          + (f" (problems: {'; '.join(problems)})" if problems else "")
                          + f"; `acidtool undo {journal.path}` reverses what was finished",
                          15 if isinstance(exc, Terminated) else 2) from None
    except (AcidToolError, OSError, ValueError, pa.ArrowException) as exc:
        problems = roll_back(taken)
        reason = (str(exc) or type(exc).__name__) + (
            f" (roll-back problems: {'; '.join(problems)})" if problems else "")
        journal.record(record="failed", id=aid, reason=reason)
        result.failed[p.partition] = reason


def _read_entries(part: PartitionState, job: Job) -> set:
    return {(e.name, e.files) for e in part.state.entries if e.name in job.reads}


def _require_unchanged(plan: CompactPlan, p: PartitionJob, was: set) -> None:
    """Under the lock, before the commit: the partition still selects what was read (names
    and sizes of its files), and no directory of the names to be written appeared."""
    now = inspect_table(p.url, plan.compactor).partitions
    state = now[0].state if now else None
    if state is None or {(e.name, e.files) for e in state.entries if e.name in p.job.reads} \
            != was:
        raise PathError(f"{p.url} changed while it was compacted (what the compaction read is "
                        "not there as it was): nothing was committed; run it again")
    taken = [w.name for w in p.job.writes if state is not None and
             any(e.name == w.name for e in state.entries)]
    if taken:
        raise PathError(f"{p.url}/{taken[0]} appeared while the compaction ran: nothing was "
                        "committed")


# ------------------------------------------------------------------------------------------------
# Writing


def _write_outputs(plan: CompactPlan, p: PartitionJob, part: PartitionState,
                   staging: Location) -> dict[str, dict]:
    """Every directory of the job, written into ``staging``; name -> {rows, files, bytes,
    sha256: {file: hash}}."""
    version = plan.snapshot.hive_version
    reader = PartitionReader(part, plan.compactor)
    names = row_names_of(reader.row_layouts())
    if names and plan.column_names and len(names) <= len(plan.column_names):
        names = list(plan.column_names[:len(names)])
    reader.row_names = names
    local = staging.path if staging.is_local else tempfile.mkdtemp(prefix="acidtool-compact-")
    out: dict[str, dict] = {}
    try:
        for w in p.job.writes:
            os.makedirs(os.path.join(local, w.name))
        first = p.job.writes[0]
        if plan.snapshot.insert_only:
            rows = {first.name: _write_plain(reader, _files_read(part, p.job),
                                             os.path.join(local, first.name), first, version)}
        elif p.job.kind == "major":
            rows = {first.name: _write_major(reader, p, os.path.join(local, first.name),
                                             first, version)}
        else:
            rows = _write_minor(reader, p, local, version)
        for w in p.job.writes:
            d = os.path.join(local, w.name)
            if version.writes_acid_version and not plan.snapshot.insert_only:
                _write_small(os.path.join(d, ACID_VERSION_FILE), b"2")
            if w.kind == "base" and version.reads_base_markers:
                _write_small(os.path.join(d, METADATA_FILE), COMPACTED_MARKER)
            hashes, size = {}, 0
            for name in sorted(os.listdir(d)):
                path = os.path.join(d, name)
                hashes[name] = _sha256_file(path)
                size += os.path.getsize(path)
            out[w.name] = {"rows": rows[w.name], "files": sorted(hashes), "bytes": size,
                           "sha256": hashes}
        if not staging.is_local:
            _upload(local, staging)
            for w in p.job.writes:
                for name, digest in out[w.name]["sha256"].items():
                    if sha256_of(staging.child(w.name).child(name)) != digest:
                        raise PathError(f"{staging.url}/{w.name}/{name}: the upload does not "
                                        "hold the bytes written")
    finally:
        if not staging.is_local:
            shutil.rmtree(local, ignore_errors=True)
    return out


def _write_small(path: str, data: bytes) -> None:
    with open(path, "xb") as f:
        f.write(data)


def _sha256_file(path: str) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _upload(local: str, staging: Location) -> None:
    from pyarrow.fs import LocalFileSystem, copy_files

    copy_files(local, staging.path, source_filesystem=LocalFileSystem(),
               destination_filesystem=staging.fs)


def _event_schema(reader: PartitionReader, files: list[str]) -> pa.Schema:
    """The ACID event schema of the first ACID file read (the row struct named as read)."""
    for rel in files:
        src = open_orc(reader.part.location, rel)
        if src.is_acid:
            row = src.schema.field(5).type
            if reader.row_names and pa.types.is_struct(row) and \
                    row.num_fields == len(reader.row_names):
                row = pa.struct([row.field(i).with_name(n)
                                 for i, n in enumerate(reader.row_names)])
            return pa.schema([pa.field(n, t) for n, t in zip(
                ACID_COLUMNS, [pa.int32(), pa.int64(), pa.int32(), pa.int64(), pa.int64(),
                               row])])
        names = list(src.schema.names)
        row = pa.struct([src.schema.field(i).with_name(n) for i, n in
                         enumerate(reader.row_names or names)])
        return pa.schema(list(zip(ACID_COLUMNS, [pa.int32(), pa.int64(), pa.int32(),
                                                 pa.int64(), pa.int64(), row])))
    raise UsageError(f"{reader.part.location.url}: nothing to compact (no data file)")


def _write_major(reader: PartitionReader, p: PartitionJob, directory: str, w: Written,
                 version) -> int:
    schema = _event_schema(reader, _files_read(reader.part, p.job))
    rows = 0
    for unit in reader.compaction_units():
        bucket = unit[1]
        path = os.path.join(directory, bucket_file_name(bucket))
        rows += _write_sorted(path, schema, version, w.compression,
                              _again(reader.unit_events, unit), current_desc=False)
    if rows == 0 and not os.listdir(directory):
        # a base with no rows still holds a file: Hive 4 never sees an empty directory
        EventFileWriter(os.path.join(directory, bucket_file_name(0)), schema, version,
                        w.compression).finish()
    return rows


def _write_minor(reader: PartitionReader, p: PartitionJob, local: str, version
                 ) -> dict[str, int]:
    wanted = set(p.job.reads)
    files = _files_read(reader.part, p.job)
    schema = _event_schema(reader, files)
    by_kind = {w.kind: w for w in p.job.writes}
    legacy = "delete_delta" not in by_kind
    totals = {w.name: 0 for w in p.job.writes}
    for bucket, (data, deletes) in sorted(reader.bucket_files().items()):
        data = [r for r in data if r.split("/", 1)[0] in wanted]
        deletes = [r for r in deletes if r.split("/", 1)[0] in wanted]
        for kind, rels in (("delta", data), ("delete_delta", deletes)):
            if not rels:
                continue
            w = by_kind["delta" if legacy else kind]
            path = os.path.join(local, w.name, bucket_file_name(bucket))
            totals[w.name] += _write_sorted(path, schema, version, w.compression,
                                            _again(_events_of_files, reader, rels),
                                            current_desc=True)
    for w in p.job.writes:
        d = os.path.join(local, w.name)
        if not os.listdir(d):
            EventFileWriter(os.path.join(d, bucket_file_name(0)), schema, version,
                            w.compression).finish()
    return totals


def _write_plain(reader: PartitionReader, files: list[str], directory: str, w: Written,
                 version) -> int:
    """An insert-only table: the rows of its files, one after another, into one file."""
    writer: EventFileWriter | None = None
    path = os.path.join(directory, "000000_0")
    for rel in files:
        for batch in plain_batches(reader.part.location, rel, reader.batch_rows):
            row = row_named(pa.StructArray.from_arrays(batch.columns, names=batch.schema.names),
                            reader.row_names)
            table = pa.table({f.name: row.field(i) for i, f in enumerate(row.type)})
            if writer is None:
                writer = EventFileWriter(path, table.schema, version, w.compression, plain=True)
            writer.write(table)
    if writer is None:
        raise UsageError(f"{reader.part.location.url}: the insert-only files read hold no "
                         "rows to compact")
    writer.finish()
    return writer.rows


def _again(function: Callable, *args) -> Callable[[], Iterable]:
    """A source of batches that can be read again (a bucket written a second time)."""
    return lambda: function(*args)


def _events_of_files(reader: PartitionReader, rels: list[str]) -> Iterable:
    for rel in rels:
        yield from reader.events_of(rel)


def _write_sorted(path: str, schema: pa.Schema, version, compression: str,
                  batches: Callable[[], Iterable], current_desc: bool) -> int:
    """Stream events into one file, checking that they come in Hive's order; when they do not,
    write the file again from memory, sorted. The rows written."""
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

