"""`acidtool validate`, `rules` and `explain`."""

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
    TableFormat,
    app,
    emit,
    emit_json_text,
    emit_raw,
    hive_version_option,
    note,
    snapshot_note,
)


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


def codes_of(value: Optional[str]) -> Optional[tuple]:
    return None if value is None else tuple(c for c in value.split(",") if c.strip())


_PATHS = typer.Argument(..., help="Partitions, tables, or (with --recursive) whole "
                        "warehouse trees. Local paths, file://, hdfs:// or fsspec "
                        "URLs.")
_RECURSIVE = typer.Option(False, "--recursive", "-r", help="Find every ACID table and "
                          "partition below each PATH.")
_LEVEL = typer.Option(Level.metadata, "--level", help="names: the listing only; "
                      "metadata: also ORC footers and marker files; rows: also a scan "
                      "of the five ACID columns.")
_HIVE_VERSION = hive_version_option("Judge the table by what this Hive writes")
_TABLE = typer.Option(None, "--table", help="db.table, for multi-table "
                      "--write-ids and for the COMPACT statements.")
_SCHEMA = typer.Option(None, "--schema", help="The table's columns as an ORC "
                       "struct, e.g. 'struct<id:int,name:string>' (ACID019).")
_FMT = typer.Option(ValidateFormat.text, "--format",
                    help="text, json, jsonl, junit or github.")
_FAIL_ON = typer.Option(Severity.error, "--fail-on", help="Exit 1 when a finding "
                        "is at least this severe.")
_SELECT = typer.Option(None, "--select", help="Only these rules: codes or "
                       "prefixes, comma-separated (ACID001,ACID01).")
_IGNORE = typer.Option(None, "--ignore", help="Skip these rules (codes or "
                       "prefixes).")
_JOBS = typer.Option(8, "--jobs", "-j", min=1,
                     help="Files read at once: threads on remote stores (and on a "
                          "local path whose first reads wait: a network mount); "
                          "processes for a local table or tree of many "
                          "partitions.")
_DELTA_NUM = typer.Option(10, "--delta-num-threshold", min=0,
                          help="ACID024: hive.compactor.delta.num.threshold.")
_DELTA_PCT = typer.Option(0.1, "--delta-pct-threshold", min=0.0,
                          help="ACID024: hive.compactor.delta.pct.threshold.")
_SPARK = typer.Option(False, "--spark", help="Check the partitions on Spark's "
                      "executors (footers, rows, rules); the driver lists the tree "
                      "and gathers the findings: the same findings as without it.")
_OUTPUT = typer.Option(None, "--output", help="Also write the findings as a "
                       "Parquet dataset: DIR/findings/ and DIR/tables/ (a "
                       "summary per table).")


@app.command("validate")
def validate_command(
    paths: List[str] = _PATHS,
    recursive: bool = _RECURSIVE,
    level: Level = _LEVEL,
    write_ids: Optional[str] = WRITE_IDS,
    txns: Optional[str] = TXNS,
    hive_version: Optional[HiveVersion] = _HIVE_VERSION,
    metastore: Optional[str] = METASTORE,
    insert_only: bool = INSERT_ONLY,
    table: Optional[str] = _TABLE,
    schema: Optional[str] = _SCHEMA,
    fmt: ValidateFormat = _FMT,
    fail_on: Severity = _FAIL_ON,
    select_: Optional[str] = _SELECT,
    ignore: Optional[str] = _IGNORE,
    jobs: int = _JOBS,
    delta_num: int = _DELTA_NUM,
    delta_pct: float = _DELTA_PCT,
    spark: bool = _SPARK,
    master: Optional[str] = MASTER,
    output: Optional[str] = _OUTPUT,
) -> None:
    """Lint ACID table directories and landing zones, as Hive would see them.

    Every finding has a stable rule code (`acidtool rules` lists them, `acidtool explain CODE`
    says what each checks, why Hive cares and how to fix it), a severity (error: Hive fails or
    returns wrong rows; warning: data invisible or engines differ; info: housekeeping), the
    path, and a message.

    Examples:

    \b
      acidtool validate /warehouse/shop.db/orders
      acidtool validate -r /warehouse --level rows --format junit > acid.xml
      acidtool validate /landing/orders --select ACID001,ACID004,ACID007 --fail-on warning
      acidtool validate -r hdfs://nn:8020/warehouse --spark --master yarn --output /tmp/acid

    Exit status: 0 nothing at or above --fail-on; 1 findings; 2 bad option or unreadable PATH.
    Nothing is ever written.
    """
    from ..commands.check.validate import ValidateOptions, validate
    from ..core.facts import Thresholds
    from ..table.target import resolve_many

    paths, target = resolve_many(paths, metastore=metastore, hive_version=hive_version,
                                 write_ids=write_ids, txns=txns, insert_only=insert_only,
                                 table=table)
    snapshot_note(target.snapshot)
    opts = ValidateOptions(
        level=level.value, snapshot=target.snapshot, snapshot_given=target.snapshot_given,
        recursive=recursive, jobs=jobs, schema=schema or (target.table.schema if target.table
                                                         else None),
        thresholds=Thresholds(delta_num, delta_pct),
        table_name=table or (target.table.full_name if target.table else None),
        select=codes_of(select_), ignore=codes_of(ignore) or (), spark=spark, master=master)
    opts.codes()  # reject unknown codes before reading anything
    if schema:
        from ..core.orctypes import TypeStringError, struct_fields
        try:
            struct_fields(schema)
        except TypeStringError as exc:
            raise UsageError(f"--schema: {exc}") from None
    report = validate(paths, opts, progress=sys.stderr.isatty())
    if output:
        from ..commands.check.findings import write_dataset

        note(f"findings written to {write_dataset(report, output)} (findings/, tables/)")
    _render(report, fmt, fail_on)
    if report.failed(fail_on.value):
        raise typer.Exit(1)


def _render(report, fmt: ValidateFormat, fail_on: Severity) -> None:
    from .output import validate_github, validate_jsonl, validate_junit, validate_summary
    from .results import output_for

    # text and JSON through the one Output; the CI formats are validate's own
    if fmt is ValidateFormat.jsonl:
        emit_json_text(validate_jsonl(report))
    elif fmt is ValidateFormat.junit:
        emit_raw(validate_junit(report, fail_on.value))
    elif fmt is ValidateFormat.github:
        emit_raw(validate_github(report))
    else:
        output_for(fmt).validate(report)
    if fmt is not ValidateFormat.text:
        print(f"acidtool: {validate_summary(report)}", file=sys.stderr)


@app.command("rules")
def rules_command(fmt: TableFormat = typer.Option(TableFormat.table, "--format",
                                             help="table or json.")) -> None:
    """List the rules: validate's (ACIDnnn) and doctor's (HMSnnn, level "doctor"): code, name,
    default severity, level and summary.

    Example: acidtool rules --format json
    """
    from .output_rules import rules_table

    emit(rules_table(fmt.value))


@app.command("explain")
def explain_command(code: str = typer.Argument(..., help="A rule code, e.g. ACID007.")) -> None:
    """Explain a rule (validate's ACIDnnn or doctor's HMSnnn): what it checks, why Hive cares,
    an example, how to fix it.

    Example: acidtool explain ACID004
    """
    from ..core.doctor import HMS_RULES
    from ..core.rules import REGISTRY
    from .output_rules import explain_text

    key = code.strip().upper()
    if key not in REGISTRY and key not in HMS_RULES:
        raise UsageError(f"no rule {code!r}; `acidtool rules` lists them")
    emit(explain_text(key))

