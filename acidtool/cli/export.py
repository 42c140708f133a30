"""`acidtool export --to iceberg`: a Hive ACID table's rows into an Iceberg table."""

from __future__ import annotations

import enum
from typing import List, Optional

import typer

from ..core.errors import UsageError
from .app import (
    INSERT_ONLY,
    MASTER,
    METASTORE,
    TXNS,
    WRITE_IDS,
    Format,
    HiveVersion,
    app,
    hive_version_option,
    note,
    snapshot_note,
)


class ExportTo(str, enum.Enum):
    iceberg = "iceberg"


_PATH = typer.Argument(..., help="The table directory; with --metastore also "
                       "db.table.")
_CATALOG = typer.Option(
    None, "--catalog", envvar="ACIDTOOL_ICEBERG_CATALOG",
    help="The Iceberg catalog: a directory (a local SQLite catalog and its file warehouse "
         "are made there: nothing else needs to run), a catalog name from pyiceberg's "
         "configuration (~/.pyiceberg.yaml, PYICEBERG_CATALOG__<NAME>__*), or a URI: "
         "sqlite:///catalog.db, postgresql+psycopg2://..., http(s):// (REST), thrift:// "
         "(a Hive metastore).")
_TABLE = typer.Option(None, "--table", help="The Iceberg table, "
                      "NAMESPACE.NAME (made with its namespace if missing).")
_HIVE_VERSION = hive_version_option("Read as this Hive reads")
_PARTITION = typer.Option(None, "--partition", help="Only this "
                          "partition, k=v[/k2=v2] (again for more).")
_INCREMENTAL = typer.Option(False, "--incremental", help="The table holds an "
                            "earlier export of this Hive table: apply what changed "
                            "since (rows deleted, rows appended), in one commit. On "
                            "a table that does not exist yet, a full export.")
_WAREHOUSE = typer.Option(None, "--warehouse", help="Where a SQL catalog "
                          "given as a URI keeps table files (default: "
                          "beside a SQLite file).")
_TRUNCATE_TIMESTAMPS = typer.Option(False, "--truncate-timestamps", help="Iceberg "
                                    "keeps timestamps in microseconds: drop the "
                                    "nanoseconds of those that have any (refused "
                                    "without it).")
_DRY_RUN = typer.Option(False, "--dry-run", help="Say what the export would do, "
                        "and write nothing.")
_SPARK = typer.Option(False, "--spark", help="Read and write on Spark's executors, "
                      "which write the Parquet data files straight into the Iceberg "
                      "table's location; the driver makes the one commit. Executors must "
                      "reach both tables. See --native for how.")
_NATIVE = typer.Option(None, "--native/--no-native", help="With --spark: --native exports a "
                       "new table by Spark's own ORC reader and Parquet writer (executors need "
                       "no Python package; refused, with the reason, where it cannot); "
                       "--no-native by acidtool and pyiceberg on the executors (they need "
                       "both), one task per bucket of a partition, or with --incremental per "
                       "partition. Default: --native on a cluster's master, --no-native on "
                       "local[N], where pyarrow's Parquet writer is the faster.")


