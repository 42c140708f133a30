"""Hive's ``AcidUtils.getAcidState`` as a pure function of a listing and a snapshot (spec §7).

``select(listing, write_ids, txns, hive_version)`` returns an ``AcidState``: the chosen base, the
current deltas in Hive's order (insert and delete deltas interleaved), what is obsolete or aborted,
the original files, and where Hive would fail, the error (as a value). Every immediate child of the
partition also comes back as an ``Entry`` with a status and the reason for it.

This follows Hive's "direct" listing (what it does on HDFS): immediate children are classified,
and only directories by prefix. Hive 4's recursive "snapshot" listing differs in corner cases
(empty directories, nested files in obsolete lists), see spec §7.8.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from .errors import (
    AcidStateError,
    InvalidMetadataError,
    MissingTxnListError,
    NotEnoughHistoryError,
)
from .javanum import LONG_MIN, java_string_key
from .listing import UNKNOWN_SIZE, Child, Listing, PathInfo
from .names import (
    HIDDEN_PREFIXES,
    METADATA_FILE,
    NO_STATEMENT,
    Base,
    Delta,
    FileName,
    is_hidden,
    parse_dir_name,
)
from .snapshot import IdList, RangeResponse, ValidTxnList, ValidWriteIdList
from .versions import HiveVersion, normalize_hive_version

SELECTED = "selected"
OBSOLETE = "obsolete"
ABORTED = "aborted"
IGNORED = "ignored"
ORIGINAL = "original"
FOREIGN = "foreign"
INVALID = "invalid"
STATUSES = (SELECTED, OBSOLETE, ABORTED, IGNORED, ORIGINAL, FOREIGN, INVALID)


class Entry(NamedTuple):
    """One immediate child of the partition directory and what Hive does with it.

    kind: base, delta, delete_delta, original_file, original_dir, hidden, invalid.
    (A NamedTuple rather than a dataclass: one is made per child.)
    """

    name: str
    kind: str
    status: str
    reason: str
    is_dir: bool
    size: int
    files: tuple[PathInfo, ...] = ()
    parsed: Base | Delta | None = None
    foreign: bool = False

    @property
    def file_count(self) -> int:
        return len(self.files) if self.is_dir else 1


@dataclass(frozen=True)
class AcidState:
    hive_version: HiveVersion
    base: str | None = None
    deltas: tuple[str, ...] = ()
    obsolete: tuple[str, ...] = ()
    aborted: tuple[str, ...] = ()
    original_files: tuple[str, ...] = ()
    uncompacted_aborts: bool = False
    error: AcidStateError | None = None
    entries: tuple[Entry, ...] = ()

    def entry(self, name: str) -> Entry:
        for e in self.entries:
            if e.name == name:
                return e
        raise KeyError(name)

    @property
    def base_entry(self) -> Entry | None:
        return self.entry(self.base) if self.base else None

    @property
    def delta_entries(self) -> list[Entry]:
        return [self.entry(n) for n in self.deltas]

    def data_totals(self) -> tuple[int, int]:
        """(files, bytes) of the entries that are not hidden: a hidden entry (a name starting
        with '_' or '.', such as a staging directory a killed job left) is never data."""
        files = size = 0
        for e in self.entries:
            if not e.name.startswith(HIDDEN_PREFIXES):
                files += e.file_count
                size += e.size
        return files, size

    @property
    def read_entries(self) -> list[Entry]:
        """The base (if any) and the deltas the selection reads, in that order."""
        base = self.base_entry
        return ([base] if base is not None else []) + self.delta_entries


# ---------------------------------------------------------------------------------------------
# _metadata_acid


def read_compacted_marker(content: bytes, hive_version: str | HiveVersion, path: str) -> bool:
    """AcidMetaDataFile: does the marker say the base was made by the compactor?

    Hive 3 accepts only dataFormat "compacted"; Hive 4 maps "compacted"/"truncated" (any case) and
    rejects everything else. Both require thisFileVersion "0"."""
    try:
        doc = json.loads(content.decode("utf-8"))
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidMetadataError(f"{path}: unreadable {METADATA_FILE}: {exc}",
                                   hive_exception="java.io.IOException", path=path) from None
    version = doc.get("thisFileVersion")
    if version is None or str(version).lower() != "0":
        raise InvalidMetadataError(
            f"{path}: Unexpected Meta Data version: {version}",
            hive_exception="java.lang.IllegalStateException", path=path)
    data_format = doc.get("dataFormat")
    if HiveVersion.of(hive_version) is HiveVersion.V3:  # 3.1 compares the lower-case string exactly
        if data_format == "compacted":
            return True
    else:
        upper = str(data_format).upper()  # a missing key is the string "null" in Hive 4
        if upper == "COMPACTED":
            return True
        if upper == "TRUNCATED":
            return False
    raise InvalidMetadataError(
        f"{path}: {METADATA_FILE} dataFormat {data_format!r} is not accepted by Hive {hive_version}",
        hive_exception="java.lang.IllegalArgumentException", path=path)


# ---------------------------------------------------------------------------------------------


@dataclass
class _Work:
    """Mutable state of one selection run."""

    version: HiveVersion
    listing: Listing
    snapshot: IdList
    txns: ValidTxnList | None
    ignore_empty_files: bool
    tracks_aborted: bool
    status: dict[str, tuple[str, str]] = field(default_factory=dict)
    obsolete: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)
    uncompacted_aborts: bool = False
    visible: dict[str, RangeResponse] = field(default_factory=dict)  # working deltas

    def mark(self, name: str, status: str, reason: str) -> None:
        self.status[name] = (status, reason)
        if status == OBSOLETE:
            self.obsolete.append(name)
        elif status == ABORTED:
            self.aborted.append(name)

    def compacted(self, base: Base) -> bool:
        path = f"{base.name}/{METADATA_FILE}"
        content = self.listing.markers.get(path)
        if content is None:
            if any(p.path == path for p in self.listing.paths):
                raise ValueError(f"marker {path} is listed but its contents were not read")
            return False
        return read_compacted_marker(content, self.version, path)

    def full_path(self, name: str) -> str:
        return f"{self.listing.root.rstrip('/')}/{name}" if self.listing.root else name


def _default_snapshot(version: HiveVersion, write_ids: ValidWriteIdList | None,
                      txns: ValidTxnList | None) -> IdList:
    if not version.has_write_ids:
        # Hive 2.3: directory numbers are transaction ids, and the txn list is the snapshot.
        if isinstance(txns, ValidTxnList):
            return txns
        if txns is None and write_ids is None:
            return ValidTxnList(legacy=True)
        raise TypeError("Hive 2 selection takes its snapshot from txns (a ValidTxnList)")
    return write_ids if write_ids is not None else ValidWriteIdList.everything()


def select(listing: Listing, write_ids: ValidWriteIdList | None = None,
           txns: ValidTxnList | None = None, hive_version: str | HiveVersion = "4", *,
           ignore_empty_files: bool = False, insert_only: bool = False) -> AcidState:
    """getAcidState. ``write_ids`` None means everything committed (``new ValidReaderWriteIdList()``).
    For Hive 4, ``txns`` is the ValidTxnList used for ``_v`` visibility; Hive fails without one
    once a base or delta exists. For Hive 2, ``txns`` is the snapshot itself. An
    ``insert_only`` table selects alike; Hive 3.1 then also lists its aborted deltas."""
    version = normalize_hive_version(hive_version)
    work = _Work(version, listing, _default_snapshot(version, write_ids, txns), txns,
                 ignore_empty_files, version.tracks_aborted(insert_only))
    children = listing.children()
    try:
        return _select(work, children)
    except AcidStateError as error:
        return AcidState(version, error=error, entries=tuple(_entries_on_error(work, children, error)))


def with_sizes(state: AcidState, sizes: Mapping[str, int]) -> AcidState:
    """What ``select`` gave for a listing with files of UNKNOWN_SIZE, with their sizes taken
    from ``sizes`` (paths relative to the partition; a file missing there has 0 bytes): what
    listing the sizes and selecting would have given. Those files are directly inside ACID
    directories (``listing.size_unseen``), whose file sizes the selection never looks at, so
    it need not run again."""
    entries = []
    new, get = tuple.__new__, sizes.get
    for e in state.entries:
        if e.files:
            prefix = e.name + "/"
            files = tuple([f if f[1] != UNKNOWN_SIZE
                           else new(PathInfo, (f[0], get(prefix + f[0], 0), False))
                           for f in e.files])
            e = new(Entry, (e.name, e.kind, e.status, e.reason, e.is_dir,
                            sum([f[1] for f in files]), files, e.parsed, e.foreign))
        entries.append(e)
    return dataclasses.replace(state, entries=tuple(entries))


def _select(work: _Work, children: list[Child]) -> AcidState:
    version = work.version
    parsed: dict[str, Base | Delta] = {}
    originals: list[str] = []  # top-level original files
    original_dirs: list[Child] = []
    working: list[Delta] = []
    best: Base | None = None
    oldest: Base | None = None
    oldest_compacted: bool | None = None  # Hive 4 knows it when tracking

    v4 = version.visibility_suffix
    skips_empty = version.skips_dirs_without_files
    for child in children:  # the hot loop: one pass per child, tens of thousands in big tables
        name, is_dir, size, _ = child
        if name.startswith(HIDDEN_PREFIXES):  # is_hidden, inline in the hot loop
            work.mark(name, IGNORED, "hidden name (starts with '_' or '.'): never data")
            continue
        if not is_dir:
            if work.ignore_empty_files and size == 0:
                work.mark(name, IGNORED, "empty file (skipped by the ORC reader)")
            else:
                originals.append(name)
            continue
        if skips_empty and not _lists_a_file(child):
            work.mark(name, IGNORED, "holds no file Hive 4 lists (empty, or only hidden "
                                     "files): its getAcidState never sees the directory")
            try:  # (shown as what its name says; Hive never parses it)
                unseen = parse_dir_name(name, version)
            except ValueError:
                unseen = None
            if unseen is not None:
                parsed[name] = unseen
            continue
        acid = parse_dir_name(name, version)
        if acid is None:
            original_dirs.append(child)
            continue
        parsed[name] = acid
        if v4:
            if work.txns is None:
                raise MissingTxnListError(
                    f"No ValidTxnList for {work.full_path('')}: Hive 4 needs hive.txn.valid.txns "
                    "to read ACID directories", hive_exception="java.lang.IllegalArgumentException")
            if acid.visibility_txn_id and not _visible(work, acid):
                continue
        if isinstance(acid, Base):
            best, oldest, oldest_compacted = _visit_base(work, acid, best, oldest, oldest_compacted)
        else:
            _visit_delta(work, acid, working)

    if best is None and oldest is not None:
        if not version.history_error_needs_compacted_base or oldest_compacted:
            raise _not_enough_history(work, oldest)
    return _finish(work, children, parsed, best, originals, original_dirs, working)


def _finish(work: _Work, children: list[Child], parsed: dict[str, Base | Delta],
            best: Base | None, originals: list[str], original_dirs: list[Child],
            working: list[Delta]) -> AcidState:
    """Steps 2 and 3 once the children are visited: the originals (read only without a base),
    the deltas in order, and every child's status."""
    version = work.version
    # Step 2: originals are only read when no base was chosen.
    original_files: list[str] = []
    if best is not None:
        for name in originals + [c.name for c in original_dirs]:
            work.mark(name, OBSOLETE, f"original data superseded by {best.name}")
    else:
        original_files.extend(originals)
        for d in original_dirs:
            original_files.extend(_expand_original_dir(work, d))
        if version.sorts_originals:
            original_files.sort(key=java_string_key)
        for name in originals:
            foreign = FileName.parse(name).kind != "original"
            work.mark(name, FOREIGN if foreign else ORIGINAL,
                      "not a Hive file name, yet read as original (pre-ACID) data"
                      if foreign else "original (pre-ACID) file, read with synthetic ROW__IDs")
        for d in original_dirs:
            work.mark(d.name, ORIGINAL, "non-ACID directory: its files are read as original data")

    deltas = _walk(work, best, working)

    if best is not None:
        work.mark(best.name, SELECTED, "chosen base")
    status = work.status
    for name, acid in parsed.items():
        if name not in status:  # the reason is only built for the few left unmarked
            status[name] = (IGNORED, _ignored_reason(work, acid))

    return AcidState(
        version,
        base=best.name if best else None,
        deltas=tuple([d.name for d in deltas]),
        obsolete=tuple(work.obsolete),
        aborted=tuple(work.aborted),
        original_files=tuple(original_files),
        uncompacted_aborts=work.uncompacted_aborts,
        entries=tuple(_entries(work, children, parsed)),
    )


