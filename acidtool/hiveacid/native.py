"""Spark's own read plan for a Hive ACID table (``read_table``'s default where the layout
allows and it reads sooner): no Python on the executors and no row through a Python worker.

The driver plans as ``acidtool read`` does (``table.readplan.plan_read``: getAcidState per
partition, the snapshot's files). Then each partition's rows are Spark's own operators:

* its data files are read by Spark's vectorized ORC reader, one scan per row shape (files
  written before ``ADD COLUMNS`` have fewer row columns, read as nulls), with all six event
  columns asked for: ORC takes a file whose top-level columns are the ACID ones for an ACID
  file and fails unless the reader asks for the same six (a pruned ask gets a
  ClassCastException). The filter keeps the insert events (operation 0) whose
  currentTransaction the snapshot sees, and touches each of the six columns with a test
  that is always true, so that Spark's column pruning keeps them all (``row`` only by its
  first field: the rest of ``row`` is pruned when a query does not use it);
* its delete deltas' events (operation 2, a currentTransaction the snapshot sees) are read
  the same way, ``row`` as an empty struct, made masks of 64 row ids each, broadcast and
  joined (see ``frame._deletes``; docs/spark.md has the alternatives measured);
* a table of many partitions is one scan of each row shape's files of them all and one join
  (``NativePlan.joined``): a row's partition is told by its file's path, which a filter on a
  partition column becomes a test of, and Spark leaves the other partitions' files unopened
  (``frame._joined_sql``). Hive 2.3's legacy layout is a branch of the plan a partition, its
  partition values literals.

An insert-only table's ORC files are the rows themselves: a scan per shape, nothing else.
Hive 2.3's legacy layout (update and delete events beside the inserts, no delete deltas) is
its merge as a window: of each row's events the latest wins (``frame._latest``).

Layouts whose rows are not the files' events are read by the ``hiveacid`` source instead
(``native_plan`` says which): original and LOAD DATA files (Hive numbers their synthetic
ROW__IDs by position), insert-only tables' Parquet and text files, a delta a streaming writer
still has open (a ``_flush_length`` side file: only part of the file is committed), files
Spark's Hadoop client is not given here (object stores acidtool reaches through fsspec), and
a file whose footer cannot be read or whose event columns are not Hive's (the source says why
in one line). ``NativePlan.slower`` says where the source reads sooner.

The join matches a delete event to the rows of its whole partition by the full key, as the
bucket property is part of it; Hive matches within the delete file's bucket (by file name),
which differs only where a file's name and its rows' bucket property disagree (validate's
ACID012): such a partition is read by the source (``_misplaced``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ..core.facts import event_ranges, footer_is_acid, row_shape
from ..core.names import FLUSH_LENGTH_SUFFIX
from ..core.snapshot import IdList
from ..io.arrowtypes import orc_type_to_arrow
from ..table.read import PartitionReader, partition_values
from ..table.readplan import ReadPlan, typed
from .sparkpaths import listed

EVENTS = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction")
EVENT_TYPES = ("int", "bigint", "int", "bigint", "bigint")
# the key columns as the plan carries them beside the row's (names no table column takes)
KEY = {"originalTransaction": "__acid_writeid", "bucket": "__acid_bucket",
       "rowId": "__acid_rowid"}


@dataclass(frozen=True)
class Scan:
    """Data files of one partition whose row columns have the same names and types."""

    files: tuple[str, ...]  # their URLs (``_url``)
    names: tuple[str, ...]
    types: tuple[pa.DataType, ...]
    statement: int = 0  # (Hive 2.3's legacy layout: of the files' directory, for the merge)


@dataclass(frozen=True)
class Part:
    values: tuple[tuple[str, Any], ...]  # each partition column and its typed value
    scans: tuple[Scan, ...]
    deletes: tuple[str, ...]  # its delete deltas' files
    row_names: tuple[str, ...] | None  # the names the table gives the row columns
    rows: int = 0
    delete_masks: int = 0
    delete_events: int = 0  # its delete deltas' events (their footers' counts)
    plain: bool = False  # an insert-only table's: rows, not events
    legacy: bool = False  # Hive 2.3's layout without split-update: a row's latest event wins
    # (min, max) of the delete events' originalTransaction, bucket and rowId, by the files'
    # statistics (None: a file gives none)
    delete_ranges: tuple[tuple[int, int], ...] | None = None
    folder: str = ""  # the partition's directory (as ``_url`` gives its files)
    # the delete events' bucket properties, where each delete file holds one (its
    # statistics' min and max agree; None: one does not)
    delete_buckets: tuple[int, ...] | None = None


# Measured (benchmarks/bench_spark_read.py, 10M rows, local[2]): the delete step costs Spark's
# plan about 0.06 us a row (the join's probe) and 1.2 us a mask of deleted row ids (their
# scan, masks and broadcast), the source's merge about 0.17 us a row over Spark's scan: past
# about one mask in ten rows the source reads a table sooner.
DELETES_PAST = 0.10
# A delete step's mask covers this many bits of row ids (64; see frame.py)
MASK_BITS = 6
# Up to this many delete events a join (one partition's, or all those of a joined plan), the
# delete step is the anti join of the events, else masks (frame.py). Measured with the masks
# made in one task (ONE_TASK_PAST), local[2]: one partition of 1M rows and 100,000 deletes,
# 0.35-0.38 s / 0.35-0.44 s (anti / masks); 16,000 deletes, 0.26-0.32 s / 0.26-0.37 s; 10
# such partitions read whole, 1.17-1.46 s / 1.03-1.19 s; 10 of 100,000, 3.2-3.6 s / 2.1-2.3 s.
ANTI_PAST = 100_000
# Up to this many delete events (all the partitions' a join reads), the masks are made in one
# task (Spark's COALESCE(1) before the aggregation): no shuffle and no stage but the scan's,
# where the shuffle's stage cost 0.2-0.4 s (10M rows, 1M deletes: 1.55-1.73 s against
# 1.81-2.15 s; 5M deletes, 1.73-1.82 s against 1.76-1.91 s). Past it, the events are read by
# a task a file and the masks made after a shuffle.
ONE_TASK_PAST = 5_000_000
# Past this many partitions the source: the driver builds Spark's plan partition by partition
# (with a branch of the plan each, before ``joined``, about 15 ms a partition and Spark's
# optimizer about 10 ms more).
PARTITIONS_PAST = 200
# Past this many partitions with deletes read as one join (``joined``), the source: each row's
# partition is a binary search among the partitions' paths, an expression the size of the
# partitions, and Spark's optimizer works over it at each step of the join (measured, 50 rows
# and 1 delete a partition, local[2], read whole / .where(p = '7') / the source: 100
# partitions 2.7 s / 2.2 s / 3.5 s; 200, 4.4 s / 5.4 s / 6.8 s, 1.5-2.4 s of it Spark's
# optimizer; 400 ran a 1 GB driver out of memory). Without deletes there is no join: 200
# partitions read in 2.0 s, against the source's 7.3 s.
JOINED_PAST = 100
# Past this many files (data and delete files) of under FILE_ROWS_UNDER rows each on average,
# the source: Spark costs a file about 9 ms (building the DataFrame, then opening it), the
# source about 2 ms. Measured, local[2]: 1,000 deltas of 5 rows, no deletes, Spark's own plan
# 10.5 s (23.3 s as a new session's first read), the source 1.9 s (12.7 s as the first, its
# registration and first Python worker in it); `spark.read.orc` of those 1,000 files alone 9.1
# s. 100 deltas of 5 rows: Spark's plan 2.1-3.8 s, the source 0.5-1.0 s, but as a new
# session's first read 10.6 s against 14.9 s: up to here Spark's plan stays the default.
FILES_PAST = 500
FILE_ROWS_UNDER = 100_000
# The source's first read in a Spark session costs about this many seconds more than Spark's
# own plan's first read (Spark's lookup of the source, its Python workers' start and imports).
# Measured (benchmarks/bench_spark_first_read.py), local[2], a table of 6 rows and 3 deletes
# as a new session's first read: Spark's plan 6.1-6.8 s, the source 13.6-14.5 s (read again,
# 1.1-1.2 s and 0.3 s). Until the source has read in the session, the two rules above take it
# only where it saves more than this: about 7 ms a file (FILES_PAST), 1.2 us a mask less
# 0.11 us a row (DELETES_PAST).
SOURCE_FIRST_READ_S = 6.0
FILE_SAVES_S = 0.007
MASK_SAVES_S, ROW_COSTS_S = 1.2e-6, 0.11e-6
# (Before a table of many partitions was one join, ``joined``, each partition with deletes was a
# join of its own, and Spark's adaptive execution re-planned the whole plan as each join's
# broadcast was done: 20 partitions of a few rows took 2.8-3.4 s, 50 took 40-60 s, and past 8
# of them the default took the source. One join has no such cost.)


@dataclass(frozen=True)
class NativePlan:
    schema: pa.Schema  # the DataFrame's, as the source would give it
    parts: tuple[Part, ...]
    ids: IdList
    partition_columns: tuple[str, ...]
    rows: int = 0  # the data files' events (their footers' counts)
    delete_masks: int = 0  # at most (``_masks``)
    # the directories of its files that hold no directory, each with the files Spark lists in
    # it (``_folders``): Spark may be given such a directory for its files
    folders: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def files(self) -> int:
        """The data and delete files the plan reads."""
        return sum(len(s.files) for p in self.parts for s in p.scans) + \
            sum(len(p.deletes) for p in self.parts)

    @property
    def joined(self) -> bool:
        """Whether its partitions are read as one scan a row shape and one join (frame.py's
        ``_joined_sql``), not a branch of the plan a partition: two or more, none of Hive
        2.3's legacy layout, all of one kind (ACID or insert-only) and row names."""
        return len(self.parts) > 1 and not any(p.legacy for p in self.parts) and \
            len({(p.plain, p.row_names) for p in self.parts}) == 1

    def slower(self, source_started: bool = True) -> str | None:
        """Why the ``hiveacid`` source would read this sooner (None: it would not);
        ``source_started``: whether it has read in the session already (its first read costs
        SOURCE_FIRST_READ_S more)."""
        floor = 0.0 if source_started else SOURCE_FIRST_READ_S
        first = "" if source_started else \
            ", by more than the source's first read in a session costs"
        if len(self.parts) > PARTITIONS_PAST:
            return (f"{len(self.parts)} partitions, past {PARTITIONS_PAST} (the driver builds "
                    "Spark's plan partition by partition)")
        if self.joined and len(self.parts) > JOINED_PAST and any(p.deletes for p in self.parts):
            return (f"{len(self.parts)} partitions with deletes, past {JOINED_PAST}: Spark's "
                    "optimizer takes longer over their one join than the source's tasks take")
        if self.files > FILES_PAST and self.rows < FILE_ROWS_UNDER * self.files and \
                FILE_SAVES_S * self.files > floor:
            each = self.rows // self.files
            return (f"{self.files:,} files of {each:,} row{'' if each == 1 else 's'} on "
                    f"average, past {FILES_PAST} files: Spark opens a file slower than the "
                    f"source{first}")
        saved = MASK_SAVES_S * self.delete_masks - ROW_COSTS_S * self.rows
        if self.delete_masks > DELETES_PAST * max(self.rows, 1) and saved > floor:
            masks = f"{self.delete_masks:,} mask" + ("s" if self.delete_masks > 1 else "")
            return (f"its deletes make up to {masks} of 64 row ids for {self.rows:,} rows: "
                    f"past {DELETES_PAST:.0%}, the source's per-bucket merge is faster than "
                    f"Spark's join{first}")
        return None


