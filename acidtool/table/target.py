"""What a command reads: a path, or a table the metastore names, and the snapshot to read it at.

Without ``--metastore`` a PATH is a directory and the snapshot is what ``--write-ids``/``--txns``
say (everything committed when neither is given). With ``--metastore thrift://HOST:PORT`` (or
``ACIDTOOL_METASTORE``):

* PATH may be ``db.table`` or ``db.table/k=v[/k2=v2]``: the metastore gives the location; a path
  is matched to its table by location (the table's directory named ``db.db/table`` or, in the
  default database, ``table`` below the warehouse), or by ``--table db.t``;
* the Hive version is the metastore's (a ``--hive-version`` that disagrees is an error);
* with neither ``--write-ids`` nor ``--txns``, the snapshot is the metastore's: Hive 2.3's
  open and aborted transactions, or Hive 3/4's valid write ids of the table;
* the table's column names, bucketing and kind (insert-only or full ACID) come along.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from ..core.catalog import MetastoreError, PartitionInfo, TableInfo, parse_table_name
from ..core.errors import UsageError
from ..core.snapshot import Snapshot, make_snapshot
from ..core.versions import DEFAULT_HIVE_VERSION, HiveVersion


@dataclass(frozen=True)
class Target:
    url: str  # the directory to read: the path given, or the metastore's location
    snapshot: Snapshot
    table: TableInfo | None = None
    partition: PartitionInfo | None = None
    metastore: str | None = None

    @property
    def column_names(self) -> list[str] | None:
        return [c.name for c in self.table.columns] if self.table else None

    def describe(self) -> dict:
        out = {"metastore": self.metastore}
        if self.table is not None:
            out.update(self.table.describe())
        if self.partition is not None:
            out["partition"] = self.partition.name
        return out


    @property
    def snapshot_given(self) -> bool:
        """A real snapshot (given, or the metastore's), not "everything committed"."""
        return self.snapshot.source != "default"


def names_a_table(path: str) -> bool:
    """``db.table[/k=v...]`` and not a path: no scheme, not absolute, not ./ or ../."""
    return ("://" not in path and not path.startswith(("/", ".", "~"))
            and parse_table_name(path) is not None)


def resolve(path: str, *, metastore: str | None = None,
            hive_version: str | int | HiveVersion | None = None, write_ids: str | None = None,
            txns: str | None = None, table: str | None = None, insert_only: bool = False,
            snapshot: bool = True, tree: bool = False) -> Target:
    """The target of a command. ``snapshot=False``: the caller makes its own (diff's two).
    ``tree``: PATH may be a directory of tables (``--recursive``): where no table of the
    metastore has its location, the target is the directory with the metastore's version and
    transactions, and each table below it is looked up by its own location."""
    if not metastore:
        if names_a_table(path) and not os.path.exists(path):
            raise UsageError(f"{path}: no such directory; to name a table as db.table give "
                             "--metastore thrift://HOST:PORT (or set ACIDTOOL_METASTORE)")
        version = hive_version or DEFAULT_HIVE_VERSION
        snap = make_snapshot(version, write_ids, txns, table, insert_only=insert_only)
        source = "--write-ids/--txns" if (write_ids or txns) else "default"
        return Target(path, replace(snap, source=source))
    from ..io.metastore import Metastore

    with Metastore(metastore) as client:
        version = client.version
        if hive_version is not None and HiveVersion.of(hive_version) is not version:
            raise MetastoreError(f"--hive-version {HiveVersion.of(hive_version)} disagrees with "
                                 f"the metastore at {metastore}, which is Hive {version}'s "
                                 "(drop --hive-version, or point at the right metastore)")
        try:
            info, part, url = _locate(client, path, table)
        except MetastoreError:
            if not tree or names_a_table(path) or table:
                raise
            return Target(path, Snapshot(version, None, client.txns(), insert_only,
                                         source=f"metastore {metastore}"), None, None,
                          metastore)
        if not info.transactional:
            raise MetastoreError(f"{info.full_name} is not a transactional table (its "
                                 "properties lack transactional=true): Hive reads its files "
                                 "as they are, with no ACID layout to inspect")
        insert_only = insert_only or info.insert_only
        if not snapshot:
            snap = make_snapshot(version, insert_only=insert_only)
        elif write_ids or txns:
            snap = replace(make_snapshot(version, write_ids, txns, info.full_name,
                                         insert_only=insert_only), source="--write-ids/--txns")
        else:
            current = client.txns()
            ids = client.write_ids(info, current) if version.has_write_ids else None
            snap = Snapshot(version, ids, current, insert_only, source=f"metastore {metastore}")
    return Target(url, snap, info, part, metastore)


def _locate(client, path: str, table: str | None
            ) -> tuple[TableInfo, PartitionInfo | None, str]:
    parsed = parse_table_name(path) if names_a_table(path) else None
    if parsed is not None:
        db, name, part_name = parsed
        info = client.table(db, name)
        if part_name is None:
            return info, None, info.location
        if not info.partition_keys:
            raise MetastoreError(f"{info.full_name} is not partitioned; name it without "
                                 f"/{part_name}")
        part = client.partition(info, part_name)
        return info, part, part.location
    if table:
        found = parse_table_name(table)
        if found is None or found[2] is not None:
            raise UsageError(f"--table {table!r}: give db.table")
        info = client.table(found[0], found[1])
        return info, None, path
    for db, name in _guesses(path):
        try:
            info = client.table(db, name)
        except MetastoreError:
            continue
        if same_location(info.location, path):
            return info, None, path
        if path_below(path, info.location):
            return info, None, path  # a partition's directory of the table
    raise MetastoreError(f"{path}: no table of the metastore has this location (tried "
                         f"{', '.join(f'{d}.{n}' for d, n in _guesses(path)) or 'none'}); "
                         "name the table as db.table, or give --table db.table")


def _parts(path: str) -> list[str]:
    text = path.split("://", 1)[-1]
    if "://" in path:
        text = text.split("/", 1)[1] if "/" in text else ""  # drop the authority
    return [p for p in text.split("/") if p]


def _guesses(path: str) -> list[tuple[str, str]]:
    """Tables a warehouse path may belong to: ``.../db.db/t[/k=v...]`` and ``.../t[/k=v...]``
    (the default database's tables sit right below the warehouse)."""
    parts = _parts(path)
    while parts and "=" in parts[-1]:
        parts.pop()
    out = []
    if len(parts) >= 2 and parts[-2].lower().endswith(".db"):
        out.append((parts[-2][:-3].lower(), parts[-1].lower()))
    if parts:
        out.append(("default", parts[-1].lower()))
    return out


def _plain(url: str) -> list[str]:
    text = url
    if text.startswith("file:"):
        text = text[5:].lstrip("/")
        return [p for p in text.split("/") if p]
    return _parts(text) if "://" in text else [p for p in text.split("/") if p]


def same_location(a: str, b: str) -> bool:
    """Locations compared by path (``file:/x``, ``file:///x`` and ``/x`` are one place; on
    another filesystem the host and scheme are dropped: a warehouse is reached by many names)."""
    return _plain(a) == _plain(os.path.abspath(b) if "://" not in b and not
                               b.startswith("file:") else b)


def path_below(path: str, location: str) -> bool:
    p = _plain(os.path.abspath(path) if "://" not in path and not path.startswith("file:")
               else path)
    loc = _plain(location)
    return len(p) > len(loc) and p[:len(loc)] == loc and all("=" in x for x in p[len(loc):])


def resolve_many(paths: list[str], *, metastore: str | None = None,
                 hive_version: str | HiveVersion | None = None, write_ids: str | None = None,
                 txns: str | None = None, insert_only: bool = False, table: str | None = None
                 ) -> tuple[list[str], Target]:
    """Several targets (dump's, meta's, validate's): each table name becomes its location; the
    snapshot is the first target's (or the options')."""
    if not metastore:
        return list(paths), resolve(paths[0] if paths else ".", hive_version=hive_version,
                                    write_ids=write_ids, txns=txns, table=table,
                                    insert_only=insert_only)
    first = None
    urls = []
    for path in paths:
        if names_a_table(path) or first is None:
            target = resolve(path, metastore=metastore, hive_version=hive_version,
                             write_ids=write_ids, txns=txns, insert_only=insert_only,
                             table=table)
            first = first or target
            urls.append(target.url if names_a_table(path) else path)
        else:
            urls.append(path)
    if first is None:
        raise UsageError("no PATH given")
    return urls, first
