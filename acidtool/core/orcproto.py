"""The ORC file tail (protobuf), decoded with the standard library only.

Two ways in: the serialized ``FileTail`` that pyarrow hands over with a file it has opened
(``parse_file_tail``), or the last bytes of the file as read from storage (``parse_postscript``
then ``footer_from_tail``), which is one ranged read and no ORC reader at all: what validate
does for every file. Only the fields acidtool uses are decoded (stripes, types, user metadata,
column statistics, calendar). Field numbers follow ORC's ``orc_proto.proto``; unknown fields are
skipped, as protobuf requires.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass, field  # noqa: F401
from typing import Callable, Mapping, NamedTuple

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


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def fields(buf: bytes):
    """(field number, wire type, value) triples: ints for varints, bytes for length-delimited."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtoError("field number 0")
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
class IntStats:
    minimum: int | None
    maximum: int | None
    sum: int | None = None


@dataclass(frozen=True)
class ColumnStats:
    """ColumnStatistics. ``values`` holds the type-specific part as plain values (minimum,
    maximum, sum, true_count...), ``ints`` the integer part that validation relies on."""

    number_of_values: int | None = None
    has_null: bool | None = None  # None: the writer did not say (old writers)
    ints: IntStats | None = None
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
    """The decoded footer. Parsing keeps each repeated field's raw bytes and decodes types,
    stripes, metadata and statistics only when asked (validation of 10,000 files needs a few
    top-level columns' statistics, not every column's)."""

    def __init__(self, rows: int, raw_stripes: list, raw_types: bytes, metadata: dict,
                 raw_stats: list, calendar: str | None, software_version: str | None,
                 row_index_stride: int | None):
        self.rows = rows
        self._raw_stripes, self._raw_types, self._raw_stats = raw_stripes, raw_types, raw_stats
        self.metadata = metadata
        self.calendar = calendar
        self.software_version = software_version
        self.row_index_stride = row_index_stride
        self._stripes = self._types = self._top = None
        self._stats: dict[int, ColumnStats] = {}

    def check(self) -> Footer:
        """Decode now what is otherwise decoded on first use (types, stripes, every column's
        statistics): ORC readers parse the whole footer when they open a file and fail on any
        damage in it, and so does this, instead of failing later in whatever asks first."""
        if not self.schema.types:
            raise ProtoError("the footer has no types")
        self.stripes  # noqa: B018 - decoded for its errors
        for column in range(len(self._raw_stats)):
            self.stats(column)
        return self

    @property
    def stripes(self) -> tuple[StripeInfo, ...]:
        if self._stripes is None:
            self._stripes = tuple(_stripe(b) for b in self._raw_stripes)
        return self._stripes

    @property
    def stripe_count(self) -> int:
        return len(self._raw_stripes)

    @property
    def stripe_rows(self) -> tuple[int, ...]:
        return tuple(s.rows for s in self.stripes)

    @property
    def schema(self) -> "_Schema":
        if self._types is None:
            self._types = _schema(self._raw_types)
        return self._types

    @property
    def types(self) -> tuple[OrcType, ...]:
        return self.schema.types

    @property
    def statistics(self) -> "_LazyStats":
        return _LazyStats(self)

    def stats(self, column: int) -> ColumnStats | None:
        if column >= len(self._raw_stats):
            return None
        found = self._stats.get(column)
        if found is None:
            found = self._stats[column] = _column_stats(self._raw_stats[column])
        return found

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


class _LazyStats:
    """``footer.statistics[i]``, decoded on access."""

    def __init__(self, footer: Footer):
        self.footer = footer

    def __len__(self) -> int:
        return len(self.footer._raw_stats)

    def __getitem__(self, column: int) -> ColumnStats:
        if column < 0 or column >= len(self):
            raise IndexError(column)
        return self.footer.stats(column)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


# The files of one table share their types and often their statistics byte for byte, so
# decoding is memoised on the raw bytes: validating 10,000 files decodes each schema once.

class _Schema:
    """Decoded types of one schema, with their type strings and top-level fields, shared by
    every file that has the same type bytes (the footer's run of ``types`` fields)."""

    def __init__(self, raw: bytes):
        self.types = tuple(_type(v) for n, w, v in fields(raw) if n == 4 and w == 2)
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
def _schema(raw: bytes) -> _Schema:
    return _Schema(raw)


