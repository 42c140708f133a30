"""Rows inserted and deleted between two snapshots of a table, matched by ROW__ID."""

from __future__ import annotations

from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from ...core.errors import UsageError
from ...core.versions import HiveVersion
from ...io.sink import json_lines
from ...table.read import partition_values, valid_mask
from ...table.snapshot import Snapshotted, Table
from ...table.target import resolve


def _with_ids(snap: Snapshotted, progress=None) -> pa.Table:
    tables = list(snap.tables(progress))
    if not tables:
        return pa.table({"ROW__ID": pa.array([], pa.struct([("writeid", pa.int64()),
                                                             ("bucketid", pa.int32()),
                                                             ("rowid", pa.int64())]))})
    return pa.concat_tables(tables, promote_options="permissive")


def diff(path: str, *, before: str | None = None, after: str | None = None,
         before_write_id: int | None = None, after_write_id: int | None = None,
         txns: str | None = None, hive_version: str | None = None, table: str | None = None,
         insert_only: bool = False, metastore: str | None = None,
         progress: Callable[[int, int], None] | None = None) -> tuple[pa.Table, pa.Table]:
    """(rows inserted, rows deleted) between two snapshots of the table at ``path``. Each
    snapshot is a snapshot string or "everything committed up to this write id" (with Hive 2,
    a transaction list and a transaction id). With a ``metastore``, ``path`` may name the table
    and its version, name, kind and column names come from there."""
    target = resolve(path, metastore=metastore, hive_version=hive_version, table=table,
                     insert_only=insert_only, snapshot=False)
    version = target.snapshot.hive_version
    insert_only = target.snapshot.insert_only
    table = table or (target.table.full_name if target.table else None)
    before_text = _snapshot_text(before, before_write_id, "from", version, table)
    after_text = _snapshot_text(after, after_write_id, "to", version, table)
    t = Table(target.url)
    if insert_only:
        pair = (t.snapshot(before_text, txns, version, table=table, insert_only=True),
                t.snapshot(after_text, txns, version, table=table, insert_only=True))
    elif not version.has_write_ids:
        pair = (t.snapshot(None, before_text, version, with_row_id=True),
                t.snapshot(None, after_text, version, with_row_id=True))
    else:
        pair = (t.snapshot(before_text, txns, version, table=table, with_row_id=True),
                t.snapshot(after_text, txns, version, table=table, with_row_id=True))
    for snap in pair:
        snap.column_names = target.column_names
    if insert_only:
        return diff_insert_only(*pair)
    return diff_tables(*pair, progress=progress)


def _snapshot_text(text: str | None, write_id: int | None, which: str, version: HiveVersion,
                   table: str | None) -> str:
    if (text is None) == (write_id is None):
        raise UsageError(f"give exactly one of --{which} and --{which}-write-id")
    if text is not None:
        return text
    if not version.has_write_ids:
        return f"{write_id}:9223372036854775807:"
    return f"{table or 'null'}:{write_id}:9223372036854775807::"


def diff_tables(before: Snapshotted, after: Snapshotted,
                progress: Callable[[int, int], None] | None = None
                ) -> tuple[pa.Table, pa.Table]:
    """(rows in ``after`` but not ``before``, rows in ``before`` but not ``after``), by
    partition and ROW__ID: every partition's bucket files number their rows from 0, so one
    ROW__ID stands in many partitions of a table. Hive 2.3 without split-update keeps a row's
    ROW__ID through an UPDATE: there a row of ``after`` whose last event ``before`` cannot see
    is new content, inserted, and its old version deleted."""
    for snap in (before, after):
        for reader in snap.readers():
            reader.with_event = reader.legacy
    # ``progress(done, total)`` over the units of both snapshots, the earlier one's first
    first_units = sum(len(r.units()) for r in before.readers())
    total = first_units + sum(len(r.units()) for r in after.readers())
    tell = (lambda offset: (lambda done, _: progress(offset + done, total))) if progress \
        else (lambda offset: None)
    a, b = _with_ids(before, tell(0)), _with_ids(after, tell(first_units))
    first = next((p.partition for snap in (before, after) for p in snap.table.partitions
                  if p.partition), "")
    parts = [k for k, _ in partition_values(first)]
    names = ["w", "b", "r"] + [f"p{i}" for i in range(len(parts))]

    def keyed(t: pa.Table) -> pa.Table:
        rid = t.column("ROW__ID").combine_chunks()
        cols = {"w": rid.field(0), "b": rid.field(1), "r": rid.field(2)}
        for i, k in enumerate(parts):
            cols[f"p{i}"] = t.column(k) if k in t.column_names else \
                pa.nulls(t.num_rows, pa.string())
        cols["__pos"] = pa.array(range(t.num_rows), pa.int64())
        return pa.table(cols)

    def minus(x: pa.Table, y: pa.Table) -> pa.Table:
        kept = keyed(x).join(keyed(y).drop_columns(["__pos"]), keys=names,
                             join_type="left anti")
        return x.take(pc.take(kept.column("__pos"), pc.sort_indices(kept.column("__pos")))
                      .combine_chunks())

    changed = None
    if "__event" in b.column_names:
        events = b.column("__event").combine_chunks()
        changed = pc.and_(pc.invert(valid_mask(before.table.snapshot.txns, events)),
                          pc.is_valid(events))
    a, b = (t.drop_columns(["__event"]) if "__event" in t.column_names else t for t in (a, b))
    if changed is None:
        return minus(b, a), minus(a, b)
    same = b.filter(pc.invert(changed))
    return pa.concat_tables([minus(same, a), b.filter(changed)]), minus(a, same)


def diff_insert_only(before: Snapshotted, after: Snapshotted) -> tuple[pa.Table, pa.Table]:
    """An insert-only table's rows have no ROW__ID, and its writers never change a file: the
    rows inserted are those of the files ``after`` reads and ``before`` does not (a new delta,
    or an INSERT OVERWRITE's base), the rows deleted those of the files only ``before`` reads."""
    sides = []
    for mine, theirs in ((after, before), (before, after)):
        seen = {(r.part.partition, f) for r in theirs._readers for f in r.insert_only_files()}
        tables: list[pa.Table] = []
        for reader in mine.readers():
            only = [f for f in reader.insert_only_files() if (reader.part.partition, f) not in seen]
            tables.extend(reader._insert_only(only))
        sides.append(pa.concat_tables(tables, promote_options="permissive") if tables
                     else pa.table({}))
    return sides[0], sides[1]


def write_diff(inserted: pa.Table, deleted: pa.Table, stdout) -> None:
    from ...io.jsonl import Literal, lines_buffer

    for op, table in (("insert", inserted), ("delete", deleted)):
        if table.num_rows:
            lit = Literal(f'"{op}"', table.num_rows)
            stdout.write(lines_buffer(json_lines(table, [("op", lit)])))