HIVE4_LISTED_MARKERS = ("_metadata_acid", "_orc_acid_version")


def _lists_a_file(child: Child) -> bool:
    """Whether Hive 4's recursive listing finds a file below this directory (a base, delta or
    any other directory: one it finds nothing in is not there for it): one whose name
    is not hidden (``_`` or ``.``; ``_metadata_acid`` and ``_orc_acid_version`` are listed)
    in no hidden subdirectory (AcidUtils.acidHiddenFileFilter, acidTempDirFilter)."""
    for f in child.files:
        *dirs, name = f.path.split("/")
        if any(d.startswith(HIDDEN_PREFIXES) for d in dirs):
            continue
        if not name.startswith(HIDDEN_PREFIXES) or name.startswith(HIVE4_LISTED_MARKERS):
            return True
    return False


def _visible(work: _Work, acid: Base | Delta) -> bool:
    """Hive 4: a ``_vT`` directory exists only for readers that see compactor txn T committed."""
    t = acid.visibility_txn_id
    if t == 0:
        return True
    assert work.txns is not None, "Hive 4 selects with a transaction list (select() makes one)"
    if work.txns.is_valid(t):
        return True
    if work.txns.is_aborted(t):
        work.mark(acid.name, ABORTED, f"written by compactor transaction {t}, which aborted")
    else:
        work.mark(acid.name, IGNORED,
                  f"invisible: compactor transaction {t} is not committed in this snapshot")
    return False


