"""Splitting one recursive table listing into partitions (``k=v`` directories, any depth).

A directory is a partition directory when every component of its path below the table is
``key=value`` (key not empty, not hidden). The deepest such directories are the partitions; a table
without them is a single partition named "". Entries that sit next to partition directories at an
intermediate level belong to no partition: they come back as ``stray`` (Hive never reads them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import UsageError
from .javanum import java_string_key
from .listing import PathInfo
from .names import is_hidden, is_partition_component


@dataclass(frozen=True)
class PartitionListing:
    name: str  # "" or "ds=1/hr=2"
    paths: tuple[PathInfo, ...]  # relative to the partition directory


def named_keys(paths: list[PathInfo]) -> tuple[str, ...] | None:
    """The partition columns a table's listing names: the keys of the longest chain of
    ``key=value`` directories leading down from its root (the deepest partitions'); ``()``
    where a file outside a hidden directory sits at the root, None where the listing holds
    no such file and no partition (an empty table)."""
    data = False
    keys: tuple[str, ...] = ()
    for entry in paths:
        chain = []
        for part in entry.path.split("/"):
            if "=" not in part or part.startswith(("_", ".")):
                break
            chain.append(part.split("=", 1)[0])
        if len(chain) > len(keys):
            keys = tuple(chain)
        if not chain and not entry.path.split("/")[0].startswith(("_", ".")):
            data = True
    return keys if keys else (() if data else None)


def split_partitions(paths: list[PathInfo]) -> tuple[list[PartitionListing], list[PathInfo]]:
    """Return (partitions in path order, stray entries)."""
    if not any("=" in info.path for info in paths):
        return [PartitionListing("", tuple(paths))], []  # the common unpartitioned case
    # Everything is decided per directory (a file by the directory holding it): a table has
    # many files per directory, and each directory's components are looked at once.
    partition_dirs: set[str] = set()
    seen: set[str] = set()
    for info in paths:
        directory = info.path if info.is_dir else info.path.rpartition("/")[0]
        if directory in seen:
            continue
        seen.add(directory)
        prefix = ""
        for part in directory.split("/") if directory else ():
            if not is_partition_component(part):
                break
            prefix = f"{prefix}/{part}" if prefix else part
            partition_dirs.add(prefix)
    if not partition_dirs:
        return [PartitionListing("", tuple(paths))], []
    parents = {d.rsplit("/", 1)[0] for d in partition_dirs if "/" in d}
    leaves = partition_dirs - parents
    grouped: dict[str, list[PathInfo]] = {leaf: [] for leaf in leaves}
    owners: dict[str, str | None] = {}  # directory -> the partition holding what is in it
    stray: list[PathInfo] = []
    new = tuple.__new__  # PathInfo's own constructor is Python code
    for info in paths:
        path = info.path
        if path in partition_dirs:
            continue
        directory = path.rpartition("/")[0]
        if directory in owners:
            owner = owners[directory]
        else:
            owner = owners[directory] = _owner(directory, leaves, partition_dirs)
        if owner is None:
            if not any(is_hidden(p) for p in path.split("/")):
                stray.append(info)
            continue
        grouped[owner].append(new(PathInfo, (path[len(owner) + 1:], info.size, info.is_dir)))
    ordered = sorted(grouped, key=java_string_key)
    return [PartitionListing(name, tuple(grouped[name])) for name in ordered], stray


def _owner(directory: str, leaves: set[str], partition_dirs: set[str]) -> str | None:
    """The partition (a leaf partition directory) at or above ``directory``, if any: found
    by walking down from the top through partition directories only."""
    prefix = ""
    for part in directory.split("/") if directory else ():
        prefix = f"{prefix}/{part}" if prefix else part
        if prefix in leaves:
            return prefix
        if prefix not in partition_dirs:
            return None
    return None


@dataclass(frozen=True)
class TableListing:
    root: str  # relative to the listed directory ("" for the directory itself)
    partitions: tuple[PartitionListing, ...]


def _acid_prefixed(name: str) -> bool:
    return name.startswith(("base_", "delta_", "delete_delta_"))


def tables_below(paths: list[PathInfo]) -> list[str]:
    """The roots of the ACID tables below a directory that is no table itself (no ACID
    directory in it or in its partitions): a warehouse or database folder given where one
    table is meant. [] for a table, or a folder with no ACID table below."""
    for info in paths:
        parts = info.path.split("/")
        for part in parts if info.is_dir else parts[:-1]:
            if _acid_prefixed(part):
                return []  # a base or delta of the table itself (or of its partitions)
            if not is_partition_component(part):
                break
    return sorted(t.root for t in discover_tables(paths) if t.root)


def folder_of_tables(paths: list[PathInfo], url: str) -> list[str]:
    """The tables below ``url`` when it is a warehouse or database folder rather than a table:
    tables below directories that are not its partitions, in a ``*.db`` directory, or in two or
    more of its subdirectories. One subdirectory of deltas (a replication dump's ``data/``)
    is an original directory Hive reads as the table's own."""
    roots = [r for r in tables_below(paths)
             if not is_partition_component(r.split("/", 1)[0])]
    tops = {r.split("/", 1)[0] for r in roots}
    if len(tops) >= 2 or url.rstrip("/").endswith(".db") or \
            any(t.endswith(".db") for t in tops):
        return roots
    return []


def require_one_table(paths: list[PathInfo], url: str) -> None:
    """Refuse a folder of tables given as one table (a warehouse or a database directory):
    read as a table, its tables' files would be taken for original data."""
    roots = folder_of_tables(paths, url)
    if roots:
        shown = ", ".join(roots[:3]) + (f" and {len(roots) - 3} more" if len(roots) > 3 else "")
        raise UsageError(f"{url} holds tables ({shown}); it is not one: give one table's "
                         "directory, or --recursive (-r) where the command takes it (ls, "
                         "validate, compaction-plan, upgrade-check, report)")


def discover_tables(paths: list[PathInfo]) -> list[TableListing]:
    """Every ACID table below a directory (``validate --recursive``), from one listing.

    A directory with a base_/delta_/delete_delta_ child is a partition (or an unpartitioned
    table); its table is the nearest ancestor above its trailing ``k=v`` components."""
    dirs: set[str] = set()
    for info in paths:
        parts = info.path.split("/")
        for i in range(1, len(parts) + (1 if info.is_dir else 0)):
            dirs.add("/".join(parts[:i]))
    partitions: set[str] = set()
    for d in dirs:
        parent, _, name = d.rpartition("/")
        if _acid_prefixed(name) and not any(is_hidden(x) for x in d.split("/")):
            if not any(_acid_prefixed(x) for x in parent.split("/") if x):
                partitions.add(parent)
    grouped: dict[str, list[PathInfo]] = {p: [] for p in partitions}
    for info in paths:
        parts = info.path.split("/")
        for i in range(len(parts) - 1, -1, -1):
            prefix = "/".join(parts[:i])
            if prefix in grouped:
                if info.path != prefix:
                    grouped[prefix].append(PathInfo(info.path[len(prefix) + 1:] if prefix
                                                    else info.path, info.size, info.is_dir))
                break
    return [TableListing(root, tuple(PartitionListing(name, tuple(grouped[full]))
                                     for name, full in parts))
            for root, parts in tables_of(partitions)]


def tables_of(partitions: set[str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Partition directories grouped by table: (table root, [(partition name, its path)]), in
    name order; a partition's table is above its trailing ``k=v`` components."""
    tables: dict[str, list[tuple[str, str]]] = {}
    for part in sorted(partitions, key=java_string_key):
        comps = part.split("/") if part else []
        cut = len(comps)
        while cut and is_partition_component(comps[cut - 1]):
            cut -= 1
        tables.setdefault("/".join(comps[:cut]), []).append(("/".join(comps[cut:]), part))
    return sorted(tables.items(), key=lambda kv: java_string_key(kv[0]))


def walk_partitions(list_dir: Callable[[str], list[PathInfo]]) -> set[str]:
    """The partition directories ``discover_tables`` finds, found by listing one directory at
    a time (``list_dir(rel)``: the entries directly in it) and never inside a base or delta,
    nor a hidden directory: a warehouse's driver lists its partitions, not their files."""
    found: set[str] = set()
    pending = [""]
    while pending:
        d = pending.pop()
        for child in list_dir(d):
            if not child.is_dir:
                continue
            name = child.path.rsplit("/", 1)[-1]
            if is_hidden(name):
                continue
            if _acid_prefixed(name):
                found.add(d)
            else:
                pending.append(child.path)
    return found
