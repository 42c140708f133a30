"""The ORC file tail: postscript, footer (types, stripes, user metadata, column statistics).

Two ways in: the serialized ``FileTail`` that pyarrow hands over with a file it has opened
(``parse_file_tail``), or the last bytes of the file as read from storage (``parse_postscript``
then ``footer_from_tail``), which is one ranged read and no ORC reader at all: what validate
does for every file. The messages are parsed by protobuf (``orcmessages``), whole, as ORC's
readers parse them; the parts acidtool uses become plain values on first use. Compression
chunks are undone here, and the type tree is checked as ORC's Java reader checks it.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass, field  # noqa: F401
from typing import Callable, Mapping, NamedTuple

from google.protobuf.message import DecodeError

from .orcmessages import FileTailMessage, FooterMessage, PostScriptMessage

_KINDS = ("boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string",
          "binary", "timestamp", "array", "map", "struct", "uniontype", "decimal", "date",
          "varchar", "char", "timestamp with local time zone")


class ProtoError(ValueError):
    """The bytes are not a well-formed ORC tail."""


class UnsupportedCompression(Exception):
    """The footer is compressed with a codec the caller gave no decompressor for."""

    def __init__(self, kind: str):
        super().__init__(f"no decompressor for {kind}")
        self.kind = kind


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it) of the varint at ``pos``."""
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtoError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ProtoError("varint too long")