def _is_valid_base(work: _Work, base: Base, compacted: bool) -> bool:
    if base.write_id == LONG_MIN:
        return True  # first major compaction after a non-ACID -> ACID conversion
    min_open = work.snapshot.min_open_id
    if work.version.base_below_min_open_is_valid and min_open is not None \
            and base.write_id <= min_open:
        return True
    if compacted:
        return work.snapshot.is_valid_base(base.write_id)
    return work.snapshot.is_valid(base.write_id)


def _visit_base(work, base, best, oldest, oldest_compacted):
    version, snap = work.version, work.snapshot
    if version.visibility_suffix:
        compacted = base.visibility_txn_id > 0 or work.compacted(base)
        if oldest is None or base.write_id < oldest.write_id:
            oldest, oldest_compacted = base, compacted
        if snap.is_aborted(base.write_id) and not compacted:
            work.mark(base.name, ABORTED, f"INSERT OVERWRITE of write id {base.write_id} aborted")
            return best, oldest, oldest_compacted
        candidate = (best is None or best.write_id < base.write_id
                     or (best.write_id == base.write_id and compacted
                         and work.txns.is_valid(base.visibility_txn_id)))
        if not candidate:
            work.mark(base.name, OBSOLETE, f"older than the chosen base {best.name}")
            return best, oldest, oldest_compacted
        if _is_valid_base(work, base, compacted):
            if best is not None:
                work.mark(best.name, OBSOLETE, f"superseded by {base.name}")
            return base, oldest, oldest_compacted
        return best, oldest, oldest_compacted

    # Hive 2.3 and 3: every base is a candidate for "oldest"; 2.3 treats every base as compacted,
    # 3 reads the marker only when the base might be chosen.
    if oldest is None or base.write_id < oldest.write_id:
        oldest = base
    if best is None or best.write_id < base.write_id:
        compacted = work.compacted(base) if version.reads_base_markers else True
        if _is_valid_base(work, base, compacted):
            if best is not None:
                work.mark(best.name, OBSOLETE, f"superseded by {base.name}")
            return base, oldest, oldest_compacted
        return best, oldest, oldest_compacted
    work.mark(base.name, OBSOLETE, f"not newer than the chosen base {best.name}")
    return best, oldest, oldest_compacted


