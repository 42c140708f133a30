"""Snapshots: which write ids (or, in Hive 2.3, transaction ids) a reader may see.

* ``ValidWriteIdList`` — Hive 3+ ``ValidReaderWriteIdList`` (``db.tbl:hwm:minOpen:open:aborted``) and,
  with ``compactor=True``, ``ValidCompactorWriteIdList``.
* ``ValidTxnList`` — Hive 3+ ``ValidReadTxnList`` (``hwm:minOpen:open:aborted``, ids may be written as
  ``lo-hi`` runs) and, with ``legacy=True``, Hive 2.3's ``hwm:minOpen[:exception]*`` form, where open and
  aborted transactions are not told apart.
* ``parse_txn_write_ids`` — the ``$``-joined ``ValidTxnWriteIdList`` of ``hive.txn.tables.valid.writeids``.

All lists share the arithmetic of spec §6.2, including its quirks (rule 2 of the range test runs
before the high-watermark overhang is counted). Strings are split the Java way: trailing empty fields
are dropped, so ``t:5:9223372036854775807`` and ``t:5:9223372036854775807::`` mean the same.
"""

from __future__ import annotations

import bisect
import enum
from dataclasses import dataclass

from .errors import UsageError
from .javanum import LONG_MAX, JavaNumberFormatError, parse_long
from .versions import DEFAULT_HIVE_VERSION, HiveVersion, normalize_hive_version


class SnapshotParseError(ValueError):
    """A write-id or transaction list string that Hive could not parse either."""


class RangeResponse(str, enum.Enum):
    ALL = "ALL"
    SOME = "SOME"
    NONE = "NONE"


def java_split(text: str, sep: str) -> list[str]:
    """String.split(sep) for a literal one-char separator: trailing empty strings are removed."""
    parts = text.split(sep)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _long(text: str, what: str, whole: str) -> int:
    try:
        return parse_long(text)
    except JavaNumberFormatError as exc:
        if "out of range" in str(exc):
            raise SnapshotParseError(f"{what} {text!r} in {whole!r} is out of range (a Java "
                                     f"long is at most {LONG_MAX})") from None
        raise SnapshotParseError(f"{what} {text!r} in {whole!r} is not a number") from None


def _id_list(text: str, whole: str, ranges: bool) -> list[int]:
    if not text:
        return []
    ids: list[int] = []
    for item in text.split(","):
        dash = item.find("-", 1)
        if ranges and dash > 0:
            lo, hi = _long(item[:dash], "id", whole), _long(item[dash + 1:], "id", whole)
            if hi < lo:
                raise SnapshotParseError(f"range {item!r} in {whole!r} runs backwards")
            ids.extend(range(lo, hi + 1))
        else:
            ids.append(_long(item, "id", whole))
    return ids


def _format_ids(ids: list[int], ranges: bool) -> str:
    """Writes ids back; with ``ranges`` a run of five or more consecutive ids becomes ``lo-hi``
    (storage-api 2.8.1 ValidReadTxnList)."""
    if not ranges:
        return ",".join(map(str, ids))
    out: list[str] = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        if j - i + 1 >= 5:
            out.append(f"{ids[i]}-{ids[j]}")
        else:
            out.extend(map(str, ids[i:j + 1]))
        i = j + 1
    return ",".join(out)