def fields(buf: bytes):
    """(field number, wire type, value) triples: ints for varints, bytes for length-delimited."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtoError("field number 0")
        value: int | bytes
        if wire == 0:
            value, pos = read_varint(buf, pos)
        elif wire == 2:
            length, pos = read_varint(buf, pos)
            value = buf[pos:pos + length]
            if len(value) != length:
                raise ProtoError("truncated field")
            pos += length
        elif wire == 1:
            value, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        elif wire == 5:
            value, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        else:
            raise ProtoError(f"unsupported wire type {wire}")
        if pos > end:
            raise ProtoError("truncated field")
        yield number, wire, value


@dataclass(frozen=True)
class ColumnStats:
    """ColumnStatistics. ``values`` holds the type-specific part as plain values (minimum,
    maximum, sum, true_count...)."""

    number_of_values: int | None = None
    has_null: bool | None = None  # None: the writer did not say (old writers)
    values: dict = field(default_factory=dict)
    bytes_on_disk: int | None = None


@dataclass(frozen=True)
class StripeInfo:
    offset: int
    index_length: int
    data_length: int
    footer_length: int
    rows: int

    @property
    def length(self) -> int:
        return self.index_length + self.data_length + self.footer_length


@dataclass(frozen=True)
class OrcType:
    kind: str
    subtypes: tuple[int, ...] = ()
    field_names: tuple[str, ...] = ()
    maximum_length: int | None = None
    precision: int | None = None
    scale: int | None = None


class Footer:
    """The decoded footer. Protobuf parses it whole when it is read, and the types are
    decoded then too (malformed bytes or a damaged type tree fail there, as ORC's readers fail
    when they open a file); what every caller needs is kept as values (rows, user metadata,
    the schema, the stripe count) and the rest (stripes, statistics) on first use. The parsed
    message is kept until ``release()``: it costs 5 KB, and validation, which holds the
    footers of a whole warehouse tree, releases each once it has what it needs; after that,
    parts are taken from the raw bytes, parsed again."""

    __slots__ = ("_raw", "_msg", "rows", "metadata", "stripe_count", "schema", "_stripes",
                 "_stats", "compression")

    def __init__(self, raw: bytes, msg):
        self._raw, self._msg = raw, msg
        self.compression: str | None = None  # the file's codec (the postscript's), if read
        self.rows: int = msg.numberOfRows
        # A repeated field is sliced before it is iterated: iterating it directly asks for
        # items until one raises IndexError, whose message costs more than the slice.
        # A later item of the same name wins, as in ORC's readers.
        self.metadata: dict[str, bytes] = {_text(m.name): m.value for m in msg.metadata[:]}
        self.stripe_count: int = len(msg.stripes)
        # shared by every footer with the same type bytes (the files of one table)
        self.schema: _Schema = _schema(tuple(msg.types[:]))
        self._stripes: tuple[StripeInfo, ...] | None = None
        self._stats: tuple[ColumnStats, ...] | None = None

    @property
    def serialized(self) -> bytes:
        """The footer message's bytes, uncompressed."""
        return self._raw

    def _message(self):
        if self._msg is not None:
            return self._msg
        return FooterMessage.FromString(self._raw)  # type: ignore[attr-defined]  # generated
        # (it parsed before: it parses again)

    def release(self) -> Footer:
        """Drop the parsed message; what is asked for later is parsed from the raw bytes."""
        self._msg = None
        return self

    def check(self) -> Footer:
        """Fail on a footer that parses but that ORC readers refuse: one without types (the
        parse already decoded and checked the rest)."""
        if not self.schema.types:
            raise ProtoError("the footer has no types")
        return self

    @property
    def calendar(self) -> str | None:
        return _CALENDARS.get(self._message().calendar)

    @property
    def software_version(self) -> str | None:
        msg = self._message()
        return msg.softwareVersion.decode("utf-8", "replace") \
            if msg.HasField("softwareVersion") else None

    @property
    def row_index_stride(self) -> int | None:
        msg = self._message()
        return msg.rowIndexStride if msg.HasField("rowIndexStride") else None

    @property
    def stripes(self) -> tuple[StripeInfo, ...]:
        if self._stripes is None:
            self._stripes = tuple(StripeInfo(s.offset, s.indexLength, s.dataLength,
                                             s.footerLength, s.numberOfRows)
                                  for s in self._message().stripes[:])
        return self._stripes

    @property
    def stripe_rows(self) -> tuple[int, ...]:
        return tuple(s.rows for s in self.stripes)

    @property
    def types(self) -> tuple[OrcType, ...]:
        return self.schema.types

    @property
    def statistics(self) -> tuple[ColumnStats, ...]:
        """Every column's statistics, in column id order."""
        if self._stats is None:
            self._stats = tuple(_column_stats(st) for st in self._message().statistics[:])
        return self._stats

    def stats(self, column: int) -> ColumnStats | None:
        all_stats = self.statistics
        return all_stats[column] if 0 <= column < len(all_stats) else None

    def int_ranges(self, columns) -> tuple[tuple[int, int] | None, ...]:
        """(minimum, maximum) of each column's integer statistics, where the writer gave both
        (else None): what validation judges ACID columns by, without decoding every column."""
        msg = self._msg  # still there while the file is being read: no call for it
        all_stats = (msg if msg is not None else self._message()).statistics
        count = len(all_stats)
        out = []
        for column in columns:
            found = None  # absent, or half there (a damaged footer): nothing to judge by
            if 0 <= column < count:
                # an absent intStatistics reads as an empty message (nothing is set in it),
                # and an absent value as 0: only a 0 needs asking whether it was written
                ints = all_stats[column].intStatistics
                low, high = ints.minimum, ints.maximum
                if (low or ints.HasField("minimum")) and (high or ints.HasField("maximum")):
                    found = low, high
            out.append(found)
        return tuple(out)

    def column_names(self) -> list[tuple[int, str]]:
        """(column id, dotted name) in pre-order, as meta shows them."""
        out: list[tuple[int, str]] = []

        def walk(cid: int, name: str) -> None:
            out.append((cid, name or "(root)"))
            t = self.types[cid]
            if t.kind == "struct":
                for child_name, sub in zip(t.field_names, t.subtypes):
                    walk(sub, f"{name}.{child_name}" if name else child_name)
            elif t.kind == "array":
                walk(t.subtypes[0], f"{name}[]")
            elif t.kind == "map":
                walk(t.subtypes[0], f"{name}._key")
                walk(t.subtypes[1], f"{name}._value")
            elif t.kind == "uniontype":
                for i, sub in enumerate(t.subtypes):
                    walk(sub, f"{name}[{i}]")

        if self.types:
            walk(0, "")
        return out

    def type_string(self, column: int = 0) -> str:
        """The ORC type text of a column (``struct<a:int,...>``)."""
        return self.schema.string(column)

    def top_level(self) -> list[tuple[str, int]]:
        """(name, column id) of the root struct's fields."""
        return self.schema.top


_CALENDARS = {1: "JULIAN_GREGORIAN", 2: "PROLEPTIC_GREGORIAN"}


@functools.lru_cache(maxsize=1024)
def _text(name: bytes) -> str:
    """A user metadata key as text (the same few keys in every file of a table)."""
    return name.decode("utf-8", "replace")


# The files of one table share their types byte for byte, so decoding is memoised on the raw
# bytes: validating 10,000 files decodes each schema once.

