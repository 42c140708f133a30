"""``acidtool report``: a warehouse's state in one value, for one HTML file (``cli/report.py``)
or JSON: every table and partition as ``ls`` selects it, validate's findings, and the
compaction Hive's Initiator would pick for each partition.

The findings are ``validate``'s own (its listing, footers and rules, in parallel as it does);
the selections are the ones validate makes of that listing, kept, and each partition's
compaction is decided where validate checked it. Nothing is written.
"""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Sequence

from ..core.compaction import Decision, Settings, decide, table_name_of
from ..core.listing import Listing
from ..core.raw import read_failure
from ..core.rules import SEVERITIES, Finding
from ..core.snapshot import Snapshot
from ..core.versions import HiveVersion
from ..io.fs import resolve
from .facts import Pending, ValidateOptions
from .ls import PartitionState, TableState
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
    when ``progress``), keeping each partition's selection as validate makes it, and decide
    each partition's compaction where it is checked."""
    snap = opts.snapshot
    keep = functools.partial(_kept, hive_version=snap.hive_version, settings=settings,
                             insert_only=snap.insert_only)
    found = validate(paths, replace(opts, keep=keep), progress=progress)
    tlocs = [resolve(url) for url in found.table_roots]
    by_table: list[list[tuple[PartitionState, Decision | None]]] = [[] for _ in tlocs]
    for index, kept in found.kept:
        # what _kept gave validate to keep for each partition (validate holds it as object)
        parts_kept = typing.cast(tuple[Any, Any, Any, Any, Any, Any, Any], kept)
        name, paths_, markers, state, links, failure, decision = parts_kept
        ploc = tlocs[index].child(name) if name else tlocs[index]
        listing = Listing(paths_, MappingProxyType(markers), root=ploc.url)
        by_table[index].append((PartitionState(name, ploc, listing, state, links, failure),
                                decision))
    tables = []
    for tloc, parts in zip(tlocs, by_table):
        parts.sort(key=lambda p: p[0].partition)
        name = table if table and len(tlocs) == 1 else table_name_of(tloc.url)[0]
        state = TableState(tloc, snap, tuple(p for p, _ in parts), ())
        tables.append(TableReport(state, name, decisions={p.partition: d for p, d in parts
                                                          if d is not None}))
    return WarehouseReport(list(paths), snap, tables, found.files,
                           _place(found.findings, tables))


def _kept(p: Pending, hive_version: HiveVersion, settings: Settings, insert_only: bool) -> tuple:
    """What the report keeps of a partition validate checked (in the process that checked
    it): its listing, its selection with every size, Hive's read failure on it, and the
    compaction the Initiator would pick (none where the selection failed)."""
    state = p.facts().state
    decision = None
    if state.error is None:
        decision = decide(state, hive_version, settings, insert_only=insert_only)
    return (p.name, p.listing.paths, dict(p.listing.markers), state, p.links,
            read_failure(state, hive_version), decision)


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
