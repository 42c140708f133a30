"""BucketCodec: the ``bucket`` column of ACID events (ROW__ID.bucketid).

The top three bits select the codec. V0 (Hive 2.x) is the plain bucket id. V1 (Hive 3+) packs
``001`` in bits 31-29, the bucket/writer id in bits 27-16 and the statement id in bits 11-0;
bits 28 and 15-12 are reserved. Versions 2-7 do not exist and Hive rejects them.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_BUCKET_ID = 4095
MAX_STATEMENT_ID = 4095
_V1_TAG = 1 << 29


class BucketCodecError(ValueError):
    """An encoded value with an undefined codec version, or an id out of range for encoding."""


@dataclass(frozen=True)
class BucketProperty:
    """A decoded bucket property."""

    encoded: int
    codec_version: int
    bucket_id: int
    statement_id: int

    def __str__(self) -> str:
        return (f"{self.encoded} = V{self.codec_version} bucket {self.bucket_id} "
                f"statement {self.statement_id}")


def to_int32(value: int) -> int:
    """Reinterpret as a Java int (the column is a signed 32-bit int)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def codec_version(encoded: int) -> int:
    return (encoded & 0xFFFFFFFF) >> 29


def decode(encoded: int) -> BucketProperty:
    """Decode a bucket property (BucketCodec.determineVersion(...).decodeWriterId/StatementId)."""
    if not -(2**31) <= encoded <= 2**31 - 1:
        raise BucketCodecError(f"bucket property {encoded} is not a 32-bit int")
    version = codec_version(encoded)
    if version == 0:
        return BucketProperty(encoded, 0, encoded, 0)
    if version == 1:
        return BucketProperty(encoded, 1, (encoded >> 16) & 0xFFF, encoded & 0xFFF)
    raise BucketCodecError(
        f"bucket property {encoded} (0x{encoded & 0xFFFFFFFF:08X}) has codec version {version}; "
        "only 0 (Hive 2) and 1 (Hive 3+) exist")


def encode_v1(bucket_id: int, statement_id: int = 0) -> int:
    """BucketCodec.V1.encode. A statement id of -1 ("none") is stored as 0, as Hive does."""
    if statement_id == -1:
        statement_id = 0
    if not 0 <= bucket_id <= MAX_BUCKET_ID:
        raise BucketCodecError(f"bucket id {bucket_id} is outside 0..{MAX_BUCKET_ID}")
    if not 0 <= statement_id <= MAX_STATEMENT_ID:
        raise BucketCodecError(f"statement id {statement_id} is outside 0..{MAX_STATEMENT_ID}")
    return _V1_TAG | (bucket_id << 16) | statement_id


def encode(bucket_id: int, statement_id: int = 0, version: int = 1) -> int:
    if version == 1:
        return encode_v1(bucket_id, statement_id)
    if version == 0:
        if not 0 <= bucket_id <= 2**31 - 1 or statement_id not in (0, -1):
            raise BucketCodecError("V0 holds only a non-negative bucket id and no statement id")
        return bucket_id
    raise BucketCodecError(f"codec version {version} does not exist; use 0 or 1")
