"""`acidtool read` and `diff`: the rows Hive returns."""

from __future__ import annotations

import enum
import sys
from typing import Optional

import typer

from ..core.errors import UsageError
from .app import (
    HIVE_VERSION,
    INSERT_ONLY,
    MASTER,
    METASTORE,
    TXNS,
    WRITE_IDS,
    Codec,
    HiveVersion,
    app,
    csv_items,
    note,
    silence_stdout,
    size_bytes,
    snapshot_note,
)


class ReadFormat(str, enum.Enum):
    jsonl = "jsonl"
    csv = "csv"
    parquet = "parquet"
    orc = "orc"


_COMPRESSION = typer.Option(None, "--compression", help="With --format orc or parquet: the "
                            "codec. Default: uncompressed ORC, snappy Parquet.")


@app.command("read")
def read_command(
    path: str = typer.Argument(..., help="Table or partition directory (any filesystem); with "
                               "--metastore also db.table or db.table/k=v."),
    write_ids: Optional[str] = WRITE_IDS,
    txns: Optional[str] = TXNS,
    hive_version: Optional[HiveVersion] = HIVE_VERSION,
    metastore: Optional[str] = METASTORE,
    insert_only: bool = INSERT_ONLY,
    table: Optional[str] = typer.Option(None, "--table",
                                        help="Which table of a multi-table --write-ids to use."),
    fmt: ReadFormat = typer.Option(ReadFormat.jsonl, "--format",
                                   help="jsonl (values as dump prints them), csv, parquet, orc."),
    compression: Optional[Codec] = _COMPRESSION,
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to FILE (written "
                                         "under a temporary name, renamed when complete)."),
    columns: Optional[str] = typer.Option(None, "--columns", help="Comma-separated columns."),
    limit: Optional[int] = typer.Option(None, "--limit", min=0, help="Stop after N rows."),
    with_row_id: bool = typer.Option(False, "--with-row-id", help='Add "ROW__ID": {"writeid",'
                                     ' "bucketid", "rowid"} as Hive shows it.'),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", help="Memory for delete "
                                               "keys, e.g. 512M or 2G: above it they are "
                                               "streamed in chunks instead of held."),
    spark: bool = typer.Option(False, "--spark", help="Read on Spark's executors, one task per "
                               "(partition, bucket), and write a dataset: needs --format "
                               "parquet or orc and -o DIR."),
    master: Optional[str] = MASTER,
) -> None:
    """The rows Hive would return for a snapshot, deletes applied, without Hive.

    Applies getAcidState, keeps rows whose write id the snapshot sees, applies the delete
    events of the selected delete deltas, reads original files with the ROW__IDs Hive gives
    them, and merges Hive 2 "legacy" update/delete events as Hive 2.3 does. A partitioned table
    gets its partition columns added.

    Examples:

    \b
      acidtool read /warehouse/shop.db/orders --limit 10
      acidtool read /warehouse/shop.db/orders --write-ids 'shop.orders:41:9223372036854775807::' \\
        --format parquet -o orders.parquet
      acidtool read shop.orders --metastore thrift://metastore:9083 --limit 10

    From Python: acidtool.open_table(url).snapshot(write_ids=...).to_arrow()

    Exit status: 0 ok; 1 Hive would refuse the snapshot or a file is unreadable (a partial
    Parquet/ORC output file is removed); 2 bad option or unreadable path.
    """
    from ..io.progress import Progress
    from ..io.sink import write_rows
    from ..table.snapshot import Table

    if compression is not None and (spark or fmt not in (ReadFormat.parquet, ReadFormat.orc)):
        raise UsageError("--compression goes with --format parquet or orc, without --spark")
    if spark:
        _read_on_spark(path, metastore, write_ids, txns, hive_version, table, insert_only,
                       fmt.value, output, csv_items(columns), with_row_id, master)
        return
    if fmt in (ReadFormat.parquet, ReadFormat.orc) and output is None and sys.stdout.isatty():
        raise UsageError(f"--format {fmt.value} writes binary data: give --output FILE or "
                         "redirect stdout")
    snap = Table(path, metastore).snapshot(write_ids, txns, hive_version, table=table,
                                with_row_id=with_row_id, columns=csv_items(columns),
                                memory_limit=size_bytes(memory_limit), limit=limit,
                                insert_only=insert_only)
    snapshot_note(snap.table.snapshot)
    # a bar on a terminal, unless the rows themselves go there
    bar = Progress(0, sys.stderr.isatty() and (output is not None or not sys.stdout.isatty()),
                   "buckets read")
    try:
        rows = write_rows(snap.tables(bar.at), fmt.value, output, sys.stdout.buffer, limit,
                          prefetch=memory_limit is None,
                          compression=compression.value if compression else None)
    except BrokenPipeError:
        silence_stdout()
        raise typer.Exit(0) from None
    if output:
        note(f"wrote {rows} rows to {output}")


