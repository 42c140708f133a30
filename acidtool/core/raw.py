"""Raw (non-ACID) data files: how each Hive version reads an original file in a table root, a
LOAD DATA file in a base or delta, or a foreign file dropped there (Spark ``part-``, DataX), and
the synthetic ROW__IDs it gives their rows. Observed with Hive 2.3, 3.1 and 4.0's own readers
(tests/test_hive_raw_files.py); read, dump and validate all decide here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from .bucket import encode_v1
from .errors import InvalidNameError
from .names import BUCKET_PREFIX, is_copy_name, is_original_name, parse_bucket_id
from .versions import HiveVersion, normalize_hive_version


@dataclass(frozen=True)
class RawRead:
    """How Hive reads one data file that is not in a delete delta, as each version's own reader
    was seen to (tests/test_hive_raw_files.py).

    outcome: ``acid`` (ACID events, bucket from the name), ``read`` (raw rows with synthetic
    ROW__IDs ``(W, bucket, rowId)``), ``skipped`` (listed, never read: its rows are lost),
    ``fails`` (the query fails). ``counted``: the bucket under which a raw file's rows add to the
    numbering of the raw files after it (Hive 3 and 4 number a bucket's files on from each other
    in path order; Hive 2.3 each file from 0)."""

    outcome: str
    bucket: int
    counted: int
    reason: str = ""


def raw_read(name: str, hive_version: str = "4") -> RawRead:
    """A raw file in a table or partition root (an original file), or in a raw base.

    * ``N_M`` and ``N_M_copy_K`` give bucket N; Hive 2.3 has no copy pattern and reads a copy
      with bucket -1, which no delete event reaches.
    * ``bucket_N`` reads as bucket 0 whatever N is (every version; Hive 4 any name that starts
      with ``bucket_``), although its own rows count under N in Hive 3 and 4.
    * Any other name gives bucket -1: Hive 2.3 reads it so; Hive 3 and 4 fail
      (``bucketId out of range: -1``).
    """
    version = normalize_hive_version(hive_version)
    try:
        bucket, _ = parse_bucket_id(name, version)
    except InvalidNameError as exc:
        return RawRead("fails", -1, -1, f"Hive cannot parse a bucket id from its name ({exc})")
    if name.startswith(BUCKET_PREFIX):  # Hive 4: any bucket_ name, bucket_1_flush_length too
        return RawRead("read", 0, bucket if version.bucket_codec else 0,
                       f"a raw file named {BUCKET_PREFIX}... reads as bucket 0")
    if bucket >= 0:
        return RawRead("read", bucket, bucket)
    if not version.bucket_codec:
        why = ("Hive 2.3 takes no bucket id from a _copy_N name" if is_copy_name(name)
               else "its name gives no bucket id")
        return RawRead("read", -1, -1, f"{why}: Hive 2.3 reads its rows with bucket -1, where "
                       "no delete or update event can reach them")
    return RawRead("fails", -1, -1, "its name gives no bucket id: Hive fails with "
                   "'bucketId out of range: -1'")


def read_failure(state, hive_version: str = "4"):
    """The failure of Hive's reader on a file the selection ``state`` takes, decided from its
    name alone (an original file of a partition without a base), or None. ``ls`` reports it as
    the partition's error, as Hive fails the query."""
    from .errors import ReadFailsError

    if state.error is not None or state.base is not None:
        return None
    for rel in state.original_files:
        decision = raw_read(rel.rsplit("/", 1)[-1], hive_version)
        if decision.outcome == "fails":
            return ReadFailsError(f"{rel}: {decision.reason}", hive_exception=
                                  "IllegalArgumentException", path=rel)
    return None


def dir_is_raw(names: Iterable[str], is_acid: Callable[[str], bool],
               hive_version: str = "4") -> bool:
    """Hive 3 and 4's MetaDataFile.isRawFormat: a base or delta holds LOAD DATA (raw) files when
    the first of its files named like an original file (``N_M``, ``N_M_copy_K``) is plain ORC.
    Hive lists in name order on HDFS and object stores (a local disk lists in directory order).
    Hive 2.3 has no raw directories."""
    if not normalize_hive_version(hive_version).raw_files_in_deltas:
        return False
    first = min((n for n in names if is_original_name(n)), default=None)
    return first is not None and not is_acid(first)


def file_in_dir(name: str, hive_version: str, where: str, raw: bool) -> RawRead:
    """How Hive reads the data file ``name`` of a ``base`` or ``delta`` (``raw``: dir_is_raw).

    * A raw delta: files named ``N_M``/``N_M_copy_K`` read raw; Hive never reads the others.
    * A raw base: every file reads raw, by the rules of a root (``raw_read``).
    * A delta of ACID files: ``bucket_N`` files only; the others are never read.
    * A base of ACID files (and every Hive 2.3 directory): every file is read as ACID events.
    """
    version = normalize_hive_version(hive_version)
    if raw:
        if where == "delta" and not is_original_name(name):
            return RawRead("skipped", -1, -1, "the delta holds LOAD DATA files (its first N_M "
                           "file is plain ORC), and Hive reads only the files named N_M or "
                           "N_M_copy_K of such a delta: it never reads this one, so its rows "
                           "are lost")
        return raw_read(name, version)
    if where == "delta" and version.raw_files_in_deltas and not name.startswith(BUCKET_PREFIX):
        return RawRead("skipped", -1, -1, "Hive reads only the bucket_N files of a delta of ACID "
                       "files (one whose first N_M file, if any, has the ACID columns): it never "
                       "reads this one, so its rows are lost")
    try:
        bucket, _ = parse_bucket_id(name, version)
    except InvalidNameError as exc:
        return RawRead("fails", -1, -1, f"Hive cannot parse a bucket id from its name ({exc})")
    return RawRead("acid", bucket, bucket)


def bucket_property(bucket: int, statement: int, hive_version: HiveVersion) -> int:
    """The ``bucket`` value of a raw row's synthetic ROW__ID: BucketCodec V1 from Hive 3."""
    return encode_v1(bucket, statement) if hive_version.bucket_codec else bucket


def numbered(files: Iterable[tuple[str, RawRead]], rows: Callable[[str], int],
             hive_version: HiveVersion, root: bool) -> Iterator[tuple[str, RawRead, int]]:
    """(file, decision, its first rowId) for each raw file Hive reads, in the order given (path
    order): a bucket's files are numbered on from each other (Hive 2.3 in a root: each from 0).
    ``rows(file)`` is asked only for files whose count matters."""
    running: dict[int, int] = {}
    on = hive_version.sorts_originals or not root
    for rel, decision in files:
        if decision.outcome != "read":
            continue
        start = running.get(decision.bucket, 0) if on else 0
        yield rel, decision, start
        if on:
            running[decision.counted] = running.get(decision.counted, 0) + rows(rel)
