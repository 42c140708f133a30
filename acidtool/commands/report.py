"""``acidtool report``: a warehouse's state in one value, for one HTML file (``cli/report.py``)
or JSON: every table and partition as ``ls`` selects it, validate's findings, and the
compaction Hive's Initiator would pick for each partition.

The findings are ``validate``'s own (its listing, footers and rules, in parallel as it does);
the selections and the compaction decisions come from one more listing of each PATH (``ls``'s),
judged in this process. Nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ..core.compaction import Decision, Settings, decide, table_name_of
from ..core.rules import SEVERITIES, Finding
from ..core.snapshot import Snapshot
from .facts import ValidateOptions
from .ls import PartitionState, TableState, inspect_table, inspect_tree, with_read_failures
from .validate import validate


@dataclass
class TableReport:
    state: TableState
    name: str  # db.table, guessed from the warehouse path (or given)
    findings: list[Finding] = field(default_factory=list)
    decisions: dict[str, Decision] = field(default_factory=dict)  # partition -> decision

    @property
    def url(self) -> str:
        return self.state.location.url

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}


@dataclass
class WarehouseReport:
    paths: list[str]
    snapshot: Snapshot
    tables: list[TableReport]
    files_read: int = 0
    elsewhere: list[Finding] = field(default_factory=list)  # in no table's directory

    @property
    def partitions(self) -> list[tuple[TableReport, PartitionState]]:
        return [(t, p) for t in self.tables for p in t.state.partitions]

    def counts(self) -> dict[str, int]:
        return {s: sum(t.counts()[s] for t in self.tables) for s in SEVERITIES}

    def codes(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.tables:
            for f in t.findings:
                out[f.code] = out.get(f.code, 0) + 1
        return dict(sorted(out.items()))

    def due(self) -> list[tuple[TableReport, str, Decision]]:
        return [(t, part, d) for t in self.tables for part, d in t.decisions.items() if d.kind]

    def totals(self) -> dict[str, int]:
        files = size = 0
        for _, p in self.partitions:
            for e in p.state.entries:
                files += e.file_count
                size += e.size
        return {"tables": len(self.tables), "partitions": len(self.partitions),
                "files": files, "bytes": size}


def build_report(paths: Sequence[str], opts: ValidateOptions, settings: Settings, *,
                 table: str | None = None, progress: bool = False) -> WarehouseReport:
    """Validate PATHs (as ``validate`` with ``opts``, its progress bar shown on a terminal
    when ``progress``), list them once more for the selections, and decide each partition's
    compaction."""
    found = validate(paths, opts, progress=progress)
    states: list[TableState] = []
    spark = (opts.master or "") if opts.spark else None
    for path in paths:
        if opts.recursive:
            states.extend(inspect_tree(path, opts.snapshot, spark=spark))
        else:
            states.append(inspect_table(path, opts.snapshot))
    tables = []
    for state in states:
        state = with_read_failures(state)
        name = table if table and len(states) == 1 else table_name_of(state.location.url)[0]
        decisions = {}
        for p in state.partitions:
            if p.state.error is None:
                decisions[p.partition] = decide(p.state, opts.snapshot.hive_version, settings,
                                                insert_only=opts.snapshot.insert_only)
        tables.append(TableReport(state, name, decisions=decisions))
    return WarehouseReport(list(paths), opts.snapshot, tables, found.files,
                           _place(found.findings, tables))


def _place(findings: list[Finding], tables: list[TableReport]) -> list[Finding]:
    """Each finding to the table whose directory holds its path (the deepest: its path's
    parents looked up, nearest first); those in no table's directory are returned."""
    by_root = {t.url.rstrip("/"): t for t in tables}
    elsewhere = []
    for f in findings:
        path = f.path.rstrip("/")
        while path:
            owner = by_root.get(path)
            if owner is not None:
                owner.findings.append(f)
                break
            cut = path.rfind("/")
            path = path[:cut] if cut > 0 else ""
        else:
            elsewhere.append(f)
    return elsewhere
