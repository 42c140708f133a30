"""Row-level changes (DELETE, UPDATE) written as Hive 3 and 4 write them: split-update.

The rows to change are found by the caller (``acidtool.spark.AcidTable`` evaluates the SQL on
Spark) and handed over as Arrow: each changed row's ROW__ID (writeid, bucketid, rowid), its
partition's directory name, and for an update the row's new values. Here they become, per
partition, a ``delete_delta_W_W_0000`` of delete events naming the old ROW__IDs (row null) and,
for updates, a ``delta_W_W_0000`` of insert events with new ROW__IDs (writeid W, the old row's
bucket, rowIds counted per bucket), one ``bucket_N`` file per bucket, sorted as Hive sorts them,
with ``hive.acid.key.index``, ``hive.acid.stats`` and ``hive.acid.version``. Untouched rows keep
their ROW__IDs. Written into a hidden staging directory of each partition, then committed through
``io.commit.Commit``: the table's lock, a journal, the delete delta renamed in before its delta
(each alone shows the table before or after, never half an update), ``acidtool undo JOURNAL``
to take it back.

Between the two renames of an update (a SIGKILL there: signals are deferred while they run),
readers that count write id W as committed see the old rows deleted and no new ones: the next
change of the table rolls such a change back first, and `acidtool undo JOURNAL` does too. With
``write_id="auto"`` Hive never sees that state: W is committed in the metastore only after both
renames (a kill leaves W open, then aborted).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from ...core.bucket import decode, encode_v1
from ...core.errors import AcidToolError, UsageError
from ...core.names import (
    ACID_VERSION_FILE,
    ACIDTOOL_STAGING_PREFIX,
    Base,
    Delta,
    bucket_file_name,
    is_hidden,
    kind_problem,
    parse_dir_name,
)
from ...io.commit import Commit, require_inside
from ...io.fs import Location, kind_of, list_tree, resolve
from ...io.journal import (
    JOURNAL_VERSION,
    PlaceDir,
    Scratch,
    default_journal,
    fault_point,
    new_run_id,
)
from ...io.recovery import held_by_another
from ...table.target import Target

ACID = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction")
INSERT, DELETE = 0, 2
LOCK_WAIT = 30.0


@dataclass
class DmlResult:
    write_id: int
    deleted: int = 0
    updated: int = 0
    inserted: int = 0
    journal: str | None = None
    directories: list[str] = field(default_factory=list)
    dry_run: bool = False
    transaction: int | None = None

    def as_dict(self) -> dict:
        return {"write_id": self.write_id, "deleted": self.deleted, "updated": self.updated,
                "inserted": self.inserted, "journal": self.journal,
                "directories": self.directories, "dry_run": self.dry_run,
                "transaction": self.transaction}


def require_writable(target: Target) -> None:
    """What Hive itself allows no row-level change on, refused before anything is read."""
    snap = target.snapshot
    if snap.insert_only:
        raise UsageError(f"{target.url}: an insert-only table: Hive allows no UPDATE or DELETE "
                         "on it (rewrite the partition with INSERT OVERWRITE)")
    if not snap.hive_version.has_write_ids:
        raise UsageError(f"{target.url}: Hive 2.3 writes updates and deletes as events in one "
                         "delta, which acidtool does not write; change the rows with Hive, or "
                         "after the upgrade with --hive-version 3")
    if target.table is None:  # (a metastore's table: its kind is its own)
        problem = kind_problem(list_tree(resolve(target.url)), False)
        if problem:
            raise UsageError(f"{target.url}: {problem}")


def require_new_write_id(target: Target, write_id: int) -> None:
    """A DML writes at a write id above everything it read: above every write id on disk and
    the snapshot's high-water mark (one given, or the metastore's)."""
    top, where = 0, ""
    for p in list_tree(resolve(target.url)):
        if not p.is_dir or any(is_hidden(c) for c in p.path.split("/")):
            continue
        try:
            d = parse_dir_name(p.name, str(target.snapshot.hive_version))
        except ValueError:
            continue
        if isinstance(d, (Base, Delta)) and d.max_write_id >= top:
            top, where = d.max_write_id, p.path
    if write_id <= top:
        raise UsageError(f"write id {write_id}: the table holds write ids up to {top} "
                         f"({where}); a change is written above every write id it read: give "
                         f"{top + 1} or more (or `auto` with --metastore)")
    ids = target.snapshot.write_ids
    if target.snapshot_given and ids is not None and write_id <= ids.high_watermark:
        raise UsageError(f"write id {write_id} is not above the snapshot's high-water mark "
                         f"{ids.high_watermark}: it was allocated to another writer")


def write_changes(target: Target, write_id: int, deleted: pa.Table, inserted: pa.Table | None,
                  *, updated: int = 0, dry_run: bool = False,
                  transaction=None) -> DmlResult:
    """Commit the delete events of ``deleted`` (columns ``partition``, ``writeid``,
    ``bucketid``, ``rowid``) and the insert events of ``inserted`` (``partition``,
    ``bucketid`` and the new row's columns, in the table's order) under ``write_id``."""
    result = DmlResult(write_id, deleted=deleted.num_rows - updated, updated=updated,
                       inserted=(inserted.num_rows if inserted is not None else 0) - updated,
                       dry_run=dry_run)
    if dry_run or (deleted.num_rows == 0 and (inserted is None or inserted.num_rows == 0)):
        return result  # a condition that matches nothing writes nothing
    root = resolve(target.url)
    parts = sorted(set(deleted.column("partition").to_pylist()) |
                   set(inserted.column("partition").to_pylist() if inserted is not None
                       else []))
    staging = {p: (root.child(p) if p else root).child(
        f"{ACIDTOOL_STAGING_PREFIX}{uuid.uuid4().hex[:12]}") for p in parts}
    run_id = new_run_id()
    journal = default_journal("dml", run_id)
    # a change killed half way (between its renames) is rolled back by the next one, first
    with Commit(root, "dml", wait=LOCK_WAIT, recover=(held_by_another, "change")) as run:
        require_new_write_id(target, write_id)  # again, under the lock
        run.begin(journal, record="begin", version=JOURNAL_VERSION, run=run_id, path=root.url,
                  quarantine="", hive_version=str(target.snapshot.hive_version),
                  command="dml", write_id=write_id)
        with run.action("a1", swallow=False) as action:
            action.take([Scratch(s) for s in staging.values()])
            places = []
            for p in parts:
                places += _stage(target, root, p, staging[p], write_id,
                                 _rows(deleted, p), _rows(inserted, p))
            fault_point()  # everything staged
            action.take(places, shield=True)
        for s in staging.values():  # emptied by the renames: gone before the journal ends
            _remove_empty(s)
        if transaction is not None:
            transaction()
        run.end()
    result.journal = journal
    result.directories = [p.dst.url for p in places]
    return result


def _rows(table: pa.Table | None, part: str) -> pa.Table | None:
    if table is None:
        return None
    picked = table.filter(pc.equal(table.column("partition"), part))
    return picked if picked.num_rows else None


def _stage(target: Target, root: Location, part: str, staging: Location, write_id: int,
           deleted: pa.Table | None, inserted: pa.Table | None) -> list[PlaceDir]:
    """One partition's delete delta and delta, written into ``staging``: the renames that
    commit them (the delete delta first)."""
    ploc = root.child(part) if part else root
    schema = _event_schema(ploc)
    out = []
    for name, events in ((f"delete_{Delta(write_id, write_id, 0)}", _deletes(deleted, write_id)),
                         (str(Delta(write_id, write_id, 0)),
                          _inserts(inserted, write_id, schema))):
        if events is None:
            continue
        final = ploc.child(name)
        require_inside(root, final, what="the change")
        if kind_of(final) != "missing":
            raise UsageError(f"{final.url} exists: write id {write_id} is used")
        hashes = _write_dir(staging.child(name), events, schema, target)
        out.append(PlaceDir(staging.child(name), final, tuple(sorted(hashes.items()))))
    return out


def _deletes(rows: pa.Table | None, write_id: int) -> dict[int, pa.Table] | None:
    if rows is None:
        return None
    n = rows.num_rows
    events = pa.table({"operation": pa.array([DELETE] * n, pa.int32()),
                       "originalTransaction": rows.column("writeid").cast(pa.int64()),
                       "bucket": rows.column("bucketid").cast(pa.int32()),
                       "rowId": rows.column("rowid").cast(pa.int64()),
                       "currentTransaction": pa.array([write_id] * n, pa.int64())})
    return _by_bucket(events.sort_by([("originalTransaction", "ascending"),
                                      ("bucket", "ascending"), ("rowId", "ascending")]))


def _inserts(rows: pa.Table | None, write_id: int, schema: pa.Schema
             ) -> dict[int, pa.Table] | None:
    if rows is None:
        return None
    row_type = schema.field("row").type
    out = {}
    for bucket_id, group in _by_bucket(rows, "bucketid").items():
        n = group.num_rows
        values = [group.column(i + 2).cast(row_type.field(i).type)
                  for i in range(row_type.num_fields)]
        row = pa.StructArray.from_arrays([v.combine_chunks() for v in values],
                                         fields=list(row_type))
        out[bucket_id] = pa.table({
            "operation": pa.array([INSERT] * n, pa.int32()),
            "originalTransaction": pa.array([write_id] * n, pa.int64()),
            "bucket": pa.array([encode_v1(bucket_id, 0)] * n, pa.int32()),
            "rowId": pa.array(range(n), pa.int64()),
            "currentTransaction": pa.array([write_id] * n, pa.int64()), "row": row})
    return out


def _by_bucket(rows: pa.Table, column: str = "bucket") -> dict[int, pa.Table]:
    """``rows`` split by the bucket id their bucket property (``column``) names, in order."""
    ids = [decode(b).bucket_id for b in rows.column(column).to_pylist()]
    out: dict[int, list[int]] = {}
    for i, b in enumerate(ids):
        out.setdefault(b, []).append(i)
    return {b: rows.take(pa.array(idx)) for b, idx in sorted(out.items())}


def _event_schema(ploc: Location) -> pa.Schema:
    """The event schema of the partition's (else the table's) files: the row struct as its
    newest ACID file names and types it (a base's or delta's, else a delete delta's), else the
    columns of its original files (a table converted to ACID that no writer has touched)."""
    from ...core.guards import table_root
    from ...io.orc import open_orc

    for loc in (ploc, resolve(table_root(ploc.url))):
        if kind_of(loc) != "dir":
            continue  # a partition a MERGE inserts into first
        files = [p for p in list_tree(loc) if not p.is_dir
                 and not any(is_hidden(c) for c in p.path.split("/"))]

        def rank(p) -> tuple:
            parent = p.path.split("/")[-2] if "/" in p.path else ""
            return (parent.startswith(("base_", "delta_")), parent.startswith("delete_delta_"),
                    parent)
        for f in sorted(files, key=rank, reverse=True):
            try:
                src = open_orc(loc, f.path)
            except (OSError, ValueError, AcidToolError):
                continue  # not ORC: a reader would not take its columns either
            row = src.schema.field(5).type if src.is_acid else pa.struct(list(src.schema))
            return pa.schema([pa.field("operation", pa.int32()),
                              pa.field("originalTransaction", pa.int64()),
                              pa.field("bucket", pa.int32()), pa.field("rowId", pa.int64()),
                              pa.field("currentTransaction", pa.int64()),
                              pa.field("row", row)])
    raise UsageError(f"{ploc.url}: no ORC file to take the row's columns from")


def _write_dir(where: Location, by_bucket: dict[int, pa.Table], schema: pa.Schema,
               target: Target) -> dict[str, str]:
    """The bucket files (and ``_orc_acid_version``) of one directory: name -> SHA-256."""
    import hashlib

    from ...io.eventwriter import EventFileWriter

    version = target.snapshot.hive_version
    where.fs.create_dir(where.path, recursive=True)
    hashes = {}
    for bucket_id, events in by_bucket.items():
        if "row" not in events.column_names:
            events = events.append_column("row", pa.nulls(events.num_rows,
                                                          schema.field("row").type))
        with tempfile.TemporaryDirectory() as tmp:
            local = os.path.join(tmp, "f.orc")
            writer = EventFileWriter(local, schema, version, "zlib")
            writer.write(events.select(list(schema.names)))
            writer.finish()
            data = open(local, "rb").read()
        name = bucket_file_name(bucket_id)
        with where.fs.open_output_stream(where.join(name)) as out:
            out.write(data)
        hashes[name] = hashlib.sha256(data).hexdigest()
    if version.writes_acid_version:
        with where.fs.open_output_stream(where.join(ACID_VERSION_FILE)) as out:
            out.write(b"2")
        hashes[ACID_VERSION_FILE] = hashlib.sha256(b"2").hexdigest()
    return hashes


def _remove_empty(loc: Location) -> None:
    from ...io.journal import remove_empty_dir

    try:
        remove_empty_dir(loc)
    except OSError:
        pass
