"""What ``acidtool repair`` plans: typed values, one class per kind of change (the plan's
``actions``), and what it leaves to a person (``Manual``). ``core/repair.py`` plans them;
``commands/repair/apply.py`` turns each into steps. No IO.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class Action:
    """One change, planned from facts. ``target`` and ``dest`` are relative to the PATH
    repaired. Each kind of change is a subclass holding what its apply needs."""

    kind: ClassVar[str] = ""
    id: str
    code: str
    target: str
    reason: str
    dest: str | None = None  # rename: the new name; rewrap: the new delta directory
    result: str = "planned"  # planned, done, failed, skipped
    covers: tuple[str, ...] = ()  # other codes this action also repairs (same target)

    @property
    def params(self) -> dict:
        """What the apply needs besides the target (shown in the plan's JSON)."""
        return {}

    def as_dict(self) -> dict:
        out: dict[str, object] = {"id": self.id, "code": self.code, "kind": self.kind,
                                  "target": self.target, "result": self.result,
                                  "reason": self.reason}
        if self.dest is not None:
            out["dest"] = self.dest
        if self.covers:
            out["covers"] = list(self.covers)
        if self.params:
            out["params"] = self.params
        return out


@dataclass(frozen=True)
class Quarantine(Action):
    """The target renamed into the run's quarantine directory."""

    kind: ClassVar[str] = "quarantine"


@dataclass(frozen=True)
class RenameFile(Action):
    """An ACID file renamed to the bucket file name its rows name (``dest``)."""

    kind: ClassVar[str] = "rename"


@dataclass(frozen=True, kw_only=True)
class Rewrap(Action):
    """A raw ORC file re-wrapped into a new delta (``dest``) by convert's writer, with the
    provenance record of its source; the file quarantined."""

    kind: ClassVar[str] = "rewrap"
    write_id: int
    statement_id: int
    rows: int
    source_sha256: str | None = None  # the fingerprint of the source (convert_sources)

    @property
    def params(self) -> dict:
        return {"write_id": self.write_id, "statement_id": self.statement_id,
                "rows": self.rows}


@dataclass(frozen=True, kw_only=True)
class WriteMarker(Action):
    """``_orc_acid_version`` written; ``replace``: one with other contents is swapped."""

    kind: ClassVar[str] = "write-marker"
    replace: bool = False

    @property
    def params(self) -> dict:
        return {"replace": True} if self.replace else {}


@dataclass(frozen=True, kw_only=True)
class RebuildKeyIndex(Action):
    kind: ClassVar[str] = "rebuild-key-index"
    key_index: str

    @property
    def params(self) -> dict:
        return {"key_index": self.key_index}


@dataclass(frozen=True)
class SortEvents(Action):
    kind: ClassVar[str] = "sort-events"


@dataclass(frozen=True, kw_only=True)
class RecoverStreaming(Action):
    """A streaming file cut at its last flushed length; its side file quarantined."""

    kind: ClassVar[str] = "recover-streaming"
    length: int
    side: str

    @property
    def params(self) -> dict:
        return {"length": self.length, "side": self.side}


@dataclass(frozen=True, kw_only=True)
class Compact(Action):
    """A partition (``target``, "" for an unpartitioned table) compacted by ``acidtool
    compact``'s own writer, planned again under the lock at the compactor's snapshot: the
    directories it reads stay, obsolete; ``writes`` are the directories the plan expects."""

    kind: ClassVar[str] = "compact"
    compaction: str  # "major" or "minor"
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()

    @property
    def params(self) -> dict:
        return {"compaction": self.compaction, "reads": list(self.reads),
                "writes": list(self.writes)}


KINDS = tuple(k.kind for k in (Quarantine, Rewrap, RenameFile, WriteMarker, RebuildKeyIndex,
                               SortEvents, RecoverStreaming, Compact))


@dataclass(frozen=True)
class Manual:
    code: str
    target: str
    reason: str

    def as_dict(self) -> dict:
        return {"code": self.code, "target": self.target, "reason": self.reason}
