"""Arrow arrays to ``orc-tools data`` JSON text, column at a time.

Each value becomes its JSON text with pyarrow compute kernels, so a stripe of millions of rows is
formatted without a Python loop per row. Values whose Java spelling Arrow cannot produce (doubles
outside [1e-3, 1e7), dates before 1582-10-15, binary, some decimals) are patched in Python, one
value at a time, only where they occur. The spelling rules are in ``core/javafmt.py``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..core.javafmt import (
    ESCAPES,
    GREGORIAN_CUTOVER_DAY,
    gson_string,
    hive_decimal,
    java_binary,
    java_date,
    java_double,
    java_timestamp,
    orc_java_seconds,
)

_LAST_FOUR_DIGIT_DAY = 2932896  # 9999-12-31


def _join(*parts) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _nullify(arr: pa.Array, text: pa.Array) -> pa.Array:
    if arr.null_count == 0:
        return text
    return pc.if_else(pc.is_valid(arr), text, "null")


def _patch(text: pa.Array, mask: pa.Array, arr: pa.Array, fn: Callable) -> pa.Array:
    """Replace text where ``mask`` is true with ``fn(value)`` computed in Python."""
    mask = pc.fill_null(mask, False)
    if not pc.any(mask).as_py():
        return text
    values = pc.filter(arr, mask).to_pylist()
    return pc.replace_with_mask(text, mask, pa.array([fn(v) for v in values], pa.string()))


_CONTROL_AND_QUOTES = bytes(range(32)) + b'"\\'
_LINE_SEPARATORS = (b"\xe2\x80\xa8", b"\xe2\x80\xa9")  # U+2028, U+2029 in UTF-8


def _value_bytes(arr: pa.Array) -> memoryview:
    """The concatenated bytes of a string array's values (its data buffer, as sliced)."""
    _, offsets, data = arr.buffers()
    if data is None or len(arr) == 0:
        return memoryview(b"")
    first = struct.unpack_from("<i", offsets, 4 * arr.offset)[0]
    last = struct.unpack_from("<i", offsets, 4 * (arr.offset + len(arr)))[0]
    return memoryview(data)[first:last]


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _replace_invalid_utf8(arr: pa.Array) -> pa.Array:
    """ORC readers do not check that strings are UTF-8 (a damaged or foreign file may hold
    other bytes); orc-tools prints them through Java's decoding, which replaces each bad
    sequence with U+FFFD. Only such columns pay for this Python pass."""
    raw = arr.cast(pa.binary()).to_pylist()
    return pa.array([None if v is None else v.decode("utf-8", "replace") for v in raw],
                    pa.string())


def _strings(arr: pa.Array, char: bool = False) -> "Quoted":
    if pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    if char:
        arr = pc.utf8_rtrim(arr, " ")
    data = _value_bytes(arr).tobytes()
    if not data.isascii() and not _is_utf8(data):
        arr = _replace_invalid_utf8(arr)  # as Java's String decoding does: U+FFFD
        data = _value_bytes(arr).tobytes()
    text = arr
    # Most columns need no escaping at all: find that out with two C-speed passes.
    if (len(data.translate(None, _CONTROL_AND_QUOTES)) != len(data)
            or any(sep in data for sep in _LINE_SEPARATORS)):
        present = {chr(b) for b in set(data) & set(_CONTROL_AND_QUOTES)}
        present |= {sep.decode() for sep in _LINE_SEPARATORS if sep in data}
        if "\\" in present:
            text = pc.replace_substring(text, "\\", "\\\\")
        for ch, escaped in ESCAPES.items():
            if ch in present and ch != "\\":
                text = pc.replace_substring(text, ch, escaped)
    return Quoted(text)


def _doubles(arr: pa.Array) -> pa.Array:
    if not pa.types.is_float64(arr.type):
        arr = pc.cast(arr, pa.float64())  # Java widens a float column's values to double
    text = pc.cast(arr, pa.string())
    magnitude = pc.abs(arr)
    low, high = pc.min_max(magnitude).values()
    low, high = low.as_py(), high.as_py()
    if low is None:  # all null
        return text
    if not (low >= 1e-3 and high < 1e7) or pc.any(pc.is_nan(arr)).as_py():
        # Some values need Java's exponent form (or are 0, NaN, infinite): find exactly which.
        plain = pc.or_(pc.and_(pc.greater_equal(magnitude, 1e-3), pc.less(magnitude, 1e7)),
                       pc.equal(arr, 0.0))
        odd = pc.invert(pc.fill_null(plain, True))
    else:
        odd = None
    # Arrow prints integral values without a fraction; Java always has one ("5000.0").
    integral = pc.fill_null(pc.equal(pc.floor(arr), arr), False)
    if odd is not None:
        integral = pc.and_(integral, pc.invert(odd))
    if pc.any(integral).as_py():
        text = pc.replace_with_mask(text, integral, _join(pc.filter(text, integral), ".0"))
    if odd is not None:
        text = _patch(text, odd, arr, java_double)
    return text


