"""Would Hive's compaction Initiator ask for a compaction of a partition, which kind, and why.

Pure: it judges a partition's getAcidState (``select``, run with the compactor's snapshot) by
the rules of ``Initiator.determineCompactionType`` and ``checkForCompaction`` of each version:

* the base's size is the sum of its files (Hive 2.3 and 3.1 add the original files; 4.0 counts
  the original files only when there is no base); a delta's is the sum of its files; files whose
  names start with ``_`` or ``.`` (``_orc_acid_version``, ``_flush_length``) do not count;
* no base (base size 0) but deltas with bytes: "no base";
* otherwise, deltas larger than ``hive.compactor.delta.pct.threshold`` (0.1) of the base, in
  Java's float arithmetic: **major** (4.0 also: no delta bytes, and an obsolete base left);
* then, more current deltas (delete deltas included) than
  ``hive.compactor.delta.num.threshold`` (10): **major** without a base, for an insert-only
  table under 3.1, and under 4.0 when minor compaction is not possible (query-based CRUD
  compaction of a table holding original files); else **minor**;
* before all that, more aborted transactions than ``hive.compactor.abortedtxn.threshold``
  (1000): **major**. Without a metastore the count is the aborted write ids with directories in
  the partition.

A table's ``compactorthreshold.<key>`` properties override the settings, as in Hive.
``validate``'s ACID024 is this decision.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace

from .errors import UsageError
from .javanum import LONG_MAX
from .names import Base, Delta
from .select import AcidState
from .snapshot import Snapshot, ValidTxnList, ValidWriteIdList, build_ids
from .versions import HiveVersion

DELTA_NUM = "hive.compactor.delta.num.threshold"
DELTA_PCT = "hive.compactor.delta.pct.threshold"
ABORTED_NUM = "hive.compactor.abortedtxn.threshold"
CRUD_QUERY_BASED = "hive.compactor.crud.query.based"
DEFAULTS = {DELTA_NUM: "10", DELTA_PCT: "0.1", ABORTED_NUM: "1000", CRUD_QUERY_BASED: "false"}
TABLE_PREFIX = "compactorthreshold."


@dataclass(frozen=True)
class Settings:
    """Hive's compactor settings; ``--set KEY=VALUE`` and table properties override them."""

    values: dict = field(default_factory=lambda: dict(DEFAULTS), compare=False, hash=False)

    @classmethod
    def of(cls, pairs: list[str] | tuple[str, ...] = (), **known) -> "Settings":
        values = dict(DEFAULTS)
        for key, value in known.items():
            values[key] = str(value)
        for pair in pairs:
            key, sep, value = pair.partition("=")
            key = key.strip()
            if not sep or key not in DEFAULTS:
                raise UsageError(f"--set {pair!r}: give KEY=VALUE, KEY one of "
                                 f"{', '.join(sorted(DEFAULTS))}")
            values[key] = value.strip()
        out = cls(values)
        for key, kind in ((DELTA_NUM, int), (DELTA_PCT, float), (ABORTED_NUM, int)):
            out._number(key, kind)  # a value that is not a number is refused now
        return out

    def for_table(self, properties: dict | None) -> "Settings":
        """With a table's ``compactorthreshold.*`` properties over these."""
        if not properties:
            return self
        values = dict(self.values)
        for key in DEFAULTS:
            if TABLE_PREFIX + key in properties:
                values[key] = str(properties[TABLE_PREFIX + key])
        return replace(self, values=values)

    def _number(self, key: str, kind):
        try:
            return kind(self.values[key])
        except ValueError:
            raise UsageError(f"{key}={self.values[key]!r} is not a number") from None

    @property
    def delta_num(self) -> int:
        return self._number(DELTA_NUM, int)

    @property
    def delta_pct(self) -> float:
        return self._number(DELTA_PCT, float)

    @property
    def aborted_num(self) -> int:
        return self._number(ABORTED_NUM, int)

    @property
    def crud_query_based(self) -> bool:
        return self.values[CRUD_QUERY_BASED].strip().lower() == "true"


