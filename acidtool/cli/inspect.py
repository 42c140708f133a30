"""`acidtool ls`, `dump` and `meta`: what a table holds, as Hive sees it."""

from __future__ import annotations

import enum
import sys
from typing import List, Optional

import typer

from ..core.errors import UsageError
from .app import (
    HIVE_VERSION,
    INSERT_ONLY,
    MASTER,
    METASTORE,
    TXNS,
    WRITE_IDS,
    HiveVersion,
    LsFormat,
    TableFormat,
    app,
    csv_items,
    note,
    silence_stdout,
    snapshot_note,
)
from .results import Output, output_for


@app.command("ls")
def ls_command(
    path: str = typer.Argument(..., help="Table or partition directory: a local path, file://, "
                               "hdfs://, or any fsspec URL (s3://, gs://, abfs://, memory://...); "
                               "with --metastore also db.table or db.table/k=v."),
    write_ids: Optional[str] = WRITE_IDS,
    txns: Optional[str] = TXNS,
    hive_version: Optional[HiveVersion] = HIVE_VERSION,
    metastore: Optional[str] = METASTORE,
    insert_only: bool = INSERT_ONLY,
    table: Optional[str] = typer.Option(None, "--table",
                                        help="Which table of a multi-table --write-ids to use."),
    fmt: LsFormat = typer.Option(LsFormat.table, "--format", help="table (for people), json, "
                                 "or svg (a picture of each partition on a write-id axis)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="--format svg: the "
                                         "picture to FILE (by one rename); - is stdout."),
    files: bool = typer.Option(False, "--files", help="Also list the files inside each directory."),
    ignore_empty_files: bool = typer.Option(
        False, "--ignore-empty-files",
        help="Skip zero-length original files, as Hive's ORC reader does (getAcidState's "
             "ignoreEmptyFiles)."),
    recursive: bool = typer.Option(False, "--recursive", "-r", help="Every ACID table below "
                                   "PATH (a warehouse): one report per table."),
    spark: bool = typer.Option(False, "--spark", help="With --recursive: select each share of "
                               "partitions on Spark's executors (same output)."),
    master: Optional[str] = MASTER,
) -> None:
    """List a table directory and compute Hive's getAcidState selection for a snapshot.

    Every child of each partition gets a status: selected (read), obsolete (superseded, the
    cleaner deletes it), aborted, ignored (not visible in the snapshot, hidden), original
    (pre-ACID data read with synthetic ROW__IDs) or foreign (not a name Hive writes).

    Examples:

    \b
      acidtool ls s3://bucket/warehouse/orders --write-ids 'db.orders:12:9:9:' --format json
      acidtool ls /warehouse/t --hive-version 2 --txns '150:121:99:121'
      acidtool ls shop.orders --metastore thrift://metastore:9083
      acidtool ls /warehouse/db.db/orders --format svg -o orders.svg

    Exit status: 0 listed; 1 Hive would fail to read a partition, or a partition holds half
    of a compaction (the report still prints); 2 bad option or unreadable path.
    """
    from .._gc import paused_gc
    from ..table.target import resolve
    from .output import partition_failures
    from .svg import ls_svg

    target = resolve(path, metastore=metastore, hive_version=hive_version,
                     write_ids=write_ids, txns=txns, table=table, insert_only=insert_only)
    snapshot_note(target.snapshot)
    if spark and not recursive:
        raise UsageError("--spark goes with --recursive (a warehouse's tables)")
    if (fmt is LsFormat.svg and recursive) or (output and fmt is not LsFormat.svg):
        raise UsageError("--format svg draws one table (no --recursive); --output goes with it")
    # (the collector stays off while a big listing's objects live: its passes would walk them)
    with paused_gc():
        if fmt is LsFormat.svg:
            failures = partition_failures(ls_svg(target.url, target.snapshot,
                                                 ignore_empty_files, output).partitions)
        elif recursive:
            failures = _ls_tree(target.url, target.snapshot, output_for(fmt), files,
                                ignore_empty_files, (master or "") if spark else None)
        else:
            failures = _ls(target.url, target.snapshot, output_for(fmt), files,
                           ignore_empty_files, target.describe() if target.table else None)
    for failure in failures:
        note(failure)
    if failures:
        raise typer.Exit(1)


def _ls(path: str, snapshot, out: Output, files: bool, ignore_empty_files: bool,
        metastore: dict | None = None) -> list[str]:
    """Print the ls report; return what Hive would fail on, a line per failing partition."""
    from ..table.ls import inspect_table, with_read_failures
    from .output import partition_failures

    state = with_read_failures(inspect_table(path, snapshot,
                                             ignore_empty_files=ignore_empty_files))
    out.ls(state, files, metastore)
    return partition_failures(state.partitions)


def _ls_tree(path: str, snapshot, out: Output, files: bool, ignore_empty_files: bool,
             spark: str | None) -> list[str]:
    """``ls --recursive``: a report per table; JSON: {"path", "tables": [ls's document]}."""
    from ..io.progress import ticker
    from ..table.ls import inspect_tree, with_read_failures
    from .output import partition_failures

    tables = [with_read_failures(t) for t in inspect_tree(path, snapshot, spark=spark,
              ignore_empty_files=ignore_empty_files, progress=ticker("tables selected"))]
    out.ls_tree(path, tables, files)
    return partition_failures([p for t in tables for p in t.partitions])


