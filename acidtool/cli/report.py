"""`acidtool report`: a warehouse's health as one self-contained HTML file (or JSON)."""

from __future__ import annotations

import enum
import sys
from typing import List, Optional

import typer

from ..core.errors import UsageError
from .app import (
    INSERT_ONLY,
    MASTER,
    METASTORE,
    TXNS,
    WRITE_IDS,
    HiveVersion,
    app,
    hive_version_option,
    note,
    write_whole,
)


class ReportFormat(str, enum.Enum):
    html = "html"
    json = "json"


@app.command("report")
def report_command(
    paths: List[str] = typer.Argument(..., help="Tables, partitions, or (with --recursive) "
                                      "warehouse trees."),
    output: str = typer.Option(..., "--output", "-o", help="The file to write (whole, by one "
                               "rename): report.html, or report.json with --format json; "
                               "- for standard output."),
    recursive: bool = typer.Option(False, "--recursive", "-r", help="Every ACID table below "
                                   "each PATH."),
    write_ids: Optional[str] = WRITE_IDS,
    txns: Optional[str] = TXNS,
    hive_version: Optional[HiveVersion] = hive_version_option("Judge the tables by what this Hive writes"),
    metastore: Optional[str] = METASTORE,
    insert_only: bool = INSERT_ONLY,
    table: Optional[str] = typer.Option(None, "--table", help="db.table, for multi-table "
                                        "--write-ids and the COMPACT statements."),
    fmt: ReportFormat = typer.Option(ReportFormat.html, "--format", help="html or json."),
    jobs: int = typer.Option(8, "--jobs", "-j", min=1, help="Files read at once."),
    spark: bool = typer.Option(False, "--spark", help="Check the partitions on Spark's "
                               "executors, as validate --spark."),
    master: Optional[str] = MASTER,
) -> None:
    """Write a warehouse's health report: one HTML file, nothing else needed to open it.

    A summary (tables, partitions, files, bytes; findings by severity and code; compactions
    due), a table of every partition to sort and filter, and per table its history drawn
    (as `ls --format svg`), its findings with what each rule checks, and the compactions
    Hive's Initiator would run. The findings are `validate`'s (at --level metadata).
    Nothing in the file comes from elsewhere (no script, font or link outside it): it
    works opened from disk.

    Examples:

    \b
      acidtool report -r /warehouse -o warehouse.html
      acidtool report /warehouse/shop.db/orders --write-ids 'shop.orders:9:...' -o orders.html
      acidtool report -r /warehouse --format json -o warehouse.json
      acidtool report -r /warehouse --format json -o - | jq '.tables[].table'

    Exit status: 0 written (whatever it found); 2 bad option or unreadable PATH.
    """
    from ..commands.check.report import build_report
    from ..commands.check.validate import ValidateOptions
    from ..core.compaction import Settings
    from ..table.target import resolve_many
    from .output import count
    from .report_html import PANELS, draw, report_html, report_json

    paths, target = resolve_many(paths, metastore=metastore, hive_version=hive_version,
                                 write_ids=write_ids, txns=txns, insert_only=insert_only,
                                 table=table)
    if not output.strip():
        raise UsageError("--output FILE: where the report goes")
    opts = ValidateOptions(snapshot=target.snapshot, snapshot_given=target.snapshot_given,
                           recursive=recursive, jobs=jobs, spark=spark, master=master,
                           table_name=table or (target.table.full_name if target.table
                                                else None))
    props = target.table.parameters if target.table is not None else None
    html = fmt is ReportFormat.html
    report = build_report(paths, opts, Settings.of().for_table(props), table=opts.table_name,
                          progress=sys.stderr.isatty(), draw=draw if html else None,
                          drawn=PANELS if html else 0)
    if metastore:  # doctor's view of the same tables: a column and a section
        from ..commands.check.doctor import doctor

        found = doctor(sorted({t.name for t in report.tables}), metastore, missing_ok=True)
        report.doctor = dict(found.tables)
    data = report_html(report) if html else report_json(report)
    if output == "-":
        sys.stdout.write(data)
        sys.stdout.flush()
    else:
        write_whole(output, data.encode())
    counts = report.counts()
    where = "standard output" if output == "-" else output
    note(f"wrote {where}: {count(len(report.tables), 'table')}, "
         f"{count(len(report.partitions), 'partition')}; {count(counts['error'], 'error')}, "
         f"{count(counts['warning'], 'warning')}, "
         f"{count(len(report.due()), 'compaction')} due")