def _visit_delta(work: _Work, delta: Delta, working: list[Delta]) -> None:
    snap = work.snapshot
    lo, hi = delta.min_write_id, delta.max_write_id
    if work.tracks_aborted:
        aborted = snap.range_aborted(lo, hi)
        if aborted is RangeResponse.ALL:
            work.mark(delta.name, ABORTED, f"every write id in {lo}..{hi} aborted")
            return
        if aborted is RangeResponse.SOME:
            work.uncompacted_aborts = True
    response = snap.range_valid(lo, hi)
    if response is not RangeResponse.NONE:
        working.append(delta)
        work.visible[delta.name] = response


def _walk(work: _Work, best: Base | None, working: list[Delta]) -> list[Delta]:
    """Step 3: choose deltas in comparator order with a write-id cursor (spec §7.3)."""
    # Deltas here were parsed from listed names, so ``raw`` is the name.
    snap, status, visible = work.snapshot, work.status, work.visible
    # Delta.sort_key ends with the name; ``working`` is already in Java name order (children
    # are), so a stable sort on the rest gives the same order without a key per name.
    working.sort(key=_order_before_name)
    current = best.write_id if best is not None else 0
    last_stmt = NO_STATEMENT
    prev: Delta | None = None
    chosen: list[Delta] = []
    for d in working:
        if d.max_write_id > current:
            if snap.range_valid(current + 1, d.max_write_id) is RangeResponse.NONE:
                continue  # nothing new and visible above the cursor; neither read nor obsolete
            current, last_stmt = d.max_write_id, d.statement_id
        else:
            # Also read: another statement (or the delete delta) of the transaction taken
            # last, or delete_delta_x_y next to delta_x_y (same range and statement).
            read_too = (d.max_write_id == current and last_stmt >= 0) or (
                prev is not None and d.min_write_id == prev.min_write_id
                and d.max_write_id == prev.max_write_id and d.statement_id == prev.statement_id)
            if not read_too:
                cover = prev.name if prev is not None else (best.name if best else "the cursor")
                work.mark(d.name, OBSOLETE, f"covered by {cover}")
                continue
        prev = d
        chosen.append(d)
        status[d.name] = (SELECTED, _delta_reason(visible[d.name], d))
    return chosen


