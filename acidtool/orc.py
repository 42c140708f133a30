"""ORC reading: opening files (whole or up to a streaming writer's flushed length) and metadata.

pyarrow decodes data (fast, stripe by stripe); pyorc supplies what pyarrow does not expose (stripe
offsets, column statistics, the ORC type string) and reads timestamps outside pyarrow's nanosecond
range. Every failure to read becomes an OrcReadError naming the file.
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass, field
from typing import Iterator

import pyarrow as pa
import pyarrow.orc as paorc

from .core.facts import ACID_NAMES, FileFacts, event_ranges
from .core.names import FLUSH_LENGTH_SUFFIX
from .core.orcproto import (DECOMPRESSORS, TAIL_GUESS, Footer, ProtoError,
                            UnsupportedCompression, footer_from_tail, parse_file_tail,
                            parse_postscript, read_varint)
from .errors import OrcReadError
from .fs import Location, file_size, kind_of, open_ranged, read_bytes

ACID_COLUMNS = ACID_NAMES
ACID_TYPES = ("int32", "int64", "int32", "int64", "int64")
ORC_MAGIC = b"ORC"


@dataclass(frozen=True)
class FlushLength:
    """A ``bucket_N_flush_length`` side file: the committed lengths a streaming writer recorded."""

    path: str
    lengths: tuple[int, ...]

    @property
    def committed(self) -> int:
        return self.lengths[-1]


def parse_flush_lengths(data: bytes, path: str) -> FlushLength:
    """Big-endian 8-byte longs, the last one counts. Hive reads longs while bytes remain, so a
    trailing partial long fails; a file with no long at all is "found but not readable"."""
    if len(data) < 8:
        raise OrcReadError(f"{path}: flush-length file found but is not readable "
                           f"({len(data)} bytes, no committed length)")
    if len(data) % 8:
        raise OrcReadError(f"{path}: flush-length file ends in a partial length "
                           f"({len(data)} bytes is not a multiple of 8)")
    return FlushLength(path, struct.unpack(f">{len(data) // 8}q", data))


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

    def context(self, stripe: int = 0) -> "FileContext":
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
            raw = loc.fs.open_input_file(loc.join(rel))
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


def _unsnappy(chunk: bytes, limit: int) -> bytes:
    size, _ = read_varint(chunk, 0)  # raw snappy starts with the uncompressed length
    if size > limit:
        raise ProtoError(f"SNAPPY chunk of {size} bytes exceeds the block size {limit}")
    return pa.Codec("snappy").decompress(chunk, decompressed_size=size, asbytes=True)


_DECOMPRESSORS = {**DECOMPRESSORS, "SNAPPY": _unsnappy}


def read_footer_at(file, size: int) -> Footer:
    """The footer of an ORC file of ``size`` bytes (or of its first ``size`` bytes, a streaming
    file's committed length), from one ranged read of its last bytes (``file.read_at``), a
    second only when the footer is larger than that read; no ORC reader is opened.

    Raises ProtoError (naming what is wrong) for bytes that are not an ORC tail, and
    UnsupportedCompression for footers compressed with LZ4, ZSTD or LZO: pyarrow's codecs need
    the decompressed size, which only an ORC reader works out (``footer_through_pyarrow``)."""
    return read_tail(file, size)[0]


def read_tail(file, size: int) -> tuple[Footer, bytes | None]:
    """``read_footer_at``, and the file's ``size`` bytes when that one read held all of them
    (a file smaller than the read), else None."""
    if size < 4:
        raise ProtoError(f"{size} bytes is too short to be ORC")
    n = min(size, TAIL_GUESS)
    tail = file.read_at(n, size - n)
    whole = tail if len(tail) == size else None
    ps = parse_postscript(tail, size)
    if not ps.magic_at_end and not starts_like_orc(file):
        raise ProtoError("no ORC magic at the end of the postscript nor at the start of the file")
    if ps.tail_length > len(tail):
        tail = file.read_at(ps.tail_length, size - ps.tail_length)
    return footer_from_tail(tail, ps, _DECOMPRESSORS), whole


def footer_through_pyarrow(file: pa.NativeFile) -> Footer:
    """The footer as pyarrow's ORC reader hands it over (any codec it reads)."""
    return parse_file_tail(paorc.ORCFile(file).reader.serialized_file_tail())


def starts_like_orc(file) -> bool:
    return file.read_at(3, 0) == ORC_MAGIC


def acid_type_problem(schema: pa.Schema) -> str | None:
    """For a file with the six ACID column names: which column's type is not the event
    schema's (Hive's readers fail on it), or None."""
    for field, expected in zip(schema, ACID_TYPES):
        if str(field.type) != expected:
            return f"column {field.name} is {field.type}, not {expected}"
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


def unreadable_reason(exc: Exception) -> str:
    """What to say of a file whose bytes an ORC reader (or the footer decoder) refused."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"not readable as ORC (truncated or corrupt): {first}"


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


def leave_pandas_out() -> None:
    """For a process that never hands pandas objects to pyarrow (the CLI's reading commands):
    pandas cannot be imported in it from now on. pyarrow's pandas shim imports pandas, when it
    is installed, the first time any value becomes an Arrow scalar (pyarrow.dataset's import,
    pc.fill_null): a third of a second of every dump and read, for nothing. The shim then
    takes pandas as missing and pyarrow no longer recognises pandas objects, which is why a
    library process never does this."""
    if not any(isinstance(finder, _NoPandas) for finder in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


class _NoPandas:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is left out of this process (acidtool.orc)")
        return None


def paorc_fragment(src: OrcSource):
    """An Arrow dataset fragment over the file (or over the committed bytes of an open one)."""
    import pyarrow.dataset as ds

    fmt = ds.OrcFileFormat()
    if src.location is not None:
        fs, path = src.location
        return fmt.make_fragment(path, filesystem=fs)
    return fmt.make_fragment(pa.BufferReader(src.reopen_bytes()))


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


def read_footer(loc: Location, rel: str, size: int, flush_side: str | None) -> FileFacts:
    """The footer of a listed file of ``size`` bytes, whose ``_flush_length`` side file (if
    the listing has one) is ``flush_side``: one ranged read, no ORC reader opened (unless the
    footer's codec needs one). Never raises for a bad file: the facts say what is wrong (for
    validate, a finding)."""
    return read_footer_and_bytes(loc, rel, size, flush_side)[0]


def read_footer_and_bytes(loc: Location, rel: str, size: int, flush_side: str | None
                          ) -> tuple[FileFacts, bytes | None]:
    """``read_footer``, and the file's readable bytes where its one read held them all (a file
    of up to 16 KiB): reading its rows then needs no second read."""
    committed = whole = None
    if size == 0:
        return FileFacts(rel, size, error="empty file (0 bytes), not ORC"), None
    try:
        if flush_side is not None:
            data = read_bytes(loc, flush_side)
            if len(data) < 8 or len(data) % 8:
                return FileFacts(rel, size, error=f"{flush_side} is not readable "
                                 f"({len(data)} bytes)"), None
            committed = struct.unpack_from(">q", data, len(data) - 8)[0]
            if committed > size:
                return FileFacts(rel, size, error=f"flush length {committed} is beyond the "
                                 f"file's {size} bytes", flush_committed=committed), None
        length = size if committed is None else committed
        with open_ranged(loc, rel) as source:
            try:
                footer, whole = read_tail(source, length)
            except UnsupportedCompression:
                footer = None
            except (pa.ArrowException, OSError, ValueError):
                if not starts_like_orc(source):
                    return FileFacts(rel, size, error="not an ORC file (it does not start with "
                                     "'ORC')", flush_committed=committed), None
                raise
        if footer is None:  # a codec only pyarrow's ORC reader decodes
            with (pa.BufferReader(read_bytes(loc, rel, length)) if committed is not None
                  else loc.fs.open_input_file(loc.join(rel))) as source:
                footer = footer_through_pyarrow(source)
        ranges = event_ranges(footer.check())
        return FileFacts(rel, size, footer.release(), None, committed, ranges), whole
    except (pa.ArrowException, OSError, ValueError) as exc:
        return FileFacts(rel, size, error=unreadable_reason(exc),
                         flush_committed=committed), None
