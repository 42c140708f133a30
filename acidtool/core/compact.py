"""What a compaction of one partition reads and writes, as Hive's compactor decides it.

Pure: it takes the partition's getAcidState at the compactor's snapshot (``compactor_snapshot``:
nothing from the first open write id on, aborted ids below it excluded) and says which
directories a major or minor compaction reads, the directories it writes and why; or why there
is nothing to do. What Hive's compactors write (hive-exec 2.3.10's and 3.1.3's MR compactor, run
in the tests):

* **major**: ``base_N``, N the highest write id of the base and deltas read (0 when only
  original files are read); the valid rows with their ROW__IDs, deleted rows dropped; Hive 3 and
  4 add ``_metadata_acid`` (``compacted``) and ``_orc_acid_version``; compressed as the table's
  files (ZLIB);
* **minor**: ``delta_M_N`` with every valid event of the deltas read and, when delete deltas
  were read, ``delete_delta_M_N`` with their delete events (a Hive 2.3 legacy table keeps its
  delete events in the one delta); M..N the deltas' range; uncompressed, as the MR compactor
  writes them;
* nothing, when fewer than two things would be merged (Hive: "not compacting; current base is
  ... and there are N deltas and M originals").

With a visibility transaction T (Hive 4, from a metastore) the directories are named ``_vT``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .names import Base, Delta
from .select import AcidState
from .snapshot import Snapshot
from .versions import HiveVersion


@dataclass(frozen=True)
class Written:
    """A directory a compaction writes."""

    name: str
    kind: str  # "base", "delta" or "delete_delta"
    compression: str  # "zlib", "snappy", "lz4", "zstd" or "none"


@dataclass(frozen=True)
class Job:
    """One partition's compaction: what it reads and writes, or (``kind`` None) why not."""

    kind: str | None  # "major", "minor" or None
    reason: str
    reads: tuple[str, ...] = ()  # directories and original files, as getAcidState lists them
    writes: tuple[Written, ...] = ()
    min_write_id: int = 0
    max_write_id: int = 0
    stops_below: int | None = None  # the first open write id the compaction stops below
    blocked: bool = False  # Hive fails on the partition: nothing can be compacted

    @property
    def inputs(self) -> frozenset[str]:
        """The partition's entries it reads: an original file below a directory (a Tez
        ``HIVE_UNION_SUBDIR_N``'s) is read with its directory."""
        return frozenset(r.split("/", 1)[0] for r in self.reads)

    def as_dict(self) -> dict:
        return {"compaction": self.kind, "reason": self.reason, "reads": list(self.reads),
                "writes": [w.name for w in self.writes],
                "codec": self.writes[0].compression if self.writes else None,
                "min_write_id": self.min_write_id if self.kind else None,
                "max_write_id": self.max_write_id if self.kind else None,
                "stops_below_open_write_id": self.stops_below, "blocked": self.blocked}


def stops_below(reader: Snapshot, compactor: Snapshot) -> int | None:
    """The write id (Hive 2: transaction) the compactor's snapshot stops below, when it sees
    less than the reader's: the first open one."""
    def ids(s: Snapshot):
        return s.write_ids if s.write_ids is not None else s.txns
    if ids(compactor).high_watermark < ids(reader).high_watermark:
        return ids(compactor).high_watermark + 1
    return None


def dir_name(kind: str, low: int, high: int, visibility: int | None = None) -> str:
    """``base_0000005``, ``delta_0000001_0000005``, ``delete_delta_..``; ``_vT`` with a
    visibility transaction."""
    name = f"base_{high:07d}" if kind == "base" else f"{kind}_{low:07d}_{high:07d}"
    return name + (f"_v{visibility:07d}" if visibility else "")