def _order_before_name(d: Delta) -> tuple[int, int, int]:
    return (d.min_write_id, -d.max_write_id, d.statement_id)


def _delta_reason(r: RangeResponse, d: Delta) -> str:
    how = "all visible" if r is RangeResponse.ALL else \
        "partly visible; invisible rows are filtered per row"
    return f"write ids {d.min_write_id}..{d.max_write_id} {how}"


def _ignored_reason(work: _Work, acid: Base | Delta) -> str:
    snap = work.snapshot
    if isinstance(acid, Base):
        return (f"base write id {acid.write_id} is not valid in this snapshot "
                f"(high watermark {snap.high_watermark})")
    if acid.min_write_id > snap.high_watermark:
        return f"above the snapshot's high watermark {snap.high_watermark}"
    return "no write id in its range is visible in this snapshot"


def _expand_original_dir(work: _Work, child: Child) -> list[str]:
    """Files below a non-ACID directory, hidden names skipped at every level. Zero-length files
    are skipped in subdirectories only from Hive 3 on."""
    out = []
    for f in child.files:
        if any(is_hidden(part) for part in f.path.split("/")):
            continue
        if work.ignore_empty_files and f.size == 0 and work.version.skips_empty_nested_originals:
            continue
        out.append(f"{child.name}/{f.path}")
    return out


def _not_enough_history(work: _Work, oldest: Base) -> NotEnoughHistoryError:
    snap = work.snapshot
    first = snap.first_exception
    where = work.full_path(oldest.name)
    if work.version.visibility_suffix:
        where = (f"Path: {where}; writeId: {oldest.write_id}; "
                 f"visibilityTxnId: {oldest.visibility_txn_id}")
    return NotEnoughHistoryError(
        f"Not enough history available for ({snap.high_watermark},"
        f"{first if first is not None else 'x'}).  Oldest available base: {where}",
        hive_exception="java.io.IOException", path=oldest.name)


def _kind(child: Child, acid: Base | Delta | None) -> str:
    if is_hidden(child.name):
        return "hidden"
    if acid is not None:
        return acid.kind
    return "original_dir" if child.is_dir else "original_file"


def _foreign_file(child: Child) -> bool:
    """A visible top-level file whose name is not one Hive writes (it is still read as original
    data when no base is chosen)."""
    return (not child.is_dir and not is_hidden(child.name)
            and FileName.parse(child.name).kind != "original")


def _entries(work: _Work, children: list[Child], parsed: dict) -> list[Entry]:
    # One Entry per child, built with tuple.__new__ (the NamedTuple constructor is Python code);
    # an ACID directory is never hidden nor a foreign file, so it skips both checks.
    new, get_status, unmarked = tuple.__new__, work.status.get, (IGNORED, "")
    out = []
    for child in children:
        name, is_dir, size, files = child
        acid = parsed.get(name)
        status, reason = get_status(name, unmarked)
        if acid is not None:
            kind, foreign = acid.kind, False
        else:
            kind, foreign = _kind(child, None), _foreign_file(child)
        out.append(new(Entry, (name, kind, status, reason, is_dir, size, files, acid, foreign)))
    return out


def _entries_on_error(work: _Work, children: list[Child], error: AcidStateError) -> list[Entry]:
    """When Hive fails, nothing is read: report each child parsed as far as possible."""
    out = []
    for child in children:
        acid, kind = None, None
        if child.is_dir and not is_hidden(child.name):
            try:
                acid = parse_dir_name(child.name, work.version)
            except AcidStateError:
                kind = "invalid"
        if kind == "invalid":
            status, reason = INVALID, error.message
        elif child.name == error.path:
            status, reason = IGNORED, error.message
        else:
            status, reason = IGNORED, f"not read: Hive fails this directory ({error.kind})"
        out.append(Entry(child.name, kind or _kind(child, acid), status, reason, child.is_dir,
                         child.size, child.files, acid, _foreign_file(child)))
    return out
