"""Adding ORC user metadata to a finished file (pyarrow's writer cannot set it).

Protobuf messages merge when concatenated, so the new ``UserMetadataItem`` entries are appended to
the file's footer as one more compression chunk, stored uncompressed ("original"); the postscript
is rewritten with the longer footer length. The data, the stripe statistics and the existing
footer bytes are untouched.
"""

from __future__ import annotations

from ..core.orcproto import encode_field, encode_varint, parse_postscript, read_varint


def metadata_items(items: dict[str, bytes]) -> bytes:
    """Footer field 5 (repeated UserMetadataItem{name=1, value=2}) for every item."""
    return b"".join(encode_field(5, encode_field(1, k.encode()) + encode_field(2, v))
                    for k, v in items.items())


def with_user_metadata(data: bytes, items: dict[str, bytes], file_size: int | None = None
                       ) -> bytes:
    """The ORC file ``data`` with ``items`` added to its user metadata. Only the bytes after
    the footer change: ``data`` may be the file's last bytes (holding its postscript), of a
    file of ``file_size`` bytes."""
    tail = parse_postscript(data, file_size or len(data))  # a ValueError (ProtoError) when it is not ORC
    if not tail.footer_length:
        raise ValueError("ORC postscript without a footer length")
    footer_end = len(data) - 1 - tail.length
    ps = data[footer_end:-1]
    extra = metadata_items(items)
    if tail.compression == "NONE":
        chunks = extra
    else:
        size = tail.block_size or 262144
        chunks = b""
        for i in range(0, len(extra), size):
            piece = extra[i:i + size]
            header = (len(piece) << 1) | 1  # "original": stored without compression
            chunks += header.to_bytes(3, "little") + piece
    new_ps = postscript_with_footer_length(ps, tail.footer_length + len(chunks))
    return data[:footer_end] + chunks + new_ps + bytes([len(new_ps)])


def postscript_with_footer_length(ps: bytes, footer_length: int) -> bytes:
    """The serialized postscript ``ps`` with another footer length, every other field kept."""
    new_ps = bytearray()
    pos = 0
    while pos < len(ps):
        start = pos
        key, pos = read_varint(ps, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(ps, pos)
            if number == 1:
                new_ps += encode_varint(key) + encode_varint(footer_length)
                continue
        elif wire == 2:
            length, pos = read_varint(ps, pos)
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        new_ps += ps[start:pos]
    if len(new_ps) > 255:
        raise ValueError("ORC postscript would exceed 255 bytes")
    return bytes(new_ps)


def replace_user_metadata(data: bytes, items: dict[str, bytes]) -> bytes:
    """The ORC file ``data`` with the user metadata ``items`` set: entries of those names are
    dropped and the new ones added. The footer is rewritten whole, stored uncompressed
    ("original" chunks, which every codec's readers take); the stripes are untouched."""
    import pyarrow as pa

    from .footers import footer_through_pyarrow

    tail = parse_postscript(data, len(data))
    if not tail.footer_length:
        raise ValueError("ORC postscript without a footer length")
    footer_end = len(data) - 1 - tail.length
    start = footer_end - tail.footer_length
    raw = footer_through_pyarrow(pa.BufferReader(data)).serialized
    names = {k.encode() for k in items}
    kept = b"".join(span for number, value, span in _field_spans(raw)
                    if not (number == 5 and _item_name(value) in names))
    footer = kept + metadata_items(items)
    if tail.compression != "NONE":
        size = tail.block_size or 262144
        chunks = []
        for i in range(0, len(footer), size):
            piece = footer[i:i + size]
            chunks.append(((len(piece) << 1) | 1).to_bytes(3, "little") + piece)
        footer = b"".join(chunks) or ((0 << 1) | 1).to_bytes(3, "little")
    ps = data[footer_end:-1]
    new_ps = postscript_with_footer_length(ps, len(footer))
    return data[:start] + footer + new_ps + bytes([len(new_ps)])


def _field_spans(buf: bytes):
    """(field number, length-delimited value or None, the field's bytes) of a message."""
    pos = 0
    while pos < len(buf):
        start = pos
        key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        value = None
        if wire == 0:
            _, pos = read_varint(buf, pos)
        elif wire == 2:
            length, pos = read_varint(buf, pos)
            value = buf[pos:pos + length]
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wire} in an ORC footer")
        yield number, value, buf[start:pos]


def _item_name(item: bytes | None) -> bytes | None:
    """The name (field 1) of a serialized UserMetadataItem."""
    if item is None:
        return None
    for number, value, _ in _field_spans(item):
        if number == 1:
            return value
    return None
