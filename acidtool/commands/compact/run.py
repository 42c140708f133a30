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

import functools
import os
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Callable

from ...core.compact import Job, compaction_codec, plan_job, stops_below
from ...core.compaction import Settings, compactor_snapshot, decide
from ...core.errors import AcidToolError, PathError, UsageError
from ...core.names import ACIDTOOL_STAGING_PREFIX, bucket_file_name
from ...core.snapshot import Snapshot
from ...core.versions import HiveVersion
from ...io.commit import Commit, require_inside, table_of
from ...io.fs import Location, resolve
from ...io.journal import (
    JOURNAL_VERSION,
    RUN_FILE,
    PlaceDir,
    Requires,
    Scratch,
    default_journal,
    fault_point,
    new_run_id,
    remove_empty_dir,
    run_marker,
    size_of,
    sizes_below,
)
from ...table.ls import PartitionState, inspect_table
from ...table.read import PartitionReader, require_whole
from ...table.target import Target
from .write import (
    ACID_VERSION_FILE,
    COMPACTED_MARKER,
    METADATA_FILE,
    bucket_jobs,
    event_schema,
    files_read,
    on_executor,
    put_file,
    reader_of,
    run_jobs,
)


@dataclass(frozen=True)
class CompactOptions:
    kind: str | None = None  # "major", "minor", or None: what the Initiator would pick
    partition: str | None = None  # only this partition (k=v[/k2=v2])
    journal: str | None = None
    visibility: int | None = None  # Hive 4: the compactor's transaction (``_vT``)
    settings: Settings = field(default_factory=Settings.of)
    spark: str | None = None  # write the bucket files on Spark: its master ("": the default)
    codec: str | None = None  # --codec; None: the table's (core.compact.compaction_codec)
    # told (events compacted, events due) after each partition: a progress bar's ``at``
    bar: Callable[[int, int], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class PartitionJob:
    partition: str
    url: str
    job: Job
    files_in: int = 0
    codec_from: str = ""  # where the codec written comes from (--codec, the table, the files)
    events_in: int = 0

    def as_dict(self) -> dict:
        return {"partition": self.partition, "path": self.url, **self.job.as_dict(),
                "codec_from": self.codec_from if self.job.kind else None,
                "files_in": self.files_in, "events_in": self.events_in}


@dataclass(frozen=True)
class CompactPlan:
    path: str
    snapshot: Snapshot  # the reader's snapshot given
    compactor: Snapshot  # the compactor's, made of it
    parts: tuple[PartitionJob, ...]
    column_names: tuple[str, ...] | None = None
    transactional: bool = False  # --apply runs in a compactor transaction (Hive 4's _vT)

    @property
    def due(self) -> list[PartitionJob]:
        return [p for p in self.parts if p.job.kind]

    @property
    def blocked(self) -> list[PartitionJob]:
        return [p for p in self.parts if p.job.blocked]


@dataclass
class Written:
    """One directory a compaction wrote: its files (in name order), rows and bytes, and each
    file's SHA-256 (journaled for undo; not shown)."""

    rows: int
    files: list[str]
    bytes: int
    sha256: dict[str, str] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict:
        return {"rows": self.rows, "files": self.files, "bytes": self.bytes}


@dataclass
class CompactResult:
    plan: CompactPlan
    journal: str | None
    # partition -> each directory written
    written: dict[str, dict[str, Written]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # partition -> why
    elapsed: float = 0.0
    transaction: int | None = None  # the metastore's compactor transaction (Hive 4)
    committed: bool = False  # ... and whether it committed

    @property
    def ok(self) -> bool:
        return not self.failed


# ------------------------------------------------------------------------------------------------
# The plan


def plan_compaction(target: Target, opts: CompactOptions) -> CompactPlan:
    snap = target.snapshot
    compactor = compactor_snapshot(snap)
    table = inspect_table(target.url, compactor)
    if not target.metastore:  # (with one, the table's kind is the metastore's)
        _require_kind(target.url, table, snap.insert_only)
    parts = [p for p in table.partitions
             if opts.partition is None or p.partition == opts.partition.strip("/")]
    if opts.partition is not None and not parts:
        known = ", ".join(p.partition for p in table.partitions[:5] if p.partition)
        raise UsageError(f"--partition {opts.partition}: no such partition in {target.url}"
                         + (f" (it has {known}...)" if known else " (it is not partitioned)"))
    stop = stops_below(snap, compactor)
    props = target.table.parameters if target.table is not None else None
    settings = opts.settings.for_table(props)
    _require_codec(opts.codec, snap.hive_version)
    out = []
    for part in parts:
        require_whole(part)  # half of a compaction: its selection is not the table's rows
        kind, reason = opts.kind, ""
        if kind is None and part.state.error is None:
            decision = decide(part.state, snap.hive_version, settings,
                              insert_only=snap.insert_only)
            kind, reason = decision.kind, "the Initiator's choice: " + decision.reason
        job = plan_job(part.state, kind, snap.hive_version, reason=reason,
                       insert_only=snap.insert_only, visibility=opts.visibility,
                       stops_below=stop)
        files = files_read(part, job) if job.kind else []
        _require_bucket_ids(target.url, files, snap)
        events, codecs = 0, []
        if files:
            reader = PartitionReader(part, compactor)
            for rel in files:
                footer = _footer(reader, rel, snap.insert_only)
                if footer is not None and footer.compression:
                    codecs.append(footer.compression)
                if not snap.insert_only:
                    events += footer.rows if footer is not None else 0
                    _require_acid_file(target.url, rel, footer)
        codec, why = compaction_codec(opts.codec, (props or {}).get("orc.compress"), codecs,
                                      snap.hive_version)
        if job.kind:
            job = plan_job(part.state, kind, snap.hive_version, reason=reason,
                           insert_only=snap.insert_only, visibility=opts.visibility,
                           stops_below=stop, codec=codec)
        out.append(PartitionJob(part.partition, part.location.url, job, len(files), why,
                                events))
    names = tuple(target.column_names) if target.column_names else None
    return CompactPlan(target.url, snap, compactor, tuple(out), names,
                       _takes_transaction(target))


def _footer(reader: PartitionReader, rel: str, insert_only: bool):
    """A file's footer (None when it has none to give): an insert-only table's files may be
    another format than ORC, whose codec is then not known."""
    if not insert_only:
        return reader.footer(rel)
    try:
        return reader.footer(rel)
    except (AcidToolError, OSError, ValueError):
        return None


def _require_codec(codec: str | None, version) -> None:
    if codec == "zstd" and version is not HiveVersion.V4:
        raise UsageError(f"--codec zstd: Hive {version} reads no ZSTD ORC files (its ORC "
                         "library has no ZSTD codec); give zlib, snappy, lz4 or uncompressed, "
                         "or leave --codec out for the table's own")


def _require_bucket_ids(url: str, files: list[str], snap) -> None:
    """An original file whose name gives Hive no bucket id (a ``_copy_N`` file under Hive 2.3)
    is read as bucket -1: compacted, its rows would go to ``bucket_-0001``, with ROW__IDs that
    collide with every other such file's."""
    from ...core.raw import raw_read

    for rel in files:
        if rel.startswith(("base_", "delta_", "delete_delta_")):
            continue
        decision = raw_read(rel.rsplit("/", 1)[-1], snap.hive_version)
        if decision.bucket < 0:
            raise UsageError(f"{url}/{rel}: {decision.reason}. A compaction would write its "
                             "rows to bucket_-0001, their ROW__IDs colliding with every other "
                             "such file's: nothing was written. Give it a name of a free bucket "
                             "(N_0), or compact after the upgrade with --hive-version 3")


def _require_kind(url: str, table, insert_only: bool) -> None:
    """The table's kind from its files, before anything is written (``core.names``)."""
    from ...core.names import kind_problem

    problem = kind_problem([p for part in table.partitions for p in part.listing.paths],
                           insert_only)
    if problem:
        raise UsageError(f"{url}: {problem}; nothing was written")


def _require_acid_file(url: str, rel: str, footer) -> None:
    """A ``bucket_N`` file of a base or delta without the ACID event columns is a foreign
    file (a raw delta's files are named ``N_M``): a full-ACID compaction of it would hand Hive
    its plain columns as events."""
    from ...core.facts import footer_is_acid

    top, name = rel.split("/", 1)[0], rel.rsplit("/", 1)[-1]
    if footer is None or "/" not in rel or not top.startswith(("base_", "delta_")) or \
            not name.startswith("bucket_") or footer_is_acid(footer):
        return
    raise UsageError(f"{url}/{rel} holds plain rows, not ACID events, under an ACID file's name "
                     "(a foreign file: `acidtool validate` names it); nothing was written")


# ------------------------------------------------------------------------------------------------
# Apply


def compact(target: Target, opts: CompactOptions,
            progress: Callable[[str], None] | None = None) -> CompactResult:
    """Take the table's lock, roll back what an interrupted compaction of it left, plan once
    under the lock, and compact every partition that is due. With a Hive 4 metastore, inside a
    compactor's transaction T of its own (a shared-read lock, as Hive 4's compactor takes): the
    directories are named ``_vT``, and Hive 4 sees them once T commits, after the renames."""
    started = time.perf_counter()
    root = resolve(target.url)
    with Commit(root, "compact", recover=(_refused, "compaction")) as run:
        if not _takes_transaction(target):
            return _compact_locked(target, opts, run, root, progress, started)
        return _in_transaction(target, opts, run, root, progress, started)


def _takes_transaction(target: Target) -> bool:
    """Hive 4's compactor runs in a transaction of its own (the ``_vT`` suffix); 3.1's and
    2.3's take none."""
    return bool(target.metastore) and target.table is not None and \
        target.snapshot.hive_version.visibility_suffix


def _in_transaction(target: Target, opts: CompactOptions, run: Commit, root: Location,
                    progress, started: float) -> CompactResult:
    from ...core.catalog import MetastoreError
    from ...io.metastore import Metastore
    from ..convert.txn import Transaction

    assert target.metastore is not None and target.table is not None
    with Metastore(target.metastore) as client:
        txn = Transaction(target.metastore, target.table, None, compactor=True).open(
            client, target.snapshot.hive_version)
        try:
            result = _compact_locked(target, replace(opts, visibility=txn.txn), run, root,
                                     progress, started, transaction=txn.txn)
        except BaseException:
            txn.abort(client)
            raise
        result.transaction = txn.txn
        if not result.written:
            txn.abort(client)
            return result
        try:
            txn.commit(client)
        except MetastoreError as exc:
            raise MetastoreError(f"{exc}: the compacted directories stay invisible to Hive 4 "
                                 f"(their transaction {txn.txn} did not commit); `acidtool "
                                 f"undo {result.journal}` removes them") from None
        result.committed = True
        return result


def _compact_locked(target: Target, opts: CompactOptions, run: Commit, root: Location,
                    progress, started: float, transaction: int | None = None
                    ) -> CompactResult:
    plan = plan_compaction(target, opts)
    if not plan.due:
        return CompactResult(plan, None, elapsed=time.perf_counter() - started)
    run_id = new_run_id()
    path = os.path.abspath(opts.journal) if opts.journal else \
        default_journal("compact", run_id)
    run.begin(path, record="begin", version=JOURNAL_VERSION, run=run_id, path=root.url,
              quarantine="", hive_version=str(plan.snapshot.hive_version), command="compact",
              compactor_snapshot=plan.compactor.describe(),
              metastore_transaction=transaction)
    result = CompactResult(plan, path)
    ids = {p.partition: f"a{i}" for i, p in enumerate(plan.due, 1)}
    run.record(record="plan", actions=[{"id": ids[p.partition], "action": "compact",
                                        **p.as_dict()} for p in plan.due])
    due, done = sum(p.events_in for p in plan.due), 0
    if opts.bar:
        opts.bar(0, due)  # drawn while the first partition compacts
    for p in plan.due:
        if progress:
            progress(f"{p.job.kind} compaction of {p.partition or '(table root)'}: "
                     f"{p.files_in} file{'' if p.files_in == 1 else 's'}, {p.events_in:,} events")
        _compact_one(plan, p, ids[p.partition], run, result, opts.spark, run_id)
        done += p.events_in
        if opts.bar:
            opts.bar(done, due)
    run.end(result.ok)
    result.elapsed = time.perf_counter() - started
    return result


def _refused(journal: str, records: list[dict]) -> str:
    return (f"an interrupted repair (journal {journal}) holds this table's lock: finish it "
            f"with `acidtool repair {records[0].get('path')} --apply`, or `acidtool undo "
            f"{journal}`, then compact")


def compact_partition(url: str, snapshot: Snapshot, kind: str, run: Commit, aid: str,
                      run_id: str) -> tuple[str, str, dict]:
    """One partition compacted as action ``aid`` of another writer's run (repair's ACID024),
    which holds the table's lock and its journal: planned again here, at the compactor's
    snapshot. (result, why, what was written): "done", "failed" or "skipped"."""
    plan = plan_compaction(Target(url, snapshot), CompactOptions(kind=kind))
    (p,) = plan.parts
    if p.job.kind is None:
        run.record(record="skipped", id=aid, reason=p.job.reason)
        return "skipped", p.job.reason, {}
    assert run.journal is not None
    result = CompactResult(plan, str(run.journal.path))
    _compact_one(plan, p, aid, run, result, None, run_id)
    if p.partition in result.failed:
        return "failed", result.failed[p.partition], {}
    return "done", "", result.written[p.partition]


def _compact_one(plan: CompactPlan, p: PartitionJob, aid: str, run: Commit,
                 result: CompactResult, spark: str | None, run_id: str) -> None:
    ploc = resolve(p.url)
    staging = ploc.child(f"{ACIDTOOL_STAGING_PREFIX}{uuid.uuid4().hex[:12]}")
    require_inside(table_of(ploc), staging, *[ploc.child(w.name) for w in p.job.writes],
                   what="the compaction")
    journal = run.journal.path if run.journal is not None else ""

    def interrupted(problems: list[str]) -> str:
        return (f"interrupted while compacting {p.url}, which was rolled back"
                + (f" (problems: {'; '.join(problems)})" if problems else "")
                + f"; `acidtool undo {journal}` reverses what was finished")

    with run.action(aid, interrupted=interrupted) as action:
        action.take([Scratch(staging)])
        (part,) = inspect_table(p.url, plan.compactor).partitions
        written = _write_outputs(plan, p, part, staging, spark, run_id)
        fault_point()  # everything staged
        read = _read_entries(part, p.job)
        _require_unchanged(plan, p, read)
        # a delete delta goes in before its delta: each alone hides rows, so the two renames
        # run back to back, shielded from signals (docs/compact.md)
        order = sorted(p.job.writes, key=lambda w: w.kind != "delete_delta")
        places = [PlaceDir(staging.child(w.name), ploc.child(w.name),
                           tuple(sorted(written[w.name].sha256.items()))) for w in order]
        # undo's preconditions: what the compaction read must still be there for its output
        # to be removed (after the Cleaner, the output is the only copy of those rows)
        requires = [_requires(ploc, entry) for entry in part.state.entries
                    if entry.name in p.job.inputs]
        action.take([*requires, *places], shield=True)
    if action.failed is not None:
        result.failed[p.partition] = action.failed
        return
    try:
        remove_empty_dir(staging)  # emptied by the renames
    except OSError:
        pass
    result.written[p.partition] = written


def _requires(ploc: Location, entry) -> Requires:
    """What undo of this compaction depends on: an input as it is now, each file's size."""
    loc, why = ploc.child(entry.name), f"read by the compaction of {ploc.url}"
    if not entry.is_dir:
        return Requires(loc, (), size_of(loc), why)
    return Requires(loc, tuple(sorted(sizes_below(loc))), -1, why)


def _read_entries(part: PartitionState, job: Job) -> set:
    return {(e.name, e.files) for e in part.state.entries if e.name in job.inputs}


def _require_unchanged(plan: CompactPlan, p: PartitionJob, was: set) -> None:
    """Under the lock, before the commit: the partition still selects what was read (names
    and sizes of its files), and no directory of the names to be written appeared."""
    now = inspect_table(p.url, plan.compactor).partitions
    state = now[0].state if now else None
    if state is None or {(e.name, e.files) for e in state.entries if e.name in p.job.inputs} \
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
                   staging: Location, spark: str | None, run: str) -> dict[str, Written]:
    """Every directory of the job, written into ``staging`` (its bucket files in this process,
    or with ``spark`` (the master, "" for the default) by Spark's executors), by name."""
    version = plan.snapshot.hive_version
    insert_only = plan.snapshot.insert_only
    reader = reader_of(part, plan.compactor, plan.column_names)
    jobs = bucket_jobs(reader, p.job, insert_only)
    schema = None if insert_only else event_schema(reader, files_read(part, p.job))
    if spark is None:
        staged = run_jobs(reader, jobs, schema, version, staging)
    else:
        from ...io.spark_jobs import spark_map

        work = functools.partial(on_executor, p.url, plan.compactor, plan.column_names, schema,
                                 staging.url)
        staged = [s for _, done in spark_map(work, jobs, spark or None, most=1) for s in done]
    for w in p.job.writes:
        if not any(s.directory == w.name for s in staged):
            if insert_only:
                raise UsageError(f"{p.url}: the insert-only files read hold no rows to compact")
            # a directory with no rows still holds a file: Hive 4 never sees an empty one
            staged.append(put_file(staging, w.name, bucket_file_name(0), None, schema, version,
                                   w.compression))
        if version.writes_acid_version and not insert_only:
            staged.append(put_file(staging, w.name, ACID_VERSION_FILE, b"2"))
        if w.kind == "base" and version.reads_base_markers:
            staged.append(put_file(staging, w.name, METADATA_FILE, COMPACTED_MARKER))
        staged.append(put_file(staging, w.name, RUN_FILE, run_marker(run, "compact")))
    out: dict[str, Written] = {}
    for w in p.job.writes:
        mine = sorted((s for s in staged if s.directory == w.name), key=lambda s: s.file)
        out[w.name] = Written(sum(s.rows for s in mine), [s.file for s in mine],
                              sum(s.size for s in mine), {s.file: s.sha256 for s in mine})
    return out
