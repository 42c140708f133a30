"""The input of the selection: an already-read listing of one partition directory.

The IO layer lists the directory once (recursively), keeps paths relative to the partition, and reads
the contents of the few marker files the selection asks for (``markers_needed``). Nothing here touches
a filesystem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from types import MappingProxyType
from typing import Iterable, Mapping, NamedTuple

from .javanum import java_string_key
from .names import (
    BASE_PREFIX,
    DELETE_DELTA_PREFIX,
    DELTA_PREFIX,
    METADATA_FILE,
    is_partition_component,
)
from .versions import HiveVersion

# The size of a file listed without one (PathInfo.size). validate learns the size of each file
# it reads from the open file, and a stat per file costs a tenth of checking a small one; so
# its local listing leaves out the sizes of files directly inside a base_, delta_ or
# delete_delta_ directory directly inside a partition (``size_unseen``): the selection never
# looks at those, and ``select.with_sizes`` puts them in once they are known.
UNKNOWN_SIZE = -1

# The size of a symbolic link in a listing. acidtool never follows a link: what it points to may
# lie outside the table (or be the table's own parent: a loop), and Hive on HDFS has none. A
# link is listed with this size so that it can be reported; ``split_links`` takes links out of a
# listing before anything selects or reads from it.
LINK_SIZE = -3


def split_links(paths: Iterable["PathInfo"]) -> tuple[list["PathInfo"], tuple[str, ...]]:
    """(the listing without symbolic links, the links' paths)."""
    kept, links = [], []
    for info in paths:
        if info[1] == LINK_SIZE:
            links.append(info[0])
        else:
            kept.append(info)
    return kept, tuple(sorted(links))


def size_unseen(directory: str, parent: str | None) -> bool:
    """Whether the selection never looks at the sizes of the files directly in ``directory``
    (a name), whose ``parent`` is a ``k=v`` directory or (None) the top of a listing: an ACID
    directory, in what can only be a partition (not in an original directory, whose empty files
    Hive skips)."""
    return directory.startswith(_ACID_PREFIXES) and (parent is None
                                                     or is_partition_component(parent))


_ACID_PREFIXES = (BASE_PREFIX, DELTA_PREFIX, DELETE_DELTA_PREFIX)


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

    def __reduce__(self):
        """Pickled with its markers as a plain dict (a partition read on Spark's executors)."""
        return _listing, (self.paths, dict(self.markers), self.root)

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
        # One pass, run once per partition over every listed path: values are built with
        # tuple.__new__ (a NamedTuple's own constructor is Python code, twice as slow).
        new = tuple.__new__
        dirs: dict[str, list[PathInfo]] = {}
        files: dict[str, PathInfo] = {}
        for info in self.paths:
            head, sep, rest = info[0].partition("/")
            if sep:
                bucket = dirs.get(head)
                if bucket is None:
                    bucket = dirs[head] = []
                if not info[2]:
                    bucket.append(new(PathInfo, (rest, info[1], False)))
            elif info[2]:
                if head not in dirs:
                    dirs[head] = []
            else:
                files[head] = info
        out = []
        for name, inner in dirs.items():
            if len(inner) > 1:
                inner.sort(key=_java_order_key([f[0] for f in inner]))
                size = sum([f[1] for f in inner])
            else:
                size = inner[0][1] if inner else 0
            out.append(new(Child, (name, True, size, tuple(inner))))
        for name, info in files.items():
            if name not in dirs:
                out.append(new(Child, (name, False, info[1], ())))
        out.sort(key=_java_order_key([c[0] for c in out]))
        return out


def _java_order_key(names: list[str]):
    """A sort key for Child or PathInfo values (by their first field, ``names``) in Java String
    order: the name itself when no name has a character above U+FFFF (code-point and UTF-16
    order then agree), else java_string_key."""
    joined = "".join(names)
    if joined.isascii() or max(joined) <= "\uffff":
        return itemgetter(0)
    return lambda child: java_string_key(child[0])


def markers_needed(paths: Iterable[PathInfo], hive_version: str) -> list[str]:
    """The ``_metadata_acid`` files (directly inside a ``base_`` directory) whose contents the
    selection may read. Hive 2.3 reads none."""
    if not HiveVersion.of(hive_version).reads_base_markers:
        return []
    return [p.path for p in paths
            if not p.is_dir and p.path.startswith(BASE_PREFIX) and p.path.count("/") == 1
            and p.path.endswith("/" + METADATA_FILE)]


def _listing(paths, markers, root) -> Listing:
    return Listing(paths, MappingProxyType(markers), root)
