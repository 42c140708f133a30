"""Reading a table (or partition) directory the way Hive does: list once, select per partition.

This is the library behind ``acidtool ls`` and the starting point of dump, validate and read.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Callable

from .._gc import paused_gc
from ..core.errors import AcidStateError, UsageError
from ..core.listing import Listing, PathInfo, markers_needed, split_links
from ..core.names import Base, parse_dir_name
from ..core.partitions import require_one_table, split_partitions
from ..core.raw import read_failure
from ..core.select import AcidState, select
from ..core.snapshot import Snapshot, make_snapshot
from ..io.fs import Location, list_tree, read_bytes, require_dir, resolve


@dataclass(frozen=True)
class PartitionState:
    partition: str  # "" for an unpartitioned table
    location: Location
    listing: Listing
    state: AcidState
    links: tuple[str, ...] = ()  # symbolic links below the partition: listed, never followed
    # Hive's reader fails on a file this selection takes (core.raw.read_failure), though the
    # selection itself succeeds (``state.error`` is getAcidState's own failure)
    read_error: AcidStateError | None = None


@dataclass(frozen=True)
class TableState:
    location: Location
    snapshot: Snapshot
    partitions: tuple[PartitionState, ...]
    stray: tuple[PathInfo, ...]  # entries between partition directories, read by nobody


def inspect_table(path: str | Location, snapshot: Snapshot | None = None, *,
                  ignore_empty_files: bool = False) -> TableState:
    """List ``path`` once (recursively) and compute Hive's selection for every partition."""
    loc = resolve(path) if isinstance(path, str) else path
    snapshot = snapshot or make_snapshot()
    require_dir(loc)
    require_not_acid_dir(loc)
    with paused_gc():
        return _inspect(loc, snapshot, ignore_empty_files)


def require_not_acid_dir(loc: Location) -> None:
    """A base_, delta_ or delete_delta_ directory is part of a table, not one: judged alone its
    bucket files would look like foreign original data. Say which directory to name instead."""
    name = loc.url.rstrip("/").rsplit("/", 1)[-1]
    try:
        acid = parse_dir_name(name)
    except ValueError:
        return  # "base_only", "delta_lake": a directory that only looks like one
    if acid is None:
        return
    kind = "base" if isinstance(acid, Base) else "delete_delta" if acid.delete else "delta"
    parent = loc.url.rstrip("/")[: -len(name)].rstrip("/") or "/"
    raise UsageError(f"{loc.url} is a {kind} directory of a table, not a table: give the table "
                     f"(or partition) directory, {parent}; `acidtool dump` and `meta` read "
                     "one directory's files")


def with_read_failures(table: TableState) -> TableState:
    """The table with each partition whose selection Hive's reader then fails on (a selected
    original file it cannot number: ``core.raw.read_failure``) given that error."""
    parts = []
    for p in table.partitions:
        failure = read_failure(p.state, table.snapshot.hive_version)
        parts.append(p if failure is None else replace(p, read_error=failure))
    return replace(table, partitions=tuple(parts))


def _inspect(loc: Location, snapshot: Snapshot, ignore_empty_files: bool) -> TableState:
    paths = list_tree(loc)
    require_one_table(paths, loc.url)
    parts, stray = split_partitions(paths)
    return TableState(loc, snapshot, select_partitions(loc, parts, snapshot, ignore_empty_files),
                      tuple(stray))


def select_partitions(loc: Location, parts, snapshot: Snapshot,
                      ignore_empty_files: bool = False) -> tuple[PartitionState, ...]:
    """getAcidState of each listed partition of the table at ``loc`` (markers read as
    needed)."""
    out = []
    for part in parts:
        ploc = loc.child(part.name)
        paths, links = split_links(part.paths)
        markers = {rel: read_bytes(ploc, rel)
                   for rel in markers_needed(paths, snapshot.hive_version)}
        listing = Listing(tuple(paths), MappingProxyType(markers), root=ploc.url)
        state = select(listing, snapshot.write_ids, snapshot.txns, snapshot.hive_version,
                       ignore_empty_files=ignore_empty_files, insert_only=snapshot.insert_only)
        out.append(PartitionState(part.name, ploc, listing, state, links))
    return tuple(out)


