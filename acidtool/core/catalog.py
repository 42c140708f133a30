"""What a Hive metastore says about a table, as values, and the snapshots made of its answers.

No IO: ``io/metastore.py`` asks the metastore and builds these; commands use them. The snapshot
builders follow Hive's own client code: ``TxnUtils.createValidReadTxnList`` (2.3),
``TxnCommonUtils.createValidReadTxnList`` and ``createValidReaderWriteIdList`` (3.x, 4.x), for a
reader that is not itself inside a transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence, cast

from .errors import AcidToolError, ExitStatus
from .javanum import LONG_MAX
from .snapshot import ValidTxnList, ValidWriteIdList, build_ids


class MetastoreError(AcidToolError):
    """The metastore is unreachable, or said no (unknown table, not transactional, a failed
    transaction call): one line, exit 2."""

    exit_status = ExitStatus.USAGE


@dataclass(frozen=True)
class Column:
    name: str
    type: str


@dataclass(frozen=True)
class PartitionInfo:
    values: tuple[str, ...]
    location: str
    name: str  # k=v/k2=v2, escaped as Hive names partition directories


@dataclass(frozen=True)
class TableInfo:
    """A table as ``get_table_req`` gives it."""

    db: str
    name: str
    location: str
    columns: tuple[Column, ...]
    partition_keys: tuple[Column, ...] = ()
    num_buckets: int = -1
    bucket_cols: tuple[str, ...] = ()
    parameters: dict = field(default_factory=dict, compare=False, hash=False)
    input_format: str = ""
    table_type: str = ""

    @property
    def full_name(self) -> str:
        return f"{self.db}.{self.name}"

    def _param(self, key: str) -> str:
        for k, v in self.parameters.items():
            if k.lower() == key:
                return str(v).strip()
        return ""

    @property
    def transactional(self) -> bool:
        return self._param("transactional").lower() == "true"

    @property
    def insert_only(self) -> bool:
        return self._param("transactional_properties").lower() == "insert_only"

    @property
    def bucketing_version(self) -> int:
        """``bucketing_version`` (Hive 3 writes 2 on the tables it creates; absent means 1)."""
        return 2 if self._param("bucketing_version") == "2" else 1

    @property
    def bucketed(self) -> bool:
        return self.num_buckets > 0 and bool(self.bucket_cols)

    @property
    def schema(self) -> str:
        """The columns as an ORC struct type string, for convert's --schema."""
        return "struct<" + ",".join(f"{c.name}:{c.type}" for c in self.columns) + ">"

    def describe(self) -> dict:
        return {"table": self.full_name, "location": self.location,
                "columns": [c.name for c in self.columns],
                "partition_keys": [c.name for c in self.partition_keys],
                "num_buckets": self.num_buckets, "bucket_cols": list(self.bucket_cols),
                "bucketing_version": self.bucketing_version,
                "transactional_properties": "insert_only" if self.insert_only else "default"}


# -- naming a table instead of a path --------------------------------------------------------

_NAME = re.compile(r"^([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)(?:/(.+))?$")
_PART = re.compile(r"^[^=/]+=[^/]*(?:/[^=/]+=[^/]*)*$")


def parse_table_name(text: str) -> tuple[str, str, str | None] | None:
    """``db.table`` or ``db.table/k=v[/k2=v2]`` -> (db, table, partition name or None); None
    for anything else (a path). Hive folds database and table names to lower case."""
    found = _NAME.match(text)
    if found is None:
        return None
    part = found.group(3)
    if part is not None:
        part = part.strip("/")
        if not _PART.match(part):
            return None
    return found.group(1).lower(), found.group(2).lower(), part or None


def escape_partition_value(value: str) -> str:
    """FileUtils.escapePathName: the characters Hive escapes in a partition directory name."""
    out = []
    for ch in value:
        if ord(ch) < 0x20 or ch in '"#%\'*/:=?\\\x7f{[]^':
            out.append(f"%{ord(ch):02X}")
        else:
            out.append(ch)
    return "".join(out)


def partition_name(keys: tuple[Column, ...], values: tuple[str, ...]) -> str:
    return partition_dir([k.name for k in keys], values)


def partition_dir(names: Sequence[str], values: Sequence[str]) -> str:
    """The directory name of a partition: ``k=v/k2=v2``, each escaped as Hive escapes it."""
    return "/".join(f"{escape_partition_value(k)}={escape_partition_value(v)}"
                    for k, v in zip(names, values))


def partition_values(name: str) -> list[tuple[str, str]]:
    """'k=v/k2=v2' -> [(k, v), (k2, v2)], unescaped as ``read`` unescapes partition values
    (``%XX`` of UTF-8 bytes, as a directory name may hold them)."""
    from urllib.parse import unquote

    return [cast("tuple[str, str]", tuple(unquote(p) for p in part.split("=", 1)))
            for part in name.split("/")]


# -- snapshots from the metastore's answers -------------------------------------------------

def _bits(data: bytes) -> set[int]:
    """java.util.BitSet.valueOf(bytes): the indices of the set bits."""
    return {i * 8 + b for i, byte in enumerate(data) for b in range(8) if byte >> b & 1}


def txn_list(high_watermark: int, open_txns: list[int], min_open: int | None,
             aborted_bits: bytes | None, *, legacy: bool) -> ValidTxnList:
    """The ValidReadTxnList a reader outside any transaction gets from ``get_open_txns``.

    Hive 2.3: every listed id is an exception (open and aborted alike), min open as the
    metastore sent it. Hive 3/4: the aborted bits tell aborted from open, and the smallest open
    (not aborted) id is the min open."""
    ids = sorted(open_txns)
    if legacy:
        return ValidTxnList(legacy=True, **build_ids(
            high_watermark, LONG_MAX if min_open is None else min_open, ids, []))
    bits = _bits(aborted_bits or b"")
    aborted = [t for i, t in enumerate(open_txns) if i in bits]
    still_open = [t for i, t in enumerate(open_txns) if i not in bits]
    first_open = min(still_open) if still_open else LONG_MAX
    return ValidTxnList(**build_ids(high_watermark, first_open, still_open, aborted))


def write_id_list(table: str, high_watermark: int, invalid: list[int], min_open: int | None,
                  aborted_bits: bytes | None) -> ValidWriteIdList:
    """The ValidReaderWriteIdList of a table from its ``TableValidWriteIds``."""
    bits = _bits(aborted_bits or b"")
    aborted = [w for i, w in enumerate(invalid) if i in bits]
    opened = [w for i, w in enumerate(invalid) if i not in bits]
    return ValidWriteIdList(table=table, **build_ids(
        high_watermark, LONG_MAX if min_open is None else min_open, opened, aborted))
