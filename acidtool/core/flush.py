"""The ``_flush_length`` side file of an open Hive streaming file: big-endian 8-byte lengths, one
appended at each flush; the last is the committed length, and readers stop there."""

from __future__ import annotations

import struct


def flush_lengths(data: bytes) -> tuple[int, ...]:
    """The lengths in a side file's bytes. Raises ValueError, saying what is wrong, where there
    is none to read: Hive reads longs while bytes remain, so a trailing partial long fails, and
    a file without one is "found but not readable"."""
    if len(data) < 8:
        raise ValueError(f"found but is not readable ({len(data)} bytes, no committed length)")
    if len(data) % 8:
        raise ValueError(f"ends in a partial length ({len(data)} bytes is not a multiple of 8)")
    return struct.unpack(f">{len(data) // 8}q", data)