@dataclass(frozen=True)
class Decision:
    kind: str | None  # "major", "minor", or None: no compaction
    reason: str
    deltas: int = 0
    delta_bytes: int = 0
    base_bytes: int = 0
    aborted: int = 0

    def as_dict(self) -> dict:
        return {"compaction": self.kind, "reason": self.reason, "deltas": self.deltas,
                "delta_bytes": self.delta_bytes, "base_bytes": self.base_bytes,
                "aborted": self.aborted}


def _f32(x: float) -> float:
    """A Java float."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _java_float_ratio(delta: int, base: int) -> float:
    """``(float) delta / (float) base`` as Java computes it (NaN for 0/0)."""
    d, b = _f32(float(delta)), _f32(float(base))
    if b == 0.0:
        return float("nan") if d == 0.0 else float("inf")
    return _f32(d / b)


def _visible(name: str) -> bool:
    """FileUtils.HIDDEN_FILES_PATH_FILTER: names starting with _ or . are not data."""
    return not name.startswith(("_", "."))


def directory_bytes(state: AcidState, name: str) -> int:
    """The bytes of a base's or delta's own data files (the direct children Hive sums)."""
    return sum(f.size for f in state.entry(name).files
               if not f.is_dir and "/" not in f.path and _visible(f.path))


def original_bytes(state: AcidState) -> int:
    wanted = set(state.original_files)
    total = 0
    for e in state.entries:
        if not e.is_dir and e.name in wanted:
            total += e.size
        for f in e.files if e.is_dir else ():
            if f"{e.name}/{f.path}" in wanted:
                total += f.size
    return total


def aborted_write_ids(state: AcidState) -> int:
    """Aborted write ids (transactions) with a directory in the partition."""
    ids: set[int] = set()
    for name in state.aborted:
        parsed = state.entry(name).parsed
        if isinstance(parsed, Base):
            ids.add(parsed.write_id)
        elif isinstance(parsed, Delta):
            ids.update(range(parsed.min_write_id, min(parsed.max_write_id,
                                                      parsed.min_write_id + 100_000) + 1))
    return len(ids)


def decide(state: AcidState, version: HiveVersion | str, settings: Settings, *,
           insert_only: bool = False, aborted: int | None = None) -> Decision:
    """What the Initiator of ``version`` decides for a partition whose getAcidState (at the
    compactor's snapshot) is ``state``."""
    version = HiveVersion.of(version)
    if state.error is not None:
        return Decision(None, f"Hive fails on this partition ({state.error.message}): the "
                              "Initiator marks it failed")
    aborted = aborted_write_ids(state) if aborted is None else aborted
    deltas = list(state.deltas)
    delta_bytes = sum(directory_bytes(state, d) for d in deltas)
    base_bytes = directory_bytes(state, state.base) if state.base else 0
    if version is not HiveVersion.V4 or state.base is None:
        base_bytes += original_bytes(state)
    numbers = dict(deltas=len(deltas), delta_bytes=delta_bytes, base_bytes=base_bytes,
                   aborted=aborted)
    if aborted > settings.aborted_num:
        return Decision("major", f"{aborted} aborted transactions (more than {ABORTED_NUM}="
                                 f"{settings.aborted_num})", **numbers)
    no_base = base_bytes == 0 and delta_bytes > 0
    if not no_base:
        ratio = _java_float_ratio(delta_bytes, base_bytes)
        big = ratio > _f32(settings.delta_pct)
        multi_base = version is HiveVersion.V4 and delta_bytes == 0 and any(
            n.startswith("base_") for n in state.obsolete)
        if big:
            return Decision("major", f"deltas are {ratio:.1%} of the base ({delta_bytes:,} B "
                                     f"over {base_bytes:,} B; more than {DELTA_PCT}="
                                     f"{settings.delta_pct})", **numbers)
        if multi_base:
            return Decision("major", "no delta bytes, and an obsolete base is still there "
                                     "(Hive 4 compacts it away)", **numbers)
    if len(deltas) <= settings.delta_num:
        why = "no delta" if not deltas else (
            f"{len(deltas)} delta{'s' if len(deltas) > 1 else ''}, not more than "
            f"{DELTA_NUM}={settings.delta_num}")
        if not no_base and deltas:
            why += f"; deltas are {_java_float_ratio(delta_bytes, base_bytes):.1%} of the base"
        return Decision(None, why, **numbers)
    count = f"{len(deltas)} deltas (more than {DELTA_NUM}={settings.delta_num})"
    if no_base:
        return Decision("major", f"{count} and no base", **numbers)
    if version is HiveVersion.V3 and insert_only:
        return Decision("major", f"{count}; an insert-only table is compacted major",
                        **numbers)
    if version is HiveVersion.V4 and not insert_only and settings.crud_query_based and \
            state.original_files:
        return Decision("major", f"{count}; query-based minor compaction cannot take the "
                                 "original files", **numbers)
    return Decision("minor", count, **numbers)


def quote_identifier(name: str) -> str:
    """A Hive identifier in backticks (a backtick inside doubled): a name from a path can hold
    anything, and must not become SQL."""
    inert = "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F or
                    0xD800 <= ord(c) <= 0xDFFF else c for c in name)
    return "`" + inert.replace("`", "``") + "`"


