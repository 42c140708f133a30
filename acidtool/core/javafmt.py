"""How Java spells values, for output identical to ``orc-tools data`` (ORC's PrintData with Gson).

* doubles: ``Double.toString``: plain notation with at least one fraction digit for
  1e-3 <= |x| < 1e7 (``5000.0``), otherwise ``d.dddE[-]n`` (``1.0E-5``), ``NaN``, ``Infinity``.
  Digits are the shortest that round-trip, as JDK 19+ prints them; JDK 8-18 print a longer digit
  string for about one value in a hundred of magnitude >= 1e16 (their FloatingDecimal).
* dates: ``DateWritable(days).toString()``, a ``java.sql.Date``: the Julian calendar before
  1582-10-15 (Java's hybrid calendar), the year of era as its last four digits (10054 -> 0054).
* timestamps: ``java.sql.Timestamp.toString()`` with the JVM in UTC: ``yyyy-mm-dd hh:mm:ss.f``,
  nanoseconds without trailing zeros but at least one digit, hybrid calendar as for dates.
* decimals: ``HiveDecimalWritable.toString()``: plain notation, trailing zeros dropped, no ``-0``.
* strings: Gson's JsonWriter escaping: ``"`` and ``\\``, the short forms ``\\t \\b \\n \\r \\f``,
  other control characters as ``\\u00xx``, and U+2028/U+2029 as ``\\u2028``/``\\u2029``;
  everything else, non-ASCII included, as UTF-8.
"""

from __future__ import annotations

import datetime
import math
from decimal import Decimal

GREGORIAN_CUTOVER_DAY = -141427  # 1582-10-15, the first Gregorian day in Java's default calendar
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_UNIX_EPOCH_JDN = 2440588


def java_double(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    magnitude = abs(value)
    if magnitude == 5e-324:  # Double.MIN_VALUE: every JDK prints two digits here
        return "-4.9E-324" if value < 0 else "4.9E-324"
    text = repr(value)
    if 1e-3 <= magnitude < 1e7:
        if "e" in text:  # repr switches to exponent form below 1e-4
            text = format(Decimal(text), "f")
        return text if "." in text else text + ".0"
    mantissa, _, exponent = "{:e}".format(Decimal(text)).partition("e")
    digits = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
    sign = "-" if value < 0 else ""
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{int(exponent)}"


def _julian_from_jdn(jdn: int) -> tuple[int, int, int]:
    c = jdn + 32082
    d = (4 * c + 3) // 1461
    e = c - (1461 * d) // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = d - 4800 + m // 10
    return year, month, day


def _gregorian_from_jdn(jdn: int) -> tuple[int, int, int]:
    a = jdn + 32044
    b = (4 * a + 3) // 146097
    c = a - (146097 * b) // 4
    d = (4 * c + 3) // 1461
    e = c - (1461 * d) // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = 100 * b + d - 4800 + m // 10
    return year, month, day


def hybrid_date(days: int) -> tuple[int, int, int]:
    """(year of era, month, day) of a day number in Java's Julian/Gregorian calendar."""
    jdn = days + _UNIX_EPOCH_JDN
    year, month, day = (_gregorian_from_jdn(jdn) if days >= GREGORIAN_CUTOVER_DAY
                        else _julian_from_jdn(jdn))
    if year <= 0:  # BC: Java prints the year of era (1 BC is year 1)
        year = 1 - year
    return year, month, day


def _year(year: int) -> str:
    # java.sql.Date and Timestamp print four digits; Date keeps only the last four of a year
    # past 9999 (10054 prints as 0054), Timestamp prints them all.
    return f"{year:04d}"


def java_date(days: int) -> str:
    year, month, day = hybrid_date(days)
    return f"{year % 10000:04d}-{month:02d}-{day:02d}"


def java_timestamp(seconds: int, nanos: int) -> str:
    """``java.sql.Timestamp.toString()`` for an instant given as epoch seconds plus nanoseconds
    (0 <= nanos < 1e9), with the JVM's time zone UTC."""
    days, rest = divmod(seconds, 86400)
    year, month, day = hybrid_date(days)
    hour, rest = divmod(rest, 3600)
    minute, second = divmod(rest, 60)
    frac = "0" if nanos == 0 else f"{nanos:09d}".rstrip("0")
    return f"{_year(year)}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}.{frac}"


def hive_decimal(value: Decimal) -> str:
    if value == 0:
        return "0"
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\b": "\\b", "\n": "\\n", "\r": "\\r",
                  "\f": "\\f", "\u2028": "\\u2028", "\u2029": "\\u2029"}
ESCAPES = {chr(i): _SHORT_ESCAPES.get(chr(i), f"\\u{i:04x}") for i in range(32)}
ESCAPES.update({'"': '\\"', "\\": "\\\\", "\u2028": "\\u2028", "\u2029": "\\u2029"})
# A name that is not UTF-8 (its undecodable bytes are lone surrogates, PEP 383) is written with
# JSON's escape of each, which keeps the output valid UTF-8 and loses nothing.
ESCAPES.update({chr(c): f"\\u{c:04x}" for c in range(0xDC80, 0xDD00)})
_TRANSLATE = str.maketrans(ESCAPES)


def gson_string(text: str) -> str:
    """A JSON string literal as Gson's JsonWriter writes it."""
    return '"' + text.translate(_TRANSLATE) + '"'


def java_binary(data: bytes) -> str:
    return "[" + ",".join(str(b) for b in data) + "]"


def orc_java_seconds(cpp_seconds: int, nanos: int, writer_offset_ms: int) -> int:
    """The epoch second ORC Java gives a timestamp that ORC C++ (pyarrow, pyorc) read as
    ``cpp_seconds``, for a file written in a zone ``writer_offset_ms`` from UTC (reader in UTC).

    Both readers undo an old writer rounding by taking a second off negative instants that have a
    millisecond fraction, but C++ tests the sign after shifting to the reader's zone and Java
    before. They disagree only within a day of 1970-01-01 in files not written in UTC."""
    if nanos <= 999_999:
        return cpp_seconds
    post = cpp_seconds + 1 if cpp_seconds < 0 else cpp_seconds  # undo C++'s adjustment
    pre_ms = post * 1000 + nanos // 1_000_000 - writer_offset_ms
    return post - 1 if pre_ms < 0 else post
