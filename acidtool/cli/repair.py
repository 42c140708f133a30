"""`acidtool repair` and `acidtool undo`."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from ..core.errors import UsageError
from ..core.guards import write_id_range_problem
from .app import (
    INSERT_ONLY,
    METASTORE,
    TXNS,
    WRITE_IDS,
    Format,
    HiveVersion,
    app,
    duration,
    hive_version_option,
    note,
    snapshot_note,
)

_PATH = typer.Argument(..., help="The table (or partition) directory: a local path, "
                       "file://, webhdfs://, hdfs:// or an fsspec URL; with "
                       "--metastore also db.table or db.table/k=v.")
_HIVE_VERSION = hive_version_option("Repair as this Hive reads")
_PARTITION = typer.Option(None, "--partition", help="Only this partition, "
                          "k=v[/k2=v2].")
_DO_APPLY = typer.Option(False, "--apply", help="Carry the plan out. Without it "
                         "nothing is written (not even a lock).")
_WRITE_ID = typer.Option(None, "--write-id", help="The write id (Hive 2.3: "
                         "transaction id) for re-wrapping foreign files found "
                         "in a table or partition root; it must be committed "
                         "in the metastore. 'auto' (with --metastore): one "
                         "the metastore allocates, in a transaction that "
                         "commits with the repair.")
_QUARANTINE = typer.Option(None, "--quarantine", help="Where what leaves "
                           "the table goes, on the same filesystem. Default: "
                           "PATH/.acidtool-quarantine (Hive ignores it).")
_JOURNAL = typer.Option(None, "--journal", help="The journal file (local). "
                        "Default: ~/.local/state/acidtool/journals/RUN.jsonl "
                        "($ACIDTOOL_STATE_DIR or $XDG_STATE_HOME move it).")
_MIN_AGE = typer.Option("1h", "--min-age", help="Leftovers (staging directories, "
                        "flush-length files, obsolete directories) are quarantined "
                        "only when unchanged this long: a running job's are young.")
_SELECT = typer.Option(None, "--select", help="Only these rules (codes or "
                       "prefixes). ACID021's quarantine, ACID022's "
                       "recovery and ACID024's compaction run only when "
                       "named here.")
_JOBS = typer.Option(8, "--jobs", "-j", min=1, help="Files read at once (remote "
                     "stores).")


@app.command("repair")
def repair_command(
    path: str = _PATH,
    hive_version: Optional[HiveVersion] = _HIVE_VERSION,
    metastore: Optional[str] = METASTORE,
    write_ids: Optional[str] = WRITE_IDS,
    txns: Optional[str] = TXNS,
    insert_only: bool = INSERT_ONLY,
    partition: Optional[str] = _PARTITION,
    do_apply: bool = _DO_APPLY,
    write_id: Optional[str] = _WRITE_ID,
    quarantine: Optional[str] = _QUARANTINE,
    journal: Optional[str] = _JOURNAL,
    min_age: str = _MIN_AGE,
    select_: Optional[str] = _SELECT,
    ignore: Optional[str] = typer.Option(None, "--ignore", help="Skip these rules."),
    fmt: Format = typer.Option(Format.text, "--format", help="text or json."),
    jobs: int = _JOBS,
) -> None:
    """Plan the repair of what `validate` finds, and with --apply carry it out.

    Every action is proven safe from what was read; everything else is listed for a person
    with the reason. Nothing is deleted: what leaves the table is renamed into the quarantine
    directory. --apply journals every step before taking it, so `acidtool undo JOURNAL` puts
    the table back byte for byte, and running --apply again after a kill finishes the job.
    `acidtool explain CODE` says how each rule is repaired.

    Examples:

    \b
      acidtool repair /warehouse/shop.db/orders                 # the plan; nothing written
      acidtool repair /warehouse/shop.db/orders --write-id 7 --apply
      acidtool repair /warehouse/shop.db/orders --select ACID021 --write-ids 'shop.orders:9:...'
      acidtool repair /warehouse/shop.db/orders --select ACID024 --write-ids '...' --apply
      acidtool undo ~/.local/state/acidtool/journals/20261124T101500Z-1a2b3c.jsonl

    Exit status: 0 nothing to repair (or, with --apply, everything repaired); 1 actions
    planned, findings left for a person, or an action failed (and was rolled back); 2 bad
    option, unreadable PATH, or the table is locked by another repair.
    """
    from ..commands.check.validate import select_codes
    from ..commands.repair.plan import RepairOptions, plan_repair
    from ..table.target import resolve
    from .check import codes_of
    from .results import output_for

    out = output_for(fmt)  # chosen once: the rest hands it results
    codes = codes_of(select_)
    select_codes(codes, codes_of(ignore) or ())  # unknown codes are refused before any read
    target = resolve(path, metastore=metastore, hive_version=hive_version,
                     write_ids=write_ids, txns=txns, insert_only=insert_only)
    snapshot_note(target.snapshot)
    path = target.url
    auto = write_id == "auto"
    number = _number(write_id, target, metastore, do_apply)
    opts = RepairOptions(
        snapshot=target.snapshot, snapshot_given=target.snapshot_given, partition=partition,
        write_id=number, quarantine=quarantine, journal=journal, min_age=duration(min_age),
        select=codes, ignore=codes_of(ignore) or (), jobs=jobs, write_id_allocated=auto)
    if not do_apply:
        plan = plan_repair(path, opts, progress=sys.stderr.isatty())
        out.repair_plan(plan)
        if not plan.clean:
            raise typer.Exit(1)
        return
    from ..commands.repair.apply import apply

    progress = _progress() if sys.stderr.isatty() else None
    if auto:
        from ..commands.repair.txn import apply_in_transaction

        result = apply_in_transaction(path, opts, target, progress)
        if result.transaction is not None:
            note(f"transaction {result.transaction} committed in the metastore at {metastore}")
    else:
        result = apply(path, opts, progress=progress)
    out.repair_apply(result)
    if not result.ok:
        raise typer.Exit(1)


def _number(write_id: str | None, target, metastore: str | None, do_apply: bool
            ) -> int | None:
    """The write id the repair's re-wraps take: given, or with --write-id auto one the
    metastore will allocate (provisional in a plan)."""
    if write_id != "auto":
        return _write_id(write_id)
    if not metastore:
        raise UsageError("--write-id auto needs --metastore: the metastore allocates the write "
                         "id and commits it with the repair")
    from ..commands.repair.txn import provisional_write_id

    number = provisional_write_id(target)
    if not do_apply:
        note(f"write id {number} is provisional: --apply allocates one in a metastore "
             "transaction")
    return number


def _write_id(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        number = int(text)
    except ValueError:
        raise UsageError(f"--write-id must be a number or 'auto', not {text!r}") from None
    problem = write_id_range_problem(number)
    if problem:
        raise UsageError(f"--write-id {text}: {problem}")
    return number


def _progress():
    from ..io.progress import Progress

    bar = Progress(0, True, "actions done")
    return bar.at


@app.command("undo")
def undo_command(
    journal: str = typer.Argument(..., help="The journal `repair --apply` wrote (its output "
                                  "names it)."),
    fmt: Format = typer.Option(Format.text, "--format", help="text or json."),
) -> None:
    """Put a table back as it was before a writer's run, byte for byte, from its journal:
    `repair --apply`, `compact --apply`, `delete`, `update`, a MERGE, the hiveacid writer.

    Works from any state a run left: finished, failed, or killed at any moment. Every step
    in the journal is reversed by what the filesystem shows; files the run wrote are removed,
    quarantined files go back to their places, and the quarantine directories it made go.
    Running undo twice is harmless.

    Example: acidtool undo ~/.local/state/acidtool/journals/20261124T101500Z-1a2b3c.jsonl

    Exit status: 0 restored; 1 something could not be restored (listed); 2 no such journal,
    or another repair or undo holds the table's lock.
    """
    from ..commands.repair.apply import undo
    from .results import output_for

    result = undo(journal)
    output_for(fmt).undo(result)
    if not result.ok:
        raise typer.Exit(1)