def plan_job(state: AcidState, kind: str | None, version: HiveVersion, *, reason: str = "",
             insert_only: bool = False, visibility: int | None = None,
             stops_below: int | None = None, codec: str = "zlib") -> Job:
    """The compaction of one partition whose selection at the compactor's snapshot is
    ``state``. ``kind``: "major" or "minor" (asked for, or the Initiator's decision, whose
    ``reason`` says why), None for nothing to do. ``codec``: the ORC compression of every
    file written (the table's, as Hive's compactor writes: ``compaction_codec``)."""
    if state.error is not None:
        return Job(None, f"Hive fails on this partition ({state.error.message}): nothing can "
                         "be compacted until that is mended (acidtool validate, repair)",
                   blocked=True)
    if kind is None:
        return Job(None, reason or "the Initiator would not compact it",
                   stops_below=stops_below)
    deltas = [state.entry(d) for d in state.deltas]
    parsed = [d.parsed for d in deltas]
    assert all(isinstance(p, Delta) for p in parsed), "current deltas are parsed deltas"
    ranges = [(p.min_write_id, p.max_write_id) for p in parsed if isinstance(p, Delta)]
    if kind == "major":
        base = state.base_entry
        count = len(deltas) + (1 if base is not None else 0) + len(state.original_files)
        if count <= 1:
            what = "only " + (base.name if base is not None else deltas[0].name if deltas
                              else state.original_files[0] if state.original_files
                              else "nothing")
            return Job(None, f"nothing to merge: {what} (Hive's compactor skips a partition "
                             "with fewer than two bases, deltas and original files)",
                       stops_below=stops_below)
        high = max([hi for _, hi in ranges] + ([base.parsed.write_id] if base is not None
                                               and isinstance(base.parsed, Base) else []),
                   default=0)
        reads = ((base.name,) if base is not None else tuple(state.original_files)) + \
            tuple(state.deltas)
        base_out = (Written(dir_name("base", 0, high, visibility), "base", codec),)
        return Job("major", reason or "asked for (--major)", reads, base_out,
                   min(lo for lo, _ in ranges) if ranges else 0, high, stops_below)
    if len(deltas) <= 1:
        return Job(None, "nothing to merge: " + (f"only {deltas[0].name}" if deltas else
                                                 "no delta above the base")
                   + " (a minor compaction merges two or more deltas)", stops_below=stops_below)
    low, high = min(lo for lo, _ in ranges), max(hi for _, hi in ranges)
    compression = codec
    has_deletes = any(d.kind == "delete_delta" for d in deltas)
    writes = [Written(dir_name("delta", low, high, visibility), "delta", compression)]
    if has_deletes:
        writes.append(Written(dir_name("delete_delta", low, high, visibility), "delete_delta",
                              compression))
    if {w.name for w in writes} >= set(state.deltas):
        return Job(None, f"already compacted: {', '.join(state.deltas)} are what a minor "
                         "compaction would write", stops_below=stops_below)
    return Job("minor", reason or "asked for (--minor)", tuple(state.deltas), tuple(writes),
               low, high, stops_below)


CODECS = ("zlib", "snappy", "lz4", "zstd", "none")  # what a compaction writes


def compaction_codec(given: str | None, table_property: str | None, files: list[str],
                     version: HiveVersion) -> tuple[str, str]:
    """The ORC codec a compaction writes, and where it comes from: ``given`` (--codec), else
    the table's ``orc.compress`` (Hive 4's compactor copies the table's ``orc.*`` properties),
    else the codec most of the files it reads have, else ZLIB (Hive's default). Hive 2.3 and
    3.1 read no ZSTD: a table property or files saying ZSTD there give ZLIB (``--codec zstd``
    is refused before this). A codec pyarrow cannot write (LZO) gives ZLIB."""
    if given:
        return given, "--codec"
    prop = (table_property or "").strip().lower()
    for codec, why in ((prop, "the table's orc.compress"),
                       (_most_common(files), "the files read")):
        codec = "none" if codec in ("none", "uncompressed") else codec
        if codec in CODECS and (codec != "zstd" or version is HiveVersion.V4):
            return codec, why
    return "zlib", "Hive's default"


def _most_common(codecs: list[str]) -> str:
    counts: dict[str, int] = {}
    for c in codecs:
        counts[c.lower()] = counts.get(c.lower(), 0) + 1
    return max(counts, key=lambda c: counts[c]) if counts else ""

