"""Java's Long.parseLong / Integer.parseInt rules, which Hive uses on directory and file names.

Python's int() is more lenient (underscores, surrounding whitespace), so names such as
``delta_1_000_2`` or ``base_ 5`` would parse here but fail in Hive. These helpers accept exactly
what Java accepts: an optional sign followed by one or more decimal digits (any Unicode decimal
digit, as Character.digit does), within the signed 64- or 32-bit range.
"""

import re

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1
INT_MIN = -(2**31)
INT_MAX = 2**31 - 1

_JAVA_INT = re.compile(r"[+-]?\d+")


class JavaNumberFormatError(ValueError):
    """The text is not a number Java's parser accepts (NumberFormatException in Hive)."""

    def __init__(self, text: str, reason: str = "not a number") -> None:
        super().__init__(f'For input string: "{text}" ({reason})')
        self.text = text


def _parse(text: str, lo: int, hi: int) -> int:
    if text.isascii() and text.isdigit() and len(text) < 10:
        return int(text)  # the common case: plain digits that fit any Java int
    if not _JAVA_INT.fullmatch(text):
        raise JavaNumberFormatError(text)
    value = int(text)
    if not lo <= value <= hi:
        raise JavaNumberFormatError(text, "out of range")
    return value


def parse_long(text: str) -> int:
    """Long.parseLong."""
    return _parse(text, LONG_MIN, LONG_MAX)


def parse_int(text: str) -> int:
    """Integer.parseInt."""
    return _parse(text, INT_MIN, INT_MAX)


def java_string_key(text: str) -> str:
    """Sort key equal to Java's String.compareTo, which compares UTF-16 code units.

    Code-point order (Python's) differs from it only for characters above U+FFFF (surrogate pairs
    sort below U+E000..U+FFFF in Java), so the text itself is the key unless it has one."""
    if text.isascii() or max(text) <= "\uffff":
        return text
    units = text.encode("utf-16-be", "surrogatepass")
    return "".join(chr(int.from_bytes(units[i:i + 2], "big")) for i in range(0, len(units), 2))
