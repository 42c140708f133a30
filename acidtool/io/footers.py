"""Reading ORC footers without an ORC reader: one ranged read of a file's last bytes, decoded
by ``core.orcproto``. What validate reads of every file, and read of files it plans.

pyarrow is imported only where it is needed (a footer compressed with SNAPPY, LZ4 or ZSTD, a
remote file): checking a local table's names and footers does not pay for importing it.
"""

from __future__ import annotations

import functools
import sys
from typing import Callable

from ..core.errors import PathError
from ..core.facts import FileFacts, event_ranges
from ..core.flush import flush_lengths
from ..core.listing import UNKNOWN_SIZE
from ..core.orcproto import (
    DECOMPRESSORS,
    TAIL_GUESS,
    Footer,
    ProtoError,
    UnsupportedCompression,
    footer_from_tail,
    parse_file_tail,
    parse_postscript,
    read_varint,
)
from .fs import Location, read_bytes, read_end, read_range, size_if_any

ORC_MAGIC = b"ORC"


def _read_errors() -> tuple[type[BaseException], ...]:
    """What reading a file may raise: OSError and ValueError, and once pyarrow is imported
    (only then can it have raised), its own exceptions. An except clause is evaluated only
    when an exception reaches it."""
    pa = sys.modules.get("pyarrow")
    return (OSError, ValueError) if pa is None else (pa.ArrowException, OSError, ValueError)


def _unsnappy(chunk: bytes, limit: int) -> bytes:
    size, _ = read_varint(chunk, 0)  # raw snappy starts with the uncompressed length
    if size > limit:
        raise ProtoError(f"SNAPPY chunk of {size} bytes exceeds the block size {limit}")
    import pyarrow as pa

    return pa.Codec("snappy").decompress(chunk, decompressed_size=size, asbytes=True)


_DECOMPRESSORS = {**DECOMPRESSORS, "SNAPPY": _unsnappy}


def read_footer_at(file, size: int) -> Footer:
    """The footer of an ORC file of ``size`` bytes (or of its first ``size`` bytes, a streaming
    file's committed length), from one ranged read of its last bytes (``file.read_at``), a
    second only when the footer is larger than that read; no ORC reader is opened.

    Raises ProtoError (naming what is wrong) for bytes that are not an ORC tail, and
    UnsupportedCompression for footers compressed with LZ4, ZSTD or LZO: pyarrow's codecs need
    the decompressed size, which only an ORC reader works out (``footer_through_pyarrow``)."""
    return read_tail(file.read_at, size)[0]


def read_tail(read_at: Callable[[int, int], bytes], size: int, tail: bytes | None = None
              ) -> tuple[Footer, bytes | None]:
    """``read_footer_at`` through ``read_at(nbytes, offset)``, and the file's ``size`` bytes
    when that one read held all of them (a file no larger than the read), else None. ``tail``:
    the last ``TAIL_GUESS`` bytes (or all), where they were read already."""
    if size < 4:
        raise ProtoError(f"{size} bytes is too short to be ORC")
    if tail is None:
        n = min(size, TAIL_GUESS)
        tail = read_at(n, size - n)
    whole = tail if len(tail) == size else None
    ps = parse_postscript(tail, size)
    if not ps.magic_at_end and not starts_like_orc(read_at):
        raise ProtoError("no ORC magic at the end of the postscript nor at the start of the file")
    needed = ps.tail_length
    if needed > len(tail):
        tail = read_at(needed, size - needed)
    return footer_from_tail(tail, ps, _DECOMPRESSORS), whole


def footer_through_pyarrow(file) -> Footer:
    """The footer as pyarrow's ORC reader hands it over (any codec it reads), from a
    ``pyarrow.NativeFile``."""
    import pyarrow.orc as paorc

    return parse_file_tail(paorc.ORCFile(file).reader.serialized_file_tail())


def starts_like_orc(read_at: Callable[[int, int], bytes]) -> bool:
    return read_at(3, 0) == ORC_MAGIC


