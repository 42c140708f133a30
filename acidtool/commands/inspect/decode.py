"""``acidtool decode``: what the numbers Hive writes mean (bucket properties, snapshot strings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...core.bucket import BucketCodecError, decode
from ...core.errors import UsageError
from ...core.snapshot import (
    SnapshotParseError,
    ValidTxnList,
    ValidWriteIdList,
    parse_txn_write_ids,
)
from ...core.versions import HiveVersion


def decode_buckets(values: Sequence[str]) -> list[dict]:
    """Each bucket property (decimal, or hex as 0x...; the unsigned spelling of a negative int
    too) decoded by BucketCodec."""
    rows = []
    for raw in values:
        try:
            value = int(raw, 0)
        except ValueError:
            raise UsageError(f"{raw!r} is not an integer") from None
        if 2**31 <= value < 2**32:  # accept the unsigned hex spelling of negative ints
            value -= 2**32
        try:
            d = decode(value)
        except BucketCodecError as exc:
            raise UsageError(str(exc)) from None
        rows.append({"encoded": d.encoded, "hex": f"0x{d.encoded & 0xFFFFFFFF:08X}",
                     "codec_version": d.codec_version, "bucket_id": d.bucket_id,
                     "statement_id": d.statement_id})
    return rows


@dataclass(frozen=True)
class DecodedSnapshot:
    transaction: int | None  # the reader's transaction, of a '$'-joined list
    lists: list[dict]  # one per table (or the one transaction list)
    txns: bool  # a transaction list, not write ids


def decode_snapshot(text: str, *, txns: bool = False, hive_version: str = "4"
                    ) -> DecodedSnapshot:
    """A ValidWriteIdList, the '$'-joined multi-table form, or (``txns``) a ValidTxnList, in
    its parts."""
    try:
        lists: dict[str, ValidTxnList] | dict[str, ValidWriteIdList]
        if txns:
            legacy = not HiveVersion.of(hive_version).has_write_ids
            lists = {"": ValidTxnList.parse_any(text) if legacy else ValidTxnList.parse(text)}
            txn_id = None
        elif "$" in text:
            txn_id, lists = parse_txn_write_ids(text)
        else:
            txn_id, lists = None, {"": ValidWriteIdList.parse(text)}
    except SnapshotParseError as exc:
        raise UsageError(str(exc)) from None
    docs = []
    for lst in lists.values():
        doc = {
            "table": getattr(lst, "table", None) if not txns else None,
            "high_watermark": lst.high_watermark,
            "min_open": lst.min_open_id,
            "open": lst.open_ids,
            "aborted": lst.aborted_ids,
            "canonical": str(lst),
        }
        if getattr(lst, "legacy", False):
            doc["exceptions"] = list(lst.exceptions)
            doc["open"], doc["aborted"] = None, None
        docs.append(doc)
    return DecodedSnapshot(txn_id, docs, txns)
