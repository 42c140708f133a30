"""`acidtool convert`: raw ORC into the delta Hive would write."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from .app import MASTER, METASTORE, Codec, Format, HiveVersion, app, hive_version_option, note

_SOURCES = typer.Argument(..., help="Raw ORC files, directories of them, or globs "
                          "(DataX, Spark df.write.orc, copy scripts...).")
_TABLE = typer.Option(..., "--table", help="The table (or partition) directory; with "
                      "--metastore also db.table or db.table/k=v.")
_WRITE_ID = typer.Option(..., "--write-id", help="The write id (transaction id for Hive "
                         "2) of the new delta, or 'auto': with --metastore the one the "
                         "metastore allocates in a transaction that commits the delta, "
                         "without it one above every write id present.")
_PARTITION = typer.Option(None, "--partition", help="k=v[/k2=v2] below "
                          "--table.")
_HIVE_VERSION = hive_version_option(
    "Whose form to write (3 and 4: Hive 3's; 2: Hive 2's, plain bucket ids, no "
    "_orc_acid_version)")
_INSERT_ONLY = typer.Option(False, "--insert-only", help="An insert-only (micro-"
                            "managed) table: write plain ORC files named 000000_0.. "
                            "(no ACID columns, no _orc_acid_version), as Hive 3/4 "
                            "write one.")
_BUCKETS = typer.Option(None, "--buckets", min=1, help="Bucketed table: the "
                        "number of buckets.")
_BUCKETING_VERSION = typer.Option(2, "--bucketing-version", min=1, max=2,
                                  help="1: Hive 2's hash; 2: Hive 3's Murmur3.")
_MAX_FILE_ROWS = typer.Option(10_000_000, "--max-file-rows", min=1,
                              help="Unbucketed: rows per bucket file.")
_SCHEMA = typer.Option(None, "--schema", help="The table's columns, e.g. "
                       "'struct<id:int,name:string>'.")
_BY_POSITION = typer.Option(False, "--by-position", help="Match source columns to "
                            "--schema by position instead of by name.")
_ALLOW_DUPLICATES = typer.Option(False, "--allow-duplicates", help="Convert sources "
                                 "even when a delta of the table records them as "
                                 "converted already (by content), or two sources "
                                 "hold the same bytes.")
_MOVE_SOURCES_TO = typer.Option(None, "--move-sources", help="After the "
                                "commit, move the sources to DIR2 and write a "
                                "manifest there.")
_VERBOSE = typer.Option(False, "--verbose", "-v", help="With --spark: show Spark's "
                        "own log (WARN and up) on the console; without it, it goes "
                        "to a file in the temporary directory.")
_JOURNAL = typer.Option(None, "--journal", help="The journal file (local; "
                        "`acidtool undo FILE` takes the delta back out). Default: "
                        "~/.local/state/acidtool/journals/convert-RUN.jsonl "
                        "($ACIDTOOL_STATE_DIR moves it).")
_FMT = typer.Option(Format.text, "--format",
                    help="The summary as text or json.")


@app.command("convert")
def convert_command(
    sources: List[str] = _SOURCES,
    table: str = _TABLE,
    write_id: str = _WRITE_ID,
    partition: Optional[str] = _PARTITION,
    statement_id: int = typer.Option(0, "--statement-id", help="The delta's statement id."),
    compression: Codec = typer.Option(Codec.zlib, "--compression"),
    hive_version: Optional[HiveVersion] = _HIVE_VERSION,
    metastore: Optional[str] = METASTORE,
    insert_only: bool = _INSERT_ONLY,
    buckets: Optional[int] = _BUCKETS,
    bucket_by: Optional[str] = typer.Option(None, "--bucket-by", help="Bucketing columns."),
    bucketing_version: int = _BUCKETING_VERSION,
    max_file_rows: int = _MAX_FILE_ROWS,
    schema: Optional[str] = _SCHEMA,
    by_position: bool = _BY_POSITION,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan; write nothing."),
    allow_duplicates: bool = _ALLOW_DUPLICATES,
    move_sources_to: Optional[str] = _MOVE_SOURCES_TO,
    spark: bool = typer.Option(False, "--spark", help="Run as a PySpark job."),
    master: Optional[str] = MASTER,
    verbose: bool = _VERBOSE,
    journal: Optional[str] = _JOURNAL,
    fmt: Format = _FMT,
) -> None:
    """Re-wrap raw ORC into a delta directory exactly as Hive writes an INSERT.

    Writes delta_W_W_SSSS/ with bucket_NNNNN files in the ACID event schema (operation 0,
    originalTransaction = currentTransaction = W, the bucket property, row ids 0..n-1 per
    file) and Hive's footer metadata (hive.acid.key.index, hive.acid.stats, hive.acid.version),
    plus _orc_acid_version. Everything is checked before anything is written; output goes to a
    hidden staging directory inside the table and is committed with one rename.

    Examples:

    \b
      acidtool convert /landing/orders/*.orc --table /warehouse/shop.db/orders --write-id auto
      acidtool convert /landing/orders --table shop.orders --partition ds=2026-11-24 \\
        --write-id auto --metastore thrift://metastore:9083
      acidtool convert /landing/items --table /warehouse/shop.db/items --write-id 42 \\
        --schema 'struct<id:bigint,name:string>' --buckets 4 --bucket-by id --move-sources /done

    With --metastore and --write-id auto it does what Hive's writer does: opens a transaction,
    locks the table or partition, allocates the write id (Hive 2.3: the transaction id),
    heartbeats while writing, commits the delta, adds the partition if it is new and commits the
    transaction; any failure, SIGINT or SIGTERM aborts it and leaves the table as it was. The
    table's bucketing and columns are the metastore's unless given.

    The commit is journaled: `acidtool undo JOURNAL` takes the delta back out (refused once a
    compaction has taken it in, or a later write changed its rows).

    Exit status: 0 committed (or planned, with --dry-run); 1 a failure while writing (nothing
    committed); 2 a problem found before writing (bad source, schema, write id, option), or the
    metastore unreachable or refusing.
    """
    from ..commands.convert.delta import ConvertOptions
    from ..commands.convert.run import convert
    from .results import output_for

    opts = ConvertOptions(
        table=table, write_id=write_id, partition=partition, statement_id=statement_id,
        compression=compression.value, hive_version=hive_version, buckets=buckets,
        bucket_by=tuple(c.strip() for c in (bucket_by or "").split(",") if c.strip()),
        bucketing_version=bucketing_version, max_file_rows=max_file_rows, schema=schema,
        by_position=by_position, move_sources=move_sources_to,
        allow_duplicates=allow_duplicates, insert_only=insert_only, metastore=metastore,
        journal=journal)
    result = convert(sources, opts, dry_run=dry_run, spark=spark, master=master, verbose=verbose,
                     progress=_progress_rows() if sys.stderr.isatty() else None)
    planned = result.summary is None
    doc = {"dry_run": True, **result.plan.describe()} if result.summary is None else \
        result.summary.as_dict()
    output_for(fmt).convert(result.plan.target.url, doc, planned)
    if result.summary is not None and result.summary.transaction is not None:
        note(f"transaction {result.summary.transaction} committed in the metastore at "
             f"{metastore}: write id {result.plan.write_id} is visible to Hive")
    elif not (metastore and write_id == "auto"):
        note(metastore_hint(result.plan))


def metastore_hint(p) -> str:
    """What a converted delta still needs before Hive reads it."""
    return (f"Hive reads {p.directory} only once write id {p.write_id} is committed for the "
            "table in the metastore: give --metastore thrift://HOST:PORT with --write-id auto "
            "to write it in a metastore transaction. Otherwise, on Hive 4, `MSCK REPAIR TABLE "
            "<db.table>` registers the write ids found on disk; or allocate and commit the "
            "write id through the metastore before readers can see the rows.")


def _progress_rows():
    """A progress bar on a terminal, for a convert of a million rows or more."""
    from ..io.progress import Progress

    bar = Progress(0, True, "rows converted")

    def tick(done: int, total: int) -> None:
        if total >= 1_000_000:
            bar.at(done, total)
    return tick
