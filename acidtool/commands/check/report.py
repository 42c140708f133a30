"""``acidtool report``: a warehouse's state in one value, for one HTML file (``cli/report.py``)
or JSON: every table and partition as ``ls`` selects it, validate's findings, and the
compaction Hive's Initiator would pick for each partition.

The findings are ``validate``'s own (its listing, footers and rules, in parallel as it does).
Each partition is summed up where validate checked it, from the selection validate makes
there: what it reads and skips, its size, and the compaction the Initiator would pick; and,
for the first partitions of each table, whatever the caller draws of it (``draw``: the
picture and the line the HTML shows), so that drawing runs in parallel too and only small
values come back. Nothing is written.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Container, Iterable, Iterator, Sequence

from ...core.compaction import Decision, Settings, decide, table_name_of
from ...core.raw import read_failure
from ...core.rules import SEVERITIES, Finding
from ...core.snapshot import Snapshot
from ...core.versions import HiveVersion
from ...io.fs import resolve
from ...table.facts import Pending, ValidateOptions
from ...table.ls import PartitionState
from .validate import validate

# What draws a partition (a module-level function: it is pickled to other processes)
Draw = Callable[[PartitionState], Any]


@dataclass(frozen=True)
class PartitionReport:
    partition: str  # "" for an unpartitioned table
    url: str
    base: str | None
    deltas: tuple[str, ...]  # read
    obsolete: int
    aborted: int
    files: int
    bytes: int
    error: str | None  # getAcidState's failure here (then no decision)
    decision: Decision | None
    drawn: Any = None  # what ``draw`` made of it, for the first partitions of its table


@dataclass
class TableReport:
    url: str
    name: str  # db.table, guessed from the warehouse path (or given)
    partitions: list[PartitionReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return _by_severity(self.findings)

    def counts_by_partition(self) -> dict[str, dict[str, int]]:
        """The findings by severity of each partition (by its URL) whose directory holds
        their path, the deepest (a partition nested in another counts as its own)."""
        urls = {p.url.rstrip("/") for p in self.partitions}
        out: dict[str, dict[str, int]] = {}
        for f in self.findings:
            url = _nearest(f.path, urls)
            if url is not None:
                if url not in out:
                    out[url] = dict.fromkeys(SEVERITIES, 0)
                out[url][f.severity] += 1
        return out

    def due(self) -> list[PartitionReport]:
        return [p for p in self.partitions if p.decision is not None and p.decision.kind]


@dataclass
class WarehouseReport:
    paths: list[str]
    snapshot: Snapshot
    tables: list[TableReport]
    files_read: int = 0
    elsewhere: list[Finding] = field(default_factory=list)  # in no table's directory
    # with --metastore: doctor's findings (core.doctor.HmsFinding) by table name
    doctor: dict[str, list] | None = None

    @property
    def partitions(self) -> list[tuple[TableReport, PartitionReport]]:
        return [(t, p) for t in self.tables for p in t.partitions]

    def findings(self) -> Iterator[Finding]:
        """Every finding: each table's, then those in no table's directory."""
        return itertools.chain(*(t.findings for t in self.tables), self.elsewhere)

    def counts(self) -> dict[str, int]:
        return _by_severity(self.findings())

    def codes(self) -> dict[str, int]:
        return dict(sorted(Counter(f.code for f in self.findings()).items()))

    def due(self) -> list[tuple[TableReport, PartitionReport]]:
        return [(t, p) for t in self.tables for p in t.due()]

    def totals(self) -> dict[str, int]:
        parts = [p for t in self.tables for p in t.partitions]
        return {"tables": len(self.tables), "partitions": len(parts),
                "files": sum(p.files for p in parts), "bytes": sum(p.bytes for p in parts)}


def build_report(paths: Sequence[str], opts: ValidateOptions, settings: Settings, *,
                 table: str | None = None, progress: bool = False, draw: Draw | None = None,
                 drawn: int = 0) -> WarehouseReport:
    """Validate PATHs (as ``validate`` with ``opts``, its progress bar shown on a terminal
    when ``progress``), summing each partition up where it is checked, and ``draw`` the first
    ``drawn`` partitions of each table there."""
    snap = opts.snapshot
    # a directory given twice is reported once (validate would check it twice, and the
    # second table of the same directory would take every finding)
    unique: dict[str, str] = {}
    for path in paths:
        unique.setdefault(resolve(path).url.rstrip("/"), path)
    paths = list(unique.values())
    keep = functools.partial(_kept, hive_version=snap.hive_version, settings=settings,
                             insert_only=snap.insert_only, draw=draw, drawn=drawn, seen={})
    found = validate(paths, replace(opts, keep=keep), progress=progress)
    tables = [TableReport(url, table if table and len(found.table_roots) == 1
                          else table_name_of(url)[0]) for url in found.table_roots]
    for index, kept in found.kept:
        tables[index].partitions.append(kept)  # type: ignore[arg-type]  # _kept's own
    for t in tables:
        t.partitions.sort(key=lambda p: p.partition)
        # A partition was drawn where fewer than ``drawn`` of its table that sort before it
        # had been seen: every one of the first ``drawn`` was, and only those are kept drawn.
        t.partitions[drawn:] = [replace(p, drawn=None) if p.drawn is not None else p
                                for p in t.partitions[drawn:]]
    return WarehouseReport(list(paths), snap, tables, found.files,
                           _place(found.findings, tables))


def _kept(pending: list[Pending], hive_version: HiveVersion, settings: Settings,
          insert_only: bool, draw: Draw | None, drawn: int,
          seen: dict[str, list[str]]) -> list[PartitionReport]:
    """Partitions of one table validate checked together, each summed up (in the process that
    checked them): its selection, its size, the compaction the Initiator would pick (none
    where the selection failed), and drawn unless ``drawn`` partitions of its table that
    sort before it were seen already. ``seen`` holds, per table, the first ``drawn`` names
    this process has met (each process has its own copy): processes take shares about in
    order, so past a table's first share a process draws nothing more of it."""
    pending = sorted(pending, key=lambda p: p.name)
    out = []
    for p in pending:
        s = p.facts().state
        picture = None
        if draw is not None and drawn > 0:
            table = p.loc.url[:-len(p.name) - 1] if p.name else p.loc.url
            first = seen.setdefault(table, [])
            at = bisect.bisect_left(first, p.name)
            if at < drawn:
                if at == len(first) or first[at] != p.name:  # (a PATH given twice: once)
                    first.insert(at, p.name)
                    del first[drawn:]
                picture = draw(PartitionState(p.name, p.loc, p.listing, s, p.links,
                                              read_failure(s, hive_version)))
        out.append(PartitionReport(
            p.name, p.loc.url, s.base, tuple(s.deltas), len(s.obsolete), len(s.aborted),
            *s.data_totals(),
            s.error.message if s.error is not None else None,
            decide(s, hive_version, settings, insert_only=insert_only) if s.error is None
            else None, picture))
    return out


def _place(findings: list[Finding], tables: list[TableReport]) -> list[Finding]:
    """Each finding to the table whose directory holds its path (the deepest: its path's
    parents looked up, nearest first); those in no table's directory are returned."""
    by_root = {t.url.rstrip("/"): t for t in tables}
    elsewhere = []
    for f in findings:
        root = _nearest(f.path, by_root)
        if root is not None:
            by_root[root].findings.append(f)
        else:
            elsewhere.append(f)
    return elsewhere


def _nearest(path: str, dirs: Container[str]) -> str | None:
    """``path`` or its nearest parent among ``dirs`` (paths written without a final /)."""
    path = path.rstrip("/")
    while path:
        if path in dirs:
            return path
        cut = path.rfind("/")
        path = path[:cut] if cut > 0 else ""
    return None


def _by_severity(findings: Iterable[Finding]) -> dict[str, int]:
    out = dict.fromkeys(SEVERITIES, 0)
    for f in findings:
        out[f.severity] += 1
    return out