@dataclass(frozen=True)
class _IdList:
    high_watermark: int = LONG_MAX
    min_open: int = LONG_MAX  # stored verbatim, Long.MAX_VALUE when nothing is open
    exceptions: tuple[int, ...] = ()  # sorted: open and aborted ids together
    aborted: tuple[int, ...] = ()  # sorted subset of exceptions
    compactor: bool = False

    # -- queries (spec §6.2) -----------------------------------------------------------------
    def _count_exceptions(self, lo: int, hi: int) -> int:
        return _count_between(self.exceptions, lo, hi)

    def is_valid(self, wid: int) -> bool:
        if wid > self.high_watermark:
            return False
        i = bisect.bisect_left(self.exceptions, wid)
        return not (i < len(self.exceptions) and self.exceptions[i] == wid)

    def is_valid_base(self, wid: int) -> bool:
        """For a compacted base: no open id at or below it, and not above the high watermark."""
        return wid < self.min_open and wid <= self.high_watermark

    def is_aborted(self, wid: int) -> bool:
        if self.compactor:
            # ValidCompactor*List: every exception counts as aborted.
            return self._count_exceptions(wid, wid) > 0
        return _count_between(self.aborted, wid, wid) > 0

    def range_valid(self, lo: int, hi: int) -> RangeResponse:
        if self.compactor:
            return RangeResponse.ALL if hi <= self.high_watermark else RangeResponse.NONE
        if lo > self.high_watermark:
            return RangeResponse.NONE
        if not self.exceptions:
            return RangeResponse.ALL if hi <= self.high_watermark else (
                RangeResponse.NONE if hi - self.high_watermark == hi - lo + 1 else RangeResponse.SOME)
        if self.exceptions[0] > hi:
            return RangeResponse.ALL
        count = max(0, hi - self.high_watermark) + self._count_exceptions(lo, hi)
        if count == 0:
            return RangeResponse.ALL
        if count == hi - lo + 1:
            return RangeResponse.NONE
        return RangeResponse.SOME

    def range_aborted(self, lo: int, hi: int) -> RangeResponse:
        if self.high_watermark < lo or not self.exceptions:
            return RangeResponse.NONE
        count = _count_between(self.exceptions if self.compactor else self.aborted, lo, hi)
        if count == 0:
            return RangeResponse.NONE
        if count == hi - lo + 1:
            return RangeResponse.ALL
        return RangeResponse.SOME

    @property
    def min_open_id(self) -> int | None:
        """getMinOpenWriteId() / getMinOpenTxn(): None when nothing is open."""
        return None if self.min_open == LONG_MAX else self.min_open

    @property
    def open_ids(self) -> list[int]:
        aborted = set(self.aborted)
        return [e for e in self.exceptions if e not in aborted]

    @property
    def aborted_ids(self) -> list[int]:
        return list(self.aborted)

    @property
    def first_exception(self) -> int | None:
        return self.exceptions[0] if self.exceptions else None


IdList = _IdList  # a write-id list or a transaction list: what a selection reads against


def _count_between(ordered: tuple[int, ...], lo: int, hi: int) -> int:
    return bisect.bisect_right(ordered, hi) - bisect.bisect_left(ordered, lo)


def build_ids(hwm: int, min_open: int, open_ids: list[int], aborted_ids: list[int]) -> dict:
    return dict(high_watermark=hwm, min_open=min_open,
                exceptions=tuple(sorted(set(open_ids) | set(aborted_ids))),
                aborted=tuple(sorted(set(aborted_ids))))


@dataclass(frozen=True)
class ValidWriteIdList(_IdList):
    """A table's ValidReaderWriteIdList (or, with compactor=True, ValidCompactorWriteIdList)."""

    table: str | None = None

    @classmethod
    def parse(cls, text: str | None, *, compactor: bool = False) -> ValidWriteIdList:
        if not text:
            return cls(compactor=compactor)
        values = java_split(text, ":")
        if len(values) < 3:
            raise SnapshotParseError(
                f"write-id list {text!r} needs at least 'table:highWatermark:minOpenWriteId' "
                "(e.g. 'db.tbl:10:9223372036854775807::')")
        if len(values) > 5:
            raise SnapshotParseError(
                f"write-id list {text!r} has {len(values)} ':'-fields; the form is "
                "'table:highWatermark:minOpenWriteId:open,ids:aborted,ids'")
        table = None if values[0].lower() == "null" else values[0]
        hwm = _long(values[1], "high watermark", text)
        min_open = _long(values[2], "minOpenWriteId", text)
        open_ids = _id_list(values[3], text, ranges=False) if len(values) > 3 else []
        aborted_ids = _id_list(values[4], text, ranges=False) if len(values) > 4 else []
        return cls(table=table, compactor=compactor, **build_ids(hwm, min_open, open_ids, aborted_ids))

    @classmethod
    def everything(cls) -> ValidWriteIdList:
        """``new ValidReaderWriteIdList()``: high watermark Long.MAX_VALUE, nothing invalid."""
        return cls()

    def __str__(self) -> str:
        return (f"{self.table if self.table is not None else 'null'}:{self.high_watermark}:"
                f"{self.min_open}:{_format_ids(self.open_ids, False)}:"
                f"{_format_ids(self.aborted_ids, False)}")


