"""`acidtool compact`: Hive's compaction, offline."""

from __future__ import annotations

import enum
import sys
from typing import Optional

import typer

from ..core.errors import UsageError
from .app import (
    INSERT_ONLY,
    METASTORE,
    TXNS,
    WRITE_IDS_HELP,
    HiveVersion,
    app,
    emit,
    emit_json,
    note,
    snapshot_note,
)


class CompactFormat(str, enum.Enum):
    text = "text"
    json = "json"


_PATH = typer.Argument(..., help="The table (or partition) directory; with "
                       "--metastore also db.table or db.table/k=v.")
_MAJOR = typer.Option(False, "--major", help="A major compaction: one base_N of the "
                      "rows the snapshot returns, ROW__IDs kept, deleted rows "
                      "dropped.")
_MINOR = typer.Option(False, "--minor", help="A minor compaction: the deltas into "
                      "one delta_M_N, the delete deltas into one delete_delta_M_N, "
                      "every event kept.")
_HIVE_VERSION = typer.Option(
    None, "--hive-version", help="Write what this Hive's compactor writes: 2 (2.3), 3 or "
    "4. Default: 4, or the metastore's version.")
_WRITE_IDS = typer.Option(None, "--write-ids", help=WRITE_IDS_HELP + " The "
                          "compaction reads at the compactor's snapshot made "
                          "of it: nothing from the first open write id on.")
_PARTITION = typer.Option(None, "--partition", help="Only this partition, "
                          "k=v[/k2=v2].")
_SPARK = typer.Option(False, "--spark", help="Write the bucket files on Spark's "
                      "executors, one task per (partition, bucket), with the same "
                      "merge as in process; the driver commits. The staging "
                      "directory is inside the table, so executors must reach it "
                      "(HDFS, an object store, or a local path with local[N]).")
_MASTER = typer.Option(None, "--master", help="With --spark: the Spark "
                       "master (default local[*]).")
_DO_APPLY = typer.Option(False, "--apply", help="Write the compacted directories. "
                         "Without it nothing is written (not even a lock).")
_JOURNAL = typer.Option(None, "--journal", help="The journal file (local). "
                        "Default: ~/.local/state/acidtool/journals/"
                        "compact-RUN.jsonl ($ACIDTOOL_STATE_DIR moves it).")


@app.command("compact")
def compact_command(
    path: str = _PATH,
    major: bool = _MAJOR,
    minor: bool = _MINOR,
    hive_version: Optional[HiveVersion] = _HIVE_VERSION,
    write_ids: Optional[str] = _WRITE_IDS,
    txns: Optional[str] = TXNS,
    metastore: Optional[str] = METASTORE,
    partition: Optional[str] = _PARTITION,
    insert_only: bool = INSERT_ONLY,
    spark: bool = _SPARK,
    master: Optional[str] = _MASTER,
    do_apply: bool = _DO_APPLY,
    journal: Optional[str] = _JOURNAL,
    fmt: CompactFormat = typer.Option(CompactFormat.text, "--format", help="text or json."),
) -> None:
    """Compact a table as Hive's compactor does, without a running Hive: a plan first, and
    with --apply the new base or delta written to a staging directory, journaled, and
    committed by one rename. The directories compacted stay where they are (obsolete, as after
    Hive's compactor, until its Cleaner or `acidtool repair --select ACID021 --apply` removes
    them); `acidtool undo JOURNAL` removes what the compaction wrote.

    Without --major or --minor, each partition gets what Hive's Initiator would ask for
    (as `acidtool compaction-plan` says), or nothing. The compaction reads at the compactor's
    snapshot: nothing from the first open write id on, aborted write ids dropped. Without
    --write-ids, --txns or --metastore every write id found counts as committed: give one
    when Hive may be writing to the table.

    Examples:

    \b
      acidtool compact /warehouse/shop.db/orders
      acidtool compact /warehouse/shop.db/orders --major --write-ids 'shop.orders:9:10:10:' --apply
      acidtool compact /warehouse/t --partition ds=2024-01-01 --minor --apply --format json
      acidtool compact hdfs://nn:8020/warehouse/t --major --apply --spark --master yarn
      acidtool undo ~/.local/state/acidtool/journals/compact-RUN.jsonl

    Exit status: without --apply, 0 nothing to compact, 1 something to compact; with --apply,
    0 every partition due was compacted (or none was due), 1 one failed (rolled back) or Hive
    fails on a partition; 2 bad option, unreadable PATH or the table locked by another writer.
    """
    from ..commands.compact.run import CompactOptions, compact, plan_compaction
    from ..table.target import resolve

    if major and minor:
        raise UsageError("--major and --minor: give one (or neither, for the Initiator's "
                         "choice)")
    if master and not spark:
        raise UsageError("--master goes with --spark")
    target = resolve(path, metastore=metastore, hive_version=hive_version,
                     write_ids=write_ids, txns=txns, insert_only=insert_only)
    snapshot_note(target.snapshot)
    from ..io.progress import Progress

    # on a terminal a bar of the events compacted; elsewhere (a pipe, a CI log) a line for
    # each partition as it starts
    bar = Progress(0, fmt is CompactFormat.text and sys.stderr.isatty(), "events compacted")
    opts = CompactOptions("major" if major else "minor" if minor else None,
                          partition, journal, spark=(master or "") if spark else None,
                          bar=bar.at)
    if not do_apply:
        plan = plan_compaction(target, opts)
        if fmt is CompactFormat.json:
            emit_json(_json(plan, None))
        else:
            emit(_text_plan(plan))
        if plan.due or plan.blocked:
            raise typer.Exit(1)
        return
    progress = None if fmt is CompactFormat.json or bar.wanted else note
    result = compact(target, opts, progress)
    if fmt is CompactFormat.json:
        emit_json(_json(result.plan, result))
    else:
        emit(_text_result(result))
    if result.failed or result.plan.blocked:
        raise typer.Exit(1)