def _name(name: str) -> str:
    simple = name.replace("_", "a").isalnum()
    return name if simple else "`" + name.replace("`", "``") + "`"


def _int_stats(buf: bytes) -> IntStats:
    lo = hi = total = None
    for number, wire, value in fields(buf):
        if number == 1 and wire == 0:
            lo = _zigzag(value)
        elif number == 2 and wire == 0:
            hi = _zigzag(value)
        elif number == 3 and wire == 0:
            total = _zigzag(value)
    return IntStats(lo, hi, total)


def _double(raw: int) -> float:
    import struct

    return struct.unpack("<d", raw.to_bytes(8, "little"))[0]


_TEXT_STATS = {1: "minimum", 2: "maximum", 4: "lower_bound", 5: "upper_bound"}


def _typed_stats(number: int, buf: bytes) -> dict:
    """The type-specific statistics message, as plain values."""
    out: dict = {}
    for f_number, f_wire, value in fields(buf):
        if number == 3 and f_wire == 1:  # DoubleStatistics: min, max, sum (fixed64)
            out[{1: "minimum", 2: "maximum", 3: "sum"}.get(f_number, str(f_number))] = _double(value)
        elif number == 4:  # StringStatistics
            if f_number in _TEXT_STATS and f_wire == 2:
                out[_TEXT_STATS[f_number]] = value.decode("utf-8", "replace")
            elif f_number == 3 and f_wire == 0:
                out["total_length"] = _zigzag(value)
        elif number == 5 and f_number == 1:  # BucketStatistics: true count (packed)
            out["true_count"] = sum(_packed(value, f_wire))
        elif number == 6 and f_wire == 2:  # DecimalStatistics: strings
            out[{1: "minimum", 2: "maximum", 3: "sum"}.get(f_number, str(f_number))] = \
                value.decode("ascii", "replace")
        elif number == 7 and f_wire == 0:  # DateStatistics: days
            out[{1: "minimum", 2: "maximum"}.get(f_number, str(f_number))] = _zigzag(value)
        elif number == 8 and f_number == 1 and f_wire == 0:  # BinaryStatistics
            out["total_length"] = _zigzag(value)
        elif number == 9 and f_wire == 0:  # TimestampStatistics (milliseconds)
            out[{1: "minimum_local", 2: "maximum_local", 3: "minimum_utc",
                 4: "maximum_utc", 5: "minimum_nanos", 6: "maximum_nanos"}.get(
                     f_number, str(f_number))] = _zigzag(value) if f_number <= 4 else value
    return out


@functools.lru_cache(maxsize=65536)
def _column_stats(buf: bytes) -> ColumnStats:
    count = has_null = ints = on_disk = None
    values: dict = {}
    for number, wire, value in fields(buf):
        if number == 1 and wire == 0:
            count = value
        elif number == 2 and wire == 2:
            ints = _int_stats(value)
            values = {"minimum": ints.minimum, "maximum": ints.maximum, "sum": ints.sum}
        elif 3 <= number <= 9 and wire == 2:
            values = _typed_stats(number, value)
        elif number == 10 and wire == 0:
            has_null = bool(value)
        elif number == 11 and wire == 0:
            on_disk = value
        elif number == 12 and wire == 2:  # CollectionStatistics: not shown, but parsed as
            for _ in fields(value):       # ORC readers parse it (and fail on damage in it)
                pass
    return ColumnStats(count, has_null, ints, {k: v for k, v in values.items() if v is not None},
                       on_disk)


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


@functools.lru_cache(maxsize=65536)
def _metadata_item(buf: bytes) -> tuple[str, bytes]:
    name, data = "", b""
    for number, wire, value in fields(buf):
        if number == 1 and wire == 2:
            name = value.decode("utf-8", "replace")
        elif number == 2 and wire == 2:
            data = bytes(value)
    return name, data


