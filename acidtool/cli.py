"""The ``acidtool`` command line. Parses options, calls the library, renders. Nothing else.

Exit statuses: 0 ok; 1 Hive would fail / findings / bad files; 2 usage or unreadable path.
Errors are one line on stderr; ``--traceback`` (anywhere on the line) shows the Python traceback.
"""

from __future__ import annotations

import enum
import os
import sys
from typing import Iterable, List, Optional

import typer

from . import __version__
from .core.errors import AcidStateError
from .errors import AcidToolError, UsageError

app = typer.Typer(
    name="acidtool",
    help="Look inside Apache Hive ACID (transactional) table directories the way Hive does, "
         "without a running Hive.\n\nExit status: 0 ok, 1 Hive would fail (or findings), "
         "2 usage error or unreadable path.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
decode_app = typer.Typer(help="Decode the numbers Hive writes: bucket properties and snapshots.",
                         no_args_is_help=True)
app.add_typer(decode_app, name="decode")


class Format(str, enum.Enum):
    table = "table"
    json = "json"


class HiveVersion(str, enum.Enum):
    v2 = "2"
    v3 = "3"
    v4 = "4"


WRITE_IDS_HELP = ("Snapshot as a ValidWriteIdList, 'db.tbl:hwm:minOpen:open,ids:aborted,ids' "
                  "(or the '$'-joined hive.txn.tables.valid.writeids form). Default: everything "
                  "committed. Not used with --hive-version 2.")
TXNS_HELP = ("ValidTxnList 'hwm:minOpenTxn:open:aborted' (Hive 4: decides which _v<txn> "
             "directories are visible). With --hive-version 2 it is the snapshot itself, in 2.3's "
             "'hwm:minOpenTxn[:exception]*' form. Default: everything committed.")
VERSION_HELP = "Hive semantics to apply: 2 (2.3), 3 or 4."


def _emit(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _emit_pieces(pieces: Iterable[str]) -> None:
    """Write a long output piece by piece as it is made, never joined into one string."""
    write = sys.stdout.write
    for piece in pieces:
        write(piece)
    write("\n")


def _json(doc) -> str:
    from .render import dumps

    return dumps(doc)


def _version_callback(value: bool) -> None:
    if value:
        _emit(f"acidtool {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version_callback,
                                       is_eager=True, help="Print the version and exit.")) -> None:
    pass


@app.command("ls")
def ls_command(
    path: str = typer.Argument(..., help="Table or partition directory: a local path, file://, "
                               "hdfs://, or any fsspec URL (s3://, gs://, abfs://, memory://...)."),
    write_ids: Optional[str] = typer.Option(None, "--write-ids", help=WRITE_IDS_HELP),
    txns: Optional[str] = typer.Option(None, "--txns", help=TXNS_HELP),
    hive_version: HiveVersion = typer.Option(HiveVersion.v4, "--hive-version", help=VERSION_HELP),
    table: Optional[str] = typer.Option(None, "--table",
                                        help="Which table of a multi-table --write-ids to use."),
    fmt: Format = typer.Option(Format.table, "--format", help="table (for people) or json."),
    files: bool = typer.Option(False, "--files", help="Also list the files inside each directory."),
    ignore_empty_files: bool = typer.Option(
        False, "--ignore-empty-files",
        help="Skip zero-length original files, as Hive's ORC reader does (getAcidState's "
             "ignoreEmptyFiles)."),
) -> None:
    """List a table directory and compute Hive's getAcidState selection for a snapshot.

    Every child of each partition gets a status: selected (read), obsolete (superseded, the
    cleaner deletes it), aborted, ignored (not visible in the snapshot, hidden), original
    (pre-ACID data read with synthetic ROW__IDs) or foreign (not a name Hive writes).

    Examples:

      acidtool ls /warehouse/db.db/orders

      acidtool ls s3://bucket/warehouse/orders --write-ids 'db.orders:12:9:9:' --format json

      acidtool ls /warehouse/t --hive-version 2 --txns '150:121:99:121'

    Exit status: 0 listed; 1 Hive would fail to read a partition (the report still prints);
    2 bad option or unreadable path.
    """
    from ._gc import paused_gc
    from .snapshot_options import make_snapshot

    snapshot = make_snapshot(hive_version.value, write_ids, txns, table)
    # The collector stays off until the report is printed and freed: switched back on while
    # the objects of a big listing are alive, its first pass would walk every one of them.
    with paused_gc():
        failures = _ls(path, snapshot, fmt, files, ignore_empty_files)
    for failure in failures:
        print(f"acidtool: {failure}", file=sys.stderr)
    if failures:
        raise typer.Exit(1)


def _ls(path: str, snapshot, fmt: Format, files: bool, ignore_empty_files: bool) -> list[str]:
    """Print the ls report; return what Hive would fail on, a line per failing partition."""
    from .render import ls_json_pieces, ls_table
    from .table import inspect_table

    state = inspect_table(path, snapshot, ignore_empty_files=ignore_empty_files)
    if fmt is Format.json:
        _emit_pieces(ls_json_pieces(state, files))
    else:
        _emit(ls_table(state, files))
    return [f"{p.partition or p.location.url}: Hive would fail: {p.state.error.message}"
            for p in state.partitions if p.state.error is not None]


class Operation(str, enum.Enum):
    insert = "insert"
    update = "update"
    delete = "delete"


def _note(message: str) -> None:
    print(f"acidtool: {message}", file=sys.stderr)


def _size(text: Optional[str]) -> Optional[int]:
    """'512M', '2G', '100000' -> bytes."""
    if text is None:
        return None
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise UsageError(f"{text!r} is not a size (e.g. 512M, 2G)") from None


def _csv(value: Optional[str]) -> Optional[tuple]:
    if value is None:
        return None
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    if not items:
        raise UsageError("--columns needs at least one column name")
    return items


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
    write_ids: Optional[str] = typer.Option(None, "--write-ids", help=WRITE_IDS_HELP),
    txns: Optional[str] = typer.Option(None, "--txns", help=TXNS_HELP),
    hive_version: HiveVersion = typer.Option(HiveVersion.v4, "--hive-version", help=VERSION_HELP),
) -> None:
    """Print rows as JSON lines, exactly as `orc-tools data` prints them, without a JVM.

    ACID files print {"operation":0,"originalTransaction":1,"bucket":536870912,"rowId":0,
    "currentTransaction":1,"row":{...}} ("row":null for deletes); plain files print their rows.
    No separator lines. Values are spelled as Java spells them (5000.0, 1.0E-5, decimals as
    strings, timestamps as java.sql.Timestamp in UTC).

    Examples:

      acidtool dump /warehouse/t/delta_0000005_0000005_0000/bucket_00000

      acidtool dump /warehouse/t --decode --with-file | head

      acidtool dump /warehouse/t --operation delete --write-id 7

    Exit status: 0 all files dumped; 1 a file was not readable ORC (the others are still
    dumped) or Hive would fail to read the table; 2 bad option or missing path.
    """
    from .dump import DumpOptions, dump
    from .snapshot_options import make_snapshot

    opts = DumpOptions(limit=limit, bucket=bucket, write_id=write_id,
                       operation=operation.value if operation else None, columns=_csv(columns),
                       decode=decode, with_file=with_file, synthetic_row_ids=synthetic_row_ids,
                       all_files=all_files,
                       snapshot=make_snapshot(hive_version.value, write_ids, txns))
    try:
        result = dump(targets, opts, sys.stdout.buffer, _note)
    except BrokenPipeError:
        # The reader went away (`| head`): what it wanted was written. Not an error.
        _silence_stdout()
        raise typer.Exit(0)
    if result.failures:
        raise typer.Exit(1)


