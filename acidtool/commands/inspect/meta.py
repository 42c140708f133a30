"""``acidtool meta``: what an ORC file's footer says, with Hive's ACID metadata decoded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from ...core.bucket import BucketCodecError, decode
from ...core.errors import OrcReadError
from ...core.snapshot import make_snapshot
from ...io.orc import OrcSource, is_acid_schema, open_orc


@dataclass(frozen=True)
class KeyIndexEntry:
    stripe: int
    original_transaction: int
    bucket: int
    row_id: int


@dataclass(frozen=True)
class AcidMetadata:
    key_index: tuple[KeyIndexEntry, ...] | None  # None: no hive.acid.key.index key
    key_index_raw: str | None
    key_index_error: str | None
    stats: dict | None
    stats_raw: str | None
    version: str | None


def parse_key_index(text: str) -> tuple[KeyIndexEntry, ...]:
    """``otid,bucket,rowid;`` per stripe (OrcRecordUpdater's KeyIndexBuilder)."""
    entries = []
    for i, part in enumerate(p for p in text.split(";") if p):
        fields = part.split(",")
        if len(fields) != 3:
            raise ValueError(f"entry {i} {part!r} is not 'originalTransaction,bucket,rowId'")
        otid, bucket, row = (int(x) for x in fields)
        entries.append(KeyIndexEntry(i, otid, bucket, row))
    return tuple(entries)


def parse_acid_stats(text: str) -> dict:
    fields = text.split(",")
    if len(fields) != 3:
        raise ValueError(f"{text!r} is not 'inserts,updates,deletes'")
    inserts, updates, deletes = (int(x) for x in fields)
    return {"inserts": inserts, "updates": updates, "deletes": deletes}


def acid_metadata(user: dict[str, bytes]) -> AcidMetadata:
    def text(key):
        value = user.get(key)
        return None if value is None else value.decode("utf-8", "replace")

    raw_index, raw_stats = text("hive.acid.key.index"), text("hive.acid.stats")
    index, index_error, stats = None, None, None
    if raw_index is not None:
        try:
            index = parse_key_index(raw_index)
        except ValueError as exc:
            index_error = str(exc)
    if raw_stats is not None:
        try:
            stats = parse_acid_stats(raw_stats)
        except ValueError as exc:
            stats = {"error": str(exc)}
    return AcidMetadata(index, raw_index, index_error, stats, raw_stats, text("hive.acid.version"))


def _plain(value):
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    return value


@dataclass
class FileMeta:
    path: str
    size: int
    rows: int
    compression: str
    compression_block_size: int
    file_version: str
    writer: str
    writer_version: str
    software_version: str
    row_index_stride: int
    schema: str
    acid_schema: bool
    stripes: list[dict] = field(default_factory=list)
    columns: list[dict] = field(default_factory=list)
    user_metadata: dict[str, str] = field(default_factory=dict)
    acid: AcidMetadata | None = None
    flush_length: dict | None = None
    calendar: str | None = None


def read_meta(src: OrcSource) -> FileMeta:
    """Everything from the footer this acidtool decodes itself (core/orcproto): no second
    reader, and no crash on statistics other readers choke on (Presto-written strings)."""
    f, footer = src.file, src.footer
    user = src.user_metadata()
    stripes, first = [], 0
    for i, stripe in enumerate(footer.stripes):
        stripes.append({"stripe": i, "offset": stripe.offset, "length": stripe.length,
                        "rows": stripe.rows, "first_row": first, "index_length": stripe.index_length,
                        "data_length": stripe.data_length, "footer_length": stripe.footer_length})
        first += stripe.rows
    columns = []
    for cid, name in footer.column_names():
        st = footer.statistics[cid] if cid < len(footer.statistics) else None
        stats = {}
        if st is not None:
            stats = {"number_of_values": st.number_of_values, "has_null": st.has_null,
                     **{k: _plain(v) for k, v in st.values.items()}}
        columns.append({"id": cid, "name": name, "type": footer.type_string(cid),
                        "statistics": stats})
    acid = acid_metadata(user) if any(k.startswith("hive.acid.") for k in user) else None
    meta = FileMeta(
        path=src.path, size=src.size, rows=f.nrows,
        compression=str(f.compression), compression_block_size=f.compression_size,
        file_version=str(f.file_version), writer=_described(f, "writer"),
        writer_version=_described(f, "writer_version"),
        software_version=str(f.software_version),
        row_index_stride=f.row_index_stride, schema=footer.type_string(),
        acid_schema=is_acid_schema(f.schema), stripes=stripes, columns=columns,
        user_metadata={k: v.decode("utf-8", "replace") for k, v in user.items()}, acid=acid,
        calendar=footer.calendar)
    if src.flush is not None:
        meta.flush_length = {"side_file": src.flush.path, "lengths": list(src.flush.lengths),
                             "committed": src.flush.committed, "file_size": src.real_size}
    return meta


def _described(f, attribute: str) -> str:
    """pyarrow's name for the writer (or its version), or "unknown" for one newer than
    pyarrow knows: a reader's ignorance, not a damaged file."""
    try:
        return str(getattr(f, attribute))
    except ValueError:
        return "unknown"


def meta_json(m: FileMeta) -> dict:
    doc = {k: v for k, v in m.__dict__.items() if k not in ("acid",)}
    acid = m.acid
    if acid is None:
        doc["acid"] = None
    else:
        entries = None
        if acid.key_index is not None:
            entries = []
            for e in acid.key_index:
                item: dict[str, object] = {"stripe": e.stripe, "originalTransaction": e.original_transaction,
                        "bucket": e.bucket, "rowId": e.row_id}
                try:
                    d = decode(e.bucket)
                    item.update(bucketId=d.bucket_id, statementId=d.statement_id,
                                codecVersion=d.codec_version)
                except BucketCodecError:
                    item.update({"bucketId": None, "statementId": None, "codecVersion": None})
                entries.append(item)
        doc["acid"] = {
            "key_index": entries, "key_index_raw": acid.key_index_raw,
            "key_index_error": acid.key_index_error,
            "stats": acid.stats, "stats_raw": acid.stats_raw, "version": acid.version,
        }
    return doc


@dataclass(frozen=True)
class MetaResult:
    files: list  # FileMeta of each readable file, in target order
    failed: bool  # a target or a file could not be read (each said through ``note``)


def meta(targets: Sequence[str], *, all_files: bool = False, hive_version: str = "4",
         note: Callable[[str], None]) -> MetaResult:
    """The footers of every ORC file the targets name; what cannot be read is told to
    ``note`` and the others are still read."""
    from .dump import DumpOptions, resolve_targets

    opts = DumpOptions(all_files=all_files, snapshot=make_snapshot(hive_version))
    errors: list[str] = []
    files = resolve_targets(targets, opts, errors, purpose="")
    for message in errors:
        note(f"error: {message}")
    docs, failed = [], bool(errors)
    for f in files:
        try:
            src = open_orc(f.loc, f.rel)
            for message in src.notes:
                note(message)
            docs.append(read_meta(src))
        except OrcReadError as exc:
            note(f"error: {exc}")
            failed = True
    return MetaResult(docs, failed)