class _Schema:
    """Decoded types of one schema, with their type strings and top-level fields, shared by
    every file that has the same type bytes (the footer's ``types``, one message each)."""

    def __init__(self, raw: tuple[bytes, ...]):
        self.types = tuple(_type(v) for v in raw)
        _check_tree(self.types)
        self.strings: dict[int, str] = {}
        root = self.types[0] if self.types else OrcType("struct")
        self.top = list(zip(root.field_names, root.subtypes))
        self.by_lower_name = {n.lower(): cid for n, cid in self.top}
        self.lower_names = tuple(n.lower() for n, _ in self.top)
        # What callers work out from the schema alone (validation's rules), kept here so
        # that it is worked out once per schema rather than once per file.
        self.derived: dict = {}

    def string(self, column: int) -> str:
        found = self.strings.get(column)
        if found is None:
            t = self.types[column]
            if t.kind == "struct":
                found = "struct<" + ",".join(f"{_name(n)}:{self.string(s)}"
                                             for n, s in zip(t.field_names, t.subtypes)) + ">"
            elif t.kind in ("array", "map", "uniontype"):
                found = f"{t.kind}<" + ",".join(self.string(s) for s in t.subtypes) + ">"
            elif t.kind == "decimal":
                found = f"decimal({t.precision if t.precision is not None else 38},{t.scale or 0})"
            elif t.kind in ("char", "varchar"):
                found = f"{t.kind}({t.maximum_length})"
            else:
                found = t.kind
            self.strings[column] = found
        return found


_SUBTYPES = {"array": 1, "map": 2}


def _check_tree(types: tuple[OrcType, ...]) -> None:
    """The types must form the tree ORC writes: column ids in pre-order, so every child's id
    is above its parent's and within the list (which also rules out cycles), and a struct has
    a name for every field (ORC's Java reader fails on fewer names and ignores extra ones)."""
    for cid, t in enumerate(types):
        if t.kind.startswith("kind"):
            raise ProtoError(f"type {cid} is of a kind ORC does not know ({t.kind[4:]})")
        needed = _SUBTYPES.get(t.kind)
        if needed is not None and len(t.subtypes) != needed:
            raise ProtoError(f"{t.kind} type {cid} has {len(t.subtypes)} subtypes, not {needed}")
        for sub in t.subtypes:
            if not cid < sub < len(types):
                raise ProtoError(f"type {cid} ({t.kind}) has subtype {sub}, which is not a "
                                 f"later column of the {len(types)}")
        if t.kind == "struct" and len(t.field_names) < len(t.subtypes):
            raise ProtoError(f"struct type {cid} has {len(t.subtypes)} fields but only "
                             f"{len(t.field_names)} names")


@functools.lru_cache(maxsize=4096)
def _schema(raw: tuple[bytes, ...]) -> _Schema:
    return _Schema(raw)


def _name(name: str) -> str:
    simple = name.replace("_", "a").isalnum()
    return name if simple else "`" + name.replace("`", "``") + "`"


def _present(msg, names: dict[str, str], text: str | None = None) -> dict:
    """The fields of a statistics message that are set, under the names meta shows."""
    out = {}
    for field_name, shown in names.items():
        if msg.HasField(field_name):
            value = getattr(msg, field_name)
            out[shown] = value.decode(text or "utf-8", "replace") if isinstance(value, bytes) \
                else value
    return out


_MIN_MAX_SUM = {"minimum": "minimum", "maximum": "maximum", "sum": "sum"}
_TYPED = {  # ColumnStatistics field: how its values are shown, and the text codec of its bytes
    "intStatistics": (_MIN_MAX_SUM, None),
    "doubleStatistics": (_MIN_MAX_SUM, None),
    "stringStatistics": ({"minimum": "minimum", "maximum": "maximum", "sum": "total_length",
                          "lowerBound": "lower_bound", "upperBound": "upper_bound"}, "utf-8"),
    "decimalStatistics": (_MIN_MAX_SUM, "ascii"),
    "dateStatistics": ({"minimum": "minimum", "maximum": "maximum"}, None),
    "binaryStatistics": ({"sum": "total_length"}, None),
    "timestampStatistics": ({"minimum": "minimum_local", "maximum": "maximum_local",
                             "minimumUtc": "minimum_utc", "maximumUtc": "maximum_utc",
                             "minimumNanos": "minimum_nanos", "maximumNanos": "maximum_nanos"},
                            None),
}


