"""The ``hiveacid`` source's options: Spark's option map (keys without case) turned into typed
values, once, on the driver, with a one-line error naming the option for anything wrong. The
names are the CLI's flags in camel case (``--write-ids`` is ``writeIds``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Mapping

from ..core.errors import UsageError

READ_OPTIONS = ("path", "writeIds", "txns", "hiveVersion", "metastore", "table", "insertOnly",
                "withRowId", "columns", "partitions")
WRITE_OPTIONS = ("path", "writeId", "statementId", "hiveVersion", "metastore", "buckets",
                 "bucketBy", "bucketingVersion", "compression", "insertOnly", "partition",
                 "partitionColumns", "table")


# What Spark itself puts among a SQL table's options (CREATE TABLE ... USING hiveacid) or a
# streaming query's, which reach the source with the user's
SPARKS_OWN = {"owner", "external", "location", "comment", "provider", "is_managed_location",
              "checkpointlocation", "queryname"}


# Spark hands a SQL table's OPTIONS (...) to the source as table properties named
# "option.<name>", lower-cased (TableCatalog.OPTION_PREFIX)
SQL_PREFIX = "option."


def known(options: Mapping[str, str], names: tuple[str, ...], what: str) -> dict[str, str]:
    """The options by their names. A SQL table's options serve its reads and its writes
    alike, so an option of the other kind is taken and left unused; a name of neither kind
    (a typo) is refused."""
    lower = {n.lower(): n for n in names}
    other = {n.lower() for n in READ_OPTIONS + WRITE_OPTIONS} | SPARKS_OWN
    out = {}
    for key, value in options.items():
        if key.lower().startswith(SQL_PREFIX) and key.lower() != SQL_PREFIX:
            key = key[len(SQL_PREFIX):]  # a SQL table's OPTIONS (...), as Spark hands them on
        name = lower.get(key.lower())
        if name is None:
            if key.lower() in other:
                continue
            raise UsageError(f"hiveacid: unknown {what} option {key!r} (the options: "
                             f"{', '.join(names)})")
        out[name] = value
    return out


def local_path(path: str | None) -> str | None:
    """A path as Spark may qualify it (a SQL table's ``file:/dir``): a local one plain."""
    if path and path.startswith("file:") and not path.startswith("file://"):
        return path[len("file:"):]
    return path


def flag(value: str | None, name: str) -> bool:
    if value is None:
        return False
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no", ""):
        return False
    raise UsageError(f"hiveacid: option {name}={value!r}: true or false")


def names(value: str | None) -> list[str]:
    """A list option: ``a,b`` or a JSON list (for names holding commas)."""
    if value is None or not value.strip():
        return []
    text = value.strip()
    if text.startswith("["):
        try:
            items = json.loads(text)
        except ValueError:
            raise UsageError(f"hiveacid: {text!r} is not a JSON list") from None
        return [str(i).strip() for i in items]
    return [part.strip() for part in text.split(",") if part.strip()]


def number(value: str | None, name: str) -> int | None:
    if value is None or not str(value).strip():
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        raise UsageError(f"hiveacid: option {name}={value!r}: a whole number") from None


@dataclass(frozen=True)
class ReadOptions:
    path: str
    write_ids: str | None = None
    txns: str | None = None
    hive_version: str | None = None
    metastore: str | None = None
    table: str | None = None
    insert_only: bool = False
    with_row_id: bool = False
    columns: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()  # k=v[/k2=v2] each, "" for none asked

    @classmethod
    def of(cls, options: Mapping[str, str]) -> "ReadOptions":
        o, path = _with_path(options, READ_OPTIONS, "read", "load")
        if o.get("writeIds") and o.get("txns"):
            raise UsageError("hiveacid: writeIds and txns: give one snapshot")
        return cls(path, o.get("writeIds") or None, o.get("txns") or None,
                   o.get("hiveVersion") or None, o.get("metastore") or None,
                   o.get("table") or None, flag(o.get("insertOnly"), "insertOnly"),
                   flag(o.get("withRowId"), "withRowId"), tuple(names(o.get("columns"))),
                   tuple(p.strip("/") for p in names(o.get("partitions"))))


@dataclass(frozen=True)
class WriteOptions:
    path: str
    write_id: str = "auto"
    statement_id: int = 0
    hive_version: str | None = None
    metastore: str | None = None
    buckets: int | None = None
    bucket_by: tuple[str, ...] = ()
    bucketing_version: int = 2
    compression: str = "zlib"
    insert_only: bool = False
    partition: str | None = None
    # the partition columns of a table without a metastore that has no partition yet
    partition_columns: tuple[str, ...] = ()
    table: str | None = None

    @classmethod
    def of(cls, options: Mapping[str, str]) -> "WriteOptions":
        o, path = _with_path(options, WRITE_OPTIONS, "write", "save")
        compression = (o.get("compression") or "zlib").lower()
        if compression not in ("zlib", "none", "uncompressed", "snappy", "zstd", "lz4"):
            raise UsageError(f"hiveacid: option compression={compression!r}: zlib (Hive's), "
                             "none, snappy, zstd or lz4")
        return cls(path, (o.get("writeId") or "auto").strip().lower(),
                   number(o.get("statementId"), "statementId") or 0,
                   o.get("hiveVersion") or None, o.get("metastore") or None,
                   number(o.get("buckets"), "buckets"), tuple(names(o.get("bucketBy"))),
                   number(o.get("bucketingVersion"), "bucketingVersion") or 2,
                   "uncompressed" if compression == "none" else compression,
                   flag(o.get("insertOnly"), "insertOnly"),
                   (o.get("partition") or "").strip("/") or None,
                   tuple(names(o.get("partitionColumns"))), o.get("table") or None)


def _with_path(options: Mapping[str, str], names_: tuple[str, ...], what: str, verb: str
               ) -> tuple[dict[str, str], str]:
    """The options by name, and the table they name (a path, or ``db.table``)."""
    o = known(options, names_, what)
    path = local_path(o.get("path"))
    if not path:
        raise UsageError(f"hiveacid: no table: .{verb}(PATH), or .{verb}('db.table') with the "
                         "metastore option")
    return o, path