def _snapshot_words(plan) -> str:
    ids = plan.compactor.write_ids if plan.compactor.write_ids is not None else \
        plan.compactor.txns
    given = plan.snapshot.source != "default"
    return (f"Hive {plan.snapshot.hive_version}, compactor snapshot {ids}"
            + ("" if given else " (no snapshot given: every write id found counts as "
               "committed)"))


def _label(p) -> str:
    return p.partition or "(table root)"


def _text_plan(plan) -> str:
    from .output import display

    lines = [f"compact {display(plan.path)} ({_snapshot_words(plan)}): "
             f"{len(plan.due)} of {len(plan.parts)} partitions to compact"]
    for p in plan.parts:
        job = p.job
        if job.kind is None:
            lines.append(f"{display(_label(p))}: {'BLOCKED' if job.blocked else 'nothing to do'}"
                         f": {job.reason}")
            continue
        lines.append(f"{display(_label(p))}: {job.kind}: reads "
                     f"{', '.join(display(r) for r in job.reads)} "
                     f"({p.files_in} files, {p.events_in:,} events)")
        lines.append(f"  writes {', '.join(w.name for w in job.writes)}")
        lines.append(f"  why: {job.reason}")
        if job.stops_below is not None:
            lines.append(f"  write id {job.stops_below} is open: the compaction reads only "
                         f"below it, as Hive's compactor does")
    if plan.due and plan.transactional:
        lines.append("with --apply: in a compactor transaction T of the metastore, as Hive 4's "
                     "compactor; the directories get Hive 4's _vT suffix")
    if plan.due:
        lines.append("run again with --apply to write it")
    return "\n".join(lines)


def _text_result(result) -> str:
    from .output import display, human_bytes

    plan = result.plan
    if not plan.due:
        return _text_plan(plan)
    lines = [f"compact {display(plan.path)} ({_snapshot_words(plan)})"]
    for p in plan.due:
        if p.partition in result.failed:
            lines.append(f"{display(_label(p))}: FAILED (rolled back, nothing committed): "
                         f"{display(result.failed[p.partition])}")
            continue
        for name, info in result.written.get(p.partition, {}).items():
            data = [f for f in info["files"] if not f.startswith(("_", "."))]
            lines.append(f"{display(_label(p))}: wrote {name}: {info['rows']:,} "
                         f"{'rows' if plan.snapshot.insert_only else 'events'} in {len(data)} "
                         f"data file{'' if len(data) == 1 else 's'}, "
                         f"{human_bytes(info['bytes'])}")
        lines.append(f"  {len(p.job.reads)} directories and files read are obsolete now "
                     "(Hive's Cleaner, or `acidtool repair --select ACID021 --apply`, removes "
                     "them)")
    for p in plan.blocked:
        lines.append(f"{display(_label(p))}: BLOCKED: {display(p.job.reason)}")
    if result.transaction is not None:
        lines.append(f"metastore: compactor transaction {result.transaction} "
                     + ("committed: Hive 4 reads the _v" f"{result.transaction:07d} directories"
                        if result.committed else "aborted (nothing was written)"))
    lines.append(f"journal: {result.journal} (`acidtool undo {result.journal}` removes what "
                 "was written)")
    return "\n".join(lines)


def _json(plan, result) -> dict:
    parts = []
    for p in plan.parts:
        doc = p.as_dict()
        if result is not None:
            doc["written"] = result.written.get(p.partition)
            doc["failed"] = result.failed.get(p.partition)
        parts.append(doc)
    return {
        "path": plan.path, "hive_version": plan.snapshot.hive_version,
        "snapshot": plan.snapshot.describe(), "compactor_snapshot": plan.compactor.describe(),
        "applied": result is not None, "journal": result.journal if result else None,
        "transaction": result.transaction if result else None,
        "committed": result.committed if result else False,
        "summary": {"partitions": len(plan.parts), "due": len(plan.due),
                    "major": sum(p.job.kind == "major" for p in plan.parts),
                    "minor": sum(p.job.kind == "minor" for p in plan.parts),
                    "blocked": len(plan.blocked),
                    "failed": len(result.failed) if result else 0},
        "partitions": parts,
    }
