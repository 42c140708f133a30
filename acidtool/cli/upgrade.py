"""`acidtool upgrade-check`: is a Hive 2 warehouse ready to move to Hive 3 or 4?"""

from __future__ import annotations

import enum
import shlex
from typing import List, Optional

import typer

from ..core.errors import UsageError
from .app import METASTORE, TXNS_HELP, app, emit, emit_json, snapshot_note


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
    if fmt is UpgradeFormat.json:
        emit_json(_json(report))
    elif fmt is UpgradeFormat.sql:
        emit(_sql(report))
    else:
        emit(_text(report))
    if not report.ready:
        raise typer.Exit(1)


def _json(report) -> dict:
    return {"snapshot": report.snapshot.describe(), "to": str(report.target_version),
            "ready": report.ready,
            "summary": {"tables": len(report.tables), "partitions": len(report.partitions),
                        "need_major": len(report.need_major), "blocked": len(report.blocked),
                        "bad_names": len(report.bad_names),
                        "estimate_bytes": report.estimate_bytes},
            "tables": [t.as_dict() for t in report.tables],
            "partitions": [p.as_dict() for p in report.partitions]}


def _volume(n: int) -> str:
    """The pre-upgrade tool's figure: MB with 6 decimals under 1 MiB, else GB with 3."""
    return f"{n / 2 ** 20:.6f}MB" if n < 2 ** 20 else f"{n / 2 ** 30:.3f}GB"


def _sql(report) -> str:
    from .output import display

    lines = [f"-- acidtool upgrade-check: {len(report.need_major)} of "
             f"{len(report.partitions)} partitions need a major compaction before the upgrade"]
    guessed = sorted({p.table for p in report.need_major if p.table_source == "path"})
    if guessed:
        lines.append("-- table names guessed from the warehouse path (.../DB.db/TABLE; "
                     "default.TABLE elsewhere): " + ", ".join(display(g) for g in guessed))
    lines += [f"{p.statement};" for p in report.need_major]
    for p in report.blocked:
        lines.append(f"-- the pre-upgrade tool fails on {display(p.path)}: "
                     f"{display(p.readiness.blocked)}")
    if report.need_major:
        lines.append(f"-- Generated total of {len(report.need_major)} compaction commands")
        lines.append(f"-- The total volume of data to be compacted is "
                     f"{_volume(report.estimate_bytes)}")
        lines.append("-- Or offline, one partition at a time (after stopping writers):")
        lines += [f"--   acidtool compact {shlex.quote(display(p.path))} --major --hive-version 2 --apply"
                  for p in report.need_major]
    return "\n".join(lines)


def _text(report) -> str:
    from .output import display, tabulate

    def root(p) -> str:
        return p.path[: -len(p.partition)].rstrip("/") if p.partition else p.path

    roots: dict[str, set] = {}
    for p in report.partitions:
        roots.setdefault(p.table, set()).add(root(p))
    rows = []
    for p in report.partitions:
        r = p.readiness
        verdict = "MAJOR" if r.needs_major else "BLOCKED" if r.blocked else "ready"
        # a name guessed from the path that several tables share: their directories tell
        label = display(root(p)) if len(roots[p.table]) > 1 else display(p.table) + (
            "" if p.table_source != "path" else " (from path)")
        rows.append([label,
                     display(p.partition) or "-", r.layout, verdict,
                     display(r.blocked or r.reason)])
    out = [tabulate(rows, headers=["table", "partition", "layout", "before upgrade", "why"])]
    for t in report.tables:
        for f in t.names:
            out.append(f"{f.code} {display(f.path)}: {display(f.message)}")
        if t.bucketed and t.bucketing_version is None:
            out.append(f"{display(t.table)}: bucketed, no bucketing_version: Hive "
                       f"{report.target_version} takes it for 1 (Hive 2's hash), as its files "
                       "were written; leave it unset")
    if not report.metastore:
        out.append("bucketing_version: unknown without --metastore (a table property)")
    out.append("")
    volume = _volume(report.estimate_bytes)
    volume = f" ({volume} to compact)" if report.need_major else ""
    out.append(f"{len(report.need_major)} of {len(report.partitions)} partitions need a major "
               f"compaction before the upgrade{volume}, "
               f"{len(report.blocked)} blocked, {_names(len(report.bad_names))} Hive "
               f"{report.target_version} cannot parse: "
               + ("ready" if report.ready else "not ready"))
    return "\n".join(out)


def _names(n: int) -> str:
    return f"{n} file name{'' if n == 1 else 's'}"
