"""A compaction caught between its renames, seen in a partition's selection (pure).

A minor compaction of write ids M..N places two directories, ``delta_M_N`` (the inserts) and
``delete_delta_M_N`` (the deletes). getAcidState takes a directory of a wider range as covering
every narrower one inside it, of either kind: once one of the two is in place and the other is
not (the compactor is between its two renames, or was killed there), the one in place hides the
other kind's directories of the range. ``delete_delta_M_N`` alone hides the inserts (readers see
the rows gone); ``delta_M_N`` alone hides the delete deltas (deleted rows come back). Neither
is a state Hive's compactor leaves: it writes both kinds whenever its range holds both."""

from __future__ import annotations

from dataclasses import dataclass

from .names import Delta
from .select import OBSOLETE, SELECTED, AcidState


@dataclass(frozen=True)
class HalfDone:
    placed: str  # the directory in place (selected)
    missing: str  # its partner, of the other kind and the same range, not there
    hidden: tuple[str, ...]  # the other kind's directories it hides

    def message(self) -> str:
        lost = ("their inserted rows are hidden: readers see them deleted"
                if self.placed.startswith("delete_") else
                "their deletes are hidden: readers see the deleted rows again")
        return (f"{self.placed} is half of a compaction: {self.missing} is not there, and it "
                f"hides {', '.join(self.hidden)} ({lost}); a compaction is running here or "
                "was interrupted between its two renames")


def half_done(state: AcidState) -> list[HalfDone]:
    """Every selected compacted directory whose partner of the other kind is missing while it
    hides directories of that kind."""
    selected: dict[tuple[bool, int, int, int], str] = {}
    for e in state.entries:
        if e.status == SELECTED and isinstance(e.parsed, Delta):
            d = e.parsed
            selected[(d.delete, d.min_write_id, d.max_write_id, d.statement_id)] = e.name
    out = []
    for (delete, lo, hi, stmt), name in sorted(selected.items(), key=lambda kv: kv[1]):
        if lo == hi or (not delete, lo, hi, stmt) in selected:
            continue
        hidden = tuple(e.name for e in state.entries
                       if e.status == OBSOLETE and isinstance(e.parsed, Delta)
                       and e.parsed.delete != delete
                       and lo <= e.parsed.min_write_id and e.parsed.max_write_id <= hi)
        if hidden:
            missing = name.removeprefix("delete_") if delete else "delete_" + name
            out.append(HalfDone(name, missing, hidden))
    return out