def native_plan(plan: ReadPlan) -> NativePlan | str:
    """The plan Spark's own operators can run, or why the ``hiveacid`` source reads this one."""
    readers: dict[int, PartitionReader] = {}
    for unit in plan.units:
        readers.setdefault(id(unit.reader), unit.reader)
    parts = []
    ids = None
    folders: dict[str, frozenset[str]] = {}
    for r in readers.values():
        part = _part(r, plan)
        if isinstance(part, str):
            return part
        ids = r.ids
        if part.scans:
            parts.append(part)
            folders.update(_folders(r))
    keys = tuple(plan.partition_types) or tuple(
        k for r in list(readers.values())[:1] for k, _ in partition_values(r.part.partition))
    return NativePlan(plan.schema, tuple(parts), ids if ids is not None else IdList(), keys,
                      sum(p.rows for p in parts), sum(p.delete_masks for p in parts),
                      folders=folders)


def _folders(r: PartitionReader) -> dict[str, frozenset[str]]:
    """The URLs of the partition's directories that hold files and no directory, each with
    those of its files Spark's listing keeps (``sparkpaths.listed``). (Spark lists a
    directory it is given, subdirectories too, and takes a ``k=v`` one for a partition
    column, which its ORC reader then asks the ACID files for: they fail to read.)"""
    held: dict[str, set[str]] = {}
    nested: set[str] = set()
    for p in r.part.listing.paths:
        parts = p.path.split("/")
        if len(parts) > 2 or (len(parts) == 2 and p.is_dir):
            nested.add(parts[0])
        elif len(parts) == 2:
            files = held.setdefault(parts[0], set())
            if listed(parts[1]):
                files.add(_url(r, p.path))
    return {_url(r, d): frozenset(files) for d, files in held.items() if d not in nested}