@app.command("export")
def export_command(
    path: str = _PATH,
    to: ExportTo = typer.Option(..., "--to", help="The format to export to: iceberg."),
    catalog: Optional[str] = _CATALOG,
    table: Optional[str] = _TABLE,
    write_ids: Optional[str] = WRITE_IDS,
    txns: Optional[str] = TXNS,
    hive_version: Optional[HiveVersion] = _HIVE_VERSION,
    metastore: Optional[str] = METASTORE,
    insert_only: bool = INSERT_ONLY,
    partition: Optional[List[str]] = _PARTITION,
    incremental: bool = _INCREMENTAL,
    warehouse: Optional[str] = _WAREHOUSE,
    truncate_timestamps: bool = _TRUNCATE_TIMESTAMPS,
    dry_run: bool = _DRY_RUN,
    spark: bool = _SPARK,
    native: Optional[bool] = _NATIVE,
    master: Optional[str] = MASTER,
    fmt: Format = typer.Option(Format.text, "--format", help="text or json."),
) -> None:
    """Export the rows Hive returns at a snapshot into an Apache Iceberg table, in one Iceberg
    commit, where Trino's migrate, Hive's CONVERT TO ICEBERG and Iceberg's own procedures all
    refuse a transactional table.

    The Iceberg table gets the Hive columns as Hive's own Iceberg integration types them
    (tinyint and smallint as int, char and varchar as string), the Hive partition columns as
    identity partitions, and one more column: `_hive_row_id`, each row's Hive ROW__ID
    (`_hive_file`, its data file, for an insert-only table). An incremental export matches
    rows by it; drop it once no more incremental exports are wanted (`ALTER TABLE t DROP
    COLUMN _hive_row_id` in Spark, or pyiceberg's `update_schema().delete_column`). Each
    snapshot's summary records the source, its Hive version and the snapshot exported
    (acidtool.source, acidtool.hive-version, acidtool.write-ids or acidtool.txns).

    Running an export again at the same snapshot does nothing. A failed or interrupted export
    commits nothing: the Iceberg table stays at its last snapshot.

    Examples:

    \b
      acidtool export /warehouse/shop.db/orders --to iceberg --catalog ./lake --table shop.orders
      acidtool export shop.orders --metastore thrift://hms:9083 --to iceberg \\
          --catalog prod --table shop.orders --incremental
      acidtool export /warehouse/t --to iceberg --catalog ./lake --table s.t --dry-run

    Exit status: 0 exported (or nothing to do), 1 Hive would fail on the table or the Iceberg
    table changed under the export (nothing committed), 2 bad option, unreadable PATH, or an
    Iceberg table that holds something else.
    """
    from ..commands.export.run import ExportOptions, plan_export, run_export
    from ..io.progress import ticker
    from ..table.target import resolve
    from .results import output_for

    catalog, table = _require_options(to, catalog, table, spark, master)
    if native is not None and not spark:
        raise UsageError("--native and --no-native go with --spark")
    opts = ExportOptions(catalog, table, incremental, tuple(partition or ()), warehouse,
                         truncate_timestamps)
    target = resolve(path, metastore=metastore, hive_version=hive_version,
                     write_ids=write_ids, txns=txns, insert_only=insert_only)
    snapshot_note(target.snapshot)
    plan, work = plan_export(target, opts, path, dry_run=dry_run, read_ahead=not spark)
    bar = None if fmt is Format.json else ticker("units")
    if spark:
        result = _export_on_spark(plan, work, opts, master, native, dry_run, bar)
    else:
        result = None if dry_run else run_export(plan, work, opts, bar)
    output_for(fmt).export(plan, result, dry_run)


def _export_on_spark(plan, work, opts, master: str | None, native: bool | None,
                     dry_run: bool, bar):
    """``--spark``: a new table by Spark's own reader and Parquet writer (``native``; by
    default on a cluster's master) where they can make the export, else acidtool on the
    executors (once it is done, one line says which, and why)."""
    from ..commands.export.native import native_unfit, run_export_native
    from ..commands.export.spark import run_export_spark

    if dry_run or plan.action == "nothing":
        return run_export_spark(plan, work, opts, master or "", dry_run, bar)
    why = "--no-native" if native is False else native_unfit(plan, work, opts)
    frame = None
    if why is None:
        from ..io.spark import session
        from ..spark import frame_of

        spark = session(master)
        if native is None and str(spark.sparkContext.master).startswith("local"):
            why = ("a local master, where pyarrow's Parquet writer is faster than Spark's "
                   "(--native for Spark's own)")
        else:
            frame = frame_of(spark, work.read_plan, forced=bool(native))
            why = frame if isinstance(frame, str) else None
    if why is not None and native:
        raise UsageError(f"--native: Spark's own parts cannot make this export: {why}")
    if why is not None:
        result = run_export_spark(plan, work, opts, master or "", dry_run, bar)
        note(f"written by acidtool on Spark's executors: {why}")
        return result
    result = run_export_native(plan, work, frame)
    note("read by Spark's own ORC reader, written by its Parquet writer (no Python on the "
         "executors)")
    return result


def _require_options(to: ExportTo, catalog: str | None, table: str | None, spark: bool,
                     master: str | None) -> tuple[str, str]:
    """What export needs before anything is made (the catalog's directory and database): the
    catalog and the table."""
    if to is not ExportTo.iceberg:
        raise UsageError("--to: iceberg is the one format")
    if not catalog:
        raise UsageError("--catalog: name the Iceberg catalog (a directory such as ./lake makes "
                         "a local one)")
    if not table:
        raise UsageError("--table: name the Iceberg table, NAMESPACE.NAME")
    if master and not spark:
        raise UsageError("--master goes with --spark")
    if spark:
        from ..io.spark import require_spark

        require_spark()
    return catalog, table