def _column_stats(msg) -> ColumnStats:
    """A parsed ColumnStatistics message as plain values."""
    values = {}
    if msg.HasField("bucketStatistics"):
        values = {"true_count": sum(msg.bucketStatistics.count)}
    else:
        for name, (shown, text) in _TYPED.items():
            if msg.HasField(name):
                values = _present(getattr(msg, name), shown, text)
                break
    return ColumnStats(msg.numberOfValues if msg.HasField("numberOfValues") else None,
                       msg.hasNull if msg.HasField("hasNull") else None, values,
                       msg.bytesOnDisk if msg.HasField("bytesOnDisk") else None)


def _packed(value, wire) -> list[int]:
    """A repeated varint field's values: one per field, or a packed run of them."""
    if wire == 0:
        return [value]
    if wire != 2:
        return []  # not a varint field at all: skipped, as protobuf does
    out, pos = [], 0
    while pos < len(value):
        v, pos = read_varint(value, pos)
        out.append(v)
    return out


@functools.lru_cache(maxsize=65536)
def _type(buf: bytes) -> OrcType:
    kind, subtypes, names = "struct", [], []
    max_len = precision = scale = None
    for number, wire, value in fields(buf):
        if number == 2:
            subtypes.extend(_packed(value, wire))
        elif wire == 2:  # protobuf skips a field of another wire type than its declared one
            if number == 3:
                names.append(value.decode("utf-8", "replace"))
        elif wire != 0:
            continue
        elif number == 1:
            kind = _KINDS[value] if value < len(_KINDS) else f"kind{value}"
        elif number == 4:
            max_len = value
        elif number == 5:
            precision = value
        elif number == 6:
            scale = value
    return OrcType(kind, tuple(subtypes), tuple(names), max_len, precision, scale)


def _parsed(message_class, buf: bytes, what: str):
    try:
        return message_class.FromString(buf)
    except DecodeError:
        raise ProtoError(f"the {what} is not a well-formed protobuf message") from None


def parse_footer(buf: bytes) -> Footer:
    """The ``Footer`` message: parsed whole, as ORC's readers parse it."""
    buf = bytes(buf)
    return Footer(buf, _parsed(FooterMessage, buf, "footer"))


def encode_varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_field(number: int, value: bytes | int) -> bytes:
    """One protobuf field: length-delimited for bytes, a varint for an int."""
    if isinstance(value, int):
        return encode_varint(number << 3) + encode_varint(value)
    return encode_varint(number << 3 | 2) + encode_varint(len(value)) + value


def parse_file_tail(buf: bytes) -> Footer:
    """``FileTail`` (as pyarrow's ``serialized_file_tail()`` returns it): its footer."""
    tail = _parsed(FileTailMessage, bytes(buf), "file tail")
    if not tail.HasField("footer"):
        raise ProtoError("no footer in the file tail")
    footer = parse_footer(tail.footer)
    if tail.HasField("postscript"):
        kind = tail.postscript.compression
        footer.compression = COMPRESSION_KINDS[kind] if kind < len(COMPRESSION_KINDS) else None
    return footer


# ------------------------------------------------------------------------------------------------
# The tail as it lies at the end of the file: ... footer, postscript, one byte postscript length.

COMPRESSION_KINDS = ("NONE", "ZLIB", "SNAPPY", "LZO", "LZ4", "ZSTD")
TAIL_GUESS = 16 * 1024  # one read of this many bytes holds the whole tail of most files


class PostScript(NamedTuple):
    footer_length: int
    compression: str
    block_size: int
    length: int  # of the serialized postscript itself
    magic_at_end: bool = True  # "ORC" in its last bytes (files of ORC 0.11 have it at the start)

    @property
    def tail_length(self) -> int:
        """Bytes at the end of the file that hold the footer and the postscript."""
        return self.footer_length + self.length + 1