def _part(r: PartitionReader, plan: ReadPlan) -> Part | str:
    legacy = r.legacy and not r.snapshot.insert_only
    buckets = {} if r.snapshot.insert_only else r.bucket_files()
    if legacy:
        why = _legacy_unfit(r, buckets)
        if why:
            return why
    if not (r.part.location.is_local or r.part.location.url.startswith("hdfs://")):
        return f"files on {r.part.location.url.split(':', 1)[0]}, reached through fsspec"
    listed = {p.path for p in r.part.listing.paths if not p.is_dir}
    if r.snapshot.insert_only:
        data, dels = r.insert_only_files(), []
        unfit = _unfit_plain
    else:
        data = [rel for b in sorted(buckets.values()) for rel in b[0]]
        dels = [rel for b in sorted(buckets.values()) for rel in b[1]]
        unfit = _unfit
    footers = {rel: r.footer(rel) for rel in data + dels}  # one read each, used below
    shapes: dict[tuple, list[str]] = {}
    for rel in data + dels:
        why = unfit(r, rel, footers[rel], listed)
        if why:
            return why
    for rel in data:
        footer = footers[rel]
        assert footer is not None
        names, orc_types = row_shape(footer)
        try:
            types = tuple(orc_type_to_arrow(t) for t in orc_types)
        except Exception:  # a type acidtool's Arrow reading maps and this one does not
            return f"a row column type Spark's ORC reader is not asked for here ({rel})"
        if not names:
            return f"a file whose row has no columns ({rel})"
        statement = r.statement_of(rel.split("/", 1)[0]) if legacy else 0
        shapes.setdefault((tuple(names), types, statement), []).append(
            _url(r, rel))
    values = tuple((k, typed(v, plan.partition_types.get(k, pa.string())))
                   for k, v in partition_values(r.part.partition))
    scans = tuple(Scan(tuple(files), names, types, statement)
                  for (names, types, statement), files in shapes.items())
    return Part(values, scans, tuple(_url(r, rel) for rel in dels),
                tuple(r.row_names) if r.row_names else None,
                _events(footers, data), sum(_masks(footers[rel]) for rel in dels),
                _events(footers, dels), plain=r.snapshot.insert_only,
                delete_ranges=_ranges([footers[rel] for rel in dels]), legacy=legacy,
                delete_buckets=_buckets([footers[rel] for rel in dels]),
                folder=_url(r, "").rstrip("/"))


