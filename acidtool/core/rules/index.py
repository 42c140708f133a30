"""What every rule needs of a partition's facts, worked out once per partition: its ACID
directories, their data files, and the readable ACID files with their event ranges."""


from __future__ import annotations

import functools
import re
from typing import Iterator, NamedTuple

from ..bucket import BucketCodecError, decode
from ..facts import Context, FileFacts, PartitionFacts, RowFacts
from ..names import FLUSH_LENGTH_SUFFIX, HIDDEN_PREFIXES, FileName
from ..orcproto import Footer
from ..raw import dir_is_raw
from ..select import Entry

_INDEX: dict[int, "_Index"] = {}


class _Index:
    """Per-partition lookups every rule needs, computed once per run (a warehouse has
    thousands of partitions and many rules)."""

    def __init__(self, p: PartitionFacts):
        self.acid = [e for e in p.state.entries if e.kind in ("base", "delta", "delete_delta")]
        self.live = [e for e in self.acid if e.status in ("selected", "ignored")]
        self.data = {e.name: data_file_names(e) for e in self.acid}
        # (entry, file name, path relative to the partition, footer facts or None, whether
        # it is a readable ACID-schema file) of every data file of a live directory, and the
        # ACID ones among them.
        live_files: list[tuple[Entry, str, str, FileFacts | None, bool]] = []
        acid_files: list[AcidFile] = []
        self.live_files, self.acid_files = live_files, acid_files
        files, rows = p.files, p.rows
        for entry in self.live:
            prefix = entry.name + "/"
            for name in self.data[entry.name]:
                rel = prefix + name
                facts = files.get(rel)
                acid = is_acid_file(facts)
                live_files.append((entry, name, rel, facts, acid))
                if acid and facts is not None:
                    acid_files.append(_acid_file(entry, name, rel, facts, rows.get(rel)))
        self.raw: dict[str, bool] = {}  # raw_directory's answers


def raw_directory(p: PartitionFacts, entry, version) -> bool:
    """Whether Hive reads the base or delta ``entry`` as LOAD DATA (core.raw.dir_is_raw), from
    the footers read (from the names alone an N_M file is taken for the plain file it nearly
    always is); worked out once per directory for every rule that asks."""
    index = index_of(p)
    known = index.raw.get(entry.name)
    if known is None:
        known = index.raw[entry.name] = entry.kind != "delete_delta" and dir_is_raw(
            index.data[entry.name], lambda n: is_acid_file(p.files.get(f"{entry.name}/{n}")),
            version)
    return known


class AcidFile(NamedTuple):
    """A readable ACID-schema file of a live directory, with what the rules judge it by: the
    row scan (at --level rows) or else the (min, max) statistics of its event columns."""

    entry: Entry
    rel: str
    file: FileName  # its name, parsed
    footer: Footer
    scan: RowFacts | None  # None when the rows were not scanned, or not readable
    operation: tuple[int, int] | None
    original: tuple[int, int] | None
    current: tuple[int, int] | None
    # the distinct bucket property values: exact from a row scan, else the min/max ends
    buckets: tuple[int, ...]


def _acid_file(entry, name: str, rel: str, facts: FileFacts, scan: RowFacts | None
               ) -> AcidFile:
    assert facts.event_ranges is not None, "an ACID file's facts hold its event ranges"
    op, org, bucket, cur = facts.event_ranges
    if scan is not None and scan.error is not None:
        scan = None
    if scan is not None:
        buckets = scan.bucket_values
    elif bucket is None:
        buckets = ()
    else:
        buckets = bucket if bucket[0] != bucket[1] else bucket[:1]
    # built with tuple.__new__: a NamedTuple's own constructor is Python code, and this runs
    # once per file
    return tuple.__new__(AcidFile, (entry, rel, file_name(name), facts.footer, scan, op, org,
                                     cur, buckets))


def forget_index(p: PartitionFacts) -> None:
    _INDEX.pop(id(p), None)


def index_of(p: PartitionFacts) -> _Index:
    found = _INDEX.get(id(p))
    if found is None:
        found = _INDEX[id(p)] = _Index(p)
    return found


def acid_entries(p: PartitionFacts):
    return index_of(p).acid


def live_acid_entries(p: PartitionFacts):
    """ACID directories that are or may become read: not obsolete, not aborted."""
    return index_of(p).live


def data_files(p: PartitionFacts, entry) -> list[str]:
    """Files directly inside an ACID directory that a reader would take for data (indexed)."""
    return index_of(p).data[entry.name]


def data_file_names(entry) -> list[str]:
    """Files directly inside an ACID directory that a reader would take for data (not nested,
    not hidden, not a flush-length side file): what validate reads and the rules judge."""
    return [path for path, _, _ in entry.files  # is_hidden, inline: this runs per file
            if "/" not in path and not path.startswith(HIDDEN_PREFIXES)
            and not (path.endswith(FLUSH_LENGTH_SUFFIX) and file_kind(path) == "flush_length")]


@functools.lru_cache(maxsize=65536)
def file_name(name: str) -> FileName:
    return FileName.parse(name)


def file_kind(name: str) -> str:
    return file_name(name).kind


def scans(p: PartitionFacts) -> Iterator[tuple[str, RowFacts]]:
    """(path, row scan) of the files whose ACID columns were scanned and read, in path order."""
    return ((rel, rows) for rel, rows in sorted(p.rows.items()) if rows.error is None)


def is_legacy(p: PartitionFacts, ctx: Context) -> bool:
    """Hive 2 without split-update: updates and deletes live in delta_ directories."""
    return not ctx.hive_version.split_update and not any(e.kind == "delete_delta" for e in p.state.entries)


def top_fields(footer) -> list[tuple[str, str]]:
    """(name, type string) of the top-level columns, worked out once per schema."""
    derived = footer.schema.derived
    found = derived.get("top_fields")
    if found is None:
        found = derived["top_fields"] = [(name, footer.type_string(cid))
                                         for name, cid in footer.top_level()]
    return found


def is_acid_file(facts: FileFacts | None) -> bool:
    """A readable file whose top-level columns have the ACID names: the files whose event
    ranges were read with their footer."""
    return facts is not None and facts.event_ranges is not None


def column_values(footer: Footer, name: str) -> int | None:
    cid = footer.schema.by_lower_name.get(name.lower())
    st = footer.stats(cid) if cid is not None else None
    return st.number_of_values if st is not None else None


def acid_files(p: PartitionFacts) -> Iterator[AcidFile]:
    """The readable ACID-schema files of live directories."""
    return iter(index_of(p).acid_files)


def bucket_of(value: int) -> tuple[int | None, int | None, int]:
    try:
        d = decode(value)
    except BucketCodecError:
        return None, None, (value & 0xFFFFFFFF) >> 29
    return d.bucket_id, d.statement_id, d.codec_version


STAGING = re.compile(r"^(\.hive-staging|_temporary|__tmp|_tmp|\.spark-staging|_acidtool)")