def inspect_tree(path: str, snapshot: Snapshot, *, ignore_empty_files: bool = False,
                 spark: str | None = None,
                 progress: Callable[[int, int], None] | None = None) -> list[TableState]:
    """Every ACID table below ``path`` (``ls --recursive``), one listing of the tree; with
    ``spark`` (the master, "" for the default) each share of partitions is selected on Spark's
    executors (their markers read there). ``progress(done, total)``: tables selected."""
    from ..core.partitions import discover_tables

    loc = resolve(path)
    require_dir(loc)
    tables: list[tuple[str, Any]]  # (root, its partitions: listed, or named with what nests)
    if spark is None:
        tables = [(t.root, t.partitions) for t in discover_tables(list_tree(loc))]
    else:  # the driver lists down to the partitions; each executor lists its share's
        tables = list(tree_partitions(loc))
    if not tables:
        from ..core.errors import PathError

        raise PathError(f"no ACID table or partition found under {path}")
    tlocs = [loc.child(root) if root else loc for root, _ in tables]
    if spark is None:
        out = []
        for done, (tloc, (_, parts)) in enumerate(zip(tlocs, tables), 1):
            out.append(TableState(tloc, snapshot, select_partitions(tloc, parts, snapshot,
                                                                    ignore_empty_files), ()))
            if progress:
                progress(done, len(tables))
        return out
    from ..io.spark_jobs import spark_map

    units = [(i, part) for i, (_, parts) in enumerate(tables) for part in parts]
    urls = [tloc.url for tloc in tlocs]

    def work(chunk):  # on an executor: listed, markers read, getAcidState
        out = []
        for i, (name, nested) in chunk:
            tloc = resolve(urls[i])
            (state,) = select_partitions(tloc, [listed_partition(tloc, "", name, nested)],
                                         snapshot, ignore_empty_files)
            out.append((i, name, state.listing.paths, dict(state.listing.markers),
                        state.state, state.links))
        return out

    by_table: list[list[PartitionState]] = [[] for _ in tables]
    for _, results in spark_map(work, units, spark or None, most=64):
        for i, name, paths, markers, state, links in results:
            ploc = tlocs[i].child(name)
            listing = Listing(paths, MappingProxyType(markers), root=ploc.url)
            by_table[i].append(PartitionState(name, ploc, listing, state, links))
    return [TableState(tloc, snapshot, tuple(parts), ()) for tloc, parts in zip(tlocs, by_table)]


def tree_partitions(loc: Location) -> list[tuple[str, list[tuple[str, tuple[str, ...]]]]]:
    """The tables below ``loc`` and their partitions, found by listing directories one at a
    time, never inside a base or delta (``core.partitions.walk_partitions``): (table root,
    [(partition name, the partitions nested in it)]). The partitions' files are listed where
    they are checked (``listed_partition``), on Spark's executors."""
    from ..core.partitions import tables_of, walk_partitions
    from ..io.fs import list_dir

    found = walk_partitions(lambda rel: list_dir(loc, rel))
    return [(root, [(name, tuple(q[len(full) + 1:] if full else q for q in found
                                 if q != full and (not full or q.startswith(full + "/"))))
                    for name, full in parts])
            for root, parts in tables_of(found)]


def listed_partition(loc: Location, root: str, name: str, nested: tuple[str, ...],
                     sizes: bool = True):
    """A partition's listing, as one listing of the whole tree would give it (the files of
    the partitions nested in it are theirs)."""
    from ..core.partitions import PartitionListing

    full = "/".join(x for x in (root, name) if x)
    paths = list_tree(loc.child(full) if full else loc, sizes=sizes)
    if nested:
        paths = [p for p in paths if not any(p.path.startswith(n + "/") for n in nested)]
    return PartitionListing(name, tuple(paths))