@functools.lru_cache(maxsize=65536)
def _stripe(buf: bytes) -> StripeInfo:
    values = {1: 0, 2: 0, 3: 0, 4: 0, 5: 0}
    for number, wire, value in fields(buf):
        if number in values and wire == 0:
            values[number] = value
    return StripeInfo(values[1], values[2], values[3], values[4], values[5])


def parse_footer(buf: bytes) -> Footer:
    """One pass over the footer's top-level fields, keeping raw slices of the repeated ones.

    The field loop of ``fields()`` is written out here with one-byte keys and lengths read
    inline, because a footer has a field per stripe, type and column statistic and this runs
    once per file that validate reads. The types are kept as the one run of bytes that holds
    them (writers put repeated fields together), which is also the key of the decoded schema
    that the files of a table share."""
    if not isinstance(buf, bytes):
        buf = bytes(buf)
    rows, stripes, metadata, stats = 0, [], {}, []
    calendar = software = stride = None
    types_from = types_to = None
    types_apart = False
    pos, end = 0, len(buf)
    while pos < end:
        at = pos
        b = buf[pos]
        if b < 0x80:
            key, pos = b, pos + 1
        else:
            key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtoError("field number 0")
        if wire == 2:
            b = buf[pos] if pos < end else 0x80
            if b < 0x80:
                length, pos = b, pos + 1
            else:
                length, pos = read_varint(buf, pos)
            stop = pos + length
            if number == 7:
                stats.append(buf[pos:stop])
            elif number == 4:
                if types_from is None:
                    types_from = at
                elif types_to != at:
                    types_apart = True
                types_to = stop
            elif number == 3:
                stripes.append(buf[pos:stop])
            elif number == 5:
                name, data = _metadata_item(buf[pos:stop])
                metadata[name] = data
            elif number == 12:
                software = buf[pos:stop].decode("utf-8", "replace")
            pos = stop
        elif wire == 0:
            value, pos = read_varint(buf, pos)
            if number == 6:
                rows = value
            elif number == 8:
                stride = value
            elif number == 11:
                calendar = {1: "JULIAN_GREGORIAN", 2: "PROLEPTIC_GREGORIAN"}.get(value)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ProtoError(f"unsupported wire type {wire}")
    if pos > end:
        raise ProtoError("truncated field")
    if types_from is None:
        types = b""
    elif types_apart:  # types interleaved with other fields: gather them, in order
        types = b"".join(encode_field(4, v) for n, w, v in fields(buf) if n == 4 and w == 2)
    else:
        types = buf[types_from:types_to]
    return Footer(rows, stripes, types, metadata, stats, calendar, software, stride)


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
    for number, wire, value in fields(buf):
        if number == 2 and wire == 2:
            return parse_footer(value)
    raise ProtoError("no footer in the file tail")


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
    values = {1: 0, 2: 0, 3: 256 * 1024}
    buf = tail[-1 - length:-1]
    pos = 0
    while pos < length:  # fields() written out: this runs once per file validate reads
        key, pos = read_varint(buf, pos)
        wire = key & 7
        if key < 8:
            raise ProtoError("postscript has a field numbered 0")
        if wire == 0:
            values[key >> 3], pos = read_varint(buf, pos)
        elif wire == 2:
            size, pos = read_varint(buf, pos)
            if key >> 3 == 4:  # the version, packed varints: protobuf fails on a broken one
                _packed(buf[pos:pos + size], wire)
            pos += size
        elif wire == 1 or wire == 5:  # fixed-width fields the postscript does not declare
            pos += 8 if wire == 1 else 4
        else:
            raise ProtoError(f"postscript has a field of wire type {wire}")
    if pos > length:
        raise ProtoError("postscript ends inside a field")
    footer_length, compression, block_size = values[1], values[2], values[3]
    kind = COMPRESSION_KINDS[compression] if compression < len(COMPRESSION_KINDS) \
        else f"kind{compression}"
    if footer_length + length + 4 > file_size:
        raise ProtoError(f"footer of {footer_length} bytes does not fit in a file of "
                         f"{file_size} bytes")
    return PostScript(footer_length, kind, block_size, length, buf[-3:] == b"ORC")


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
    out, pos, end = [], 0, len(data)
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
    return parse_footer(decompress(raw, ps.compression, ps.block_size, decompressors))
