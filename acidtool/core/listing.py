"""The input of the selection: an already-read listing of one partition directory.

The IO layer lists the directory once (recursively), keeps paths relative to the partition, and reads
the contents of the few marker files the selection asks for (``markers_needed``). Nothing here touches
a filesystem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Iterable, Mapping, NamedTuple

from .javanum import java_string_key
from .names import BASE_PREFIX, METADATA_FILE


class PathInfo(NamedTuple):
    """A file or directory below the partition directory. ``path`` is '/'-separated and relative.

    A NamedTuple rather than a dataclass: one is made per listed file, and tables have many."""

    path: str
    size: int = 0
    is_dir: bool = False

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


class Child(NamedTuple):
    """An immediate child of the partition directory, with everything below it. (A NamedTuple:
    one is made per child, and a table can have tens of thousands.)"""

    name: str
    is_dir: bool
    size: int  # the file's size, or the total size of the files below a directory
    files: tuple[PathInfo, ...] = ()  # files below a directory, paths relative to the child

    @property
    def file_count(self) -> int:
        return len(self.files) if self.is_dir else 1


@dataclass(frozen=True)
class Listing:
    """Everything below one partition directory, plus the marker contents the selection needs."""

    paths: tuple[PathInfo, ...]
    markers: Mapping[str, bytes] = field(default_factory=lambda: MappingProxyType({}))
    root: str = ""  # only used to name the directory in messages

    @classmethod
    def from_paths(cls, paths: Iterable[str], *, sizes: Mapping[str, int] | None = None,
                   markers: Mapping[str, bytes] | None = None, root: str = "",
                   default_size: int = 3) -> Listing:
        """Build a listing from relative paths; a trailing '/' marks an (empty) directory.
        Convenient for tests and for the spec's conformance cases."""
        infos = []
        for p in paths:
            if p.endswith("/"):
                infos.append(PathInfo(p.rstrip("/"), 0, True))
            else:
                size = (sizes or {}).get(p, default_size)
                infos.append(PathInfo(p, size, False))
        return cls(tuple(infos), MappingProxyType(dict(markers or {})), root)

    def children(self) -> list[Child]:
        """Immediate children in Java String order (HDFS lists in that order)."""
        dirs: dict[str, list[PathInfo]] = {}
        files: dict[str, PathInfo] = {}
        for path, size, is_dir in self.paths:
            head, sep, rest = path.partition("/")
            if sep:
                bucket = dirs.get(head)
                if bucket is None:
                    bucket = dirs[head] = []
                if not is_dir:
                    bucket.append(PathInfo(rest, size, False))
            elif is_dir:
                dirs.setdefault(head, [])
            else:
                files[head] = PathInfo(path, size, False)
        out = [Child(name, True, sum(f.size for f in inner),
                     tuple(inner if len(inner) < 2 else
                           sorted(inner, key=lambda f: java_string_key(f.path))))
               for name, inner in dirs.items()]
        out.extend(Child(name, False, info.size) for name, info in files.items() if name not in dirs)
        out.sort(key=lambda c: java_string_key(c.name))
        return out


def markers_needed(paths: Iterable[PathInfo], hive_version: str) -> list[str]:
    """The ``_metadata_acid`` files (directly inside a ``base_`` directory) whose contents the
    selection may read. Hive 2.3 reads none."""
    if hive_version == "2":
        return []
    return [p.path for p in paths
            if not p.is_dir and p.path.startswith(BASE_PREFIX) and p.path.count("/") == 1
            and p.path.endswith("/" + METADATA_FILE)]