def unreadable_reason(exc: BaseException) -> str:
    """What to say of a file whose bytes an ORC reader (or the footer decoder) refused."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"not readable as ORC (truncated or corrupt): {first}"


def read_footer(loc: Location, rel: str, size: int, flush_side: str | None) -> FileFacts:
    """The footer of a listed file of ``size`` bytes, whose ``_flush_length`` side file (if
    the listing has one) is ``flush_side``: one ranged read, no ORC reader opened (unless the
    footer's codec needs one). Never raises for a bad file: the facts say what is wrong (for
    validate, a finding)."""
    return read_footer_and_bytes(loc, rel, size, flush_side)[0]


def read_footer_and_bytes(loc: Location, rel: str, size: int, flush_side: str | None
                          ) -> tuple[FileFacts, bytes | None]:
    """``read_footer``, and the file's readable bytes where its one read held them all (a file
    of up to 16 KiB): reading its rows then needs no second read.

    ``size`` may be UNKNOWN_SIZE (a file listed without one): it is learnt when the file is
    opened, and the facts carry it (0 for a file that cannot be opened nor stat'ed)."""
    committed = whole = tail = None
    if size == UNKNOWN_SIZE:
        try:  # one open learns the size and reads the tail (unless a flush length says where)
            size, tail = read_end(loc, rel, TAIL_GUESS if flush_side is None else 0)
        except _read_errors() as exc:
            _refuse_denied(exc, loc, rel)
            return FileFacts(rel, size_if_any(loc, rel), error=unreadable_reason(exc)), None
        if flush_side is not None:
            tail = None
    if size == 0:
        return FileFacts(rel, size, error="empty file (0 bytes), not ORC"), None
    try:
        if flush_side is not None:
            try:
                committed = flush_lengths(read_bytes(loc, flush_side))[-1]
            except ValueError as exc:  # (an unreadable side file is an OSError)
                return FileFacts(rel, size, error=f"{flush_side}: flush-length file {exc}"), None
            if committed > size:
                return FileFacts(rel, size, error=f"flush length {committed} is beyond the "
                                 f"file's {size} bytes", flush_committed=committed), None
        length = size if committed is None else committed
        # A local file is opened for each read (usually one): a file object would cost more
        # than the read. A remote one is opened once: each open is a round trip.
        source = None if loc.is_local else loc.fs.open_input_file(loc.join(rel))
        read_at = source.read_at if source is not None else functools.partial(read_range, loc,
                                                                               rel)
        try:  # not a with statement: its two method calls are a cost paid per file
            footer, whole = read_tail(read_at, length, tail)
        except UnsupportedCompression:
            footer = None
        except _read_errors():
            if not starts_like_orc(read_at):
                return FileFacts(rel, size, error="not an ORC file (it does not start with "
                                 "'ORC')", flush_committed=committed), None
            raise
        finally:
            if source is not None:
                source.close()
        if footer is None:  # a codec only pyarrow's ORC reader decodes
            import pyarrow as pa

            with (pa.BufferReader(read_bytes(loc, rel, length)) if committed is not None
                  else loc.fs.open_input_file(loc.join(rel))) as source:
                footer = footer_through_pyarrow(source)
        ranges = event_ranges(footer.check())
        # tuple.__new__: a NamedTuple's own constructor is Python code, and this is per file
        return tuple.__new__(FileFacts, (rel, size, footer.release(), None, committed,
                                         ranges)), whole
    except _read_errors() as exc:
        _refuse_denied(exc, loc, rel)
        return FileFacts(rel, size, error=unreadable_reason(exc),
                         flush_committed=committed), None


def _refuse_denied(exc: BaseException, loc: Location, rel: str) -> None:
    """A file this user may not read is an IO error (exit 2), not a damaged file: nothing is
    known of its bytes."""
    if isinstance(exc, PermissionError) or "permission denied" in str(exc).lower():
        raise PathError(f"{loc.url_of(rel)}: permission denied") from None
