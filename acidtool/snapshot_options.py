"""Turning the ``--write-ids`` / ``--txns`` / ``--hive-version`` options into core snapshot values."""

from __future__ import annotations

from dataclasses import dataclass

from .core.snapshot import SnapshotParseError, ValidTxnList, ValidWriteIdList, parse_write_ids
from .core.versions import DEFAULT_HIVE_VERSION, normalize_hive_version
from .errors import UsageError


@dataclass(frozen=True)
class Snapshot:
    """What a reader sees. For Hive 2, ``txns`` is the snapshot and ``write_ids`` is None."""

    hive_version: str
    write_ids: ValidWriteIdList | None
    txns: ValidTxnList

    def describe(self) -> dict:
        return {
            "write_ids": str(self.write_ids) if self.write_ids is not None else None,
            "txns": str(self.txns),
        }


def make_snapshot(hive_version: str | int = DEFAULT_HIVE_VERSION, write_ids: str | None = None,
                  txns: str | None = None, table: str | None = None) -> Snapshot:
    """Defaults mean "everything committed"."""
    try:
        version = normalize_hive_version(hive_version)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        if version == "2":
            if write_ids:
                raise UsageError("Hive 2 has no write ids: directory numbers are transaction ids, "
                                 "so pass the snapshot as --txns 'hwm:minOpenTxn[:exception]*'")
            return Snapshot(version, None, ValidTxnList.parse_any(txns))
        wil = parse_write_ids(write_ids, table) if write_ids else ValidWriteIdList.everything()
        return Snapshot(version, wil, ValidTxnList.parse(txns) if txns else ValidTxnList.everything())
    except SnapshotParseError as exc:
        raise UsageError(str(exc)) from None
