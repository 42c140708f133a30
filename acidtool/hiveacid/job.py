"""The driver's part of a ``hiveacid`` write: the plan before the tasks run, the commit after
they all succeeded, the abort after any failed (see ``write.py`` for the whole protocol)."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Sequence

import pyarrow as pa

from ..core.catalog import MetastoreError, TableInfo, partition_values
from ..core.errors import UsageError
from ..core.versions import HiveVersion
from ..io.deltawriter import BucketWriter, FileFormat
from ..io.fs import Location, kind_of, list_tree, resolve
from .write import TASKS, Job, Staged, WriteOptions, new_staging


def plan_write(o: WriteOptions, frame: pa.Schema, overwrite: bool) -> Job:
    """Every check that can be made before a row is written; with a metastore and write id
    ``auto``, the transaction is opened last (aborted again if anything here fails)."""
    from ..commands.convert import existing_deltas, parse_write_id

    info: TableInfo | None = None
    partition = o.partition
    if o.metastore:
        from ..commands.target import resolve as resolve_target

        found = resolve_target(o.path, metastore=o.metastore, hive_version=o.hive_version,
                               insert_only=o.insert_only, snapshot=False, table=o.table)
        info = found.table
        assert info is not None
        table = resolve(info.location)
        if found.partition is not None:
            partition = partition or found.partition.name
        version, insert_only = found.snapshot.hive_version, found.snapshot.insert_only
    else:
        table = resolve(o.path)
        version = HiveVersion.of(o.hive_version or "4")
        insert_only = o.insert_only
    kind = kind_of(table)
    if kind != "dir":
        raise UsageError(f"hiveacid: {table.url}: " + ("no such directory (create the table "
                         "first)" if kind == "missing" else "not a directory"))
    if insert_only and not version.has_insert_only:
        raise UsageError("hiveacid: insertOnly: Hive 2.3 has no insert-only tables")
    if overwrite and not version.has_write_ids:
        raise UsageError("hiveacid: mode('overwrite') writes a base_N as Hive 3 and 4's INSERT "
                         "OVERWRITE does; Hive 2.3 has none: append instead")
    if not 0 <= o.statement_id <= 4095:
        raise UsageError("hiveacid: statementId must be between 0 and 4095")
    keys = _partition_keys(table, info, partition)
    not_rows = keys + tuple(k for k, _ in partition_values(partition)) if partition else keys
    schema = _table_schema(table, info, insert_only, frame, not_rows)
    columns = _columns(schema, frame, not_rows)
    buckets, bucket_by, bucketing = o.buckets, o.bucket_by, o.bucketing_version
    if info is not None and info.bucketed and buckets is None:
        buckets, bucket_by, bucketing = info.num_buckets, info.bucket_cols, \
            info.bucketing_version
    kinds: tuple[str, ...] = ()
    if buckets:
        from ..commands.convert import bucket_kind_of

        by_name = {f.name.lower(): f for f in schema}
        missing = [c for c in bucket_by if c.lower() not in by_name]
        if missing or not bucket_by:
            raise UsageError("hiveacid: buckets needs bucketBy, columns of the table"
                             + (f" (no column {missing[0]!r})" if missing else ""))
        bucket_by = tuple(by_name[c.lower()].name for c in bucket_by)
        kinds = tuple(bucket_kind_of(by_name[c.lower()].type) for c in bucket_by)
    fmt = FileFormat(version, o.statement_id, o.compression, insert_only=insert_only)
    auto = o.write_id == "auto"
    if auto and o.metastore:
        write_id = 0  # allocated below
    else:
        write_id = parse_write_id(o.write_id, table)
    job = Job(table.url, partition, keys, write_id, overwrite, fmt, schema, columns,
              new_staging(table).url, buckets, tuple(bucket_by), kinds, bucketing, o.metastore,
              info=info)
    if write_id and (partition is not None or not keys):
        target = table.child(partition) if partition else table
        clashes = existing_deltas(target, write_id, o.statement_id) if \
            kind_of(target) == "dir" else []
        if clashes:
            raise UsageError(f"hiveacid: write id {write_id} is already used in {target.url}: "
                             f"{', '.join(clashes)} (pick another, or writeId auto)")
    if auto and o.metastore:
        return _in_transaction(job, info)
    return job


def _in_transaction(job: Job, info) -> Job:
    from ..commands.convert_txn import Transaction
    from ..io.metastore import Metastore

    assert job.metastore is not None
    with Metastore(job.metastore) as client:
        txn = Transaction(job.metastore, info, job.partition).open(client, job.fmt.hive_version)
        txn._stop_beats()  # the tasks heartbeat it (this process ends before they run)
    return replace(job, transaction=txn.txn, lock=txn.lock, write_id=txn.write_id)


def _partition_keys(table: Location, info: TableInfo | None, partition: str | None
                    ) -> tuple[str, ...]:
    """The partition columns a job takes from the rows: none with a static partition, the
    metastore's keys, else the keys the table's partition directories name."""
    if partition:
        if info is not None:
            given = [k.lower() for k, _ in partition_values(partition)]
            if given != [k.name.lower() for k in info.partition_keys]:
                raise UsageError(f"hiveacid: option partition={partition}: {info.full_name} "
                                 "is partitioned by " + ("/".join(
                                     k.name for k in info.partition_keys) or "nothing"))
        return ()
    if info is not None:
        return tuple(k.name for k in info.partition_keys)
    for entry in list_tree(table):
        first = entry.path.split("/", 1)[0]
        if "=" in first and not first.startswith(("_", ".")):
            head = entry.path.split("/")
            keys = []
            for part in head:
                if "=" not in part or part.startswith(("_", ".")):
                    break
                keys.append(part.split("=", 1)[0])
            return tuple(keys)
    return ()


def _table_schema(table: Location, info: TableInfo | None, insert_only: bool,
                  frame: pa.Schema, keys: tuple[str, ...]) -> pa.Schema:
    """The row columns written: the metastore's, else those of the table's files, else the
    DataFrame's (less the partition columns)."""
    from ..commands.convert_schema import orc_type_to_arrow

    if info is not None and info.columns:
        return pa.schema([(c.name, orc_type_to_arrow(c.type)) for c in info.columns])
    found = _files_schema(table, insert_only)
    if found is not None:
        return found
    lower = {k.lower() for k in keys}
    return pa.schema([pa.field(f.name, _plain_type(f.type)) for f in frame
                      if f.name.lower() not in lower])