def quote_string(value: str) -> str:
    """A Hive SQL string literal: backslash escapes, control characters as \\uXXXX (one
    statement stays one line)."""
    out = []
    for ch in value:
        if ch in "\\'":
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def statement(table: str, partition: str, kind: str) -> str:
    """``ALTER TABLE `db`.`t` PARTITION (`k`='v') COMPACT 'major'``: the partition's values
    unescaped from its directory name, every name and value quoted."""
    from .catalog import partition_values

    name = ".".join(quote_identifier(p) for p in table.split(".", 1))
    part = ""
    if partition:
        part = " PARTITION (" + ", ".join(f"{quote_identifier(k)}={quote_string(v)}"
                                          for k, v in partition_values(partition)) + ")"
    return f"ALTER TABLE {name}{part} COMPACT '{kind}'"


def table_name_of(url: str) -> tuple[str, bool]:
    """The table a warehouse path names, and whether that is a guess: ``.../db.db/t[/k=v]`` ->
    ``db.t``; a table directory elsewhere is taken for ``default.<its name>``."""
    from .names import is_partition_component

    parts = [x for x in url.rstrip("/").split("/") if x and not is_partition_component(x)]
    for i in range(len(parts) - 2, -1, -1):
        if parts[i].endswith(".db") and i + 1 < len(parts):
            return f"{parts[i][:-3]}.{parts[i + 1]}", True
    return f"default.{parts[-1] if parts else 'table'}", True


# -- the compactor's snapshot ----------------------------------------------------------------

def compactor_snapshot(snap: Snapshot) -> Snapshot:
    """The snapshot the Initiator reads with, from a reader's: aborted ids below the first
    open one are the exceptions, and nothing from the first open id on is seen
    (``TxnUtils.createValidCompactWriteIdList``; 2.3: ``createValidCompactTxnList``)."""
    if snap.write_ids is not None:
        w = snap.write_ids
        first = min(w.open_ids) if w.open_ids else None
        aborted = [a for a in w.aborted_ids if first is None or a < first]
        hwm = w.high_watermark if first is None else first - 1
        ids = ValidWriteIdList(table=w.table, compactor=True,
                               **build_ids(hwm, LONG_MAX if first is None else first, [], aborted))
        return replace(snap, write_ids=ids)
    t = snap.txns
    first = t.min_open_id
    if first is None and t.aborted != t.exceptions and not t.legacy:
        opened = t.open_ids
        first = min(opened) if opened else None
    hwm = t.high_watermark if first is None else min(t.high_watermark, first - 1)
    below = [e for e in (t.exceptions if t.legacy else t.aborted_ids) if e <= hwm]
    txns = ValidTxnList(legacy=t.legacy, compactor=True, **build_ids(hwm, LONG_MAX, [], below))
    return replace(snap, txns=txns)