def parse_postscript(tail: bytes, file_size: int) -> PostScript:
    """The postscript from the last bytes of a file (``tail``, of a file of ``file_size``).

    As ORC's Java reader does, the magic is looked for in the postscript's last three bytes,
    not in its parsed field; when it is not there (``magic_at_end`` False), the caller checks
    that the file starts with it, as that reader does for files of ORC 0.11."""
    if file_size < 4 or not tail:
        raise ProtoError(f"file of {file_size} bytes is too short to be ORC")
    length = tail[-1]
    if length < 4 or length + 1 > len(tail):
        raise ProtoError(f"invalid postscript length {length}")
    buf = tail[-1 - length:-1]
    ps = _parsed(PostScriptMessage, buf, "postscript")
    footer_length, compression = ps.footerLength, ps.compression
    # an absent field reads as 0: only a 0 needs asking whether it was written
    block_size = ps.compressionBlockSize
    if not block_size and not ps.HasField("compressionBlockSize"):
        block_size = 256 * 1024
    kind = COMPRESSION_KINDS[compression] if compression < len(COMPRESSION_KINDS) \
        else f"kind{compression}"
    if footer_length + length + 4 > file_size:
        raise ProtoError(f"footer of {footer_length} bytes does not fit in a file of "
                         f"{file_size} bytes")
    # tuple.__new__: a NamedTuple's own constructor is Python code, and this runs once a file
    return tuple.__new__(PostScript, (footer_length, kind, block_size, length,
                                      buf[-3:] == b"ORC"))


_DEFLATE_MAX_RATIO = 1032  # deflate never inflates a byte into more than this many
_INFLATE_UNCHECKED = 64 << 20  # chunks that cannot inflate beyond this skip the bounded path


def _inflate(chunk: bytes, limit: int) -> bytes:
    """One raw-deflate chunk, never more than ``limit`` bytes (the compression block size) when
    it could inflate to more than 64 MiB: a damaged chunk must not inflate without bound. The
    bounded inflater costs more to set up, and footer chunks are small."""
    if len(chunk) * _DEFLATE_MAX_RATIO <= _INFLATE_UNCHECKED:
        try:
            out = zlib.decompress(chunk, -15)
        except zlib.error as exc:
            raise ProtoError(f"corrupt ZLIB chunk: {exc}") from None
        if len(out) > limit:  # ORC's readers inflate into a buffer of the block size
            raise ProtoError(f"ZLIB chunk inflates beyond the block size {limit}")
        return out
    inflater = zlib.decompressobj(-15)
    try:
        out = inflater.decompress(chunk, limit)
    except zlib.error as exc:
        raise ProtoError(f"corrupt ZLIB chunk: {exc}") from None
    if inflater.unconsumed_tail:
        raise ProtoError(f"ZLIB chunk inflates beyond the block size {limit}")
    return out


Decompressor = Callable[[bytes, int], bytes]
DECOMPRESSORS: Mapping[str, Decompressor] = {"ZLIB": _inflate}


def decompress(data: bytes, kind: str, block_size: int,
               decompressors: Mapping[str, Decompressor] = DECOMPRESSORS) -> bytes:
    """ORC's compressed stream: chunks, each after a 3-byte little-endian header holding
    ``length << 1 | is_original``."""
    if kind == "NONE":
        return data
    codec = decompressors.get(kind)
    if codec is None:
        raise UnsupportedCompression(kind)
    end = len(data)
    if end > 3:  # the usual footer: one compressed chunk
        header = data[0] | data[1] << 8 | data[2] << 16
        if header >> 1 == end - 3 and not header & 1 and end - 3 <= block_size:
            return codec(data[3:], block_size)
    out, pos = [], 0
    while pos < end:
        if pos + 3 > end:
            raise ProtoError("truncated compression chunk header")
        header = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
        pos += 3
        length = header >> 1
        if length > block_size:  # ORC's Java reader refuses it ("Buffer size too small")
            raise ProtoError(f"compression chunk of {length} bytes exceeds the block size "
                             f"{block_size}")
        chunk = data[pos:pos + length]
        if len(chunk) != length:
            raise ProtoError("truncated compression chunk")
        pos += length
        out.append(chunk if header & 1 else codec(chunk, block_size))
    return out[0] if len(out) == 1 else b"".join(out)


def footer_from_tail(tail: bytes, ps: PostScript,
                     decompressors: Mapping[str, Decompressor] = DECOMPRESSORS) -> Footer:
    """The footer from the file's last ``ps.tail_length`` (or more) bytes."""
    if len(tail) < ps.tail_length:
        raise ProtoError("tail shorter than the postscript says")
    end = len(tail) - ps.length - 1
    raw = tail[end - ps.footer_length:end]
    footer = parse_footer(decompress(raw, ps.compression, ps.block_size, decompressors))
    footer.compression = ps.compression
    return footer
