"""Splitting one recursive table listing into partitions (``k=v`` directories, any depth).

A directory is a partition directory when every component of its path below the table is
``key=value`` (key not empty, not hidden). The deepest such directories are the partitions; a table
without them is a single partition named "". Entries that sit next to partition directories at an
intermediate level belong to no partition: they come back as ``stray`` (Hive never reads them).
"""

from __future__ import annotations

from dataclasses import dataclass

from .javanum import java_string_key
from .listing import PathInfo
from .names import is_hidden


def is_partition_component(name: str) -> bool:
    key, sep, _ = name.partition("=")
    return bool(sep and key) and not is_hidden(name)


@dataclass(frozen=True)
class PartitionListing:
    name: str  # "" or "ds=1/hr=2"
    paths: tuple[PathInfo, ...]  # relative to the partition directory


def split_partitions(paths: list[PathInfo]) -> tuple[list[PartitionListing], list[PathInfo]]:
    """Return (partitions in path order, stray entries)."""
    partition_dirs: set[str] = set()
    for info in paths:
        parts = info.path.split("/")
        limit = len(parts) if info.is_dir else len(parts) - 1
        prefix = ""
        for part in parts[:limit]:
            if not is_partition_component(part):
                break
            prefix = f"{prefix}/{part}" if prefix else part
            partition_dirs.add(prefix)
    if not partition_dirs:
        return [PartitionListing("", tuple(paths))], []
    parents = {d.rsplit("/", 1)[0] for d in partition_dirs if "/" in d}
    leaves = partition_dirs - parents
    grouped: dict[str, list[PathInfo]] = {leaf: [] for leaf in leaves}
    stray: list[PathInfo] = []
    for info in paths:
        if info.path in partition_dirs:
            continue
        parts = info.path.split("/")
        prefix = ""
        owner = None
        for i, part in enumerate(parts[:-1]):
            prefix = f"{prefix}/{part}" if prefix else part
            if prefix in leaves:
                owner = (prefix, "/".join(parts[i + 1:]))
                break
            if prefix not in partition_dirs:
                break
        if owner is None:
            if not is_hidden(parts[-1]) and not any(is_hidden(p) for p in parts):
                stray.append(info)
            continue
        grouped[owner[0]].append(PathInfo(owner[1], info.size, info.is_dir))
    ordered = sorted(grouped, key=java_string_key)
    return [PartitionListing(name, tuple(grouped[name])) for name in ordered], stray
