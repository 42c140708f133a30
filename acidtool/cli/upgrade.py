"""`acidtool upgrade-check`: is a Hive 2 warehouse ready to move to Hive 3 or 4?"""

from __future__ import annotations

import enum
from typing import List, Optional

import typer

from ..core.errors import UsageError
from .app import METASTORE, TXNS_HELP, app, emit, snapshot_note


class UpgradeFormat(str, enum.Enum):
    text = "text"
    json = "json"
    sql = "sql"


class Target(str, enum.Enum):
    three = "3"
    four = "4"


@app.command("upgrade-check")
def upgrade_check_command(
    paths: List[str] = typer.Argument(..., help="Tables or partitions (with --metastore also "
                                      "db.table), or with --recursive whole warehouse trees."),
    recursive: bool = typer.Option(False, "--recursive", "-r", help="Every ACID table below "
                                   "each PATH."),
    to: Target = typer.Option(Target.three, "--to", help="The Hive the warehouse moves to, "
                              "whose file-name rules are checked: 3 or 4."),
    txns: Optional[str] = typer.Option(None, "--txns", help=TXNS_HELP + " The check reads at "
                                       "the compactor's snapshot made of it, as the tool does."),
    table: Optional[str] = typer.Option(None, "--table", help="db.table, for the statements "
                                        "(default: the metastore's, else from the path)."),
    metastore: Optional[str] = METASTORE,
    fmt: UpgradeFormat = typer.Option(UpgradeFormat.text, "--format", help="text, json, or "
                                      "sql (the pre-upgrade tool's compaction script)."),
) -> None:
    """Before moving a Hive 2 warehouse to Hive 3 or 4: which tables and partitions Hive's
    pre-upgrade tool would major-compact first (update or delete events in their deltas,
    counted by hive.acid.stats: Hive 3 cannot read them as Hive 2 wrote them, "data loss is
    highly likely" otherwise), where the tool itself would fail, the ACID layout of each
    partition, tables without bucketing_version, and file names Hive 3 or 4 cannot parse.
    Offline: no running Hive, no metastore needed.

    Examples:

    \b
      acidtool upgrade-check -r /warehouse
      acidtool upgrade-check -r /warehouse --format sql > compact_before_upgrade.sql
      acidtool upgrade-check shop.orders --metastore thrift://metastore:9083 --format json

    Exit status: 0 ready; 1 something to do first (a major compaction, a partition the tool
    fails on, a file name to fix); 2 bad option or unreadable PATH. Nothing is ever written.
    """
    from ..commands.check.upgrade import upgrade_check
    from ..core.versions import HiveVersion
    from ..table.target import resolve
    from .output_plans import upgrade_sql
    from .results import output_for

    target = resolve(paths[0], metastore=metastore, hive_version=None if metastore else "2",
                     txns=txns, table=table, tree=recursive)
    if target.snapshot.hive_version is not HiveVersion.V2:
        raise UsageError(f"the metastore at {metastore} is Hive "
                         f"{target.snapshot.hive_version}'s: upgrade-check judges a Hive 2 "
                         "warehouse before its upgrade (check its directories without "
                         "--metastore)")
    snapshot_note(target.snapshot)
    from ..io.progress import ticker

    report = upgrade_check(paths, target, recursive=recursive, table=table,
                           metastore=metastore, to=HiveVersion.of(to.value),
                           progress=ticker("partitions judged"))
    if fmt is UpgradeFormat.sql:  # a format only this command and compaction-plan have
        emit(upgrade_sql(report))
    else:
        output_for(fmt).upgrade(report)
    if not report.ready:
        raise typer.Exit(1)