def _decimals(arr: pa.Array) -> pa.Array:
    text = pc.cast(arr, pa.string())
    if arr.type.scale > 0:
        text = pc.replace_substring_regex(text, r"\.?0+$", "")
    text = pc.if_else(pc.equal(text, "-0"), "0", text)
    text = _patch(text, pc.match_substring(text, "E"), arr, hive_decimal)
    return Quoted(text)


def _dates(arr: pa.Array) -> pa.Array:
    days = arr.cast(pa.int32())
    text = pc.cast(arr, pa.string())
    odd = pc.or_(pc.less(days, GREGORIAN_CUTOVER_DAY), pc.greater(days, _LAST_FOUR_DIGIT_DAY))
    text = _patch(text, odd, days, java_date)
    return Quoted(text)


def _timestamps(arr: pa.Array, writer_zone: str | None) -> pa.Array:
    if arr.type.tz is not None:
        arr = arr.view(pa.timestamp(arr.type.unit))  # values are UTC instants; the JVM is in UTC
    if arr.type.unit != "ns":
        arr = arr.cast(pa.timestamp("ns"))
    # Arrow prints nine fraction digits; java.sql.Timestamp drops trailing zeros but keeps one.
    text = pc.cast(arr, pa.string())
    text = pc.replace_substring_regex(text, "0+$", "")
    text = pc.replace_substring_regex(text, r"\.$", ".0")
    if writer_zone and writer_zone not in ("UTC", "GMT", "Etc/UTC", "Z"):
        text = _java_near_epoch(text, arr, writer_zone)
    return Quoted(text)


def _java_near_epoch(text: pa.Array, arr: pa.Array, zone: str) -> pa.Array:
    """Where ORC Java and C++ disagree (see javafmt.orc_java_seconds): instants within a day of
    the epoch, with a millisecond fraction, in files written outside UTC."""
    import datetime
    import zoneinfo

    ns = arr.view(pa.int64())
    near = pc.less(pc.abs(ns), 86_400 * 10**9 + 10**9)
    try:
        tz = zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return text

    def fix(value: int) -> str:
        seconds, nanos = divmod(value, 10**9)
        instant = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
        offset = tz.utcoffset(instant.replace(tzinfo=None))
        offset_ms = int(offset.total_seconds() * 1000) if offset is not None else 0
        return java_timestamp(orc_java_seconds(seconds, nanos, offset_ms), nanos)

    return _patch(text, pc.fill_null(near, False), ns, fix)


def _window(arr, values: pa.Array) -> tuple[pa.Array, pa.Array]:
    """The child values a (possibly sliced) list or map array refers to, and offsets into them."""
    offsets = arr.offsets
    start = offsets[0].as_py()
    end = offsets[-1].as_py()
    return pc.subtract(offsets, start).cast(pa.int32()), values.slice(start, end - start)


def _lists(arr: pa.Array, ctx, path) -> pa.Array:
    offsets, values = _window(arr, arr.values)
    joined = pc.binary_join(pa.ListArray.from_arrays(
        offsets, format_values(values, ctx, path + ("[]",))), ",")
    return _nullify(arr, _join("[", joined, "]"))


def _maps(arr: pa.Array, ctx, path) -> pa.Array:
    offsets, keys = _window(arr, arr.keys)
    _, items = _window(arr, arr.items)
    entries = _join('{"_key":', format_values(keys, ctx, path + ("_key",)), ',"_value":',
                    format_values(items, ctx, path + ("_value",)), "}")
    joined = pc.binary_join(pa.ListArray.from_arrays(offsets, entries), ",")
    return _nullify(arr, _join("[", joined, "]"))


def object_pieces(names: Sequence[str], values: Sequence) -> list:
    """The pieces of ``{"name":value,...}``: literal strings and arrays, adjacent literals merged.

    Each argument of Arrow's element-wise join costs about the same whether it is an array or a
    literal, so folding quotes, constant columns and nested objects into as few pieces as
    possible is what makes formatting fast."""
    pieces: list = []

    def lit(text: str) -> None:
        if pieces and isinstance(pieces[-1], str):
            pieces[-1] += text
        else:
            pieces.append(text)

    if not names:
        return ["{}"]
    for i, (name, value) in enumerate(zip(names, values)):
        lit(("{" if i == 0 else ",") + gson_string(name) + ":")
        if isinstance(value, Quoted):
            lit('"')
            pieces.append(value.text)
            lit('"')
        elif isinstance(value, Literal):
            lit(value.text)
        elif isinstance(value, Pieces):
            for piece in value.items:
                lit(piece) if isinstance(piece, str) else pieces.append(piece)
        else:
            pieces.append(value)
    lit("}")
    return pieces


def join_pieces(pieces: list, length: int, suffix: str = "") -> pa.Array:
    if suffix:
        pieces = pieces[:-1] + [pieces[-1] + suffix] if isinstance(pieces[-1], str) \
            else pieces + [suffix]
    if len(pieces) == 1:
        return pa.array([pieces[0]] * length, pa.string())
    return _join(*pieces)