class Operation(str, enum.Enum):
    insert = "insert"
    update = "update"
    delete = "delete"



@app.command("dump")
def dump_command(
    targets: List[str] = typer.Argument(..., help="ORC files, base/delta directories, or table "
                                        "and partition directories (then the files Hive reads)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=0, help="Stop after N rows in all."),
    bucket: Optional[int] = typer.Option(None, "--bucket", help="Only rows whose decoded bucket "
                                         "id is ID (536936448 decodes to 1)."),
    write_id: Optional[int] = typer.Option(None, "--write-id", help="Only rows whose "
                                           "originalTransaction or currentTransaction is W."),
    operation: Optional[Operation] = typer.Option(None, "--operation", help="Only insert, "
                                                  "update or delete events."),
    columns: Optional[str] = typer.Option(None, "--columns", help="Comma-separated columns of the "
                                          "row struct to print (top-level columns of plain files)."),
    decode: bool = typer.Option(False, "--decode", help='Add "bucketId", "statementId", '
                                '"codecVersion" and "op" after the five ACID fields.'),
    with_file: bool = typer.Option(False, "--with-file", help='Add "file": the path relative to '
                                   "TARGET."),
    synthetic_row_ids: bool = typer.Option(False, "--synthetic-row-ids", help="Print original "
                                           "(non-ACID) files' rows as the ACID events Hive makes "
                                           "of them, with the ROW__IDs Hive assigns."),
    all_files: bool = typer.Option(False, "--all", help="For a table: every ORC file, obsolete "
                                   "and aborted ones too, not only those Hive reads."),
    write_ids: Optional[str] = WRITE_IDS,
    txns: Optional[str] = TXNS,
    hive_version: Optional[HiveVersion] = HIVE_VERSION,
    metastore: Optional[str] = METASTORE,
) -> None:
    """Print rows as JSON lines, exactly as `orc-tools data` prints them, without a JVM.

    ACID files print {"operation":0,"originalTransaction":1,"bucket":536870912,"rowId":0,
    "currentTransaction":1,"row":{...}} ("row":null for deletes); plain files print their rows.
    No separator lines. Values are spelled as Java spells them (5000.0, 1.0E-5, decimals as
    strings, timestamps as java.sql.Timestamp in UTC).

    Examples:

    \b
      acidtool dump /warehouse/t/delta_0000005_0000005_0000/bucket_00000
      acidtool dump /warehouse/t --decode --with-file | head
      acidtool dump /warehouse/t --operation delete --write-id 7

    Exit status: 0 all files dumped; 1 a file was not readable ORC (the others are still
    dumped) or Hive would fail to read the table; 2 bad option or missing path.
    """
    from ..commands.inspect.dump import DumpOptions, dump
    from ..table.target import resolve_many

    targets, target = resolve_many(targets, metastore=metastore, hive_version=hive_version,
                                   write_ids=write_ids, txns=txns)
    snapshot = target.snapshot
    snapshot_note(snapshot)
    opts = DumpOptions(limit=limit, bucket=bucket, write_id=write_id,
                       operation=operation.value if operation else None, columns=csv_items(columns),
                       decode=decode, with_file=with_file, synthetic_row_ids=synthetic_row_ids,
                       all_files=all_files,
                       snapshot=snapshot)
    try:
        result = dump(targets, opts, sys.stdout.buffer, note)
    except BrokenPipeError:
        # The reader went away (`| head`): what it wanted was written. Not an error.
        silence_stdout()
        raise typer.Exit(0) from None
    if result.failures:
        raise typer.Exit(1)


@app.command("meta")
def meta_command(
    targets: List[str] = typer.Argument(..., help="ORC files, base/delta directories, or table "
                                        "and partition directories."),
    fmt: TableFormat = typer.Option(TableFormat.table, "--format",
                                    help="table (for people) or json."),
    all_files: bool = typer.Option(False, "--all", help="For a table: every ORC file, not only "
                                   "those Hive reads."),
    hive_version: Optional[HiveVersion] = HIVE_VERSION,
    metastore: Optional[str] = METASTORE,
) -> None:
    """Show ORC file metadata: rows, stripes, compression, writer, schema, column statistics,
    and Hive's ACID footer metadata decoded (hive.acid.key.index per stripe, hive.acid.stats,
    hive.acid.version).

    Examples:

    \b
      acidtool meta /warehouse/t/delta_0000005_0000005_0000/bucket_00000
      acidtool meta /warehouse/t --format json

    Exit status: 0 ok; 1 a file was not readable ORC; 2 bad option or missing path.
    """
    from ..commands.inspect.meta import meta
    from ..table.target import resolve_many

    targets, target = resolve_many(targets, metastore=metastore, hive_version=hive_version)
    result = meta(targets, all_files=all_files, hive_version=target.snapshot.hive_version,
                  note=note)
    output_for(fmt).meta(result.files)
    if result.failed:
        raise typer.Exit(1)
