"""What convert knows of its sources, so that no row is ever committed twice.

* **Which file a source is.** Sources are told apart by the file they are (device and inode on a
  local disk, the store's own normalized path elsewhere), not by how their path is spelt:
  ``a.orc``, ``./a.orc``, ``dir//a.orc`` and a symbolic link to it are one source, converted
  once; the plan lists what was named twice.
* **What a source holds.** Its fingerprint is its size and the SHA-256 of its bytes (of its first
  and last MiB when it is larger than 2 MiB: the ORC footer, with every stripe's position and
  statistics, sits in the last). A source that was moved or copied keeps its fingerprint.
* **What was committed.** Every delta convert commits carries ``_acidtool_sources`` (JSON: the
  fingerprint and path of each source). Hive never reads it (names starting with ``_`` are
  hidden), and it arrives with the delta in the same rename. A later convert refuses a source
  whose fingerprint a delta of the table already records, naming that delta, unless told
  ``--allow-duplicates``. Compaction drops the record with the delta.
"""

from __future__ import annotations

import glob as globlib
import hashlib
import json
import os
import posixpath
import time
from dataclasses import dataclass
from typing import Sequence

from ...core.errors import UsageError
from ...core.names import is_hidden, parse_dir_name
from ...io.fs import Location, kind_of, list_tree, move, open_input_file, read_bytes, resolve

SOURCES_FILE = "_acidtool_sources"
_PART = 1 << 20  # a MiB from each end of a large source


@dataclass(frozen=True)
class Fingerprint:
    size: int
    sha256: str

    def as_dict(self) -> dict:
        return {"size": self.size, "sha256": self.sha256}


def identity(loc: Location) -> tuple:
    """The file a path reaches: (device, inode) on a local disk (following links), else the
    store's path with its spelling normalized."""
    if loc.is_local:
        st = os.stat(loc.path)
        return ("local", st.st_dev, st.st_ino)
    return (loc.fs.type_name, posixpath.normpath(loc.path))


def fingerprint(loc: Location) -> Fingerprint:
    digest = hashlib.sha256()
    with open_input_file(loc) as f:
        size = f.size()
        digest.update(size.to_bytes(8, "big"))
        if size <= 2 * _PART:
            digest.update(f.read())
        else:
            digest.update(f.read(_PART))
            f.seek(size - _PART)
            digest.update(f.read(_PART))
    return Fingerprint(size, digest.hexdigest())


def dedupe(locs: list[Location]) -> tuple[list[Location], list[tuple[str, str]]]:
    """Each file once, in the order first named; and (path, path of the same file named
    before) for every other spelling."""
    first: dict[tuple, Location] = {}
    unique, twice = [], []
    for loc in locs:
        key = identity(loc)
        if key in first:
            twice.append((loc.url, first[key].url))
        else:
            first[key] = loc
            unique.append(loc)
    return unique, twice


def committed_sources(target: Location, paths: Sequence) -> dict[str, tuple[str, str]]:
    """sha256 -> (delta directory, source path) for every source that a committed delta of
    ``target`` (the table or partition directory, listed as ``paths``) records."""
    found: dict[str, tuple[str, str]] = {}
    for p in paths:
        if p.is_dir or p.path.count("/") != 1 or not p.path.endswith("/" + SOURCES_FILE):
            continue
        directory = p.path.split("/")[0]
        if is_hidden(directory):  # a staging directory: never committed
            continue
        try:
            if parse_dir_name(directory) is None:
                continue
        except ValueError:
            continue
        try:
            doc = json.loads(read_bytes(target, p.path).decode("utf-8"))
            for s in doc.get("sources", []):
                found.setdefault(s["sha256"], (directory, s.get("path", "?")))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an unreadable record proves nothing either way
    return found


def refuse_duplicates(sources: list, prints: list[Fingerprint], target: Location,
                      paths: list) -> None:
    """Sources whose rows a delta of the table holds already, or two sources with the same
    contents: one line naming each, before anything is written."""
    problems = []
    done = committed_sources(target, paths)
    seen: dict[str, str] = {}
    for source, fp in zip(sources, prints):
        if fp.sha256 in done:
            delta, path = done[fp.sha256]
            problems.append(f"{source.loc.url} was converted already: its rows are in {delta} "
                            f"(converted from {path})")
        elif fp.sha256 in seen:
            problems.append(f"{source.loc.url} has the same contents as {seen[fp.sha256]}")
        seen.setdefault(fp.sha256, source.loc.url)
    if problems:
        raise UsageError("; ".join(problems) + "; nothing was written (give "
                         "--allow-duplicates to convert them all the same)")


def record(sources: list, prints: list[Fingerprint], write_id: int) -> bytes:
    """The contents of ``_acidtool_sources`` for a delta."""
    return json.dumps({"write_id": write_id, "sources": [
        {"path": s.loc.url, "rows": s.rows, **fp.as_dict()} for s, fp in zip(sources, prints)]},
        indent=1).encode()


# ------------------------------------------------------------------------------------------------
# --move-sources: everything that can be checked is checked before writing


