"""ORC reading: opening files (whole or up to a streaming writer's flushed length) for their rows.

pyarrow decodes data (fast, stripe by stripe); the footer (stripes, types, statistics, user
metadata) is acidtool's own decoding (``core.orcproto``; ``footers.py`` reads it without an ORC
reader); pyorc supplies a stripe's writer time zone and reads timestamps outside pyarrow's
nanosecond range (``orc_fallback.py``). Every failure to read becomes an OrcReadError naming the
file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

import pyarrow as pa
import pyarrow.orc as paorc

from ..core.errors import OrcReadError
from ..core.facts import ACID_NAMES
from ..core.flush import flush_lengths
from ..core.names import FLUSH_LENGTH_SUFFIX
from ..core.orcproto import Footer, ProtoError, parse_file_tail
from .footers import ORC_MAGIC, unreadable_reason
from .fs import Location, file_size, is_utf8, kind_of, open_input_file, read_bytes

if TYPE_CHECKING:  # annotations only: jsonl is imported where a context is made
    from .jsonl import FileContext

ACID_COLUMNS = ACID_NAMES
ACID_TYPES = ("int32", "int64", "int32", "int64", "int64")


@dataclass(frozen=True)
class FlushLength:
    """A ``bucket_N_flush_length`` side file: the committed lengths a streaming writer recorded."""

    path: str
    lengths: tuple[int, ...]

    @property
    def committed(self) -> int:
        return self.lengths[-1]


def parse_flush_lengths(data: bytes, path: str) -> FlushLength:
    """The side file's lengths (``core.flush``); OrcReadError where it has none to read."""
    try:
        return FlushLength(path, flush_lengths(data))
    except ValueError as exc:
        raise OrcReadError(f"{path}: flush-length file {exc}") from None


@dataclass
class OrcSource:
    """An opened ORC file. ``path`` is how the user should see it."""

    path: str
    size: int  # bytes read (the committed length for an open streaming file)
    file: paorc.ORCFile
    raw: pa.NativeFile
    flush: FlushLength | None = None
    real_size: int = 0
    notes: list[str] = field(default_factory=list)
    _chars: frozenset | None = None
    _contexts: dict = field(default_factory=dict)
    _footer: Footer | None = None
    location: tuple | None = None  # (filesystem, path) when the whole file is read in place

    @property
    def schema(self) -> pa.Schema:
        return self.file.schema

    @property
    def is_acid(self) -> bool:
        return is_acid_schema(self.file.schema)

    def user_metadata(self) -> dict[str, bytes]:
        """ORC user metadata (pyarrow gives bytes keys; we use text keys, bytes values)."""
        meta = self.file.metadata
        if not meta:
            return {}
        return {(k.decode("utf-8", "replace") if isinstance(k, bytes) else k):
                (v if isinstance(v, bytes) else str(v).encode()) for k, v in meta.items()}

    @property
    def footer(self) -> Footer:
        """The file tail, decoded (stripes, types, metadata, statistics)."""
        if self._footer is None:
            try:
                self._footer = parse_file_tail(self.file.reader.serialized_file_tail()).check()
            except ProtoError as exc:
                raise OrcReadError(f"{self.path}: unreadable ORC footer: {exc}") from None
        return self._footer

    def stripe_starts(self) -> list[int]:
        """The first row of every stripe."""
        starts, row = [], 0
        for rows in self.footer.stripe_rows:
            starts.append(row)
            row += rows
        return starts or [0]

    def context(self, stripe: int = 0) -> FileContext:
        """CHAR(n) column paths (from the footer) and, for files with timestamps, the zone the
        stripe was written in (from its stripe footer, through pyorc). Once per stripe."""
        from .jsonl import FileContext

        if stripe in self._contexts:
            return self._contexts[stripe]
        if self._chars is None:
            self._chars = frozenset(_char_paths(self.footer))
        zone = None
        if any(t.kind.startswith("timestamp") for t in self.footer.types):
            import pyorc

            self.raw.seek(0)
            reader = pyorc.Reader(self.raw)
            if reader.num_of_stripes > stripe:
                zone = reader.read_stripe(stripe).writer_timezone
            self.raw.seek(0)
        self._contexts[stripe] = FileContext(self._chars, zone)
        return self._contexts[stripe]

    def reopen_bytes(self) -> bytes:
        self.raw.seek(0)
        return self.raw.read()


