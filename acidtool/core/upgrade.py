"""Would Hive's pre-upgrade tool (Hive 2 to 3) ask for a major compaction of a partition?

Pure: it judges a partition's getAcidState of Hive 2.3 (``select``, at the compactor's
snapshot) and the ``hive.acid.stats`` of its delta files, as ``PreUpgradeTool.needsCompaction``
(hive/upgrade-acid/pre-upgrade) does:

* no direct child named ``delta_*`` or ``delete_delta_*`` (a base, original files, nothing):
  no compaction, whatever getAcidState selects;
* else each current delta of getAcidState in its order, and in it each file whose name
  starts with ``bucket_``, in name order: a ``*_flush_length`` side file ends that delta
  (a streaming delta holds no update or delete); a file whose ``hive.acid.stats`` counts an
  update or a delete makes the partition need a major compaction; a file without
  ``hive.acid.stats`` (or unreadable) makes the tool fail there;
* its volume estimate is every byte under the partition plus the original files' bytes once
  more (the tool adds both).

The tool reads nothing more: tables with only inserts in their deltas need nothing, however
many deltas they have.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, NamedTuple

from .select import AcidState

STATS_KEY = "hive.acid.stats"


class Stats(NamedTuple):
    inserts: int
    updates: int
    deletes: int


# What reading a file's footer gave: its stats, None (no hive.acid.stats), or why it failed.
FileStats = Stats | None | str


@dataclass(frozen=True)
class Readiness:
    """One partition, as the pre-upgrade tool judges it."""

    needs_major: bool
    reason: str
    layout: str  # "split-update" (ACID v2), "v1", "originals", "empty"
    blocked: str | None = None  # where and why the tool itself fails on this partition
    evidence: str | None = None  # the file whose stats decided it
    bytes: int = 0  # every file under the partition
    estimate_bytes: int = 0  # the tool's figure for the script: bytes + original files

    def as_dict(self) -> dict:
        return {"needs_major": self.needs_major, "reason": self.reason, "layout": self.layout,
                "blocked": self.blocked, "evidence": self.evidence, "bytes": self.bytes,
                "estimate_bytes": self.estimate_bytes}


def parse_stats(raw: bytes) -> Stats | str:
    """``inserts,updates,deletes``; a string says why it is not that."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return f"{STATS_KEY} is not UTF-8"
    fields = text.split(",")
    try:
        return Stats(int(fields[0]), int(fields[1]), int(fields[2]))
    except (ValueError, IndexError):
        return f"{STATS_KEY} {text!r} is not 'inserts,updates,deletes'"


def names_deltas(names: list[str]) -> bool:
    """The tool's first look: any direct child named delta_* or delete_delta_*."""
    return any(n.startswith(("delta_", "delete_delta_")) for n in names)


def files_to_read(state: AcidState) -> list[tuple[str, list[str]]]:
    """(delta, its ``bucket_*`` files in name order, up to its first ``_flush_length``) for
    each current delta, in getAcidState's order: the files whose stats the tool reads."""
    out = []
    for entry in state.delta_entries:
        names = sorted(f.path for f in entry.files if not f.is_dir and "/" not in f.path
                       and f.path.startswith("bucket_"))
        chosen: list[str] = []
        for name in names:
            if name.endswith("_flush_length"):
                break
            chosen.append(name)
        out.append((entry.name, chosen))
    return out


def layout_of(state: AcidState) -> str:
    dirs = [e for e in state.entries if e.kind in ("base", "delta", "delete_delta")]
    if not dirs:
        return "originals" if state.original_files else "empty"
    if any(e.kind == "delete_delta" or any(f.path == "_orc_acid_version" for f in e.files)
           for e in dirs):
        return "split-update"
    return "v1"


def readiness(state: AcidState, child_names: list[str], stats_of: Callable[[str], FileStats],
              total_bytes: int, original_bytes: int) -> Readiness:
    """The tool's decision for a partition. ``stats_of(rel)``: what the footer of the file
    ``delta/file`` gives; asked for the files ``files_to_read`` names, in order, up to the
    first that decides (the tool reads no further)."""
    layout = layout_of(state)
    made = partial(Readiness, layout=layout, bytes=total_bytes)
    if not names_deltas(child_names):
        why = "no delta: a base and original files hold only inserts"
        return made(False, why if layout != "empty" else "nothing in it")
    if state.error is not None:
        return made(False, "Hive 2.3's getAcidState fails here", blocked=state.error.message)
    if not state.deltas:
        return made(False, f"no current delta ({state.base} covers them)" if state.base
                    else "no current delta")
    for delta, files in files_to_read(state):
        for name in files:
            rel = f"{delta}/{name}"
            got = stats_of(rel)
            if got is None or isinstance(got, str):
                why = got or f"no {STATS_KEY} in its footer"
                return made(False, "the pre-upgrade tool fails reading a delta file",
                            blocked=f"{rel}: {why}", evidence=rel)
            if got.updates or got.deletes:
                why = (f"{_count(got.updates, 'update')} and {_count(got.deletes, 'delete')}"
                       f" in {rel} (its {STATS_KEY})")
                if layout == "v1":
                    why += ": Hive 3 misreads Hive 2's update events"
                return made(True, why, evidence=rel,
                            estimate_bytes=total_bytes + original_bytes)
    return made(False, "only inserts in its current deltas")


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"