def move_targets(sources: list, destination: Location, table: Location, patterns: list[str],
                 manifest: str) -> list[Location]:
    """Where each source goes, or UsageError with every reason it cannot: a destination inside
    the table or inside a source directory, two sources with one name, a file already there,
    a source that is a symbolic link or lies below one (moving it would move the link)."""
    problems = []
    if destination.fs.type_name == table.fs.type_name and _inside(destination, table):
        problems.append(f"--move-sources {destination.url} is inside the table {table.url}: "
                        "the raw files would land in the table")
    for pattern in patterns:
        src_dir = resolve(pattern) if not any(ch in pattern for ch in "*?[") else None
        if src_dir is not None and kind_of(src_dir) == "dir" and \
                src_dir.fs.type_name == destination.fs.type_name and _inside(destination, src_dir):
            problems.append(f"--move-sources {destination.url} is inside the source directory "
                            f"{src_dir.url}: a later run would take the moved files again")
    targets: list[Location] = []
    names: dict[str, str] = {}
    for s in sources:
        name = s.loc.url.rstrip("/").rsplit("/", 1)[-1]
        if name in names:
            problems.append(f"{s.loc.url} and {names[name]} would both move to "
                            f"{destination.url_of(name)}")
        names[name] = s.loc.url
        target = destination.child(name)
        if kind_of(target) != "missing":
            problems.append(f"{target.url} exists already")
        if s.loc.is_local and os.path.realpath(s.loc.path) != os.path.abspath(s.loc.path):
            problems.append(f"{s.loc.url} is a symbolic link or lies below one: moving it "
                            "would move the link, not the data")
        targets.append(target)
    if kind_of(destination.child(manifest)) != "missing":
        problems.append(f"{destination.url_of(manifest)} exists already")
    if problems:
        raise UsageError("cannot move the sources: " + "; ".join(problems)
                         + "; nothing was written")
    return targets


def _inside(inner: Location, outer: Location) -> bool:
    a = _real(inner)
    b = _real(outer)
    return a == b or a.startswith(b.rstrip("/") + "/")


def _real(loc: Location) -> str:
    return os.path.realpath(loc.path) if loc.is_local else posixpath.normpath(loc.path)


def manifest_name(directory: str) -> str:
    return f"acidtool-manifest-{directory}.jsonl"


def move_sources(p, summary, destination: str) -> None:
    """After the commit: move each source to where the plan checked it could go. The manifest
    (JSON lines: what was converted, then one line per source as it is moved, then a last line)
    is written before the first move and flushed after each line, so that an interrupted move
    leaves a record of what went where."""
    dest = resolve(destination)
    dest.fs.create_dir(dest.path, recursive=True)
    name = manifest_name(p.directory)
    summary.manifest = dest.url_of(name)
    with dest.fs.open_output_stream(dest.join(name)) as out:
        def line(doc: dict) -> None:
            out.write(json.dumps(doc).encode() + b"\n")
            out.flush()
        line({"converted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "table": p.target.url, "directory": p.directory, "write_id": p.write_id,
              "files": summary.files, "sources": len(p.sources)})
        for s, fp, target in zip(p.sources, p.fingerprints, p.moves):
            _move(s.loc, target)
            moved = {"from": s.loc.url, "to": target.url, "rows": s.rows, **fp.as_dict()}
            summary.moved.append(moved)
            line(moved)
        line({"done": True, "moved": len(summary.moved)})


def _move(src: Location, dst: Location) -> None:
    """One source out of the landing zone: a rename on one filesystem, else copy and delete."""
    if src.fs.type_name == dst.fs.type_name:
        move(src, dst)
    else:
        _copy_then_delete(src, dst)


def _copy_then_delete(src: Location, dst: Location) -> None:
    with open_input_file(src) as i, dst.fs.open_output_stream(dst.path) as o:
        while chunk := i.read(1 << 20):
            o.write(chunk)
    src.fs.delete_file(src.path)


def expand_sources(patterns: Sequence[str | Location]) -> list[Location]:
    """Files, directories of them (hidden names left out) and globs, in name order. Only the
    user's strings are patterns: a ``Location`` (what acidtool itself names) is one file."""
    out: list[Location] = []
    for pattern in patterns:
        if isinstance(pattern, Location):
            if kind_of(pattern) != "file":
                raise UsageError(f"{pattern.url}: no such file")
            out.append(pattern)
            continue
        if any(ch in pattern for ch in "*?[") and "://" not in pattern:
            matches = sorted(globlib.glob(pattern))
            if not matches:
                raise UsageError(f"{pattern}: no file matches")
            out.extend(resolve(m) for m in matches)
            continue
        loc = resolve(pattern)
        kind = kind_of(loc)
        if kind == "missing":
            raise UsageError(f"{pattern}: no such file or directory")
        if kind == "file":
            out.append(loc)
            continue
        files = sorted(p.path for p in list_tree(loc) if not p.is_dir
                       and not any(is_hidden(x) for x in p.path.split("/")))
        if not files:
            raise UsageError(f"{pattern}: no files in this directory")
        out.extend(loc.child(f) for f in files)
    return out


@dataclass(frozen=True)
class Group:
    """Consecutive sources written to consecutive bucket files (unbucketed tables)."""

    sources: tuple[int, ...]  # indices into Plan.sources
    offsets: tuple[int, ...]  # each source's first row within the group
    rows: int
    first_bucket: int


def group_sources(rows: Sequence[int], max_file_rows: int) -> list[Group]:
    groups: list[Group] = []
    current: list[int] = []
    offsets: list[int] = []
    total = 0
    bucket = 0

    def close():
        nonlocal current, offsets, total, bucket
        if current:
            groups.append(Group(tuple(current), tuple(offsets), total, bucket))
            bucket += max(1, -(-total // max_file_rows))
        current, offsets, total = [], [], 0

    for i, n in enumerate(rows):
        if current and total + n > max_file_rows:
            close()
        current.append(i)
        offsets.append(total)
        total += n
        if total >= max_file_rows:
            close()
    close()
    return groups
