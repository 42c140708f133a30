"""Validation rules: a registry of plain declarations, each a pure function of already-read facts.

Every rule has a code that is never reused, a short name, a default severity, the level of facts it
needs, a one-line summary and its documentation (what it checks, why Hive cares, an example, how to
fix). Findings are values; a finding may carry another severity than its rule's default where the
situation calls for it (a foreign file next to ACID directories is an error, in a plain landing
zone a warning).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, NamedTuple

from .bucket import BucketCodecError, decode
from .errors import InvalidNameError
from .facts import (ACID_NAMES, Context, FileFacts, PartitionFacts, RowFacts,
                    TableFacts, url_of)
from .names import (ACID_VERSION_FILE, FLUSH_LENGTH_SUFFIX, HIDDEN_PREFIXES, NO_STATEMENT,
                    Delta, FileName, is_hidden, parse_dir_name)
from .orcproto import Footer
from .orctypes import TypeStringError, normalize, struct_fields
from .partitions import is_partition_component

SEVERITIES = ("error", "warning", "info")
ACID_TYPES = ("int", "bigint", "int", "bigint", "bigint")


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    path: str
    message: str
    details: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    level: str  # the lowest --level at which it runs
    summary: str
    what: str
    why: str
    example: str
    fix: str
    check: Callable[..., Iterable[Finding]] = field(repr=False, compare=False)
    # A table-wide rule gathers values from each partition (``gather(p, ctx)``, a list) and
    # checks them all at once (``check(gathered, ctx)``): partitions may be read in other
    # processes. A partition rule has none and checks one partition (``check(p, ctx)``).
    gather: Callable[[PartitionFacts, Context], list] | None = field(default=None, repr=False,
                                                                     compare=False)

    def finding(self, path: str, message: str, severity: str | None = None,
                **details) -> Finding:
        return Finding(self.code, severity or self.severity, path, message, details)


REGISTRY: dict[str, Rule] = {}


def rule(code, name, severity, level, summary, *, what, why, example, fix, gather=None):
    def register(fn):
        if code in REGISTRY:
            raise ValueError(f"rule code {code} registered twice")
        REGISTRY[code] = Rule(code, name, severity, level, summary, what, why, example, fix, fn,
                              gather)
        return fn
    return register


# ------------------------------------------------------------------------------------------------
# Helpers over facts


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
        live_files = self.live_files = []
        acid_files = self.acid_files = []
        files, rows = p.files, p.rows
        for entry in self.live:
            prefix = entry.name + "/"
            for name in self.data[entry.name]:
                rel = prefix + name
                facts = files.get(rel)
                acid = _is_acid_file(facts)
                live_files.append((entry, name, rel, facts, acid))
                if acid:
                    acid_files.append(_acid_file(entry, name, rel, facts, rows.get(rel)))


class _AcidFile(NamedTuple):
    """A readable ACID-schema file of a live directory, with what the rules judge it by: the
    row scan (at --level rows) or else the (min, max) statistics of its event columns."""

    entry: object
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
               ) -> _AcidFile:
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
    return tuple.__new__(_AcidFile, (entry, rel, _file_name(name), facts.footer, scan, op, org,
                                     cur, buckets))


def _index(p: PartitionFacts) -> _Index:
    found = _INDEX.get(id(p))
    if found is None:
        found = _INDEX[id(p)] = _Index(p)
    return found


def _acid_entries(p: PartitionFacts):
    return _index(p).acid


def _live_acid_entries(p: PartitionFacts):
    """ACID directories that are or may become read: not obsolete, not aborted."""
    return _index(p).live


def _data_files(p: PartitionFacts, entry) -> list[str]:
    """Files directly inside an ACID directory that a reader would take for data (indexed)."""
    return _index(p).data[entry.name]


def data_file_names(entry) -> list[str]:
    """Files directly inside an ACID directory that a reader would take for data (not nested,
    not hidden, not a flush-length side file): what validate reads and the rules judge."""
    return [path for path, _, _ in entry.files  # is_hidden, inline: this runs per file
            if "/" not in path and not path.startswith(HIDDEN_PREFIXES)
            and not (path.endswith(FLUSH_LENGTH_SUFFIX) and _file_kind(path) == "flush_length")]


@functools.lru_cache(maxsize=65536)
def _file_name(name: str) -> FileName:
    return FileName.parse(name)


def _file_kind(name: str) -> str:
    return _file_name(name).kind


def _scans(p: PartitionFacts) -> Iterator[tuple[str, RowFacts]]:
    """(path, row scan) of the files whose ACID columns were scanned and read, in path order."""
    return ((rel, rows) for rel, rows in sorted(p.rows.items()) if rows.error is None)


def _is_legacy(p: PartitionFacts, ctx: Context) -> bool:
    """Hive 2 without split-update: updates and deletes live in delta_ directories."""
    return ctx.hive_version == "2" and not any(e.kind == "delete_delta" for e in p.state.entries)


def _top_fields(footer) -> list[tuple[str, str]]:
    """(name, type string) of the top-level columns, worked out once per schema."""
    derived = footer.schema.derived
    found = derived.get("top_fields")
    if found is None:
        found = derived["top_fields"] = [(name, footer.type_string(cid))
                                         for name, cid in footer.top_level()]
    return found


def _is_acid_file(facts: FileFacts | None) -> bool:
    """A readable file whose top-level columns have the ACID names: the files whose event
    ranges were read with their footer."""
    return facts is not None and facts.event_ranges is not None


def _column_values(footer: Footer, name: str) -> int | None:
    cid = footer.schema.by_lower_name.get(name.lower())
    st = footer.stats(cid) if cid is not None else None
    return st.number_of_values if st is not None else None


def _acid_files(p: PartitionFacts) -> Iterator[_AcidFile]:
    """The readable ACID-schema files of live directories."""
    return iter(_index(p).acid_files)


def _bucket_of(value: int) -> tuple[int | None, int | None, int]:
    try:
        d = decode(value)
    except BucketCodecError:
        return None, None, (value & 0xFFFFFFFF) >> 29
    return d.bucket_id, d.statement_id, d.codec_version


STAGING = re.compile(r"^(\.hive-staging|_temporary|__tmp|_tmp|\.spark-staging|_acidtool)")


# ------------------------------------------------------------------------------------------------
# Names level


@rule("ACID001", "foreign-data-file", "error", "names",
      "Data file in a table or partition root that Hive ignores or misreads",
      what="Plain files directly in a table or partition directory: names Hive never writes "
           "(DataX `name__<uuid>`, Spark `part-...`, `.orc` files), and Hive-style original "
           "files (`000000_0`) once a base directory exists.",
      why="Hive reads files in the root as *original* (pre-ACID) data. With a base present it "
          "ignores them entirely, so the rows never show up. Without a base it reads them with "
          "synthetic ROW__IDs, and names that carry no bucket id fail in Hive 3 with "
          "`bucketId out of range: -1` or get mixed up with real original files.",
      example="orders/delta_0000005_0000005_0000/ plus orders/orders__9c1d2f0e_8a7b... "
              "(a DataX hdfswriter output file)",
      fix="Move the file out of the table and load it properly: `acidtool convert` re-wraps "
          "raw ORC into a delta directory Hive reads (`--move-sources` moves the originals out).")
def _foreign_files(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID001"]
    has_acid = bool(_acid_entries(p))
    base = next((e.name for e in p.state.entries if e.kind == "base"), None)
    for e in p.state.entries:
        if e.is_dir or is_hidden(e.name):
            continue
        kind = _file_name(e.name).kind
        if kind != "original":
            if base is not None:
                effect = f"Hive never reads it ({base} exists), so its rows are invisible"
            else:
                effect = ("Hive reads it as original (pre-ACID) data, with no bucket id in its "
                          "name (bucketId -1)")
            where = "next to ACID directories" if has_acid else "in a table directory"
            yield r.finding(p.path(e.name), f"foreign data file {where}: {effect}",
                            None if has_acid else "warning", file=e.name, size=e.size)
        elif base is not None:
            yield r.finding(p.path(e.name), f"original file next to {base}: Hive never reads "
                            "original files once a base exists, so its rows are invisible",
                            file=e.name, base=base)


@rule("ACID002", "invalid-acid-dir-name", "error", "names",
      "base_/delta_/delete_delta_ directory whose name Hive cannot parse",
      what="A directory whose name starts with `base_`, `delta_` or `delete_delta_` but does not "
           "parse the way Hive parses it (Java number rules, version-specific `_v` suffix).",
      why="getAcidState does not skip such a directory: it throws (NumberFormatException, "
          "StringIndexOutOfBoundsException) and the whole query fails.",
      example="delta_abc/, delta_5/ (no max write id), base_0000010_v0000020/ under Hive 3",
      fix="Rename the directory to Hive's form (`delta_%07d_%07d_%04d`) or move it out.")
def _invalid_names(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID002"]
    for e in p.state.entries:
        if not e.is_dir or is_hidden(e.name):
            continue
        problem = _dir_name_problem(e.name, ctx.hive_version)
        if problem is not None:
            yield r.finding(p.path(e.name), problem[0], hive_exception=problem[1])


@functools.lru_cache(maxsize=65536)
def _dir_name_problem(name: str, hive_version: str) -> tuple[str, str] | None:
    """(message, Hive's exception) where Hive cannot parse a directory name; the partitions
    of a table repeat the same few names."""
    try:
        parse_dir_name(name, hive_version)
    except InvalidNameError as exc:
        return exc.message, exc.hive_exception
    return None


@rule("ACID003", "stray-directory", "warning", "names",
      "Unknown, temporary or nested directory in a table or partition",
      what="Leftover staging and temporary directories (`.hive-staging_*`, `_temporary`, "
           "`__tmp*`, `_acidtool_staging_*`), non-ACID subdirectories next to ACID "
           "directories, and directories nested inside a base or delta.",
      why="Failed jobs leave these behind. Hive reads non-ACID subdirectories as original data "
          "and engines disagree on nested files; a staging directory of `acidtool convert` "
          "means a conversion was killed before its commit.",
      example="orders/.hive-staging_hive_2024-01-01_12-00-00_1234/, "
              "orders/delta_0000003_0000003_0000/part-1/",
      fix="Check that no job is still writing, then delete the directory.")
def _stray_dirs(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID003"]
    has_acid = bool(_acid_entries(p))
    for e in p.state.entries:
        if not e.is_dir:
            continue
        if is_hidden(e.name):
            if STAGING.match(e.name):
                yield r.finding(p.path(e.name), "temporary or staging directory left behind",
                                files=e.file_count)
        elif e.kind == "original_dir" and has_acid and not is_partition_component(e.name):
            yield r.finding(p.path(e.name), "non-ACID directory next to ACID directories: Hive "
                            "reads its files as original data only while there is no base",
                            files=e.file_count)
        elif e.kind in ("base", "delta", "delete_delta"):
            nested = sorted({f.path.split("/")[0] for f in e.files if "/" in f.path
                             and not is_hidden(f.path.split("/")[0])})
            for sub in nested:
                yield r.finding(p.path(f"{e.name}/{sub}"), f"directory nested inside {e.name}: "
                                "Hive 3 ignores it, Hive 4 may read its files")


@rule("ACID004", "bad-bucket-file-name", "error", "names",
      "File in a base or delta whose name is not a bucket file",
      what="A data file inside `base_`/`delta_`/`delete_delta_` whose name is not `bucket_N` "
           "(Hive 4 also allows `bucket_N_ATTEMPT`; Hive 3+ allows original names like "
           "`000000_0` in insert directories written by LOAD DATA).",
      why="Hive derives the bucket from the file name. Other names give bucket id -1: Hive 3 "
          "fails with `bucketId out of range: -1`, and delete events are looked up in the wrong "
          "file.",
      example="orders/delta_0000007_0000007_0000/orders__6f1c9e2a_3b7d (a DataX file)",
      fix="Re-write the data with `acidtool convert`, which names files `bucket_%05d`.")
def _bad_file_names(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID004"]
    for e in _acid_entries(p):
        for name in _data_files(p, e):
            fn = _file_name(name)
            if fn.kind == "bucket":
                if fn.attempt_id is not None and ctx.hive_version != "4":
                    yield r.finding(p.path(f"{e.name}/{name}"), f"attempt-suffixed bucket file: "
                                    f"Hive {ctx.hive_version} cannot parse its bucket id")
                continue
            if fn.kind == "original" and ctx.hive_version != "2" and e.kind != "delete_delta":
                continue  # raw (LOAD DATA) layout
            if fn.kind in ("acid_version", "metadata"):
                continue
            yield r.finding(p.path(f"{e.name}/{name}"),
                            f"'{name}' is not a bucket file name: Hive gives it bucket id -1")


@rule("ACID005", "acid-version-marker", "warning", "names",
      "Base or delta without a `_orc_acid_version` marker, or with unexpected contents",
      what="Hive 3+ writers put a one-byte file `_orc_acid_version` containing `2` in every "
           "base and delta. The rule reports directories without it (Hive 3/4 only) and, from "
           "--level metadata, markers with other contents.",
      why="Hive's own readers tolerate its absence, but some engines use it to tell the ACID "
          "format version, and its absence betrays a directory not written by Hive 3+.",
      example="orders/delta_0000003_0000003_0000/ holding only bucket_00000",
      fix="Write the marker (`printf 2 > dir/_orc_acid_version`), or let `acidtool convert` "
          "write the directory.")
def _acid_version_marker(p: PartitionFacts, ctx: Context):
    if ctx.hive_version == "2":
        return
    r = REGISTRY["ACID005"]
    for e in _live_acid_entries(p):
        if not any(f.path == ACID_VERSION_FILE for f in e.files):
            if e.files:
                yield r.finding(p.path(e.name), f"no {ACID_VERSION_FILE} in {e.name}")
            continue
        content = p.markers.get(f"{e.name}/{ACID_VERSION_FILE}")
        if content is not None and content.strip() != b"2":
            yield r.finding(p.path(f"{e.name}/{ACID_VERSION_FILE}"),
                            f"{ACID_VERSION_FILE} holds {content[:16]!r}, expected b'2'")


# ------------------------------------------------------------------------------------------------
# Metadata level


@rule("ACID006", "unreadable-orc", "error", "metadata",
      "File that is not readable ORC",
      what="A data file Hive would read whose bytes are not a readable ORC file: bad magic, a "
           "truncated tail, zero bytes, or a damaged postscript or footer. The whole footer is "
           "decoded (types, stripes, every column's statistics) and checked the way ORC's "
           "Java reader parses it when it opens a file. At `--level rows`, also a file whose "
           "ACID columns cannot be decoded (damage inside a stripe; the `row` payload is not "
           "read).",
      why="The query that reaches the file fails.",
      example="orders/delta_0000004_0000004_0000/bucket_00000 of 0 bytes after a killed copy",
      fix="Restore the file from its source or remove the directory it belongs to.")
def _unreadable(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID006"]
    for rel, facts in sorted(p.files.items()):
        if facts.error is not None:
            yield r.finding(p.path(rel), facts.error)
        else:
            rows = p.rows.get(rel)
            if rows is not None and rows.error is not None:
                yield r.finding(p.path(rel), rows.error)


@rule("ACID007", "not-acid-schema", "error", "metadata",
      "ORC file in a base or delta without the ACID event schema",
      what="A bucket file (or any file in a delete delta) whose schema is not the six-column ACID "
           "event struct `operation, originalTransaction, bucket, rowId, currentTransaction, "
           "row`.",
      why="The classic DataX / plain-Spark case: Hive fails with `ORC ACID file should have 6 "
          "columns` or reads garbage.",
      example="orders/delta_0000008_0000008_0000/bucket_00000 with schema struct<id:int,...>",
      fix="`acidtool convert` re-wraps plain ORC into the ACID event schema.")
def _not_acid(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID007"]
    for e, name, rel, facts, acid in _index(p).live_files:
        if facts is None or facts.error is not None or acid:
            continue
        kind = _file_name(name).kind
        if kind == "original" and ctx.hive_version != "2" and e.kind != "delete_delta":
            continue  # raw (LOAD DATA) layout: plain schema expected
        yield r.finding(p.path(rel), "not in the ACID event schema (found "
                        f"{facts.footer.type_string()[:120]})")


@rule("ACID008", "acid-schema-mismatch", "error", "metadata",
      "ACID schema with wrong field order, names or types",
      what="A file that looks like an ACID event file (its columns include `row` or the ACID "
           "names) but whose top-level fields differ from the exact names, order and types.",
      why="Newer Hive 4 recognises ACID files by the exact field names; Hive reads fields by "
          "position, so a wrong order or type mixes up write ids and row ids. Lower-case names "
          "(written by Hive 3.1's query-based compaction) are a warning: engines differ.",
      example="struct<operation:int,originaltransaction:bigint,bucket:int,...>",
      fix="Re-write the file with the exact schema (`acidtool convert`).")
def _schema_mismatch(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID008"]
    for rel, facts in sorted(p.files.items()):
        if facts.error is not None or facts.footer is None:
            continue
        problem = _schema_problem(facts.footer)
        if problem is not None:
            yield r.finding(p.path(rel), problem[1], problem[0])


def _schema_problem(footer) -> tuple[str | None, str] | None:
    """(severity or None for the rule's, message) of an ACID-like schema that is not exactly
    the event schema; worked out once per schema."""
    derived = footer.schema.derived
    if "acid008" not in derived:
        derived["acid008"] = _judge_schema(footer)
    return derived["acid008"]


def _judge_schema(footer) -> tuple[str | None, str] | None:
    fields = _top_fields(footer)
    names = [n for n, _ in fields]
    lower = [n.lower() for n in names]
    if "row" not in lower and len(set(lower) & {n.lower() for n in ACID_NAMES}) < 3:
        return None
    types = tuple(t for _, t in fields[:5])
    exact = tuple(names) == ACID_NAMES and types == ACID_TYPES and \
        fields[5][1].startswith("struct<")
    if exact:
        return None
    if lower == [n.lower() for n in ACID_NAMES] and types == ACID_TYPES:
        return "warning", f"ACID field names differ in case from Hive's ({', '.join(names)})"
    return None, f"ACID-like schema with wrong fields: {footer.type_string()[:160]}"


@rule("ACID009", "missing-key-index", "error", "metadata",
      "ACID file without `hive.acid.key.index`",
      what="A file in the ACID event schema whose ORC user metadata has no `hive.acid.key.index`.",
      why="Hive 2, 3 and older 4 decide whether a file is ACID by the presence of this key: "
          "without it the file is treated as an original file and its event columns are read "
          "as table columns.",
      example="a delta written by a plain ORC writer with the right columns but no metadata",
      fix="Re-write with a writer that sets the key index (`acidtool convert`).")
def _missing_key_index(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID009"]
    for f in _acid_files(p):
        if "hive.acid.key.index" not in f.footer.metadata:
            yield r.finding(p.path(f.rel), "no hive.acid.key.index in the ORC user metadata: "
                            "Hive would read it as an original file")


@functools.lru_cache(maxsize=65536)
def _parse_index(raw: bytes) -> list[tuple[int, int, int]] | None:
    out = []
    for part in (x for x in raw.decode("utf-8", "replace").split(";") if x):
        pieces = part.split(",")
        if len(pieces) != 3:
            return None
        try:
            out.append(tuple(int(x) for x in pieces))
        except ValueError:
            return None
    return out


def _index_length_fits(entries: int, stripes: int, ctx: Context) -> bool:
    """One key index entry per stripe; Hive 2 writers leave out the last stripe's."""
    return entries == stripes or (ctx.hive_version == "2" and entries == stripes - 1)


@rule("ACID010", "key-index-mismatch", "error", "metadata",
      "`hive.acid.key.index` that does not match the stripes' last keys",
      what="The key index must hold one `originalTransaction,bucket,rowId;` entry per stripe "
           "(Hive 2 writers leave out the last stripe). At --level rows each entry is compared "
           "with the stripe's actual last event.",
      why="Readers use the index to bound each split's key range and to decide which delete "
          "events apply; a wrong index hides or resurrects rows.",
      example="a 3-stripe file whose index has 1 entry",
      fix="Re-write the file (`acidtool convert`) or major-compact the partition.")
def _key_index(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID010"]
    for f in _acid_files(p):
        rel, footer = f.rel, f.footer
        raw = footer.metadata.get("hive.acid.key.index")
        if raw is None:
            continue
        entries = _parse_index(raw)
        stripes = footer.stripe_count
        if entries is None:
            yield r.finding(p.path(rel), f"unparsable hive.acid.key.index {raw[:80]!r}")
            continue
        if not _index_length_fits(len(entries), stripes, ctx) and not _index_length_fits(
                len(entries), sum(1 for s in footer.stripes if s.rows), ctx):
            yield r.finding(p.path(rel), f"hive.acid.key.index has {len(entries)} entries for "
                            f"{stripes} stripes", entries=len(entries), stripes=stripes)
            continue
        if f.scan is None:
            continue
        for i, (entry, actual) in enumerate(zip(entries, f.scan.stripe_last_keys)):
            if actual is not None and tuple(entry) != tuple(actual):
                yield r.finding(p.path(rel), f"key index entry {i} is {entry}, but stripe {i} "
                                f"ends with {actual}", stripe=i)
                break


@rule("ACID011", "missing-acid-version-metadata", "warning", "metadata",
      "ACID file without `hive.acid.version` in its metadata",
      what="Hive 3+ writers set the ORC user metadata key `hive.acid.version` to `2`.",
      why="Trino rejects ACID files without it (\"expected to be >= 2 but was empty\") and "
          "advises a major compaction; Hive itself does not need it.",
      example="a delta written by a Hive 2 writer or a hand-rolled ORC writer, read by Trino",
      fix="Major-compact the partition, or re-write with `acidtool convert`.")
def _missing_acid_version(p: PartitionFacts, ctx: Context):
    if ctx.hive_version == "2":
        return
    r = REGISTRY["ACID011"]
    for f in _acid_files(p):
        if "hive.acid.version" not in f.footer.metadata:
            yield r.finding(p.path(f.rel), "no hive.acid.version in the ORC user metadata")


# The bucket properties of a table's files are few (one per bucket and statement): what they
# decode to is worked out once for each, not once per file.

@functools.lru_cache(maxsize=65536)
def _bucket_problem(values: tuple[int, ...], bucket_id: int) -> tuple[str, dict] | None:
    """What is wrong with the bucket properties ``values`` in the file of ``bucket_id``."""
    decoded = [_bucket_of(v) for v in values]
    for v, (b, _, codec) in zip(values, decoded):
        if b is None:
            return f"bucket property {v} has codec version {codec}, which does not exist", {}
    ids = sorted({b for b, _, _ in decoded})
    if ids != [bucket_id]:
        return (f"rows carry bucket id {', '.join(map(str, ids))} in bucket file {bucket_id}",
                {"found": ids, "expected": bucket_id})
    return None


@rule("ACID012", "bucket-id-mismatch", "error", "metadata",
      "Bucket id in the rows differs from the bucket file name",
      what="Every event in `bucket_N` must carry a bucket property that decodes to N (from the "
           "ORC column statistics, or every row at --level rows).",
      why="Hive loads the delete events for bucket N only from `bucket_N` of each delete delta "
          "and fails with \"Corrupted records with different bucket ids\"; mismatched rows "
          "are never deleted.",
      example="delete_delta_0000009_0000009_0000/bucket_00000 holding deletes for bucket 1",
      fix="Re-write the events into the file of their bucket.")
def _bucket_mismatch(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID012"]
    for f in _acid_files(p):
        rel, fn = f.rel, f.file
        if fn.kind != "bucket" or f.footer.rows == 0:
            continue
        values = f.buckets
        problem = _bucket_problem(values, fn.bucket_id) if values else None
        if problem is not None:
            message, details = problem
            yield r.finding(p.path(rel), message, **details)


@rule("ACID013", "statement-id-mismatch", "error", "metadata",
      "Statement id in the bucket property differs from the directory's",
      what="In `delta_W_W_S`, insert events carry statement id S in their bucket property "
           "(BucketCodec V1). Compacted directories without S are not checked, nor delete "
           "deltas (their events copy the deleted row's property).",
      why="ROW__IDs of two statements of one transaction differ only by the statement bits; a "
          "wrong statement id lets a delete in one statement hit rows of another.",
      example="delta_0000005_0000005_0001/bucket_00000 with bucket 536870912 (statement 0)",
      fix="Re-write with the right statement id (`acidtool convert --statement-id`).")
def _statement_mismatch(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID013"]
    for f in _acid_files(p):
        entry = f.entry
        if entry.kind != "delta":
            continue
        stmt = entry.parsed.statement_id
        if stmt == NO_STATEMENT or f.footer.rows == 0:
            continue
        if f.scan is not None:
            if set(f.scan.operations) - {0}:
                continue
        elif f.operation != (0, 0):
            continue
        stmts = _other_statements(f.buckets, stmt)
        if stmts is not None:
            yield r.finding(p.path(f.rel), f"insert events carry statement id "
                            f"{', '.join(map(str, stmts))} in {entry.name} (statement "
                            f"{stmt})", found=stmts, expected=stmt)


@functools.lru_cache(maxsize=65536)
def _other_statements(values: tuple[int, ...], statement_id: int) -> list[int] | None:
    """The statement ids of the V1 bucket properties ``values``, where they are not just
    ``statement_id`` (None where they are, or where any property is of another codec)."""
    decoded = [_bucket_of(v) for v in values]
    if any(codec != 1 for _, _, codec in decoded):
        return None
    stmts = sorted({s for _, s, _ in decoded})
    return stmts if stmts and stmts != [statement_id] else None


@rule("ACID014", "write-id-out-of-range", "error", "metadata",
      "Write ids in the rows outside the directory's range",
      what="currentTransaction must lie within a delta's MIN..MAX (at most W in `base_W`), "
           "originalTransaction must not exceed the top of the range, and insert events have "
           "originalTransaction equal to currentTransaction (checked per row at --level rows).",
      why="Hive selects directories by their names and filters rows by write id; rows outside "
          "the range are read under the wrong snapshot or never.",
      example="delta_0000007_0000007_0000/bucket_00000 whose rows say currentTransaction 1",
      fix="Re-write the events with the directory's write id (`acidtool convert --write-id`).")
def _write_id_range(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID014"]
    for f in _acid_files(p):
        entry, rel, rows = f.entry, f.rel, f.scan
        if f.footer.rows == 0:
            continue
        d = entry.parsed
        lo, hi = (d.min_write_id, d.max_write_id) if entry.kind != "base" else (None, d.write_id)
        if entry.kind == "base" and d.write_id < -(2**62):
            continue
        if rows is not None:
            cur = (rows.min_current, rows.max_current)
            org = (rows.min_original, rows.max_original)
        else:
            cur, org = f.current, f.original
        problems = []
        if cur and cur[0] is not None:
            if (lo is not None and cur[0] < lo) or cur[1] > hi:
                span = f"{lo}..{hi}" if lo is not None else f"at most {hi}"
                problems.append(f"currentTransaction {cur[0]}..{cur[1]} outside {span}")
        if org and org[1] is not None and org[1] > hi:
            problems.append(f"originalTransaction up to {org[1]} above {hi}")
        if rows is not None and rows.inserts_with_other_original and \
                entry.kind == "delta" and not _is_legacy(p, ctx):
            problems.append(f"{rows.inserts_with_other_original} insert events with "
                            "originalTransaction != currentTransaction")
        if problems:
            yield r.finding(p.path(rel), "; ".join(problems))


@rule("ACID015", "unsorted-events", "error", "rows",
      "Rows not sorted by (originalTransaction, bucket, rowId)",
      what="Within an ACID file, events must be in ascending (originalTransaction, bucket, "
           "rowId) order.",
      why="Hive's merge and its key-range split logic rely on that order; unsorted files drop "
          "or duplicate rows silently.",
      example="a delta written by Spark with the events in arbitrary order",
      fix="Re-write the file sorted (`acidtool convert` writes row ids in order).")
def _unsorted(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID015"]
    for rel, rows in _scans(p):
        if rows.first_unsorted is not None:
            yield r.finding(p.path(rel), f"events go backwards at row {rows.first_unsorted}",
                            row=rows.first_unsorted)


@rule("ACID016", "duplicate-row-id", "error", "rows",
      "Duplicate (originalTransaction, bucket, rowId) within a file",
      what="Two events with the same ROW__ID in one file.",
      why="A ROW__ID names one row; duplicates make updates and deletes hit the wrong row, and "
          "Hive's merge can fail with `Two readers for {...}`.",
      example="the same source file converted twice into one delta",
      fix="Re-write the file with unique row ids.")
def _duplicates(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID016"]
    for rel, rows in _scans(p):
        if rows.first_duplicate is not None:
            yield r.finding(p.path(rel), f"duplicate ROW__ID at row {rows.first_duplicate}",
                            row=rows.first_duplicate)


@rule("ACID017", "wrong-operation", "error", "metadata",
      "Wrong operation for the directory in a split-update table",
      what="With split-update (Hive 3+, and Hive 2 with delete deltas) insert deltas hold only "
           "operation 0 and delete deltas only operation 2 with a null `row`. Hive 2 \"legacy\" "
           "tables (no delete_delta_ directories) may hold updates (1) and deletes (2) in "
           "deltas.",
      why="Hive 3 cannot read update events or deletes in insert deltas; a delete event with "
          "a row, or an insert in a delete delta, is applied the wrong way.",
      example="delete_delta_0000004_0000004_0000/bucket_00000 holding operation 0 events",
      fix="Major-compact under the Hive version that wrote the table, or re-write the events.")
def _wrong_operation(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID017"]
    legacy = _is_legacy(p, ctx)
    for f in _acid_files(p):
        entry, rel = f.entry, f.rel
        if entry.kind == "base" or (entry.kind == "delta" and f.operation == (0, 0)
                                    and f.scan is None) or f.footer.rows == 0:
            continue  # (inserts in an insert delta: the usual file, and nothing to say)
        if f.scan is not None:
            ops = set(f.scan.operations)
        elif f.operation is not None:
            ops = set(f.operation)
        else:
            continue
        if entry.kind == "delta":
            bad = ops - ({0, 1, 2} if legacy else {0})
            if bad:
                yield r.finding(p.path(rel), f"operation {', '.join(map(str, sorted(bad)))} in "
                                "an insert delta of a split-update table")
        else:
            problems = []
            if ops - {2}:
                problems.append(f"operation {', '.join(map(str, sorted(ops - {2})))} in a "
                                "delete delta")
            row_fields = [t for n, t in _top_fields(f.footer) if n.lower() == "row"]
            values = _column_values(f.footer, "row")
            if row_fields and row_fields[0] != "struct<>" and values:
                problems.append(f"{values} events carry a row (delete events have none)")
            if problems:
                yield r.finding(p.path(rel), "; ".join(problems))


# ------------------------------------------------------------------------------------------------
# Layout rules


@rule("ACID018", "overlapping-deltas", "error", "names",
      "Overlapping or duplicate deltas that no compaction explains",
      what="Two deltas of the same kind whose write-id ranges partly overlap (neither contains "
           "the other), or two directories that spell the same range and statement differently.",
      why="Compaction only produces nested ranges. Hive does not check containment: it reads "
          "both overlapping deltas, so the shared write ids are read twice.",
      example="delta_0000001_0000005/ and delta_0000003_0000008/; delta_5_5_0000/ and "
              "delta_0000005_0000005_0000/",
      fix="Find which writer produced the odd one, keep the right data, remove the other.")
def _overlaps(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID018"]
    deltas = sorted((e.parsed for e in _live_acid_entries(p) if isinstance(e.parsed, Delta)),
                    key=Delta.sort_key)
    seen: dict = {}
    for d in deltas:
        key = (d.delete, d.min_write_id, d.max_write_id, d.statement_id, d.visibility_txn_id)
        if key in seen:
            yield r.finding(p.path(d.name), f"{d.name} duplicates {seen[key]}", other=seen[key])
        else:
            seen[key] = d.name
    for i, a in enumerate(deltas):
        for b in deltas[i + 1:]:
            if b.min_write_id > a.max_write_id:
                break
            if a.delete == b.delete and a.min_write_id < b.min_write_id <= a.max_write_id \
                    < b.max_write_id:
                yield r.finding(p.path(b.name), f"{b.name} partly overlaps {a.name}: Hive "
                                "reads both", other=a.name)


def _row_types(facts: FileFacts, acid: bool) -> list[str] | None:
    """The row columns' types (the ``row`` struct's, or an original file's), once per schema."""
    footer = facts.footer
    derived = footer.schema.derived
    key = "row_types_acid" if acid else "row_types_plain"
    found = derived.get(key, derived)
    if found is not derived:
        return found
    found = None
    if acid:
        for name, cid in footer.top_level():
            if name.lower() == "row":
                found = [footer.type_string(s) for s in footer.types[cid].subtypes]
                break
    else:
        found = [t for _, t in _top_fields(footer)]
    derived[key] = found
    return found


def _row_types_seen(p: PartitionFacts, ctx: Context) -> list[tuple[str, list[str], list[str]]]:
    """(partition url, row column types, files) for each row layout among the live data files
    (and the original files read) of a partition: what ACID019 compares across the table.
    Grouped by layout: a partition's files nearly always share one."""
    groups: dict[int, tuple[str, list[str], list[str]]] = {}  # files of one schema share types

    def add(rel: str, types: list[str]) -> None:
        group = groups.get(id(types))
        if group is None:
            group = groups[id(types)] = (p.url, types, [])
        group[2].append(rel)

    for entry, name, rel, facts, acid in _index(p).live_files:
        if entry.kind == "delete_delta" or facts is None or facts.error is not None:
            continue
        if not acid and _file_name(name).kind != "original":
            continue
        types = _row_types(facts, acid)
        if types:
            add(rel, types)
    if p.state.base is None:
        for rel in p.state.original_files:
            facts = p.files.get(rel)
            if facts is not None and facts.error is None and not _is_acid_file(facts):
                add(rel, _row_types(facts, False))
    return list(groups.values())


@rule("ACID019", "row-schema-differs", "error", "metadata",
      "`row` struct differs between files of the same table (or from --schema)",
      what="The column types of the `row` struct (and of original files) compared by position "
           "across all live files of the table, or with the table schema given as --schema. "
           "Names are not compared: Hive 2.3 writes `_col0`, `_col1`...",
      why="Hive reads row columns by position with the table's types: a file with another "
          "layout returns wrong values or fails to cast.",
      example="one delta with row struct<id:int,name:string>, another with struct<name:string,"
              "id:int>",
      fix="Re-write the odd files with the table's schema (`acidtool convert --schema`).",
      gather=_row_types_seen)
def _row_schema(seen: list[tuple[str, list[str], list[str]]], ctx: Context):
    r = REGISTRY["ACID019"]
    if ctx.schema:
        try:
            expected = [t for _, t in struct_fields(ctx.schema)]
        except TypeStringError:
            return
        source = "--schema"
    else:
        if not seen:
            return
        files: Counter = Counter()
        first: dict[tuple[str, ...], str] = {}
        for url, types, rels in seen:
            key = tuple(types)
            files[key] += len(rels)
            path = url_of(url, min(rels))
            first[key] = min(first.get(key, path), path)
        # the layout of most files; of two as common, the one met first in path order (not
        # in the order partitions were gathered, which differs between processes)
        expected = list(min(files, key=lambda k: (-files[k], first[k])))
        source = "most files"
    wanted = [normalize(t) for t in expected]
    for url, types, rels in seen:
        if [normalize(t) for t in types] != wanted:
            for rel in rels:
                yield r.finding(url_of(url, rel), f"row columns ({', '.join(types)}) differ "
                                f"from {source} ({', '.join(expected)})", found=types,
                                expected=list(expected))


@rule("ACID020", "invisible-directory", "warning", "names",
      "Directory the given snapshot does not see (above the high watermark, open or aborted)",
      what="With --write-ids, bases and deltas that the snapshot ignores: above its high "
           "watermark, of open or aborted write ids only, or of an uncommitted compactor.",
      why="Their data is invisible to readers of that snapshot: typically files committed to "
          "the filesystem but not to the metastore (a load whose write id was never committed).",
      example="delta_0000012_0000012_0000/ with --write-ids 'db.t:11:9223372036854775807::'",
      fix="Commit the write id in the metastore (or remove the directory if the load failed).")
def _invisible(p: PartitionFacts, ctx: Context):
    if not ctx.snapshot_given:
        return
    r = REGISTRY["ACID020"]
    for e in _acid_entries(p):
        if e.status == "ignored":
            yield r.finding(p.path(e.name), f"invisible in this snapshot: {e.reason}")


@rule("ACID021", "cleaner-behind", "info", "names",
      "Obsolete or aborted directories still present",
      what="Directories Hive's cleaner would delete: superseded by a base or a compacted delta, "
           "or holding only aborted writes.",
      why="Harmless for readers, but they cost listing time and space, and mean the cleaner is "
          "behind or blocked by long-running readers.",
      example="delta_0000001_0000001_0000/ next to base_0000005/",
      fix="Check the compactor and cleaner (`SHOW COMPACTIONS`); they are removed once no "
          "reader needs them.")
def _cleaner(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID021"]
    for e in _acid_entries(p):
        if e.status in ("obsolete", "aborted"):
            yield r.finding(p.path(e.name), f"{e.status}: {e.reason}", status=e.status)


@rule("ACID022", "open-streaming-file", "info", "names",
      "Open streaming file (`_flush_length` side file present)",
      what="A `bucket_N_flush_length` side file: a Hive streaming client has a transaction "
           "batch open on `bucket_N`.",
      why="Normal while the client writes: readers stop at the last flushed length. If no "
          "client is running, the batch was never closed and the tail of the file is not "
          "committed.",
      example="delta_0000021_0000030/bucket_00000_flush_length",
      fix="Nothing while the client runs; otherwise close or abort its transaction batch.")
def _open_streaming(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID022"]
    for e in _acid_entries(p):
        for f in e.files:
            if f.path.endswith(FLUSH_LENGTH_SUFFIX) and _file_name(f.name).kind == "flush_length":
                yield r.finding(p.path(f"{e.name}/{f.path}"), "open streaming file: readers "
                                "stop at its flushed length")


@rule("ACID023", "unread-original-data", "info", "names",
      "Original data Hive will never read because a base exists",
      what="Non-ACID subdirectories (and their files) of a partition that has a base.",
      why="After a major compaction original data is obsolete and the cleaner removes it; "
          "anything copied there later is never read.",
      example="HIVE_UNION_SUBDIR_1/000000_0 next to base_0000005/",
      fix="Nothing if it was compacted; otherwise load the data properly.")
def _unread_originals(p: PartitionFacts, ctx: Context):
    if p.state.base is None:
        return
    r = REGISTRY["ACID023"]
    for e in p.state.entries:
        if e.kind == "original_dir" and not is_partition_component(e.name):
            yield r.finding(p.path(e.name), f"{e.file_count} original files never read: "
                            f"{p.state.base} exists", files=e.file_count)


def _table_name(url: str, ctx: Context) -> str:
    if ctx.table_name:
        return ctx.table_name
    parts = [x for x in url.rstrip("/").split("/") if x and not is_partition_component(x)]
    for i, part in enumerate(parts[:-1]):
        if part.endswith(".db"):
            return f"{part[:-3]}.{parts[i + 1]}"
    return parts[-1] if parts else "<table>"


@rule("ACID024", "compaction-due", "info", "names",
      "Compaction due: too many deltas, or deltas large next to the base",
      what="More current deltas than hive.compactor.delta.num.threshold (10), or deltas "
           "larger than hive.compactor.delta.pct.threshold (0.1) of the base. Thresholds: "
           "--delta-num-threshold, --delta-pct-threshold. The finding carries the statement.",
      why="Every delta is another file to open and merge for every read; Hive's initiator "
          "would schedule a compaction.",
      example="25 deltas on top of base_0000100/",
      fix="Run the statement in the finding (`ALTER TABLE ... COMPACT 'minor'` or 'major').")
def _compaction_due(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID024"]
    deltas = [e for e in p.state.delta_entries]
    if not deltas:
        return
    base = p.state.base_entry
    delta_bytes = sum(e.size for e in deltas)
    kind, why = None, ""
    if base is not None and base.size and delta_bytes / base.size > ctx.thresholds.delta_pct:
        kind, why = "major", (f"deltas are {delta_bytes / base.size:.0%} of the base "
                              f"(threshold {ctx.thresholds.delta_pct:.0%})")
    elif len(deltas) > ctx.thresholds.delta_num:
        kind, why = "minor", (f"{len(deltas)} deltas (threshold {ctx.thresholds.delta_num})")
    if kind is None:
        return
    part = ""
    if p.partition:
        spec = ", ".join(f"{k}='{v}'" for k, _, v in (c.partition("=") for c in
                                                     p.partition.split("/")))
        part = f" PARTITION ({spec})"
    statement = f"ALTER TABLE {_table_name(p.url, ctx)}{part} COMPACT '{kind}'"
    yield r.finding(p.url, f"compaction due: {why}", statement=statement, kind=kind)


@rule("ACID025", "null-event-value", "error", "rows",
      "Null in an ACID event column",
      what="A null operation, originalTransaction, bucket, rowId or currentTransaction in an "
           "ACID file (its rows are scanned at --level rows).",
      why="Hive's writers never write one. Its row-by-row reader takes each of these values "
          "as a Java int or long (OrcRecordUpdater's getters unbox the field) and fails with a "
          "NullPointerException.",
      example="a delta written by a foreign tool whose bucket column is null for some rows",
      fix="Re-write the events with every column set (`acidtool convert`).")
def _null_event_values(p: PartitionFacts, ctx: Context):
    r = REGISTRY["ACID025"]
    for rel, rows in _scans(p):
        if any(rows.null_values):
            found = {name: count for name, count in zip(ACID_NAMES, rows.null_values) if count}
            yield r.finding(p.path(rel), "null values in ACID event columns: " + ", ".join(
                f"{name} {count}" for name, count in found.items()), nulls=found)


# ------------------------------------------------------------------------------------------------


def run_rules(table: TableFacts, ctx: Context, selected: Iterable[str] | None = None
              ) -> list[Finding]:
    """Every selected rule whose level is reached, over every partition, in code order."""
    codes = sorted(REGISTRY if selected is None else selected)
    out, gathered = check_partitions(table.partitions, ctx, codes)
    out.extend(check_table(gathered, ctx, codes))
    out.sort(key=lambda f: f.code)  # stable: within a code, partitions in order
    return out


def check_partitions(partitions: Iterable[PartitionFacts], ctx: Context, codes: Iterable[str]
                     ) -> tuple[list[Finding], dict[str, list]]:
    """``check_partition`` over several partitions of one table: the findings of all, and
    what the table rules gathered from all."""
    codes = list(codes)
    out: list[Finding] = []
    gathered: dict[str, list] = {}
    for p in partitions:
        found, values = check_partition(p, ctx, codes)
        out.extend(found)
        add_gathered(gathered, values)
    return out, gathered


def check_partition(p: PartitionFacts, ctx: Context, codes: Iterable[str]
                    ) -> tuple[list[Finding], dict[str, list]]:
    """The findings of the partition rules in ``codes`` over ``p``, and what each table rule
    gathers from it (for ``check_table``, once every partition is gathered)."""
    found: list[Finding] = []
    gathered: dict[str, list] = {}
    _INDEX.pop(id(p), None)  # left by an object that had this id before, if any
    try:
        for code in codes:
            r = REGISTRY[code]
            if not ctx.at_least(r.level):
                continue
            if r.gather is None:
                found.extend(r.check(p, ctx))
            else:
                gathered[code] = r.gather(p, ctx)
    finally:
        _INDEX.pop(id(p), None)  # the partition's lookups are done with
    return found, gathered


def add_gathered(into: dict[str, list], values: dict[str, list]) -> None:
    for code, items in values.items():
        into.setdefault(code, []).extend(items)


def check_table(gathered: dict[str, list], ctx: Context, codes: Iterable[str]
                ) -> list[Finding]:
    """The findings of the table rules in ``codes`` over what they gathered from every
    partition of one table."""
    out: list[Finding] = []
    for code in codes:
        r = REGISTRY[code]
        if r.gather is not None and ctx.at_least(r.level):
            out.extend(r.check(gathered.get(code, []), ctx))
    return out