def _read_on_spark(path, metastore, write_ids, txns, hive_version, table, insert_only, fmt,
                   output, columns, with_row_id, master) -> None:
    """``read --spark``: the DataFrame of ``acidtool.spark.read_table`` written as a dataset
    (Spark's part files), in parallel; nothing passes through this process."""
    if fmt not in ("parquet", "orc") or not output:
        raise UsageError("--spark writes a dataset: give --format parquet or orc and -o DIR")
    from ..io.fs import kind_of, resolve
    from ..io.spark import require_spark, session

    require_spark()
    if kind_of(resolve(output)) != "missing":
        raise UsageError(f"-o {output}: exists already (acidtool never overwrites)")
    from ..hiveacid import acidtool_errors
    from ..spark import read_table_and_why

    df, why = read_table_and_why(session(master), path, write_ids, txns, hive_version,
                                 with_row_id=with_row_id, columns=columns, metastore=metastore,
                                 table=table, insert_only=insert_only)
    how = f"read through the hiveacid source: {why}" if why else \
        "read by Spark's own ORC reader (no Python on the executors)"
    if not df.columns:  # (Spark writes no dataset of no columns: this process does)
        from ..io.sink import write_empty_dataset

        write_empty_dataset(output, fmt)
        note(f"wrote an empty {fmt} dataset to {output}: the snapshot has no data file to "
             "take the columns from (no rows)")
        return
    note(how)
    with acidtool_errors():
        df.write.format(fmt).mode("errorifexists").save(output)
    note(f"wrote a {fmt} dataset to {output}")


@app.command("diff")
def diff_command(
    path: str = typer.Argument(..., help="Table or partition directory; with --metastore also "
                               "db.table or db.table/k=v."),
    from_: Optional[str] = typer.Option(None, "--from", help="The earlier snapshot (a write-id "
                                        "list; with --hive-version 2 a transaction list)."),
    to: Optional[str] = typer.Option(None, "--to", help="The later snapshot."),
    from_write_id: Optional[int] = typer.Option(None, "--from-write-id", help="Everything up "
                                                "to this write id committed."),
    to_write_id: Optional[int] = typer.Option(None, "--to-write-id"),
    txns: Optional[str] = TXNS,
    hive_version: Optional[HiveVersion] = HIVE_VERSION,
    insert_only: bool = INSERT_ONLY,
    table: Optional[str] = typer.Option(None, "--table"),
    metastore: Optional[str] = METASTORE,
) -> None:
    """Rows inserted and deleted between two snapshots, as JSON lines with an "op" field.

    Incremental extraction without a metastore: an update shows as a delete of the old row and
    an insert of the new one (new ROW__ID), as in Hive's split-update.

    Examples:

    \b
      acidtool diff /warehouse/shop.db/orders --from-write-id 5 --to-write-id 9
      acidtool diff /warehouse/t --from 'db.t:5:9223372036854775807::' --to 'db.t:9:7:7:'

    Exit status: 0 ok; 1 Hive would refuse a snapshot; 2 bad option or unreadable path.
    """
    from ..commands.inspect.diff import diff, write_diff
    from ..io.progress import Progress

    bar = Progress(0, sys.stderr.isatty(), "buckets read")  # (drawn before any row is out)
    inserted, deleted = diff(path, before=from_, after=to, before_write_id=from_write_id,
                             after_write_id=to_write_id, txns=txns,
                             hive_version=hive_version, table=table, insert_only=insert_only,
                             metastore=metastore, progress=bar.at)
    try:
        write_diff(inserted, deleted, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        silence_stdout()
        raise typer.Exit(0) from None
    note(f"{inserted.num_rows} inserted, {deleted.num_rows} deleted")

