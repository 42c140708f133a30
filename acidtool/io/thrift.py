"""Thrift's binary protocol over a plain socket: what a Hive metastore speaks without SASL.

Arguments are written from field lists, ``[(id, type, value)]``; answers are read without a
schema into ``{field id: value}`` (lists and sets both become Python lists, strings ``str``
with undecodable bytes kept as surrogates). So one reader serves every metastore version,
whatever fields a newer one adds, and Hive 2.3's ``set<i64>`` where 3.x sends ``list<i64>``
reads the same. Field ids come from Hive's IDL (``hive_metastore.thrift``), checked in the tests
against the generated classes of Hive 2.3.10, 3.1.3 and 4.0.1.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

# Thrift types
STOP, BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = (
    0, 2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15)
CALL, REPLY, EXCEPTION = 1, 2, 3
VERSION_1 = 0x80010000
# How deep a reply may nest, and how long a string or container may be: a peer that is not a
# metastore (or a damaged answer) cannot make the reader recurse or allocate without bound.
MAX_DEPTH = 64
MAX_LENGTH = 1 << 28

Fields = list  # [(field id, type, value)]


class ThriftError(Exception):
    """The peer's answer was not a Thrift reply this reader can take."""


class ApplicationError(Exception):
    """A ``TApplicationException``: the server could not run the call (e.g. "Invalid method
    name" from a metastore too old for it)."""

    def __init__(self, message: str, kind: int):
        super().__init__(message)
        self.kind = kind


class RemoteError(Exception):
    """A declared exception of the call (``MetaException``, ``NoSuchObjectException``...):
    ``field`` is its id in the call's result struct, ``message`` its text."""

    def __init__(self, method: str, field: int, message: str):
        super().__init__(message)
        self.method, self.field, self.message = method, field, message


# -- writing ---------------------------------------------------------------------------------

def _write(out: bytearray, ttype: int, value: Any) -> None:
    if ttype == BOOL:
        out.append(1 if value else 0)
    elif ttype == BYTE:
        out += struct.pack(">b", value)
    elif ttype == I16:
        out += struct.pack(">h", value)
    elif ttype == I32:
        out += struct.pack(">i", value)
    elif ttype == I64:
        out += struct.pack(">q", value)
    elif ttype == DOUBLE:
        out += struct.pack(">d", value)
    elif ttype == STRING:
        data = value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape")
        out += struct.pack(">i", len(data)) + data
    elif ttype == STRUCT:
        write_struct(out, value)
    elif ttype in (LIST, SET):
        elem, items = value
        out += struct.pack(">bi", elem, len(items))
        for item in items:
            _write(out, elem, item)
    elif ttype == MAP:
        ktype, vtype, items = value
        out += struct.pack(">bbi", ktype, vtype, len(items))
        for k, v in items.items():
            _write(out, ktype, k)
            _write(out, vtype, v)
    else:
        raise ValueError(f"no Thrift type {ttype}")


def write_struct(out: bytearray, fields: Fields) -> None:
    for fid, ttype, value in fields:
        if value is None:
            continue  # an unset optional field
        out += struct.pack(">bh", ttype, fid)
        _write(out, ttype, value)
    out.append(STOP)


def message(name: str, seqid: int, args: Fields) -> bytes:
    out = bytearray(struct.pack(">I", VERSION_1 | CALL))
    _write(out, STRING, name)
    out += struct.pack(">i", seqid)
    write_struct(out, args)
    return bytes(out)


# -- reading ---------------------------------------------------------------------------------

class _Reader:
    def __init__(self, stream):
        self.stream = stream

    def take(self, n: int) -> bytes:
        data = self.stream.read(n)
        if data is None or len(data) < n:
            raise ThriftError("the connection closed in the middle of an answer")
        return data

    def unpack(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def length(self) -> int:
        n = self.unpack(">i")
        if not 0 <= n <= MAX_LENGTH:
            raise ThriftError(f"an answer announced a length of {n}")
        return n

    def value(self, ttype: int, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise ThriftError("an answer nests deeper than any metastore's")
        if ttype == BOOL:
            return self.take(1) != b"\0"
        if ttype == BYTE:
            return self.unpack(">b")
        if ttype == I16:
            return self.unpack(">h")
        if ttype == I32:
            return self.unpack(">i")
        if ttype == I64:
            return self.unpack(">q")
        if ttype == DOUBLE:
            return self.unpack(">d")
        if ttype == STRING:
            return self.take(self.length()).decode("utf-8", "surrogateescape")
        if ttype == STRUCT:
            return self.struct(depth + 1)
        if ttype in (LIST, SET):
            elem = self.unpack(">b")
            return [self.value(elem, depth + 1) for _ in range(self.length())]
        if ttype == MAP:
            ktype, vtype = self.unpack(">b"), self.unpack(">b")
            return {self.value(ktype, depth + 1): self.value(vtype, depth + 1)
                    for _ in range(self.length())}
        raise ThriftError(f"an answer holds an unknown Thrift type {ttype}")

    def struct(self, depth: int = 0) -> dict[int, Any]:
        out: dict[int, Any] = {}
        while True:
            ttype = self.unpack(">b")
            if ttype == STOP:
                return out
            fid = self.unpack(">h")
            out[fid] = self.value(ttype, depth)


def binary(value: str | None) -> bytes:
    """A ``binary`` field as the bytes it was sent as."""
    return b"" if value is None else value.encode("utf-8", "surrogateescape")


class Connection:
    """One socket to a Thrift server, calls made one after the other."""

    def __init__(self, host: str, port: int, timeout: float):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.stream = self.sock.makefile("rb")
        self.seqid = 0

    def call(self, name: str, args: Fields) -> dict[int, Any]:
        """Send ``name(args)``; the result struct (field 0 the value, 1.. the declared
        exceptions). Raises ``ApplicationError`` for a TApplicationException."""
        self.seqid += 1
        self.sock.sendall(message(name, self.seqid, args))
        reader = _Reader(self.stream)
        head = reader.unpack(">I")
        if head & 0xFFFF0000 != VERSION_1:
            raise ThriftError("the answer is not Thrift's binary protocol (is this port a "
                              "metastore's, without SASL?)")
        reader.take(reader.length())  # the method's name
        reader.unpack(">i")  # seqid
        result = reader.struct()
        if head & 0xFF == EXCEPTION:
            raise ApplicationError(str(result.get(1, "")), int(result.get(2, 0)))
        return result

    def close(self) -> None:
        try:
            self.stream.close()
        finally:
            self.sock.close()