def _events(footers: dict, rels: list[str]) -> int:
    """The files' events, by their footers' counts."""
    return sum(getattr(footers[rel], "rows", 0) for rel in rels)


def _url(r: PartitionReader, rel: str) -> str:
    """A file's URL for Spark's reader (a local file's absolute path; glob characters are
    escaped when it is handed over: ``sparkpaths.unglobbed``)."""
    where = r.part.location
    return f"{where.path.rstrip('/')}/{rel}" if where.is_local else where.url_of(rel)


def _legacy_unfit(r: PartitionReader, buckets: dict) -> str | None:
    """Why Hive 2.3's merge of this partition is not one latest-event-wins over all its
    events: a file outside a base or delta (Hive merges each original file with its bucket's
    deltas as a split of its own), or two base files of one bucket (two splits)."""
    seen = set()
    for bucket, (data, _) in buckets.items():
        for rel in data:
            entry = r.state.entry(rel.split("/", 1)[0]) if "/" in rel else None
            if entry is None:
                return f"Hive 2.3's legacy layout with original files ({rel})"
            if entry.kind == "base":
                if bucket in seen:
                    return f"Hive 2.3's legacy layout with two base files of bucket {bucket}"
                seen.add(bucket)
    return None


def _key_ranges(footer) -> tuple[tuple[int, int] | None, ...]:
    """The (min, max) statistics of an event file's originalTransaction, bucket and rowId
    (None where it gives none)."""
    top = footer.top_level()
    return footer.int_ranges((top[1][1], top[2][1], top[3][1]))


