"""`acidtool delete` and `acidtool update`: row-level changes, evaluated on Spark."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..core.errors import UsageError
from .app import HIVE_VERSION, MASTER, METASTORE, TXNS, WRITE_IDS, Format, HiveVersion, app

_PATH = typer.Argument(..., help="The table directory; with --metastore also db.table.")
_WHERE = typer.Option(..., "--where", help="Which rows: a Spark SQL condition over the "
                      "table's columns, e.g. \"amount < 0 AND ds = '2026-11-24'\".")
_WRITE_ID = typer.Option(..., "--write-id", help="The write id of the change: a number above "
                         "every write id in the table, or `auto` with --metastore (a "
                         "transaction is opened, the write id allocated, Hive's lock taken, "
                         "and committed after the rename).")
_DRY_RUN = typer.Option(False, "--dry-run", help="Count the rows it would change; write "
                        "nothing.")
_SET = typer.Option(..., "--set", help="COL=EXPR, a Spark SQL expression over the row's "
                    "columns (again for more columns), e.g. --set 'name=upper(name)'.")
_FORMAT = typer.Option(Format.text, "--format", help="text or json.")


@app.command("delete")
def delete_command(path: str = _PATH, where: str = _WHERE, write_id: str = _WRITE_ID,
                   hive_version: Optional[HiveVersion] = HIVE_VERSION,
                   write_ids: Optional[str] = WRITE_IDS, txns: Optional[str] = TXNS,
                   metastore: Optional[str] = METASTORE, dry_run: bool = _DRY_RUN,
                   master: Optional[str] = MASTER, fmt: Format = _FORMAT) -> None:
    """DELETE FROM a Hive ACID table WHERE a condition, as Hive 3 and 4 write it: a
    delete_delta_W_W_0000 of delete events naming the rows' ROW__IDs, committed by one rename
    behind the table's lock and a journal (`acidtool undo JOURNAL` takes it back). Spark
    (local[*] unless --master) evaluates the condition over the rows Hive returns.

    Examples:

    \b
      acidtool delete /warehouse/shop.db/orders --where 'amount < 0' --write-id 12
      acidtool delete shop.orders --metastore thrift://hms:9083 --where "ds = '2026-11-24'" \\
        --write-id auto

    Exit status: 0 done (or nothing matched); 1 Hive would fail to read the table; 2 refused
    (a used write id, a condition that does not parse, an insert-only or Hive 2.3 table).
    """
    _run(path, where, None, write_id, hive_version, write_ids, txns, metastore, dry_run,
         master, fmt)


@app.command("update")
def update_command(path: str = _PATH, set_: List[str] = _SET, where: str = _WHERE,
                   write_id: str = _WRITE_ID, hive_version: Optional[HiveVersion] = HIVE_VERSION,
                   write_ids: Optional[str] = WRITE_IDS, txns: Optional[str] = TXNS,
                   metastore: Optional[str] = METASTORE, dry_run: bool = _DRY_RUN,
                   master: Optional[str] = MASTER, fmt: Format = _FORMAT) -> None:
    """UPDATE a Hive ACID table SET columns WHERE a condition, as Hive 3 and 4 write it
    (split-update): delete events for the old ROW__IDs and insert events of the new rows
    under write id W, in the rows' buckets; untouched rows keep their ROW__IDs. Partition and
    bucketing columns cannot be set.

    Examples:

    \b
      acidtool update /warehouse/shop.db/orders --set 'item=upper(item)' --where 'id = 3' \\
        --write-id 13
      acidtool update shop.orders --metastore thrift://hms:9083 --set 'amount=amount*2' \\
        --where 'amount < 1' --write-id auto --dry-run

    Exit status: as `acidtool delete`.
    """
    sets = {}
    for item in set_:
        col, eq, expr = item.partition("=")
        if not eq or not col.strip() or not expr.strip():
            raise UsageError(f"--set {item!r}: give COL=EXPR")
        sets[col.strip()] = expr.strip()
    _run(path, where, sets, write_id, hive_version, write_ids, txns, metastore, dry_run,
         master, fmt)


def _run(path, where, sets, write_id, hive_version, write_ids, txns, metastore, dry_run,
         master, fmt) -> None:
    from ..io.spark import require_spark
    from .results import output_for

    if write_id == "auto" and not metastore:  # (said before Spark takes seconds to start)
        raise UsageError("--write-id auto allocates the write id in the metastore: give "
                         "--metastore thrift://HOST:PORT, or a number")
    require_spark(f"{'delete' if sets is None else 'update'} runs on Spark and needs")
    from ..spark import AcidTable, session

    table = AcidTable.for_path(session(master or "local[*]"), path, hive_version,
                               write_ids=write_ids, txns=txns, metastore=metastore)
    if sets is None:
        result = table.delete(where, write_id=write_id, dry_run=dry_run)
    else:
        result = table.update(where, set=sets, write_id=write_id, dry_run=dry_run)
    output_for(fmt).dml(path, result)