@dataclass(frozen=True)
class ValidTxnList(_IdList):
    """ValidReadTxnList: Hive 3+ form by default, Hive 2.3 form with legacy=True."""

    legacy: bool = False

    @classmethod
    def parse(cls, text: str | None, *, legacy: bool = False, compactor: bool = False) -> ValidTxnList:
        if not text:
            return cls(legacy=legacy, compactor=compactor)
        values = java_split(text, ":")
        if len(values) < 2:
            raise SnapshotParseError(
                f"transaction list {text!r} needs at least 'highWatermark:minOpenTxn' "
                "(e.g. '100:9223372036854775807::')")
        hwm = _long(values[0], "high watermark", text)
        min_open = _long(values[1], "minOpenTxn", text)
        if legacy:
            # Hive 2.3: every further ':'-field is one exception, open or aborted alike.
            ids = [_long(v, "exception", text) for v in values[2:]]
            return cls(legacy=True, compactor=compactor, **build_ids(hwm, min_open, ids, []))
        if len(values) > 4:
            raise SnapshotParseError(
                f"transaction list {text!r} has {len(values)} ':'-fields; the Hive 3+ form is "
                "'highWatermark:minOpenTxn:open,ids:aborted,ids' (Hive 2.3 lists are read with "
                "--hive-version 2)")
        open_ids = _id_list(values[2], text, ranges=True) if len(values) > 2 else []
        aborted_ids = _id_list(values[3], text, ranges=True) if len(values) > 3 else []
        return cls(legacy=False, compactor=compactor, **build_ids(hwm, min_open, open_ids, aborted_ids))

    @classmethod
    def parse_any(cls, text: str | None, *, compactor: bool = False) -> ValidTxnList:
        """For Hive 2.3 readers: the 2.3 form, or the Hive 3+ form when the text uses ',' or
        'lo-hi' lists (which a 2.3 string never does)."""
        if text and any(("," in v) or ("-" in v[1:]) for v in java_split(text, ":")[2:]):
            return cls.parse(text, compactor=compactor)
        return cls.parse(text, legacy=True, compactor=compactor)

    @classmethod
    def everything(cls) -> ValidTxnList:
        return cls()

    def __str__(self) -> str:
        return self.text()

    def text(self, ranges: bool = True) -> str:
        """The string Hive writes; ``ranges=False``: no ``lo-hi`` runs, which Hive 3.1's
        storage-api cannot parse (a 3.1 metastore fails on them)."""
        if self.legacy:
            return f"{self.high_watermark}:{self.min_open}:" + ":".join(map(str, self.exceptions))
        return (f"{self.high_watermark}:{self.min_open}:{_format_ids(self.open_ids, ranges)}:"
                f"{_format_ids(self.aborted_ids, ranges)}")


def parse_txn_write_ids(text: str) -> tuple[int, dict[str, ValidWriteIdList]]:
    """``hive.txn.tables.valid.writeids``: ``<txnId>$<list>$<list>...``, keyed by table name."""
    parts = text.split("$")
    txn = _long(parts[0], "transaction id", text)
    tables: dict[str, ValidWriteIdList] = {}
    for part in parts[1:]:
        if part:
            wil = ValidWriteIdList.parse(part)
            tables[wil.table or "null"] = wil
    return txn, tables


def parse_write_ids(text: str | None, table: str | None = None) -> ValidWriteIdList:
    """A single table's list from either form. With the ``$`` form, ``table`` picks the table
    (required when it holds more than one)."""
    if not text or "$" not in text:
        wil = ValidWriteIdList.parse(text)
        if table and wil.table and wil.table.lower() != table.lower():
            raise SnapshotParseError(f"write-id list is for table {wil.table!r}, not {table!r}")
        return wil
    _, tables = parse_txn_write_ids(text)
    if table:
        for name, wil in tables.items():
            if name.lower() == table.lower():
                return wil
        raise SnapshotParseError(f"table {table!r} is not in the write-id list (it has: "
                                 f"{', '.join(tables) or 'no tables'})")
    if len(tables) == 1:
        return next(iter(tables.values()))
    raise SnapshotParseError(f"the write-id list holds {len(tables)} tables "
                             f"({', '.join(tables)}); name one with --table")