def _ranges(footers: list) -> tuple[tuple[int, int], ...] | None:
    """The (min, max) of originalTransaction, bucket and rowId over delete delta files, by
    their statistics (None: one of them gives none)."""
    out: list[tuple[int, int]] = []
    for footer in footers:
        if footer is None or not footer.rows:
            continue
        found = [f for f in _key_ranges(footer) if f is not None]
        if len(found) < 3:
            return None
        out = [(min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(out, found)] if out \
            else found
    return tuple(out) if out else None


def _buckets(footers: list) -> tuple[int, ...] | None:
    """The bucket properties of delete delta files' events, where each file's statistics
    give it one (None: one gives a range, or none)."""
    out = set()
    for footer in footers:
        if footer is None or not footer.rows:
            continue
        found = _key_ranges(footer)[1]
        if found is None or found[0] != found[1]:
            return None
        out.add(found[0])
    return tuple(sorted(out))


def _masks(footer) -> int:
    """How many masks of 64 row ids (``frame._deletes``) a delete delta's file makes at most:
    one an event, and no more than its row ids' span in 64s for each write id it names (by
    its statistics)."""
    if footer is None or not footer.rows:
        return 0
    writes, _, row_ids = _key_ranges(footer)
    if writes is None or row_ids is None:
        return footer.rows
    blocks = (row_ids[1] >> MASK_BITS) - (row_ids[0] >> MASK_BITS) + 1
    return min(footer.rows, blocks * (writes[1] - writes[0] + 1))


def _unfit_plain(r: PartitionReader, rel: str, footer, listed: set[str]) -> str | None:
    """Why Spark's ORC reader cannot read an insert-only table's file as it is."""
    if footer is None:
        return f"an insert-only table's Parquet or text files ({rel})"
    if footer_is_acid(footer):
        return f"a file of ACID events in an insert-only table ({rel})"
    return None


def _unfit(r: PartitionReader, rel: str, footer, listed: set[str]) -> str | None:
    """Why Spark's ORC reader cannot take this file's events (its ``footer``) as they are
    (None: it can)."""
    if rel + FLUSH_LENGTH_SUFFIX in listed:
        return f"a delta a streaming writer has open ({rel} has a _flush_length file)"
    if footer is None:
        return f"a file that is not readable ORC ({rel})"
    if not footer_is_acid(footer):
        return f"original or LOAD DATA files, read with synthetic ROW__IDs ({rel})"
    top = footer.top_level()
    if tuple(footer.type_string(c) for _, c in top[:5]) != EVENT_TYPES or \
            footer.types[top[5][1]].kind != "struct":
        return f"a file whose event columns are not Hive's types ({rel})"
    return _misplaced(r, rel, footer)


def _misplaced(r: PartitionReader, rel: str, footer) -> str | None:
    """Why the join over the whole partition could match other rows than Hive's, which
    applies a delete delta's file to the data files of its bucket (by name): a file whose
    rows' bucket property (by its statistics) is not its name's bucket, or says nothing."""
    from ..core.bucket import BucketCodecError, decode
    from ..core.names import parse_bucket_id

    ranges = event_ranges(footer)
    if not footer.rows:
        return None
    if ranges is None or ranges[2] is None:
        return f"a file without statistics of its bucket column ({rel})"
    try:
        named = parse_bucket_id(rel.rsplit("/", 1)[-1], r.version)[0]
        low, high = (decode(v) for v in ranges[2])
    except (ValueError, BucketCodecError):
        named, low, high = -1, None, None
    if low is None or high is None or not named == low.bucket_id == high.bucket_id or \
            low.codec_version != high.codec_version:
        return (f"rows whose bucket property is not their file's bucket ({rel}): Hive "
                "matches a delete delta's file to its bucket's data files")
    return None
