"""Reading a table (or partition) directory the way Hive does: list once, select per partition.

This is the library behind ``acidtool ls`` and the starting point of dump, validate and read.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from .._gc import paused_gc
from ..core.errors import UsageError
from ..core.listing import Listing, PathInfo, markers_needed, split_links
from ..core.names import Base, parse_dir_name
from ..core.partitions import split_partitions
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


def _inspect(loc: Location, snapshot: Snapshot, ignore_empty_files: bool) -> TableState:
    parts, stray = split_partitions(list_tree(loc))
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