@app.command("meta")
def meta_command(
    targets: List[str] = typer.Argument(..., help="ORC files, base/delta directories, or table "
                                        "and partition directories."),
    fmt: Format = typer.Option(Format.table, "--format", help="table (for people) or json."),
    all_files: bool = typer.Option(False, "--all", help="For a table: every ORC file, not only "
                                   "those Hive reads."),
    hive_version: HiveVersion = typer.Option(HiveVersion.v4, "--hive-version", help=VERSION_HELP),
) -> None:
    """Show ORC file metadata: rows, stripes, compression, writer, schema, column statistics,
    and Hive's ACID footer metadata decoded (hive.acid.key.index per stripe, hive.acid.stats,
    hive.acid.version).

    Examples:

      acidtool meta /warehouse/t/delta_0000005_0000005_0000/bucket_00000

      acidtool meta /warehouse/t --format json

    Exit status: 0 ok; 1 a file was not readable ORC; 2 bad option or missing path.
    """
    from .dump import DumpOptions, resolve_targets
    from .errors import OrcReadError
    from .meta import meta_json, read_meta
    from .orc import open_orc
    from .render import meta_text
    from .snapshot_options import make_snapshot

    opts = DumpOptions(all_files=all_files, snapshot=make_snapshot(hive_version.value))
    errors: list[str] = []
    files = resolve_targets(targets, opts, errors)
    for message in errors:
        _note(f"error: {message}")
    docs, failed = [], bool(errors)
    for f in files:
        try:
            src = open_orc(f.loc, f.rel)
            for message in src.notes:
                _note(message)
            docs.append(read_meta(src))
        except OrcReadError as exc:
            _note(f"error: {exc}")
            failed = True
    if fmt is Format.json:
        _emit(_json([meta_json(m) for m in docs]))
    elif docs:
        _emit("\n\n".join(meta_text(m) for m in docs))
    if failed:
        raise typer.Exit(1)