# ------------------------------------------------------------------------------------------------
# What a reader sees: the --write-ids / --txns / --hive-version options as one value


@dataclass(frozen=True)
class Snapshot:
    """What a reader sees. For Hive 2, ``txns`` is the snapshot and ``write_ids`` is None."""

    hive_version: HiveVersion
    write_ids: ValidWriteIdList | None
    txns: ValidTxnList
    # an insert-only (micro-managed) table: plain data files in its bases and deltas
    insert_only: bool = False
    # where it came from: "default" (everything committed), "--write-ids/--txns", or
    # "metastore thrift://HOST:PORT"
    source: str = "default"

    def describe(self) -> dict:
        out: dict[str, object] = {
            "write_ids": str(self.write_ids) if self.write_ids is not None else None,
            "txns": str(self.txns),
            "source": self.source,
        }
        if self.insert_only:
            out["insert_only"] = True
        return out


def contradiction(ids: _IdList, text: str) -> str | None:
    """Why a snapshot string contradicts itself (None: it does not). Hive builds its strings
    so that every open or aborted id lies at or below the high watermark, and (a table's
    write-id list) the lowest open id is the min-open field, Long.MAX_VALUE when nothing is
    open; a string a person wrote may not, and would then mean something nobody meant.
    A transaction list's min-open may name a transaction its exception lists leave out (the
    reader's own: Hive's TestAcidUtils uses '1000:55:50:'), so that is not held against it."""
    if ids.high_watermark < 0:
        return f"{text!r}: the high watermark {ids.high_watermark} is negative"
    bad = [e for e in ids.exceptions if e < 1]
    if bad:
        return f"{text!r}: id {bad[0]} in the exception lists is not a positive number"
    above = [e for e in ids.exceptions if e > ids.high_watermark]
    if above:
        return (f"{text!r}: id {above[0]} is open or aborted above the high watermark "
                f"{ids.high_watermark} (every id above it is invisible already)")
    if not isinstance(ids, ValidWriteIdList):
        return None
    legacy = False
    candidates = tuple(ids.open_ids)
    if ids.min_open != LONG_MAX:
        if ids.min_open not in candidates:
            return (f"{text!r}: the min-open id {ids.min_open} is not in the list of "
                    f"{'exceptions' if legacy else 'open ids'}")
        if not legacy and ids.min_open != min(candidates):
            return (f"{text!r}: the min-open id {ids.min_open} is not the lowest open id "
                    f"{min(candidates)}")
    elif candidates and not legacy:
        return (f"{text!r}: ids {', '.join(map(str, candidates[:3]))} are open, but the "
                f"min-open field says nothing is ({LONG_MAX})")
    return None


def make_snapshot(hive_version: str | int = DEFAULT_HIVE_VERSION, write_ids: str | None = None,
                  txns: str | None = None, table: str | None = None, *,
                  insert_only: bool = False) -> Snapshot:
    """Defaults mean "everything committed"."""
    try:
        version = normalize_hive_version(hive_version)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if insert_only and not version.has_insert_only:
        raise UsageError("Hive 2.3 has no insert-only tables (transactional_properties="
                         "insert_only came with Hive 3): use --hive-version 3 or 4")
    try:
        if not version.has_write_ids:
            if write_ids:
                raise UsageError("Hive 2 has no write ids: directory numbers are transaction ids, "
                                 "so pass the snapshot as --txns 'hwm:minOpenTxn[:exception]*'")
            snap = Snapshot(version, None, ValidTxnList.parse_any(txns))
        else:
            wil = parse_write_ids(write_ids, table) if write_ids else \
                ValidWriteIdList.everything()
            snap = Snapshot(version, wil, ValidTxnList.parse(txns) if txns
                            else ValidTxnList.everything(), insert_only)
    except SnapshotParseError as exc:
        raise UsageError(str(exc)) from None
    for given, ids, flag in ((write_ids, snap.write_ids, "--write-ids"),
                             (txns, snap.txns, "--txns")):
        problem = contradiction(ids, given) if given and ids is not None else None
        if problem:
            raise UsageError(f"{flag} {problem}")
    return snap
