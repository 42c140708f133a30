"""ORC fixtures written by our own code (pyorc), plus a row-at-a-time reference formatter.

The reference reads rows with pyorc and spells each value with the functions of
``acidtool.core.javafmt``; the tool itself formats whole columns with Arrow kernels. Two
independent paths that must agree.
"""

from __future__ import annotations

import datetime
import io
from decimal import Decimal
from pathlib import Path

import pyorc
from pyorc.enums import TypeKind

from acidtool.core.javafmt import (
    gson_string,
    hive_decimal,
    java_binary,
    java_date,
    java_double,
    java_timestamp,
)

UTC = datetime.timezone.utc

ALL_TYPES = ("struct<b:boolean,ti:tinyint,si:smallint,i:int,bi:bigint,f:float,d:double,"
             "s:string,c:char(4),vc:varchar(8),bin:binary,dec:decimal(12,3),dt:date,"
             "ts:timestamp,l:array<int>,m:map<string,double>,st:struct<x:int,y:string>,"
             "ll:array<array<string>>,ms:map<int,struct<p:double>>>")


def all_types_rows() -> list[tuple]:
    ts = datetime.datetime(2020, 5, 13, 17, 10, tzinfo=UTC)
    return [
        (True, 1, 2, 3, 4, 1.5, 5000.0, "plain", "ab", "vc", b"\x00\xff\x10", Decimal("1.500"),
         datetime.date(2020, 1, 2), ts, [1, 2, None], {"a": 0.1, "b": None}, (7, "x"),
         [["p", None], [], None], {1: (2.5,), 2: None}),
        (None, None, None, None, None, None, None, None, None, None, None, None, None, None, None,
         None, None, None, None),
        (False, -128, -32768, -2**31, -2**63, 0.1, 1e-5, 'q"u\\o\te\n\u2028é漢\x01', "abcd",
         "", b"", Decimal("-0.000"), datetime.date(1969, 12, 31),
         datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), [], {}, (None, None),
         [[]], {}),
        (True, 127, 32767, 2**31 - 1, 2**63 - 1, 3.4028234663852886e38, 1e21,
         "x" * 3, "zz", "12345678", b"abc", Decimal("999999999.999"),
         datetime.date(1582, 10, 15), datetime.datetime(1970, 1, 1, tzinfo=UTC),
         [None], {"k": float("inf")}, None, None, None),
        (False, 0, 0, 0, 0, -0.0, float("nan"), "", "a", "b", b"\x7f", Decimal("0.001"),
         datetime.date(1, 1, 1), datetime.datetime(2038, 1, 19, 3, 14, 8, 1000, tzinfo=UTC),
         [5], {"": -0.0}, (0, ""), [["", ""]], {0: (float("-inf"),)}),
    ]


def write_orc(path: Path, schema: str, rows, *, stripe_size: int = 64 * 1024 * 1024,
              metadata: dict[str, bytes] | None = None, **options) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        w = pyorc.Writer(f, schema, stripe_size=stripe_size, **options)
        w.writerows(rows)
        for k, v in (metadata or {}).items():
            w.set_user_metadata(**{k: v})
        w.close()
    return path


class ExactTimestamp:
    """A pyorc converter that writes and reads timestamps as (epoch seconds, nanoseconds)."""

    @staticmethod
    def to_orc(value, tz):
        return value

    @staticmethod
    def from_orc(seconds, nanos, tz):
        return (seconds, nanos)


def write_timestamps(path: Path, values: list[tuple[int, int]]) -> Path:
    with open(path, "wb") as f:
        w = pyorc.Writer(f, "struct<t:timestamp>", converters={TypeKind.TIMESTAMP: ExactTimestamp})
        w.writerows([(v,) for v in values])
        w.close()
    return path


class _TS:
    @staticmethod
    def from_orc(seconds, nanoseconds, timezone):
        return ("ts", seconds, nanoseconds)

    @staticmethod
    def to_orc(*a):
        raise NotImplementedError


class _DATE:
    @staticmethod
    def from_orc(days):
        return ("date", days)

    @staticmethod
    def to_orc(*a):
        raise NotImplementedError


def _ref(value, t) -> str:
    kind = t.kind
    if value is None:
        return "null"
    if kind == TypeKind.BOOLEAN:
        return "true" if value else "false"
    if kind in (TypeKind.BYTE, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG):
        return str(value)
    if kind in (TypeKind.FLOAT, TypeKind.DOUBLE):
        return java_double(value)
    if kind == TypeKind.CHAR:  # ORC Java returns CHAR(n) without its pad spaces
        return gson_string(value.rstrip(" "))
    if kind in (TypeKind.STRING, TypeKind.VARCHAR):
        return gson_string(value)
    if kind == TypeKind.BINARY:
        return java_binary(value)
    if kind == TypeKind.DECIMAL:
        return '"' + hive_decimal(value) + '"'
    if kind == TypeKind.DATE:
        return '"' + java_date(value[1]) + '"'
    if kind == TypeKind.TIMESTAMP:
        return '"' + java_timestamp(value[1], value[2]) + '"'
    if kind == TypeKind.LIST:
        return "[" + ",".join(_ref(v, t.type) for v in value) + "]"
    if kind == TypeKind.MAP:
        return "[" + ",".join('{"_key":' + _ref(k, t.key) + ',"_value":' + _ref(v, t.value) + "}"
                              for k, v in value.items()) + "]"
    if kind == TypeKind.STRUCT:
        return "{" + ",".join(gson_string(n) + ":" + _ref(v, ft)
                              for (n, ft), v in zip(t.fields.items(), value)) + "}"
    if kind == TypeKind.UNION:
        raise NotImplementedError
    raise AssertionError(kind)


def reference_lines(path: Path) -> list[str]:
    with open(path, "rb") as f:
        data = f.read()
    reader = pyorc.Reader(io.BytesIO(data), converters={TypeKind.TIMESTAMP: _TS,
                                                        TypeKind.DATE: _DATE},
                          struct_repr=pyorc.StructRepr.TUPLE)
    return [_ref(row, reader.schema) for row in reader]
