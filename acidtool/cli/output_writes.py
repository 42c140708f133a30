"""Text and JSON of the writers' results: compact's plan and result, export's."""

from __future__ import annotations

from .output import count, display, human_bytes


def _snapshot_words(plan) -> str:
    """The compactor's snapshot as Hive writes one, or, where none was given, what counts as
    committed (the default's string, `null:9223372036854775807:...`, names no table)."""
    ids = plan.compactor.write_ids if plan.compactor.write_ids is not None else \
        plan.compactor.txns
    if plan.snapshot.source == "default":
        return (f"Hive {plan.snapshot.hive_version}, no snapshot given: every write id found "
                "counts as committed")
    return f"Hive {plan.snapshot.hive_version}, compactor snapshot {ids}"


def _codec(codec: str) -> str:
    return "uncompressed" if codec == "none" else codec.upper()


def _label(p) -> str:
    return p.partition or "(table root)"


def compact_plan_text(plan) -> str:
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
                     f"({count(p.files_in, 'file')}, {count(p.events_in, 'event')})")
        lines.append(f"  writes {', '.join(w.name for w in job.writes)} "
                     f"({_codec(job.writes[0].compression)}: {p.codec_from})")
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


def compact_result_text(result) -> str:
    plan = result.plan
    if not plan.due:
        return compact_plan_text(plan)
    lines = [f"compact {display(plan.path)} ({_snapshot_words(plan)})"]
    for p in plan.due:
        if p.partition in result.failed:
            lines.append(f"{display(_label(p))}: FAILED (rolled back, nothing committed): "
                         f"{display(result.failed[p.partition])}")
            continue
        for name, info in result.written.get(p.partition, {}).items():
            data = [f for f in info.files if not f.startswith(("_", "."))]
            lines.append(f"{display(_label(p))}: wrote {name}: "
                         f"{count(info.rows, 'row' if plan.snapshot.insert_only else 'event')} "
                         f"in {_files(len(data))}, {human_bytes(info.bytes)}")
        read = len(p.job.reads)
        lines.append(f"  {read} {'directory or file' if read == 1 else 'directories and files'}"
                     f" read {'is' if read == 1 else 'are'} obsolete now "
                     "(Hive's Cleaner, or `acidtool repair --select ACID021 --apply` given the "
                     "readers' snapshot: --write-ids, --txns or --metastore, removes them)")
    for p in plan.blocked:
        lines.append(f"{display(_label(p))}: BLOCKED: {display(p.job.reason)}")
    if result.transaction is not None:
        lines.append(f"metastore: compactor transaction {result.transaction} "
                     + ("committed: Hive 4 reads the _v" f"{result.transaction:07d} directories"
                        if result.committed else "aborted (nothing was written)"))
    lines.append(f"journal: {result.journal} (`acidtool undo {result.journal}` removes what "
                 "was written)")
    return "\n".join(lines)


def compact_json(plan, result) -> dict:
    parts = []
    for p in plan.parts:
        doc = p.as_dict()
        if result is not None:
            written = result.written.get(p.partition)
            doc["written"] = None if written is None else \
                {name: w.as_dict() for name, w in written.items()}
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


def export_text(plan, result, dry_run: bool) -> str:
    src = plan.source
    kind = "write ids" if src.has_write_ids else "transactions"
    snapshot = (f"{kind} {src.snapshot}" if src.assumed is None else
                f"no snapshot given: every {kind[:-1]} found, up to {src.assumed}, counts as "
                "committed")
    lines = [f"export {display(src.shown)} (Hive {src.hive_version}, {snapshot}) "
             f"into {display(plan.table)}, {display(plan.catalog.describe())}"]
    if plan.action == "nothing":
        lines.append(display(plan.why))
        return "\n".join(lines)
    if dry_run or result is None:
        lines.append(f"would {'create' if plan.action == 'create' else 'update'}: "
                     f"{display(plan.why)}")
        lines.append("nothing written (--dry-run)")
        return "\n".join(lines)
    key = "_hive_file" if src.insert_only else "_hive_row_id"
    if plan.action == "create":
        lines.append(f"created {display(plan.table)}: {count(result.rows_added, 'row')} from "
                     f"{count(plan.partitions, 'partition')} in "
                     f"{_files(result.files_added)}, Iceberg snapshot "
                     f"{result.snapshot_id}")
    else:
        lines.append(f"updated {display(plan.table)}: {count(result.rows_added, 'row')} appended, "
                     f"{result.rows_deleted:,} deleted ({_files(result.files_added)} written, "
                     f"{result.files_removed:,} replaced), Iceberg snapshot "
                     f"{result.snapshot_id}")
        if result.columns_added:
            lines.append(f"columns added: {', '.join(map(display, result.columns_added))}")
    lines.append(f"each row's Hive identity is in {key}: later exports with --incremental "
                 "match rows by it")
    return "\n".join(lines)


def _files(n: int) -> str:
    return count(n, "data file")


def export_json(plan, result, dry_run: bool) -> dict:
    doc = plan.describe()
    doc["dry_run"] = dry_run
    if result is not None:
        doc.update(snapshot_id=result.snapshot_id, rows_added=result.rows_added,
                   rows_deleted=result.rows_deleted, files_added=result.files_added,
                   files_removed=result.files_removed, columns_added=result.columns_added,
                   seconds=round(result.seconds, 3))
    return doc


def dml_text(path: str, result: dict) -> str:
    lines = [f"{display(path)}: {count(result['deleted'], 'row')} deleted, {result['updated']:,} "
             f"updated, {result['inserted']:,} inserted, under write id {result['write_id']}"
             + (" (--dry-run: nothing written)" if result["dry_run"] else "")]
    lines += [f"  wrote {display(d)}" for d in result["directories"]]
    if result.get("transaction") is not None:
        lines.append(f"metastore: transaction {result['transaction']} committed")
    if result["journal"]:
        lines.append(f"journal: {result['journal']} (`acidtool undo {result['journal']}` "
                     "takes it back)")
    elif not result["dry_run"]:
        lines.append("nothing matched: nothing was written")
    return "\n".join(lines)
