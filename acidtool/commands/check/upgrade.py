"""``acidtool upgrade-check``: what Hive's pre-upgrade tool decides for a Hive 2 warehouse,
offline, and what else the move to Hive 3 or 4 trips on.

Each table (with ``recursive``, every ACID table below each PATH) is listed once; each
partition's getAcidState of Hive 2.3 is taken at the compactor's snapshot and the
``hive.acid.stats`` of the delta files the tool would read are read from their footers
(``core.upgrade``). Names Hive 3 or 4 cannot parse come from validate's name rules under
that version. Nothing is ever written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from ...core.compaction import compactor_snapshot, original_bytes, statement
from ...core.partitions import (
    PartitionListing,
    discover_tables,
    require_one_table,
    split_partitions,
)
from ...core.rules import Finding
from ...core.snapshot import Snapshot
from ...core.upgrade import STATS_KEY, FileStats, Readiness, parse_stats, readiness
from ...core.versions import HiveVersion
from ...io.footers import read_footer
from ...io.fs import list_tree, resolve
from ...table.ls import require_not_acid_dir, select_partitions
from ...table.target import Target
from ..compact.plan import table_of

NAME_RULES = ("ACID001", "ACID002", "ACID004")


@dataclass(frozen=True)
class PartitionCheck:
    table: str
    table_source: str  # "metastore", "--table" or "path"
    partition: str
    path: str
    readiness: Readiness

    @property
    def statement(self) -> str | None:
        return statement(self.table, self.partition, "major") \
            if self.readiness.needs_major else None

    def as_dict(self) -> dict:
        return {"table": self.table, "table_from": self.table_source,
                "partition": self.partition, "path": self.path, **self.readiness.as_dict(),
                "statement": self.statement}


@dataclass(frozen=True)
class TableCheck:
    table: str
    path: str
    bucketing_version: str | None  # the property as the metastore has it; None: not set
    bucketed: bool | None  # None: unknown (no metastore)
    names: tuple[Finding, ...] = ()  # files and directories Hive 3/4 cannot parse

    def as_dict(self) -> dict:
        return {"table": self.table, "path": self.path,
                "bucketing_version": self.bucketing_version, "bucketed": self.bucketed,
                "names": [{"code": f.code, "path": f.path, "message": f.message}
                          for f in self.names]}


@dataclass(frozen=True)
class UpgradeReport:
    snapshot: Snapshot  # the reader's snapshot (the compactor's is made of it)
    target_version: HiveVersion
    metastore: bool
    partitions: tuple[PartitionCheck, ...]
    tables: tuple[TableCheck, ...] = field(default=())

    @property
    def need_major(self) -> list[PartitionCheck]:
        return [p for p in self.partitions if p.readiness.needs_major]

    @property
    def blocked(self) -> list[PartitionCheck]:
        return [p for p in self.partitions if p.readiness.blocked]

    @property
    def bad_names(self) -> list[Finding]:
        return [f for t in self.tables for f in t.names]

    @property
    def ready(self) -> bool:
        return not (self.need_major or self.blocked or self.bad_names)

    @property
    def estimate_bytes(self) -> int:
        return sum(p.readiness.estimate_bytes for p in self.need_major)


def upgrade_check(paths: Sequence[str], target: Target, *, recursive: bool = False,
                  table: str | None = None, metastore: str | None = None,
                  to: HiveVersion = HiveVersion.V3,
                  progress: Callable[[int, int], None] | None = None) -> UpgradeReport:
    """Judge every partition of the tables at ``paths``. ``target``: the first PATH's
    resolution (a Hive 2 snapshot; with a metastore, its table). ``progress(done, total)``:
    partitions judged, of those listed so far."""
    checks: list[PartitionCheck] = []
    tables: list[TableCheck] = []
    total = 0
    for path in paths:
        loc = resolve(target.url if path == paths[0] else path)
        found: list[tuple[str, Sequence[PartitionListing]]]
        if not recursive:
            require_not_acid_dir(loc)
            tree = list_tree(loc)
            require_one_table(tree, loc.url)
            found = [("", split_partitions(tree)[0])]
        else:
            found = [(t.root, t.partitions) for t in discover_tables(list_tree(loc))]
        total += sum(len(parts) for _, parts in found)
        for root, parts in found:
            tloc = loc.child(root) if root else loc
            first = not recursive and path == paths[0]
            name, source, snap, props = table_of(tloc.url, target, table, metastore, first)
            info = target.table if first else None
            for part in select_partitions(tloc, parts, compactor_snapshot(snap)):
                checks.append(PartitionCheck(name, source, part.partition, part.location.url,
                                             _judge(part)))
                if progress:
                    progress(len(checks), total)
            bucketed = info.bucketed if info is not None else None
            version = None if props is None else _param(props, "bucketing_version")
            tables.append(TableCheck(name, tloc.url, version, bucketed,
                                     _bad_names(tloc.url, to)))
    return UpgradeReport(target.snapshot, to, metastore is not None, tuple(checks),
                         tuple(tables))


def _param(props: dict, key: str) -> str | None:
    for k, v in props.items():
        if k.lower() == key:
            return str(v)
    return None


def _judge(part) -> Readiness:
    state = part.state
    sizes = {f"{e.name}/{f.path}": f.size for e in state.delta_entries for f in e.files}
    total = sum(p.size for p in part.listing.paths if not p.is_dir)
    return readiness(state, [e.name for e in state.entries],
                     lambda rel: _stats(part.location, rel, sizes[rel]), total,
                     original_bytes(state))


def _stats(loc, rel: str, size: int) -> FileStats:
    facts = read_footer(loc, rel, size, None)
    if facts.footer is None:
        return facts.error or "not readable as ORC"
    raw = facts.footer.metadata.get(STATS_KEY)
    return None if raw is None else parse_stats(raw)


def _bad_names(url: str, to: HiveVersion) -> tuple[Finding, ...]:
    """validate's name rules under the target version, on one table."""
    from ...core.snapshot import make_snapshot
    from .validate import ValidateOptions, validate

    opts = ValidateOptions(level="names", snapshot=make_snapshot(to), select=NAME_RULES)
    return tuple(validate([url], opts).findings)