def is_acid_schema(schema: pa.Schema, exact: bool = False) -> bool:
    """The six ACID event columns in order. Names compare case-insensitively unless ``exact``
    (query-based compaction in Hive 3.1 wrote lower-case names; newer Hive 4 checks names)."""
    names = schema.names
    if len(names) != 6:
        return False
    if exact:
        return tuple(names) == ACID_COLUMNS
    return tuple(n.lower() for n in names) == tuple(n.lower() for n in ACID_COLUMNS)


def _flush_side_file(loc: Location, rel: str) -> FlushLength | None:
    if rel:
        side, side_loc = rel + FLUSH_LENGTH_SUFFIX, loc
    else:  # loc is the data file itself
        side = ""
        side_loc = Location(loc.store, loc.path + FLUSH_LENGTH_SUFFIX, loc.url + FLUSH_LENGTH_SUFFIX)
    target = side_loc.child(side) if side else side_loc
    if kind_of(target) != "file":
        return None
    return parse_flush_lengths(read_bytes(side_loc, side), side_loc.url_of(side))


def open_orc(loc: Location, rel: str = "", *, honour_flush_length: bool = True,
             footer: Footer | None = None,
             known: tuple[int, FlushLength | None] | None = None,
             data: bytes | None = None) -> OrcSource:
    """Open ``loc/rel``. A sibling ``<name>_flush_length`` limits the read to the committed bytes.
    ``footer``: the file's footer, ``known``: its size and side file, and ``data``: all its
    bytes (up to the committed length), when the caller has read them already (on an object
    store each is a round trip)."""
    display = loc.url_of(rel)
    if known is not None:
        size, flush = known
    else:
        size = file_size(loc, rel)
        flush = _flush_side_file(loc, rel) if honour_flush_length else None
    if size == 0:
        raise OrcReadError(f"{display}: empty file (0 bytes), not ORC")
    notes = []
    read_size = size
    if flush is not None:
        read_size = flush.committed
        if read_size > size:
            raise OrcReadError(f"{display}: flush length {read_size} is beyond the file's "
                               f"{size} bytes")
        notes.append(f"{display}: open streaming file; reading its committed {read_size} of "
                     f"{size} bytes (from {flush.path.rsplit('/', 1)[-1]})")
    if data is None and flush is not None:
        data = read_bytes(loc, rel, read_size)
    if data is not None:
        raw = pa.BufferReader(data)  # native: pyarrow reads a Python file object under the GIL
    else:
        try:
            raw = open_input_file(loc, rel)
        except OSError as exc:
            raise OrcReadError(f"{display}: cannot open: {exc}") from None
    try:
        head = raw.read(3)
        raw.seek(0)
        if head != ORC_MAGIC:
            raise OrcReadError(f"{display}: not an ORC file (it does not start with 'ORC')")
        orc = paorc.ORCFile(raw)
        _decode_names(orc.schema)
    except OrcReadError:
        raise
    except UnicodeDecodeError as exc:
        raise OrcReadError(f"{display}: a column name is not UTF-8 ({exc.reason}), which "
                           "pyarrow cannot read (Hive's reader replaces such bytes)") from None
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise unreadable(display, exc) from None
    source = OrcSource(display, read_size, orc, raw, flush, size, notes, _footer=footer)
    if data is None:  # read in place, not from memory
        source.location = (loc.fs, loc.join(rel))
    return source


def acid_type_problem(schema: pa.Schema) -> str | None:
    """For a file with the six ACID column names: which column's type is not the event
    schema's (Hive's readers fail on it), or None."""
    for column, expected in zip(schema, ACID_TYPES):
        if str(column.type) != expected:
            return f"column {column.name} is {column.type}, not {expected}"
    if not pa.types.is_struct(schema.field(5).type):
        return f"column {schema.field(5).name} is {schema.field(5).type}, not a struct"
    return None


def _decode_names(schema: pa.Schema) -> None:
    """Touch every column name, nested ones too: pyarrow decodes a name when it is first
    asked for, and fails on bytes that are not UTF-8. Better at open than mid-output."""
    pending = list(schema)
    while pending:
        field = pending.pop()
        field.name  # noqa: B018 - decoded for its error
        pending.extend(field.type.field(i) for i in range(field.type.num_fields))