def object_text(names: Sequence[str], values: Sequence, length: int, suffix: str = "") -> pa.Array:
    """``{"name":value,...}`` (plus ``suffix``) for every row, from formatted values."""
    return join_pieces(object_pieces(names, values), length, suffix)


def _structs(arr: pa.StructArray, ctx, path):
    names = [f.name for f in arr.type]
    values = [format_parts(arr.field(i), ctx, path + (name,)) for i, name in enumerate(names)]
    if arr.null_count == 0:
        return Pieces(object_pieces(names, values))  # joined once, by the enclosing object
    return _nullify(arr, object_text(names, values, len(arr)))


def _unions(arr, ctx, path) -> pa.Array:
    if arr.type.mode == "sparse":
        children = [format_values(arr.field(i), ctx, path + (f"[{i}]",))
                    for i in range(arr.type.num_fields)]
        positions = {code: i for i, code in enumerate(arr.type.type_codes)}
        index = pa.array([positions[c] for c in arr.type_codes.to_pylist()], pa.int8())
        return pc.choose(index, *children)
    return pa.array([_python_value(v) for v in arr.to_pylist()], pa.string())


def _python_value(value) -> str:
    """Rare types and dense unions, formatted in Python."""
    import datetime
    import decimal

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, str):
        return gson_string(value)
    if isinstance(value, bytes):
        return java_binary(value)
    if isinstance(value, decimal.Decimal):
        return '"' + hive_decimal(value) + '"'
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return '"' + java_date((value - datetime.date(1970, 1, 1)).days) + '"'
    raise TypeError(f"cannot format {type(value).__name__}")


def _binary(arr: pa.Array) -> pa.Array:
    return pa.array([None if v is None else java_binary(v) for v in arr.to_pylist()], pa.string())


@dataclass(frozen=True)
class FileContext:
    """What the ORC footer says that Arrow's values do not: which string columns are CHAR(n)
    (Java drops their pad spaces) and the zone the stripe was written in."""

    chars: frozenset = frozenset()
    writer_zone: str | None = None


PLAIN = FileContext()


class Quoted(NamedTuple):
    """Text that still needs its surrounding double quotes."""

    text: pa.Array


class Pieces(NamedTuple):
    """An object's text not yet joined: literal strings and arrays (see object_pieces)."""

    items: list


class Literal(NamedTuple):
    """The same text in every row (a constant column, common for ACID fields in a slice)."""

    text: str
    length: int


def format_values(arr: pa.Array, ctx: FileContext = PLAIN,
                  path: tuple[str, ...] = ()) -> pa.Array:
    """JSON text for every element of ``arr`` ("null" for nulls); never null itself."""
    value = format_parts(arr, ctx, path)
    if isinstance(value, Quoted):
        return _join('"', value.text, '"')
    if isinstance(value, Literal):
        return pa.array([value.text] * value.length, pa.string())
    if isinstance(value, Pieces):
        return join_pieces(value.items, len(arr))
    return value


def format_parts(arr: pa.Array, ctx: FileContext = PLAIN, path: tuple[str, ...] = ()):
    """Like format_values, but a column without nulls whose values are JSON strings may come
    back as Quoted, for the caller to fold the quotes into its own literal pieces."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_boolean(t):
        text = pc.if_else(arr, "true", "false")
    elif pa.types.is_integer(t):
        if arr.null_count == 0 and len(arr) > 1:
            low, high = pc.min_max(arr).values()
            if low == high:
                return Literal(str(low.as_py()), len(arr))
        text = pc.cast(arr, pa.string())
    elif pa.types.is_floating(t):
        text = _doubles(arr)
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        text = _strings(arr, path in ctx.chars)
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        text = _binary(arr)
    elif pa.types.is_decimal(t):
        text = _decimals(arr)
    elif pa.types.is_date32(t):
        text = _dates(arr)
    elif pa.types.is_timestamp(t):
        text = _timestamps(arr, ctx.writer_zone)
    elif pa.types.is_map(t):
        return _maps(arr, ctx, path)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        return _lists(arr, ctx, path)
    elif pa.types.is_struct(t):
        text = _structs(arr, ctx, path)
        return text if isinstance(text, Pieces) else pc.fill_null(text, "null")
    elif pa.types.is_union(t):
        return _unions(arr, ctx, path)
    elif pa.types.is_null(t):
        return pa.array(["null"] * len(arr), pa.string())
    else:
        raise TypeError(f"no JSON spelling for Arrow type {t}")
    if isinstance(text, Quoted):
        if arr.null_count == 0:
            return text
        text = _join('"', text.text, '"')
    return pc.fill_null(text, "null")


def lines_buffer(text: pa.Array) -> memoryview:
    """The bytes of a string array whose elements end in newlines, without copying."""
    _, offsets, data = text.buffers()
    first, last = struct.unpack_from("<i", offsets, 4 * text.offset)[0], \
        struct.unpack_from("<i", offsets, 4 * (text.offset + len(text)))[0]
    return memoryview(data)[first:last]