def _files_schema(table: Location, insert_only: bool) -> pa.Schema | None:
    from ..api import Table
    from .read import output_schema

    readers = Table(table.url).snapshot(insert_only=insert_only).readers()
    found = output_schema(readers, insert_only)
    skip = {k for r in readers if r.part.partition
            for k, _ in partition_values(r.part.partition)}
    fields = [f for f in found if f.name not in skip and f.name != "ROW__ID"]
    return pa.schema(fields) if fields else None


def _plain_type(t: pa.DataType) -> pa.DataType:
    """The type a Hive ORC file holds for a type of Spark's Arrow form."""
    if pa.types.is_timestamp(t):
        return pa.timestamp("ns")
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _plain_type(f.type)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_plain_type(t.value_type))
    if pa.types.is_map(t):
        return pa.map_(_plain_type(t.key_type), _plain_type(t.item_type))
    return t


def _columns(schema: pa.Schema, frame: pa.Schema, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The DataFrame's column for each table column: by name (any case), or by position when
    the table's files name them only by position (Hive 2.3's ``_col0``..)."""
    lower = {k.lower() for k in keys}
    given = [f.name for f in frame if f.name.lower() not in lower]
    by_name = {n.lower(): n for n in given}
    wanted = [f.name for f in schema]
    if all(n.lower() in by_name for n in wanted):
        extra = [n for n in given if n.lower() not in {w.lower() for w in wanted}]
        if extra:
            raise UsageError(f"hiveacid: the DataFrame's column {extra[0]!r} is not one of the "
                             f"table's ({', '.join(wanted)})")
        return tuple(by_name[n.lower()] for n in wanted)
    positional = all(n.startswith("_col") for n in wanted)
    if positional and len(given) == len(wanted):
        return tuple(given)
    missing = [n for n in wanted if n.lower() not in by_name]
    raise UsageError(f"hiveacid: the DataFrame has no column {missing[0]!r} (the table's "
                     f"columns: {', '.join(wanted)})")


# ------------------------------------------------------------------------------------------------
# Commit and abort


def commit_job(job: Job, files: list[Staged]) -> dict[str, dict]:
    """Each partition's files placed in its directory and committed by one rename under the
    table's lock; then the metastore transaction. Any failure takes out again what this job
    renamed in, and aborts. partition -> {directory, files, rows}."""
    from ..commands.convert import ConvertOptions, Plan, commit

    started = time.perf_counter()
    table, root = resolve(job.table), resolve(job.staging)
    parts: dict[str, dict[int, list[Staged]]] = {}
    for s in files:
        parts.setdefault(s.partition, {}).setdefault(s.bucket, []).append(s)
    if not parts and job.overwrite and not job.keys:
        parts[job.partition or ""] = {}  # INSERT OVERWRITE of no rows: an empty base
    done: list[Location] = []
    added: list[str] = []
    out: dict[str, dict] = {}
    try:
        for part in sorted(parts):
            target = table.child(part) if part else table
            staging = root.child(part) if part else root
            placed = _place(job, parts[part], root, staging.child(job.directory))
            opts = ConvertOptions(table=job.table, write_id=str(job.write_id),
                                  partition=part or None, statement_id=job.fmt.statement_id,
                                  compression=job.fmt.compression,
                                  hive_version=job.fmt.hive_version,
                                  insert_only=job.fmt.insert_only, allow_duplicates=True)
            plan = Plan(opts, [], target, job.write_id, job.directory, job.schema, [])
            if kind_of(target) == "missing":
                target.fs.create_dir(target.path, recursive=True)
            summary = commit(plan, _already(placed), started, staging=staging)
            done.append(target.child(job.directory))
            out[part] = {"directory": job.directory, "files": summary.files,
                         "rows": summary.rows}
        if job.transaction:
            _metastore_commit(job, sorted(p for p in parts if p), added)
    except BaseException:
        for loc in reversed(done):
            try:
                loc.fs.delete_dir(loc.path)
            except (OSError, FileNotFoundError):
                pass
        abort_job(job, dropped=added)
        raise
    finally:
        _remove(root)
    return out


def _already(placed: dict[str, tuple[int, int]]):
    """convert's commit asks a Spark path's writer for its files: they are in place."""
    def files(_staged: Location) -> dict[str, tuple[int, int]]:
        return placed
    return files


def _place(job: Job, buckets: dict[int, list[Staged]], root: Location, into: Location
           ) -> dict[str, tuple[int, int]]:
    """Each bucket's file in the staged directory: a task's file renamed, or the files of the
    tasks that wrote one bucket merged in task order, row ids counted anew."""
    into.fs.create_dir(into.path, recursive=True)
    placed = {}
    for bucket, pieces in sorted(buckets.items()):
        name = job.fmt.file_name(bucket)
        dest = into.child(name)
        if len(pieces) == 1:
            (s,) = pieces
            into.fs.move(root.child(s.rel).path, dest.path)
            placed[name] = (s.rows, s.size)
            continue
        writer = BucketWriter(job.fmt, job.write_id, bucket)
        for s in sorted(pieces, key=lambda s: _task_of(s.rel)):
            writer.write(_rows_of(job, root.child(s.rel)))
        data = writer.finish()
        with dest.fs.open_output_stream(dest.path) as f:
            f.write(data)
        placed[name] = (writer.rows, len(data))
    if not placed and job.overwrite:  # an empty base still holds a file (Hive 4 skips an
        writer = BucketWriter(job.fmt, job.write_id, 0)  # empty directory)
        data = writer.finish()
        with into.fs.open_output_stream(into.child(job.fmt.file_name(0)).path) as f:
            f.write(data)
        placed[job.fmt.file_name(0)] = (0, len(data))
    return placed


def _task_of(rel: str) -> int:
    return int(rel.split("/")[1].split("-")[0])


def _rows_of(job: Job, loc: Location) -> pa.Table:
    import pyarrow.orc as paorc

    with loc.fs.open_input_file(loc.path) as f:
        t = paorc.ORCFile(f).read()
    if job.fmt.insert_only:
        return t
    struct = t.column("row").combine_chunks()
    return pa.table([struct.field(i) for i in range(struct.type.num_fields)],
                    schema=job.schema)


def _metastore_commit(job: Job, parts: list[str], added: list[str]) -> None:
    """Partitions the metastore lacks added (each named in ``added``), then the transaction
    committed."""
    from ..io.metastore import Metastore

    assert job.metastore is not None and job.info is not None
    with Metastore(job.metastore) as client:
        for part in parts:
            try:
                client.partition(job.info, part)
            except MetastoreError:
                client.add_partition(job.info, [v for _, v in partition_values(part)],
                                     resolve(job.table).child(part).url)
                added.append(part)
        client.commit_txn(job.transaction)


def abort_job(job: Job, dropped: Sequence[str] = ()) -> None:
    """The staging directory removed; the metastore transaction aborted (and partitions this
    job added dropped again)."""
    _remove(resolve(job.staging))
    if not job.transaction:
        return
    from ..io.metastore import Metastore

    assert job.metastore is not None and job.info is not None
    try:
        with Metastore(job.metastore) as client:
            for part in dropped:
                client.drop_partition(job.info, part)
            client.abort_txn(job.transaction)
    except MetastoreError:
        pass  # the metastore aborts it when it times out


def _remove(loc: Location) -> None:
    try:
        loc.fs.delete_dir(loc.path)
    except (OSError, FileNotFoundError):
        pass


__all__ = ["plan_write", "commit_job", "abort_job", "TASKS"]
