"""Text, JSON and SQL of the planners' reports: compaction-plan's and upgrade-check's."""

from __future__ import annotations

import shlex

from .output import display, tabulate


def plan_json(plan) -> dict:
    return {"hive_version": plan.snapshot.hive_version, "snapshot": plan.snapshot.describe(),
            "settings": dict(plan.settings.values),
            "summary": {"partitions": len(plan.rows), "major": sum(
                r.decision.kind == "major" for r in plan.rows), "minor": sum(
                r.decision.kind == "minor" for r in plan.rows)},
            "plans": [r.as_dict() for r in plan.rows]}


def plan_sql(plan) -> str:
    lines = [f"-- acidtool compaction-plan: {len(plan.due)} of {len(plan.rows)} partitions due "
             f"(Hive {plan.snapshot.hive_version} Initiator)"]
    guessed = sorted({r.table for r in plan.due if r.table_source == "path"})
    if guessed:  # display: a name's line breaks cannot end the comment
        lines.append("-- table names guessed from the warehouse path (.../DB.db/TABLE; "
                     "default.TABLE elsewhere): " + ", ".join(display(g) for g in guessed))
    for r in plan.due:
        lines.append(f"{r.statement};")
    return "\n".join(lines)


def plan_text(plan) -> str:
    rows = [[display(r.table) + ("" if r.table_source != "path" else " (from path)"),
             display(r.partition) or "-", r.decision.kind or "-", display(r.decision.reason)]
            for r in plan.rows]
    table = tabulate(rows, headers=["table", "partition", "compaction", "why"])
    return (f"{table}\n\n{len(plan.due)} of {len(plan.rows)} partitions due for compaction "
            f"(Hive {plan.snapshot.hive_version} Initiator)")


def upgrade_json(report) -> dict:
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


def upgrade_sql(report) -> str:
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


def upgrade_text(report) -> str:
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


def doctor_text(report) -> str:
    lines = []
    for name, found in report.tables:
        if not found:
            lines.append(f"{display(name)}: nothing found")
            continue
        lines.append(f"{display(name)}: {len(found)} finding{'s' if len(found) > 1 else ''}")
        for f in found:
            where = f" {display(f.partition)}" if f.partition else ""
            lines.append(f"  {f.severity:<8}{f.code}{where}: {display(f.message)}")
    counts = {s: sum(f.severity == s for _, found in report.tables for f in found)
              for s in ("error", "warning", "info")}
    lines.append("")
    lines.append(f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} info "
                 f"in {len(report.tables)} table{'s' if len(report.tables) != 1 else ''} "
                 f"(Hive {report.hive_version} metastore {display(report.metastore)}, "
                 f"{report.calls} calls)")
    return "\n".join(lines)
