"""``acidtool compaction-plan``: which tables and partitions Hive's Initiator would compact now.

Each table (or, with ``recursive``, every ACID table below each PATH) is listed once; each
partition's getAcidState is taken at the compactor's snapshot (``core.compaction``) and judged by
the Initiator's rules of the Hive version. Table names come from the metastore when one is
linked, else from the warehouse path, and each row says which.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from ...core.compaction import (
    Decision,
    Settings,
    compactor_snapshot,
    decide,
    statement,
    table_name_of,
)
from ...core.partitions import discover_tables, require_one_table, split_partitions
from ...core.snapshot import Snapshot
from ...io.fs import list_tree, resolve
from ...table.ls import listed_partition, require_not_acid_dir, select_partitions, tree_partitions
from ...table.target import Target


@dataclass(frozen=True)
class Row:
    table: str  # db.table
    table_source: str  # "metastore", "--table", or "path" (a guess from the warehouse path)
    partition: str  # "" or k=v/k2=v2
    path: str
    decision: Decision

    @property
    def statement(self) -> str | None:
        return statement(self.table, self.partition, self.decision.kind) \
            if self.decision.kind else None

    def as_dict(self) -> dict:
        return {"table": self.table, "table_from": self.table_source,
                "partition": self.partition, "path": self.path, **self.decision.as_dict(),
                "statement": self.statement}


@dataclass(frozen=True)
class CompactionPlan:
    snapshot: Snapshot  # the reader's snapshot given (the compactor's is made of it)
    settings: Settings
    rows: tuple[Row, ...]

    @property
    def due(self) -> list[Row]:
        return [r for r in self.rows if r.decision.kind]


def compaction_plan(paths: Sequence[str], target: Target, settings: Settings, *,
                    recursive: bool = False, table: str | None = None,
                    metastore: str | None = None, spark: str | None = None,
                    progress: Callable[[int, int], None] | None = None) -> CompactionPlan:
    """Decide for every partition of the tables at ``paths``. ``target`` is the first PATH's
    resolution (its snapshot, Hive version and, with a metastore, its table). ``spark`` (the
    master, "" for the default): the partitions are selected and judged on Spark's
    executors, a share at a time."""
    jobs: list[tuple] = []  # (table's url, name, source, snapshot, settings, partition listing)
    for path in paths:
        loc = resolve(target.url if path == paths[0] else path)
        if not recursive:
            require_not_acid_dir(loc)
        tables: list[tuple[str, Any]]  # (root, its partitions: listed or named)
        if recursive and spark is not None:  # the executors list the partitions
            tables = list(tree_partitions(loc))
        elif recursive:
            tables = [(t.root, t.partitions) for t in discover_tables(list_tree(loc))]
        else:
            tree = list_tree(loc)
            require_one_table(tree, loc.url)
            tables = [("", split_partitions(tree)[0])]
        for root, parts in tables:
            tloc = loc.child(root) if root else loc
            name, source, snap, props = table_of(tloc.url, target, table, metastore,
                                                  first=not recursive and path == paths[0])
            chosen = settings.for_table(props)
            jobs.extend((tloc.url, name, source, snap, chosen, part) for part in parts)
    if spark is None:  # a share at a time, for progress(partitions judged, all)
        rows = []
        for start in range(0, len(jobs), 64):
            rows.extend(_judge(jobs[start:start + 64]))
            if progress:
                progress(min(start + 64, len(jobs)), len(jobs))
    else:
        from ...io.spark_jobs import spark_map

        rows = [row for _, done in spark_map(_judge, jobs, spark or None, most=64)
                for row in done]
    return CompactionPlan(target.snapshot, settings, tuple(rows))


def _judge(jobs: list[tuple]) -> list[Row]:
    """The decision for each partition (in this process, or on an executor)."""
    out = []
    for url, name, source, snap, chosen, listing in jobs:
        tloc = resolve(url)
        if isinstance(listing, tuple):  # (name, nested): listed here, on an executor
            listing = listed_partition(tloc, "", *listing)
        (part,) = select_partitions(tloc, [listing], compactor_snapshot(snap))
        decision = decide(part.state, snap.hive_version, chosen, insert_only=snap.insert_only)
        out.append(Row(name, source, part.partition, part.location.url, decision))
    return out


def table_of(url: str, target: Target, table: str | None, metastore: str | None,
             first: bool) -> tuple[str, str, Snapshot, dict | None]:
    """(name, where the name came from, the snapshot, the table's properties)."""
    if first and target.table is not None:
        return target.table.full_name, "metastore", target.snapshot, target.table.parameters
    if table:
        return table, "--table", target.snapshot, None
    if metastore:  # each table of a tree by its location
        from ...core.catalog import MetastoreError
        from ...table.target import resolve as resolve_target

        try:
            found = resolve_target(url, metastore=metastore,
                                   hive_version=target.snapshot.hive_version)
        except MetastoreError:
            pass
        else:
            if found.table is not None:
                return (found.table.full_name, "metastore", found.snapshot,
                        found.table.parameters)
    return table_name_of(url)[0], "path", replace(target.snapshot), None