def unreadable(path: str, exc: Exception) -> OrcReadError:
    return OrcReadError(f"{path}: {unreadable_reason(exc)}")


class TimestampRangeError(OrcReadError):
    """Timestamps outside 1677-2262, which Arrow's nanoseconds cannot hold (not damage)."""


# Files whose every stripe is at most this big on disk (and this many rows) are read a stripe
# at a time by the ORC reader itself: Arrow's dataset scanner costs about 0.4 ms a file to set
# up, ten times a small stripe's read, and tables of many small files are common (streaming
# ingest, DataX). Larger stripes are streamed in batches so that memory stays bounded.
SMALL_STRIPE_BYTES = 1 << 20
SMALL_STRIPE_ROWS = 1 << 17


def scan_batches(src: OrcSource, *, batch_size: int, columns: list[str] | None = None,
                 **options) -> Iterator[pa.RecordBatch]:
    """The file's rows in batches of at most ``batch_size`` (see ``fragment_batches``)."""
    stripes = src.footer.stripes
    if all(s.length <= SMALL_STRIPE_BYTES and s.rows <= SMALL_STRIPE_ROWS for s in stripes):
        return _translated(_small_stripes(src, batch_size, columns), src.path)
    return fragment_batches(paorc_fragment(src), src.path, batch_size=batch_size,
                            columns=columns, **options)


def _small_stripes(src: OrcSource, batch_size: int, columns: list[str] | None):
    for i in range(src.file.nstripes):
        stripe = src.file.read_stripe(i, columns=columns)
        for start in range(0, stripe.num_rows, batch_size):
            yield stripe.slice(start, batch_size)


def fragment_batches(fragment, path: str, **options) -> Iterator[pa.RecordBatch]:
    """``fragment.to_batches(**options)``. Damage that only shows when stripes are decoded
    (the footer was fine) becomes an OrcReadError naming the file ``path``."""
    return _translated(fragment.to_batches(**options), path)


def _translated(batches, path: str) -> Iterator[pa.RecordBatch]:
    batches = iter(batches)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except pa.ArrowInvalid as exc:
            if "out of range" in str(exc):
                raise TimestampRangeError(f"{path}: {exc}") from None
            raise unreadable(path, exc) from None
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise unreadable(path, exc) from None
        yield batch


def paorc_fragment(src: OrcSource):
    """An Arrow dataset fragment over the file (or over the committed bytes of an open one)."""
    if src.location is not None:
        return orc_fragment(*src.location)
    import pyarrow.dataset as ds

    return ds.OrcFileFormat().make_fragment(pa.BufferReader(src.reopen_bytes()))


def orc_fragment(fs, path: str):
    """An Arrow dataset fragment over the ORC file at ``path``. pyarrow takes only UTF-8 paths:
    a local name that is not UTF-8 is opened by Python (``fs.open_input_file``) and handed
    over."""
    import pyarrow.dataset as ds

    fmt = ds.OrcFileFormat()
    if is_utf8(path):
        return fmt.make_fragment(path, filesystem=fs)
    return fmt.make_fragment(open_input_file(Location(None, path, path)))


def _char_paths(footer: Footer) -> set[tuple[str, ...]]:
    """Paths (struct names, "[]", "_key"/"_value", "[i]") of CHAR(n) columns."""
    found: set[tuple[str, ...]] = set()

    def walk(cid: int, path: tuple[str, ...]) -> None:
        t = footer.types[cid]
        if t.kind == "char":
            found.add(path)
        elif t.kind == "struct":
            for name, sub in zip(t.field_names, t.subtypes):
                walk(sub, path + (name,))
        elif t.kind == "array":
            walk(t.subtypes[0], path + ("[]",))
        elif t.kind == "map":
            walk(t.subtypes[0], path + ("_key",))
            walk(t.subtypes[1], path + ("_value",))
        elif t.kind == "uniontype":
            for i, sub in enumerate(t.subtypes):
                walk(sub, path + (f"[{i}]",))

    if footer.types:
        walk(0, ())
    return found
