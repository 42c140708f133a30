"""`acidtool compact`: Hive's compaction, offline."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from ..core.errors import UsageError
from .app import (
    INSERT_ONLY,
    MASTER,
    METASTORE,
    TXNS,
    WRITE_IDS_HELP,
    Codec,
    Format,
    HiveVersion,
    app,
    hive_version_option,
    note,
    snapshot_note,
)

_PATH = typer.Argument(..., help="The table (or partition) directory; with "
                       "--metastore also db.table or db.table/k=v.")
_MAJOR = typer.Option(False, "--major", help="A major compaction: one base_N of the "
                      "rows the snapshot returns, ROW__IDs kept, deleted rows "
                      "dropped.")
_MINOR = typer.Option(False, "--minor", help="A minor compaction: the deltas into "
                      "one delta_M_N, the delete deltas into one delete_delta_M_N, "
                      "every event kept.")
_HIVE_VERSION = hive_version_option("Write what this Hive's compactor writes")
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


_CODEC = typer.Option(None, "--codec", help="The ORC compression of the files written. "
                      "Default: the table's, as Hive's compactor writes: the metastore's "
                      "orc.compress, else the codec most files read have, else zlib. Hive 2.3 "
                      "and 3.1 read no zstd.")
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
    master: Optional[str] = MASTER,
    codec: Optional[Codec] = _CODEC,
    do_apply: bool = _DO_APPLY,
    journal: Optional[str] = _JOURNAL,
    fmt: Format = typer.Option(Format.text, "--format", help="text or json."),
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
    from .results import output_for

    _refuse(major, minor, spark, master, do_apply)
    target = resolve(path, metastore=metastore, hive_version=hive_version,
                     write_ids=write_ids, txns=txns, insert_only=insert_only)
    snapshot_note(target.snapshot)
    from ..io.progress import Progress

    # on a terminal a bar of the events compacted; elsewhere (a pipe, a CI log) a line for
    # each partition as it starts
    bar = Progress(0, fmt is Format.text and sys.stderr.isatty(), "events compacted")
    opts = CompactOptions("major" if major else "minor" if minor else None,
                          partition, journal, spark=(master or "") if spark else None,
                          codec=None if codec is None else "none" if codec is Codec.none
                          else codec.value, bar=bar.at)
    out = output_for(fmt)
    if not do_apply:
        plan = plan_compaction(target, opts)
        out.compact(plan)
        if plan.due or plan.blocked:
            raise typer.Exit(1)
        return
    progress = None if fmt is Format.json or bar.wanted else note
    result = compact(target, opts, progress)
    out.compact(result.plan, result)
    if result.failed or result.plan.blocked:
        raise typer.Exit(1)


def _refuse(major: bool, minor: bool, spark: bool, master: str | None, do_apply: bool) -> None:
    """Options that cannot go together, and --spark --apply where Spark cannot start: refused
    before the table's lock is taken and a journal begun (nothing to undo)."""
    if major and minor:
        raise UsageError("--major and --minor: give one (or neither, for the Initiator's "
                         "choice)")
    if master and not spark:
        raise UsageError("--master goes with --spark")
    if spark and do_apply:
        from ..io.spark import require_spark

        require_spark()
