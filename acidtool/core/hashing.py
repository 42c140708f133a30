"""Hive's bucket numbers for bucketed tables, per row.

* bucketing version 1 (Hive 2, ``ObjectInspectorUtils.getBucketHashCode``): 31*h + Java's hashCode
  of each bucket column (int: the value; bigint: ``(int)(v ^ (v >>> 32))``; string: 31*h + each
  signed UTF-8 byte from 0, String.hashCode() for ASCII; boolean 1/0; double/float: their bit
  patterns folded like Java's; date: the day number).
* bucketing version 2 (Hive 3+, ``hashCodeMurmur``): 31*h + Murmur3 hash32 (seed 104729) of each
  column's big-endian bytes (strings: their UTF-8 bytes; tinyint and boolean: the value itself).
  Hive 3 writes float and double through ``putFloat(floatToIntBits(x))`` /
  ``putDouble(doubleToLongBits(x))``, converting the bit pattern to a number first; so do we.

The bucket is ``(hash & Integer.MAX_VALUE) % buckets``. Null contributes 0.
"""

from __future__ import annotations

import struct
from typing import Any, Sequence

_SEED = 104729
_C1, _C2 = 0xCC9E2D51, 0x1B873593
_M32 = 0xFFFFFFFF


def _i32(v: int) -> int:
    v &= _M32
    return v - (1 << 32) if v >= 1 << 31 else v


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def murmur3_32(data: bytes, seed: int = _SEED) -> int:
    """org.apache.hive.common.util.Murmur3.hash32(byte[], length, seed)."""
    h = seed & _M32
    n = len(data)
    blocks = n // 4
    for i in range(blocks):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * _C1) & _M32
        k = _rotl(k, 15)
        k = (k * _C2) & _M32
        h ^= k
        h = _rotl(h, 13)
        h = (h * 5 + 0xE6546B64) & _M32
    # Hive's tail mixes the bytes in as signed Java bytes (sign-extended), unlike the reference
    # Murmur3; storage-api's hash32 does so, and the bucket numbers depend on it.
    tail = [b - 256 if b > 127 else b for b in data[4 * blocks:]]
    k = 0
    if len(tail) == 3:
        k ^= (tail[2] << 16) & _M32
    if len(tail) >= 2:
        k ^= (tail[1] << 8) & _M32
    if len(tail) >= 1:
        k ^= tail[0] & _M32
        k = (k * _C1) & _M32
        k = _rotl(k, 15)
        k = (k * _C2) & _M32
        h ^= k
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return _i32(h)


INT_KINDS = {"tinyint": 1, "smallint": 2, "int": 4, "bigint": 8}


def _text_hash(data: bytes) -> int:
    # 31*h + each signed UTF-8 byte, from 0: String.hashCode() for ASCII text.
    h = 0
    for b in data:
        h = _i32(31 * h + (b - 256 if b > 127 else b))
    return h


def _fold(bits: int) -> int:
    bits &= (1 << 64) - 1
    return _i32(bits ^ (bits >> 32))


def hash_v1(value: Any, kind: str) -> int:
    if value is None:
        return 0
    if kind == "boolean":
        return 1 if value else 0
    if kind in ("tinyint", "smallint", "int"):
        return _i32(value)
    if kind == "bigint":
        return _fold(value)
    if kind in ("string", "varchar", "char"):
        text = value.rstrip(" ") if kind == "char" else value
        return _text_hash(text.encode("utf-8"))
    if kind == "double":
        return _fold(struct.unpack(">q", struct.pack(">d", value))[0])
    if kind == "float":
        return _i32(struct.unpack(">i", struct.pack(">f", value))[0])
    if kind == "date":
        return _i32(value)
    raise ValueError(f"bucketing on a {kind} column is not supported (bucketing version 1)")


def hash_v2(value: Any, kind: str) -> int:
    if value is None:
        return 0
    if kind == "boolean":
        return 1 if value else 0
    if kind == "tinyint":
        return _i32(value)
    if kind in ("smallint", "int", "bigint"):
        size = INT_KINDS[kind]
        return murmur3_32(int(value).to_bytes(size, "big", signed=True))
    if kind in ("string", "varchar", "char"):
        text = value.rstrip(" ") if kind == "char" else value
        return murmur3_32(text.encode("utf-8"))
    if kind == "float":
        bits = struct.unpack(">i", struct.pack(">f", value))[0]
        return murmur3_32(struct.pack(">f", float(bits)))
    if kind == "double":
        bits = struct.unpack(">q", struct.pack(">d", value))[0]
        return murmur3_32(struct.pack(">d", float(bits)))
    if kind == "date":
        return murmur3_32(int(value).to_bytes(4, "big", signed=True))
    raise ValueError(f"bucketing on a {kind} column is not supported (bucketing version 2)")


def bucket_number(values: Sequence[Any], kinds: Sequence[str], buckets: int,
                  version: int = 2) -> int:
    """ObjectInspectorUtils.getBucketNumber(getBucketHashCode(values), buckets)."""
    h = 0
    fn = hash_v1 if version == 1 else hash_v2
    for value, kind in zip(values, kinds):
        h = _i32(31 * h + fn(value, kind))
    return (h & 0x7FFFFFFF) % buckets
