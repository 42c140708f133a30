"""Table layouts for the validate rule tests, written with our own ORC code.

A layout is a dict of relative path -> content, where content is bytes, a directory marker
(``DIR``), or a builder from this module (``acid(...)``, ``plain(...)``).
"""

from __future__ import annotations

import io
from pathlib import Path

from acidtool.core.bucket import encode_v1
from acidtool.io.acidwrite import (
    DELETE,
    INSERT,
    Event,
    write_acid_file,
    write_plain_file,
)

DIR = object()


class Link(str):
    """A symbolic link in a layout, to this target."""
ROW = "struct<id:int,name:string>"
MARK = b"2"


def events(wid: int, n: int = 2, bucket: int = 0, stmt: int = 0, op: int = INSERT,
           current: int | None = None, v0: bool = False, start: int = 0) -> list[Event]:
    prop = bucket if v0 else encode_v1(bucket, stmt)
    cur = wid if current is None else current
    row = (lambda i: (i, f"n{i}")) if op != DELETE else (lambda i: None)
    return [Event(op, wid, prop, start + i, cur, row(i)) for i in range(n)]


def acid(evs: list[Event] | None = None, *, row_type: str = ROW, **kw) -> bytes:
    buf = io.BytesIO()
    write_acid_file(buf, row_type, evs if evs is not None else events(1), **kw)
    return buf.getvalue()


def plain(schema: str = ROW, rows=((1, "a"),)) -> bytes:
    buf = io.BytesIO()
    write_plain_file(buf, schema, list(rows))
    return buf.getvalue()


def orc_with_schema(schema: str, rows, metadata: dict[str, bytes] | None = None) -> bytes:
    import pyorc

    buf = io.BytesIO()
    w = pyorc.Writer(buf, schema)
    w.writerows(list(rows))
    for k, v in (metadata or {}).items():
        w.set_user_metadata(**{k: v})
    w.close()
    return buf.getvalue()


def delta(name: str, data: bytes | None = None, marker: bool = True) -> dict:
    out = {f"{name}/bucket_00000": data if data is not None else acid()}
    if marker:
        out[f"{name}/_orc_acid_version"] = MARK
    return out


def build(root: Path, layout: dict) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in layout.items():
        target = root / rel
        if content is DIR:
            target.mkdir(parents=True, exist_ok=True)
            continue
        if isinstance(content, Link):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(content)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return root


def with_footer(data: bytes, transform) -> bytes:
    """An uncompressed ORC file with its footer's top-level fields rewritten:
    ``transform(list of (number, wire, value))`` returns the new list (values as ``fields``
    gives them). Tests build footers ORC writers never write with it."""
    from acidtool.core.orcproto import encode_field, fields
    from acidtool.io.orcpatch import postscript_with_footer_length

    ps = data[-1 - data[-1]:-1]
    footer_length = next(v for n, w, v in fields(ps) if n == 1 and w == 0)
    assert next(v for n, w, v in fields(ps) if n == 2 and w == 0) == 0, "compressed"
    end = len(data) - 1 - len(ps)
    footer = data[end - footer_length:end]
    new = b"".join(encode_field(n, v) for n, w, v in transform(list(fields(footer)))
                   if w in (0, 2))  # the footer has no fixed-width fields
    new_ps = postscript_with_footer_length(ps, len(new))
    return data[:end - footer_length] + new + new_ps + bytes([len(new_ps)])


def with_damaged_stripe(data: bytes) -> bytes:
    """The ORC file with bytes of its first stripe's first data stream overwritten: the footer
    stays sound, decoding the stream fails (for a compressed file)."""
    import pyarrow as pa

    from acidtool.io.footers import footer_through_pyarrow

    stripe = footer_through_pyarrow(pa.BufferReader(data)).stripes[0]
    start = stripe.offset + stripe.index_length
    return data[:start + 3] + b"\xff" * 37 + data[start + 40:]
