"""The guards every writer passes before it commits (``io/commit.py`` carries them out): which
write id a new delta may take, which directory is the table a path belongs to, and whether a
path stays inside the table. Pure: names and values in, a reason out.

A delta written under a write id that a base or compacted delta covers is never read (Hive's
``getAcidState`` takes the base and passes over everything below it), and Hive's cleaner deletes
it; one above the snapshot's high watermark, or open or aborted in it, is not read either. Both
``convert`` and ``repair`` refuse such a write id before writing anything.
"""

from __future__ import annotations

import posixpath
from typing import Iterable, Iterator

from .javanum import LONG_MAX
from .names import NO_STATEMENT, AcidDir, Base, Delta, is_hidden, parse_dir_name
from .snapshot import Snapshot

LOCK_FILE = ".acidtool-lock"  # a writer's lock, in the table directory (hidden from Hive)


def write_id_range_problem(write_id: int) -> str | None:
    if not 1 <= write_id <= LONG_MAX:
        return f"write id {write_id} is out of range: a write id is between 1 and {LONG_MAX} " \
               "(a Java long)"
    return None


def _acid_dirs(directory_names: Iterable[str]) -> Iterator[tuple[str, AcidDir]]:
    """(name, parsed) of each of ``directory_names`` that is a base or delta, in name order."""
    for name in sorted(directory_names):
        if is_hidden(name):
            continue
        try:
            parsed = parse_dir_name(name, "4")
        except ValueError:
            continue
        if parsed is not None:
            yield name, parsed


def _cover(write_id: int, directory_names: Iterable[str], *, deltas: bool = True,
           delete_deltas: bool = False, merged: bool = False) -> str | None:
    """The first of ``directory_names`` (one partition's top-level directories) that a
    compaction made over ``write_id``: a base at or above it, or (``deltas``,
    ``delete_deltas``) a delta or delete delta of a range of write ids that holds it, or
    (``merged``) of that write id alone and no statement id, which a compaction of its
    statements writes."""
    for name, parsed in _acid_dirs(directory_names):
        if isinstance(parsed, Base) and parsed.write_id >= write_id:
            return name
        if isinstance(parsed, Delta) and (delete_deltas if parsed.delete else deltas) and \
                parsed.min_write_id <= write_id <= parsed.max_write_id and (
                    parsed.min_write_id < parsed.max_write_id or
                    merged and parsed.statement_id == NO_STATEMENT):
            return name
    return None


def covering(write_id: int, directory_names: Iterable[str]) -> str | None:
    """The base or compacted delta (of those named, one partition's top-level directories)
    under which a new ``delta_W_W`` would never be read, or None."""
    return _cover(write_id, directory_names)


def snapshot_problem(write_id: int, snapshot: Snapshot | None) -> str | None:
    """Why a delta of ``write_id`` would not be read at ``snapshot`` (one the user gave)."""
    if snapshot is None:
        return None
    ids = snapshot.write_ids if snapshot.write_ids is not None else snapshot.txns
    what = "write id" if snapshot.write_ids is not None else "transaction"
    if write_id > ids.high_watermark:
        return (f"{what} {write_id} is above the snapshot's high watermark "
                f"{ids.high_watermark}: it is not committed yet")
    if write_id in ids.aborted_ids:
        return f"{what} {write_id} is aborted in the snapshot: Hive never reads its rows"
    if write_id in ids.exceptions:
        return f"{what} {write_id} is open in the snapshot: it is not committed"
    return None


def write_id_problem(write_id: int, directory_names: Iterable[str],
                     snapshot: Snapshot | None = None) -> str | None:
    """Every reason, first found, why a new delta of ``write_id`` must not be written next to
    ``directory_names`` (None: it may)."""
    problem = write_id_range_problem(write_id) or snapshot_problem(write_id, snapshot)
    if problem:
        return problem
    cover = covering(write_id, directory_names)
    if cover is not None:
        return (f"write id {write_id} is covered by {cover}: a delta under it would never be "
                "read, and Hive's cleaner would delete it")
    return None


def table_root(path: str) -> str:
    """The table directory of a table or partition path: the path less its trailing
    ``key=value`` components (``/w/t/ds=1/h=2`` -> ``/w/t``). Every writer locks this one
    directory, so that a run on a partition and one on its table exclude each other."""
    path = path.rstrip("/") or path
    while True:
        head, last = posixpath.split(path)
        if not head or head == path or "=" not in last or last.startswith("="):
            return path
        path = head


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies below it (both normalized, as strings)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def single_write(name: str) -> tuple[bool, int, bool] | None:
    """(is it a base, its write id, has it a statement id) for the directory of one write (a
    ``delta_W_W[_S]``, ``delete_delta_W_W[_S]`` or ``base_W``); None for any other name (a
    compacted range too)."""
    try:
        parsed = parse_dir_name(name, "4")
    except ValueError:
        return None
    if isinstance(parsed, Base):
        return True, parsed.write_id, False
    if isinstance(parsed, Delta) and parsed.min_write_id == parsed.max_write_id:
        return False, parsed.min_write_id, parsed.statement_id != NO_STATEMENT
    return None


def absorbing(placed: str, directory_names: Iterable[str]) -> str | None:
    """The directory, of ``directory_names`` (one partition's top-level directories now, less
    the commit's own), into which a compaction took ``placed``, the directory of one write
    (``single_write``): a base at or above its write id, or, for a delta, a compacted delta or
    delete delta whose range of write ids holds it (another delta of the same one write id is
    a statement beside it, not a compaction of it, unless it has no statement id and this one
    has: a compaction of the write's statements). The write's rows or events are then in
    that directory too (a writer never takes a write id a base or compacted delta already
    covers, so it came after), and removing ``placed`` would not take the write back. None: no
    such directory, or ``placed`` is no directory of one write (a compaction's own output)."""
    mine = single_write(placed)
    if mine is None:
        return None
    is_base, write_id, statement = mine
    others = [n for n in directory_names if n != placed]
    return _cover(write_id, others, deltas=not is_base, delete_deltas=not is_base,
                  merged=statement)


def later_delete_deltas(write_id: int, directory_names: Iterable[str]) -> list[str]:
    """The delete deltas, of ``directory_names`` (one partition's top-level directories), whose
    events may name rows write ``write_id`` wrote: those of a later write id."""
    return [name for name, parsed in _acid_dirs(directory_names)
            if isinstance(parsed, Delta) and parsed.delete and parsed.max_write_id > write_id]
