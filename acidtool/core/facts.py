"""What validation knows about a partition, already read: the values the rules judge.

The IO layer fills these (listing, markers, footers, row scans); the rules in ``rules.py`` are pure
functions of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from .orcproto import Footer
from .select import AcidState
from .versions import HiveVersion

LEVELS = ("names", "metadata", "rows")
# The top-level columns of an ACID event file, in order.
ACID_NAMES = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction", "row")
ACID_LOWER = tuple(n.lower() for n in ACID_NAMES)


class FileFacts(NamedTuple):
    """One ORC file's footer (metadata level). ``error`` when it is not readable ORC.

    A NamedTuple rather than a frozen dataclass: one is made per file read, and a frozen
    dataclass's constructor (a setattr call per field) costs three times as much."""

    path: str  # relative to the partition
    size: int
    footer: Footer | None = None
    error: str | None = None
    flush_committed: int | None = None
    # (min, max) statistics of operation, originalTransaction, bucket and currentTransaction
    # (None where the writer gave none), for a file whose top-level columns have the ACID
    # names; read with the footer. None for every other file: the rules take a file for
    # ACID by it.
    event_ranges: tuple[tuple[int, int] | None, ...] | None = None


def footer_is_acid(footer: Footer) -> bool:
    """The top-level columns have the ACID event names (in any case, as Hive 3.1's query-based
    compaction wrote them)."""
    return footer.schema.lower_names == ACID_LOWER


def row_shape(footer: Footer) -> tuple[list[str], list[str]]:
    """The names and ORC types of a file's row columns: an ACID file's ``row`` struct, or a
    plain file's top-level columns."""
    top = footer.top_level()
    cid = top[5][1] if len(top) == 6 else None
    if cid is not None and footer.types[cid].kind == "struct":
        row = footer.types[cid]
        return list(row.field_names), [footer.type_string(c) for c in row.subtypes]
    return [name for name, _ in top], [footer.type_string(c) for _, c in top]


def event_ranges(footer: Footer) -> tuple[tuple[int, int] | None, ...] | None:
    """What ``FileFacts.event_ranges`` holds: the (min, max) statistics of operation,
    originalTransaction, bucket and currentTransaction, for a footer whose top-level columns
    have the ACID names (else None). Read while the footer's parse is at hand."""
    schema = footer.schema
    if not footer_is_acid(footer):
        return None
    columns = schema.derived.get("event_columns")
    if columns is None:
        top = schema.top  # operation, originalTransaction, bucket, rowId, current..., row
        columns = schema.derived["event_columns"] = (top[0][1], top[1][1], top[2][1],
                                                     top[4][1])
    return footer.int_ranges(columns)


@dataclass(frozen=True)
class RowFacts:
    """A scan of the five ACID columns of one file (rows level)."""

    path: str
    rows: int = 0
    bucket_values: tuple[int, ...] = ()
    operations: tuple[int, ...] = ()
    min_current: int | None = None
    max_current: int | None = None
    min_original: int | None = None
    max_original: int | None = None
    inserts_with_other_original: int = 0  # operation 0 with originalTransaction != current
    first_unsorted: int | None = None  # row index where (otid, bucket, rowId) goes backwards
    first_duplicate: int | None = None
    stripe_last_keys: tuple[tuple[int, int, int] | None, ...] = ()
    error: str | None = None
    # null values in operation, originalTransaction, bucket, rowId, currentTransaction
    null_values: tuple[int, ...] = (0, 0, 0, 0, 0)


@dataclass(frozen=True)
class Thresholds:
    """Hive's compaction initiator settings (hive.compactor.delta.num/pct.threshold)."""

    delta_num: int = 10
    delta_pct: float = 0.1

    def settings(self):
        """As compaction-plan's settings (``core.compaction``), the rest at Hive's defaults."""
        from .compaction import DELTA_NUM, DELTA_PCT, Settings

        known: dict = {DELTA_NUM: self.delta_num, DELTA_PCT: self.delta_pct}
        return Settings.of(**known)


@dataclass(frozen=True)
class Context:
    hive_version: HiveVersion = HiveVersion.V4
    level: str = "metadata"
    snapshot_given: bool = False
    schema: str | None = None  # --schema: the table's columns as an ORC struct type
    thresholds: Thresholds = field(default_factory=Thresholds)
    table_name: str | None = None
    insert_only: bool = False  # an insert-only table: plain data files are what Hive writes

    def __post_init__(self) -> None:
        object.__setattr__(self, "hive_version", HiveVersion.of(self.hive_version))

    def at_least(self, level: str) -> bool:
        return LEVELS.index(self.level) >= LEVELS.index(level)


def url_of(url: str, rel: str = "") -> str:
    """A path below the directory ``url``, as findings name it."""
    return f"{url.rstrip('/')}/{rel}" if rel else url


@dataclass(frozen=True)
class PartitionFacts:
    url: str  # the partition directory, as findings name it
    partition: str  # "" or "ds=1"
    state: AcidState  # its entries hold every listed path, with its size
    markers: Mapping[str, bytes] = field(default_factory=dict)  # "<dir>/_orc_acid_version"
    files: Mapping[str, FileFacts] = field(default_factory=dict)
    rows: Mapping[str, RowFacts] = field(default_factory=dict)
    links: tuple[str, ...] = ()  # symbolic links below the partition: listed, never followed

    def path(self, rel: str = "") -> str:
        return url_of(self.url, rel)


@dataclass(frozen=True)
class TableFacts:
    url: str
    partitions: tuple[PartitionFacts, ...]
    stray: tuple[str, ...] = ()