class Level(str, enum.Enum):
    names = "names"
    metadata = "metadata"
    rows = "rows"


class ValidateFormat(str, enum.Enum):
    text = "text"
    json = "json"
    jsonl = "jsonl"
    junit = "junit"
    github = "github"


class Severity(str, enum.Enum):
    error = "error"
    warning = "warning"
    info = "info"


def _codes(value: Optional[str]) -> Optional[tuple]:
    return None if value is None else tuple(c for c in value.split(",") if c.strip())


@app.command("validate")
def validate_command(
    paths: List[str] = typer.Argument(..., help="Partitions, tables, or (with --recursive) whole "
                                      "warehouse trees. Local paths, file://, hdfs:// or fsspec "
                                      "URLs."),
    recursive: bool = typer.Option(False, "--recursive", "-r", help="Find every ACID table and "
                                   "partition below each PATH."),
    level: Level = typer.Option(Level.metadata, "--level", help="names: the listing only; "
                                "metadata: also ORC footers and marker files; rows: also a scan "
                                "of the five ACID columns."),
    write_ids: Optional[str] = typer.Option(None, "--write-ids", help=WRITE_IDS_HELP),
    txns: Optional[str] = typer.Option(None, "--txns", help=TXNS_HELP),
    hive_version: HiveVersion = typer.Option(HiveVersion.v4, "--hive-version",
                                             help="Judge the table by what this Hive writes: "
                                             "2 (2.3), 3 or 4."),
    table: Optional[str] = typer.Option(None, "--table", help="db.table, for multi-table "
                                        "--write-ids and for the COMPACT statements."),
    schema: Optional[str] = typer.Option(None, "--schema", help="The table's columns as an ORC "
                                         "struct, e.g. 'struct<id:int,name:string>' (ACID019)."),
    fmt: ValidateFormat = typer.Option(ValidateFormat.text, "--format",
                                       help="text, json, jsonl, junit or github."),
    fail_on: Severity = typer.Option(Severity.error, "--fail-on", help="Exit 1 when a finding "
                                     "is at least this severe."),
    select_: Optional[str] = typer.Option(None, "--select", help="Only these rules: codes or "
                                          "prefixes, comma-separated (ACID001,ACID01)."),
    ignore: Optional[str] = typer.Option(None, "--ignore", help="Skip these rules (codes or "
                                         "prefixes)."),
    jobs: int = typer.Option(8, "--jobs", "-j", min=1,
                             help="Files read at once: threads on remote stores (and on a "
                                  "local path whose first reads wait: a network mount); "
                                  "processes for a local table or tree of many "
                                  "partitions."),
    delta_num: int = typer.Option(10, "--delta-num-threshold", min=0,
                                  help="ACID024: hive.compactor.delta.num.threshold."),
    delta_pct: float = typer.Option(0.1, "--delta-pct-threshold", min=0.0,
                                    help="ACID024: hive.compactor.delta.pct.threshold."),
) -> None:
    """Lint ACID table directories and landing zones, as Hive would see them.

    Every finding has a stable rule code (`acidtool rules` lists them, `acidtool explain CODE`
    says what each checks, why Hive cares and how to fix it), a severity (error: Hive fails or
    returns wrong rows; warning: data invisible or engines differ; info: housekeeping), the
    path, and a message.

    Examples:

      acidtool validate /warehouse/shop.db/orders

      acidtool validate -r /warehouse --level rows --format junit > acid.xml

      acidtool validate /landing/orders --select ACID001,ACID004,ACID007 --fail-on warning

    Exit status: 0 nothing at or above --fail-on; 1 findings; 2 bad option or unreadable PATH.
    Nothing is ever written.
    """
    from .core.facts import Thresholds
    from .render import validate_github, validate_json, validate_jsonl, validate_junit, \
        validate_text
    from .snapshot_options import make_snapshot
    from .validate import ValidateOptions, validate

    opts = ValidateOptions(
        level=level.value, snapshot=make_snapshot(hive_version.value, write_ids, txns, table),
        snapshot_given=write_ids is not None or txns is not None, recursive=recursive,
        jobs=jobs, schema=schema, thresholds=Thresholds(delta_num, delta_pct),
        table_name=table, select=_codes(select_), ignore=_codes(ignore) or ())
    opts.codes()  # reject unknown codes before reading anything
    if schema:
        from .core.orctypes import TypeStringError, struct_fields
        try:
            struct_fields(schema)
        except TypeStringError as exc:
            raise UsageError(f"--schema: {exc}") from None
    report = validate(paths, opts, progress=sys.stderr.isatty())
    if fmt is ValidateFormat.json:
        _emit(_json(validate_json(report)))
    elif fmt is ValidateFormat.jsonl:
        sys.stdout.write(validate_jsonl(report))
    elif fmt is ValidateFormat.junit:
        sys.stdout.write(validate_junit(report, fail_on.value))
    elif fmt is ValidateFormat.github:
        sys.stdout.write(validate_github(report))
    else:
        _emit(validate_text(report))
    if fmt is not ValidateFormat.text:
        from .render import validate_summary
        print(f"acidtool: {validate_summary(report)}", file=sys.stderr)
    if report.failed(fail_on.value):
        raise typer.Exit(1)


