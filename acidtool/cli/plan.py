"""`acidtool compaction-plan`: what Hive's compaction Initiator would ask for, and the SQL."""

from __future__ import annotations

import enum
from typing import List, Optional

import typer

from .app import (
    INSERT_ONLY,
    MASTER,
    METASTORE,
    TXNS,
    WRITE_IDS_HELP,
    HiveVersion,
    app,
    emit,
    hive_version_option,
    snapshot_note,
)


class PlanFormat(str, enum.Enum):
    text = "text"
    json = "json"
    sql = "sql"


@app.command("compaction-plan")
def compaction_plan_command(
    paths: List[str] = typer.Argument(..., help="Tables or partitions (with --metastore also "
                                      "db.table), or with --recursive whole warehouse trees."),
    recursive: bool = typer.Option(False, "--recursive", "-r", help="Every ACID table below "
                                   "each PATH."),
    hive_version: Optional[HiveVersion] = hive_version_option("Whose Initiator decides"),
    write_ids: Optional[str] = typer.Option(None, "--write-ids", help=WRITE_IDS_HELP + " The "
                                            "Initiator reads at the compactor's snapshot made "
                                            "of it (nothing from the first open id on)."),
    txns: Optional[str] = TXNS,
    insert_only: bool = INSERT_ONLY,
    table: Optional[str] = typer.Option(None, "--table", help="db.table, for the statements "
                                        "(default: the metastore's, else from the path)."),
    set_: Optional[List[str]] = typer.Option(
        None, "--set", help="KEY=VALUE: a compactor setting, as in hive-site.xml: "
        "hive.compactor.delta.num.threshold (10), hive.compactor.delta.pct.threshold (0.1), "
        "hive.compactor.abortedtxn.threshold (1000), hive.compactor.crud.query.based (false). "
        "A table's compactorthreshold.KEY properties (from the metastore) override them."),
    metastore: Optional[str] = METASTORE,
    spark: bool = typer.Option(False, "--spark", help="Select and judge the partitions on "
                               "Spark's executors (a warehouse; the same plan)."),
    master: Optional[str] = MASTER,
    fmt: PlanFormat = typer.Option(PlanFormat.text, "--format", help="text, json, or sql (the "
                                   "statements to run)."),
) -> None:
    """Which tables and partitions Hive's compaction Initiator would compact now, minor or
    major, and why: the number of deltas and their bytes against the base's, as
    Initiator.determineCompactionType of Hive 2.3, 3.1 or 4.0 weighs them (each judged in the
    tests by that version's own class).

    Examples:

    \b
      acidtool compaction-plan /warehouse/shop.db/orders
      acidtool compaction-plan -r /warehouse --format sql > compact.sql
      acidtool compaction-plan shop.orders --metastore thrift://metastore:9083 --format json
      acidtool compaction-plan /warehouse/t --set hive.compactor.delta.num.threshold=4

    Exit status: 0 nothing due; 1 a compaction is due somewhere; 2 bad option or unreadable
    PATH. Nothing is ever written.
    """
    from ..commands.compact.plan import compaction_plan
    from ..core.compaction import Settings
    from ..table.target import resolve
    from .output_plans import plan_sql
    from .results import output_for

    settings = Settings.of(set_ or ())
    target = resolve(paths[0], metastore=metastore, hive_version=hive_version,
                     write_ids=write_ids, txns=txns, table=table, insert_only=insert_only,
                     tree=recursive)
    snapshot_note(target.snapshot)
    from ..io.progress import ticker

    plan = compaction_plan(paths, target, settings, recursive=recursive, table=table,
                           metastore=metastore, spark=(master or "") if spark else None,
                           progress=ticker("partitions judged"))
    if fmt is PlanFormat.sql:  # a format only this command and upgrade-check have
        emit(plan_sql(plan))
    else:
        output_for(fmt).compaction_plan(plan)
    if plan.due:
        raise typer.Exit(1)