@app.command("rules")
def rules_command(fmt: Format = typer.Option(Format.table, "--format",
                                             help="table or json.")) -> None:
    """List validate's rules: code, name, default severity, level and summary.

    Example: acidtool rules --format json
    """
    from .render import rules_table

    _emit(rules_table(fmt.value))


@app.command("explain")
def explain_command(code: str = typer.Argument(..., help="A rule code, e.g. ACID007.")) -> None:
    """Explain a validate rule: what it checks, why Hive cares, an example, how to fix it.

    Example: acidtool explain ACID004
    """
    from .core.rules import REGISTRY
    from .render import explain_text

    key = code.strip().upper()
    if key not in REGISTRY:
        raise UsageError(f"no rule {code!r}; `acidtool rules` lists them")
    _emit(explain_text(key))


class ReadFormat(str, enum.Enum):
    jsonl = "jsonl"
    csv = "csv"
    parquet = "parquet"
    orc = "orc"


@app.command("read")
def read_command(
    path: str = typer.Argument(..., help="Table or partition directory (any filesystem)."),
    write_ids: Optional[str] = typer.Option(None, "--write-ids", help=WRITE_IDS_HELP),
    txns: Optional[str] = typer.Option(None, "--txns", help=TXNS_HELP),
    hive_version: HiveVersion = typer.Option(HiveVersion.v4, "--hive-version", help=VERSION_HELP),
    table: Optional[str] = typer.Option(None, "--table",
                                        help="Which table of a multi-table --write-ids to use."),
    fmt: ReadFormat = typer.Option(ReadFormat.jsonl, "--format",
                                   help="jsonl (values as dump prints them), csv, parquet, orc."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to FILE (written "
                                         "under a temporary name, renamed when complete)."),
    columns: Optional[str] = typer.Option(None, "--columns", help="Comma-separated columns."),
    limit: Optional[int] = typer.Option(None, "--limit", min=0, help="Stop after N rows."),
    with_row_id: bool = typer.Option(False, "--with-row-id", help='Add "ROW__ID": {"writeid",'
                                     ' "bucketid", "rowid"} as Hive shows it.'),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", help="Memory for delete "
                                               "keys, e.g. 512M or 2G: above it they are "
                                               "streamed in chunks instead of held."),
) -> None:
    """The rows Hive would return for a snapshot, deletes applied, without Hive.

    Applies getAcidState, keeps rows whose write id the snapshot sees, applies the delete
    events of the selected delete deltas, reads original files with the ROW__IDs Hive gives
    them, and merges Hive 2 "legacy" update/delete events as Hive 2.3 does. A partitioned table
    gets its partition columns added.

    Examples:

      acidtool read /warehouse/shop.db/orders --limit 10

      acidtool read /warehouse/shop.db/orders --write-ids 'shop.orders:41:9223372036854775807::'
      --format parquet -o orders.parquet

    From Python: acidtool.open_table(url).snapshot(write_ids=...).to_arrow()

    Exit status: 0 ok; 1 Hive would refuse the snapshot or a file is unreadable (a partial
    Parquet/ORC output file is removed); 2 bad option or unreadable path.
    """
    from .read import Table, write_rows

    if fmt in (ReadFormat.parquet, ReadFormat.orc) and output is None and sys.stdout.isatty():
        raise UsageError(f"--format {fmt.value} writes binary data: give --output FILE or "
                         "redirect stdout")
    snap = Table(path).snapshot(write_ids, txns, hive_version.value, table=table,
                                with_row_id=with_row_id, columns=_csv(columns),
                                memory_limit=_size(memory_limit))
    try:
        rows = write_rows(snap, fmt.value, output, sys.stdout.buffer, limit)
    except BrokenPipeError:
        _silence_stdout()
        raise typer.Exit(0)
    if output:
        _note(f"wrote {rows} rows to {output}")


@app.command("diff")
def diff_command(
    path: str = typer.Argument(..., help="Table or partition directory."),
    from_: Optional[str] = typer.Option(None, "--from", help="The earlier snapshot (a write-id "
                                        "list; with --hive-version 2 a transaction list)."),
    to: Optional[str] = typer.Option(None, "--to", help="The later snapshot."),
    from_write_id: Optional[int] = typer.Option(None, "--from-write-id", help="Everything up "
                                                "to this write id committed."),
    to_write_id: Optional[int] = typer.Option(None, "--to-write-id"),
    txns: Optional[str] = typer.Option(None, "--txns", help=TXNS_HELP),
    hive_version: HiveVersion = typer.Option(HiveVersion.v4, "--hive-version", help=VERSION_HELP),
    table: Optional[str] = typer.Option(None, "--table"),
) -> None:
    """Rows inserted and deleted between two snapshots, as JSON lines with an "op" field.

    Incremental extraction without a metastore: an update shows as a delete of the old row and
    an insert of the new one (new ROW__ID), as in Hive's split-update.

    Examples:

      acidtool diff /warehouse/shop.db/orders --from-write-id 5 --to-write-id 9

      acidtool diff /warehouse/t --from 'db.t:5:9223372036854775807::' --to 'db.t:9:7:7:'

    Exit status: 0 ok; 1 Hive would refuse a snapshot; 2 bad option or unreadable path.
    """
    from .read import Table, diff_tables, write_diff

    def snapshot_text(text, wid, which):
        if (text is None) == (wid is None):
            raise UsageError(f"give exactly one of --{which} and --{which}-write-id")
        if text is not None:
            return text
        if hive_version is HiveVersion.v2:
            return f"{wid}:9223372036854775807:"
        return f"{table or 'null'}:{wid}:9223372036854775807::"

    before_text = snapshot_text(from_, from_write_id, "from")
    after_text = snapshot_text(to, to_write_id, "to")
    t = Table(path)
    if hive_version is HiveVersion.v2:
        before = t.snapshot(None, before_text, "2", with_row_id=True)
        after = t.snapshot(None, after_text, "2", with_row_id=True)
    else:
        before = t.snapshot(before_text, txns, hive_version.value, table=table, with_row_id=True)
        after = t.snapshot(after_text, txns, hive_version.value, table=table, with_row_id=True)
    inserted, deleted = diff_tables(before, after)
    try:
        write_diff(inserted, deleted, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        _silence_stdout()
        raise typer.Exit(0)
    _note(f"{inserted.num_rows} inserted, {deleted.num_rows} deleted")


class Compression(str, enum.Enum):
    zlib = "zlib"
    snappy = "snappy"
    zstd = "zstd"
    lz4 = "lz4"
    none = "uncompressed"


class SummaryFormat(str, enum.Enum):
    text = "text"
    json = "json"


@app.command("convert")
def convert_command(
    sources: List[str] = typer.Argument(..., help="Raw ORC files, directories of them, or globs "
                                        "(DataX, Spark df.write.orc, copy scripts...)."),
    table: str = typer.Option(..., "--table", help="The table (or partition) directory."),
    write_id: str = typer.Option(..., "--write-id", help="The write id (transaction id for Hive "
                                 "2) of the new delta, or 'auto' for one above every write id "
                                 "present."),
    partition: Optional[str] = typer.Option(None, "--partition", help="k=v[/k2=v2] below "
                                            "--table."),
    statement_id: int = typer.Option(0, "--statement-id", help="The delta's statement id."),
    compression: Compression = typer.Option(Compression.zlib, "--compression"),
    hive_version: HiveVersion = typer.Option(HiveVersion.v4, "--hive-version",
                                             help="3 and 4 write Hive 3's form; 2 writes Hive "
                                             "2's (plain bucket ids, no _orc_acid_version)."),
    buckets: Optional[int] = typer.Option(None, "--buckets", min=1, help="Bucketed table: the "
                                          "number of buckets."),
    bucket_by: Optional[str] = typer.Option(None, "--bucket-by", help="Bucketing columns."),
    bucketing_version: int = typer.Option(2, "--bucketing-version", min=1, max=2,
                                          help="1: Hive 2's hash; 2: Hive 3's Murmur3."),
    max_file_rows: int = typer.Option(10_000_000, "--max-file-rows", min=1,
                                      help="Unbucketed: rows per bucket file."),
    schema: Optional[str] = typer.Option(None, "--schema", help="The table's columns, e.g. "
                                         "'struct<id:int,name:string>'."),
    by_position: bool = typer.Option(False, "--by-position", help="Match source columns to "
                                     "--schema by position instead of by name."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan; write nothing."),
    move_sources_to: Optional[str] = typer.Option(None, "--move-sources", help="After the "
                                                  "commit, move the sources to DIR2 and write a "
                                                  "manifest there."),
    spark: bool = typer.Option(False, "--spark", help="Run as a PySpark job."),
    master: Optional[str] = typer.Option(None, "--master", help="Spark master (default "
                                         "local[*], or the active session's)."),
    fmt: SummaryFormat = typer.Option(SummaryFormat.text, "--format",
                                      help="The summary as text or json."),
) -> None:
    """Re-wrap raw ORC into a delta directory exactly as Hive writes an INSERT.

    Writes delta_W_W_SSSS/ with bucket_NNNNN files in the ACID event schema (operation 0,
    originalTransaction = currentTransaction = W, the bucket property, row ids 0..n-1 per
    file) and Hive's footer metadata (hive.acid.key.index, hive.acid.stats, hive.acid.version),
    plus _orc_acid_version. Everything is checked before anything is written; output goes to a
    hidden staging directory inside the table and is committed with one rename.

    Examples:

      acidtool convert /landing/orders/*.orc --table /warehouse/shop.db/orders --write-id auto

      acidtool convert /landing/items --table /warehouse/shop.db/items --write-id 42
      --schema 'struct<id:bigint,name:string>' --buckets 4 --bucket-by id --move-sources /done

    Exit status: 0 committed (or planned, with --dry-run); 1 a failure while writing (nothing
    committed); 2 a problem found before writing (bad source, schema, write id, option).
    """
    import time as _time

    from .convert import ConvertOptions, commit, metastore_hint, move_sources, plan, write_files
    from .errors import OrcReadError

    opts = ConvertOptions(
        table=table, write_id=write_id, partition=partition, statement_id=statement_id,
        compression=compression.value, hive_version=hive_version.value, buckets=buckets,
        bucket_by=tuple(c.strip() for c in (bucket_by or "").split(",") if c.strip()),
        bucketing_version=bucketing_version, max_file_rows=max_file_rows, schema=schema,
        by_position=by_position, move_sources=move_sources_to)
    started = _time.perf_counter()
    p = plan(sources, opts)
    if spark:
        from .spark_job import location_problem, spark_problem
        problem = location_problem(p) or spark_problem()
        if problem:
            raise UsageError(problem)
    if dry_run:
        doc = {"dry_run": True, **p.describe()}
        _emit(_json(doc) if fmt is SummaryFormat.json else _plan_text(doc))
        _note(metastore_hint(p))
        return
    if spark:
        from .spark_job import spark_writer
        files = spark_writer(p, master)
    else:
        try:
            files = write_files(p, _progress_rows(p.total_rows))
        except OrcReadError as exc:  # a source's stripes, damaged past its footer
            raise OrcReadError(f"{exc}; nothing was written to the table") from None
    summary = commit(p, files, started)
    if move_sources_to:
        move_sources(p, summary, move_sources_to)
    doc = summary.as_dict()
    _emit(_json(doc) if fmt is SummaryFormat.json else _summary_text(p, doc))
    _note(metastore_hint(p))


def _progress_rows(total: int):
    if not sys.stderr.isatty() or total < 1_000_000:
        return None

    def show(done: int) -> None:
        sys.stderr.write(f"\racidtool: converted {done:,}/{total:,} rows")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()
    return show


def _plan_text(doc: dict) -> str:
    lines = [f"plan (dry run, nothing written): {doc['target']}/{doc['directory']}",
             f"  write id {doc['write_id']}, statement {doc['statement_id']}, Hive "
             f"{doc['hive_version']} form, {doc['compression']}",
             f"  {doc['rows']:,} rows from {len(doc['sources'])} source file(s):"]
    lines += [f"    {s['path']} ({s['rows']:,} rows)" for s in doc["sources"]]
    lines.append("  columns: " + ", ".join(
        c["column"] + (f" <- {c['source']}" if c["source"] != c["column"] else "")
        + (f" ({c['cast']})" if c["cast"] else "") for c in doc["columns"]))
    if doc["bucketing"]:
        b = doc["bucketing"]
        lines.append(f"  bucketed: {b['buckets']} buckets by {', '.join(b['by'])} "
                     f"(bucketing version {b['version']})")
    lines.append("  files: " + ", ".join(doc["files"]))
    return "\n".join(lines)


def _summary_text(p, doc: dict) -> str:
    from .render import human_bytes

    lines = [f"committed {p.target.url}/{doc['directory']}: {doc['rows']:,} rows in "
             f"{len(doc['files'])} file(s), {human_bytes(doc['bytes'])}, "
             f"{doc['elapsed_seconds']:.2f} s"]
    lines += [f"  {name}: {rows:,} rows" for name, rows in doc["files"].items()]
    if doc["manifest"]:
        lines.append(f"  sources moved; manifest: {doc['manifest']}")
    return "\n".join(lines)


@decode_app.command("bucket")
def decode_bucket(
    values: List[str] = typer.Argument(..., help="Encoded bucket properties, e.g. 536936448 "
                                       "or 0x20010000."),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Decode the bucket column of ACID rows (BucketCodec): codec version, bucket id, statement.

    Example: acidtool decode bucket 536870912 536936451
    """
    from .core.bucket import BucketCodecError, decode

    rows = []
    for raw in values:
        try:
            value = int(raw, 0)
        except ValueError:
            raise UsageError(f"{raw!r} is not an integer") from None
        if 2**31 <= value < 2**32:  # accept the unsigned hex spelling of negative ints
            value -= 2**32
        try:
            d = decode(value)
        except BucketCodecError as exc:
            raise UsageError(str(exc)) from None
        rows.append({"encoded": d.encoded, "hex": f"0x{d.encoded & 0xFFFFFFFF:08X}",
                     "codec_version": d.codec_version, "bucket_id": d.bucket_id,
                     "statement_id": d.statement_id})
    if fmt is Format.json:
        _emit(_json(rows if len(rows) > 1 else rows[0]))
    else:
        from tabulate import tabulate
        _emit(tabulate([[r["encoded"], r["hex"], f"V{r['codec_version']}", r["bucket_id"],
                         r["statement_id"]] for r in rows],
                       headers=["encoded", "hex", "codec", "bucket id", "statement id"]))


@decode_app.command("write-ids")
def decode_write_ids(
    text: str = typer.Argument(..., help="A ValidWriteIdList ('db.t:hwm:minOpen:open:aborted'), "
                               "the '$'-joined multi-table form, or with --txns a ValidTxnList."),
    txns: bool = typer.Option(False, "--txns", help="Read TEXT as a ValidTxnList instead."),
    hive_version: HiveVersion = typer.Option(HiveVersion.v4, "--hive-version",
                                             help="With --txns: 2 reads the 2.3 form."),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Say what a snapshot string means: high watermark, open and aborted ids, what is visible.

    Examples:

      acidtool decode write-ids 'db.t:100:4:4,7:5'

      acidtool decode write-ids --txns '150:121:99:121' --hive-version 2
    """
    from .core.snapshot import (SnapshotParseError, ValidTxnList, ValidWriteIdList,
                                parse_txn_write_ids)

    try:
        if txns:
            lists = {"": ValidTxnList.parse_any(text) if hive_version is HiveVersion.v2
                     else ValidTxnList.parse(text)}
            txn_id = None
        elif "$" in text:
            txn_id, lists = parse_txn_write_ids(text)
        else:
            txn_id, lists = None, {"": ValidWriteIdList.parse(text)}
    except SnapshotParseError as exc:
        raise UsageError(str(exc)) from None
    docs = []
    for name, lst in lists.items():
        doc = {
            "table": getattr(lst, "table", None) if not txns else None,
            "high_watermark": lst.high_watermark,
            "min_open": lst.min_open_id,
            "open": lst.open_ids,
            "aborted": lst.aborted_ids,
            "canonical": str(lst),
        }
        if getattr(lst, "legacy", False):
            doc["exceptions"] = list(lst.exceptions)
            doc["open"], doc["aborted"] = None, None
        docs.append(doc)
    if fmt is Format.json:
        _emit(_json({"transaction": txn_id, "lists": docs} if txn_id is not None else docs[0]))
        return
    lines = [] if txn_id is None else [f"reader transaction: {txn_id}"]
    for d in docs:
        what = "transactions" if txns else "write ids"
        if d["table"]:
            lines.append(f"table {d['table']}:")
        hwm = d["high_watermark"]
        lines.append(f"  high watermark: {hwm}" + ("  (everything)" if hwm == 2**63 - 1 else
                     f"  ({what} above {hwm} are invisible)"))
        lines.append(f"  lowest open: {d['min_open'] if d['min_open'] is not None else 'none'}")
        if d.get("exceptions") is not None:
            lines.append(f"  open or aborted (2.3 does not tell them apart): "
                         f"{', '.join(map(str, d['exceptions'])) or 'none'}")
        else:
            lines.append(f"  open:    {', '.join(map(str, d['open'])) or 'none'}")
            lines.append(f"  aborted: {', '.join(map(str, d['aborted'])) or 'none'}")
        lines.append(f"  compacted bases readable up to: "
                     f"{min(hwm, (d['min_open'] or 2**63) - 1)}")
        lines.append(f"  canonical: {d['canonical']}")
    _emit("\n".join(lines))


def _strip_flag(argv: list[str], flag: str) -> tuple[list[str], bool]:
    if flag in argv:
        return [a for a in argv if a != flag], True
    return argv, False


# Commands whose process never gives pandas objects to pyarrow (convert's Spark driver may).
_PANDAS_FREE = ("dump", "read", "diff", "validate", "meta")


def leave_pandas_out() -> None:
    """For a process that never hands pandas objects to pyarrow (the CLI's reading commands):
    pandas cannot be imported in it from now on. pyarrow's pandas shim imports pandas, when it
    is installed, the first time any value becomes an Arrow scalar (pyarrow.dataset's import,
    pc.fill_null): a third of a second of every dump and read, for nothing. The shim then
    takes pandas as missing and pyarrow no longer recognises pandas objects, which is why a
    library process never does this."""
    if not any(isinstance(finder, _NoPandas) for finder in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


class _NoPandas:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is left out of this process (acidtool.cli)")
        return None


def main(argv: list[str] | None = None) -> None:
    """Console entry point: the single error boundary of the tool. Typer handles its own usage
    errors (exit 2); acidtool's typed errors become one line here."""
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None and args[:1] and args[0] in _PANDAS_FREE:
        leave_pandas_out()
    args, traceback = _strip_flag(args, "--traceback")
    traceback = traceback or os.environ.get("ACIDTOOL_TRACEBACK") == "1"
    try:
        app(args=args, prog_name="acidtool")
    except BrokenPipeError:
        # Output went to a pipe that closed (e.g. `| head`): not an error.
        _silence_stdout()
        sys.exit(0)
    except (AcidToolError, AcidStateError) as exc:
        if traceback:
            raise
        print(f"acidtool: error: {exc}", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 1))
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into one line
        if traceback:
            raise
        print(f"acidtool: internal error: {type(exc).__name__}: {exc} "
              "(run again with --traceback and report it)", file=sys.stderr)
        sys.exit(2)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


if __name__ == "__main__":  # pragma: no cover
    main()
