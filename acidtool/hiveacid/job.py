"""The driver's part of a ``hiveacid`` write: the plan before the tasks run, the commit after
they all succeeded, the abort after any failed (see ``write.py`` for the whole protocol)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import replace

import pyarrow as pa

from ..core.catalog import MetastoreError, TableInfo, partition_values
from ..core.errors import UsageError
from ..core.names import ACID_VERSION_FILE
from ..core.partitions import named_keys
from ..core.versions import HiveVersion
from ..io.deltawriter import BucketWriter, FileFormat
from ..io.fs import Location, kind_of, list_tree, resolve
from ..io.journal import fault_point
from ..table.options import WriteOptions
from .write import TASKS, Job, Staged, new_staging


def plan_write(o: WriteOptions, frame: pa.Schema, overwrite: bool) -> Job:
    """Every check that can be made before a row is written; with a metastore and write id
    ``auto``, the transaction is opened last (aborted again if anything here fails)."""
    from ..commands.convert.delta import parse_write_id

    info: TableInfo | None = None
    partition = o.partition
    if o.metastore:
        from ..table.target import resolve as resolve_target

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
    tree = list_tree(table)  # listed once for the kind, the partition keys and the write id
    if info is None:  # the table's kind from its files (a metastore's table: its own)
        _require_kind(table, insert_only, tree)
    if overwrite and not version.has_write_ids:
        raise UsageError("hiveacid: mode('overwrite') writes a base_N as Hive 3 and 4's INSERT "
                         "OVERWRITE does; acidtool writes none for Hive 2.3: append instead")
    if not 0 <= o.statement_id <= 4095:
        raise UsageError("hiveacid: statementId must be between 0 and 4095")
    keys = _partition_keys(tree, info, partition, o.partition_columns)
    not_rows = keys + tuple(k for k, _ in partition_values(partition)) if partition else keys
    schema = _table_schema(table, info, insert_only, frame, not_rows)
    columns = _columns(schema, frame, not_rows)
    buckets, bucket_by, bucketing = o.buckets, o.bucket_by, o.bucketing_version
    if info is not None and info.bucketed and buckets is None:
        buckets, bucket_by, bucketing = info.num_buckets, info.bucket_cols, \
            info.bucketing_version
    kinds: tuple[str, ...] = ()
    if buckets:
        from ..commands.convert.delta import bucket_kind_of

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
        write_id = parse_write_id(o.write_id, table, tree)
    job = Job(table.url, partition, keys, write_id, overwrite, fmt, schema, columns,
              new_staging(table).url, buckets, tuple(bucket_by), kinds, bucketing, o.metastore,
              info=info)
    if write_id and (partition is not None or not keys):
        target = table.child(partition) if partition else table
        clashes = _clashes(target, write_id, o.statement_id)
        if clashes:
            raise UsageError(f"hiveacid: write id {write_id} is already used in {target.url}: "
                             f"{', '.join(clashes)} (pick another, or writeId auto)")
    if auto and o.metastore:
        job = _in_transaction(job, info)
    try:  # made here, once: the tasks make none (write._make_dirs)
        staging = resolve(job.staging)
        staging.fs.create_dir(staging.child(TASKS).path, recursive=True)
    except BaseException:
        abort_job(job)
        raise
    return job


def _require_kind(table: Location, insert_only: bool, tree: list) -> None:
    from ..core.names import kind_problem

    problem = kind_problem(tree, insert_only)
    if problem:
        raise UsageError(f"hiveacid: {table.url}: " + problem.replace("--insert-only",
                                                                     "insertOnly"))


def _in_transaction(job: Job, info) -> Job:
    from ..commands.convert.txn import Transaction
    from ..io.metastore import Metastore

    assert job.metastore is not None
    with Metastore(job.metastore) as client:
        txn = Transaction(job.metastore, info, job.partition).open(client, job.fmt.hive_version)
        txn.stop_beats()  # the tasks heartbeat it (this process ends before they run)
    return replace(job, transaction=txn.txn, lock=txn.lock, write_id=txn.write_id)


def _partition_keys(tree: list, info: TableInfo | None, partition: str | None,
                    given: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The partition columns a job takes from the rows: none with a static partition, the
    metastore's keys, else the keys the table's partition directories name, else those the
    ``partitionColumns`` option gives (a table with no partition yet). Where two of these
    are known they must agree."""
    if partition:
        if info is not None:
            named = [k.lower() for k, _ in partition_values(partition)]
            if named != [k.name.lower() for k in info.partition_keys]:
                raise UsageError(f"hiveacid: option partition={partition}: {info.full_name} "
                                 "is partitioned by " + ("/".join(
                                     k.name for k in info.partition_keys) or "nothing"))
        return ()
    known = _known_keys(tree, info)
    if given and known is not None and [k.lower() for k in given] != \
            [k.lower() for k in known]:
        raise UsageError(f"hiveacid: option partitionColumns={','.join(given)}: the table is "
                         f"partitioned by {'/'.join(known) or 'nothing'}")
    return tuple(known) if known is not None else tuple(given)


def _known_keys(tree: list, info: TableInfo | None) -> tuple[str, ...] | None:
    """The partition columns the metastore or the table's directories (``tree``, its
    listing) name (None: neither says, an empty table)."""
    if info is not None:
        return tuple(k.name for k in info.partition_keys)
    return named_keys(tree)


def _table_schema(table: Location, info: TableInfo | None, insert_only: bool,
                  frame: pa.Schema, keys: tuple[str, ...]) -> pa.Schema:
    """The row columns written: the metastore's, else those of the table's files, else the
    DataFrame's (less the partition columns)."""
    from ..io.arrowtypes import orc_type_to_arrow

    if info is not None and info.columns:
        return pa.schema([(c.name, orc_type_to_arrow(c.type)) for c in info.columns])
    found = _files_schema(table, insert_only)
    if found is not None:
        return found
    lower = {k.lower() for k in keys}
    return pa.schema([pa.field(f.name, _plain_type(f.type)) for f in frame
                      if f.name.lower() not in lower])


def _files_schema(table: Location, insert_only: bool) -> pa.Schema | None:
    """The row columns of the table's data files (partition columns left out), or None when
    it holds none."""
    from ..table.readplan import output_schema
    from ..table.snapshot import Table

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


def commit_job(job: Job, files: list[Staged], marker: str | None = None,
               done: Callable[[], bool] | None = None,
               before: Callable[[], None] | None = None) -> dict[str, dict]:
    """Commit what the tasks staged (see ``write.py``): partition -> {directory, files,
    rows, journal}. ``marker``: the name of an empty file put in each directory written (a
    streaming batch's, hidden from Hive by its ``_``). Under the table's lock, once a killed
    run's half-done commit is rolled back: ``before()`` is run, and if ``done()`` the job is
    committed already (nothing is placed, ``{}``)."""
    from ..io.commit import Commit

    table, root = resolve(job.table), resolve(job.staging)
    parts: dict[str, dict[int, list[Staged]]] = {}
    for s in files:
        parts.setdefault(s.partition, {}).setdefault(s.bucket, []).append(s)
    if not parts and job.overwrite and not job.keys:
        parts[job.partition or ""] = {}  # INSERT OVERWRITE of no rows: an empty base
    if not parts:  # no rows: nothing to commit (a metastore's transaction commits empty)
        try:
            if job.transaction:
                _metastore_commit(job, [])
        except BaseException:
            abort_job(job)
            raise
        remove_staging(root)
        return {}
    try:
        staged = {part: _place(job, parts[part], root, _staged_dir(job, root, part), marker)
                  for part in sorted(parts)}
        fault_point()  # everything staged
        # a killed run's half-done commit is rolled back first; another command's is refused
        with Commit(table, COMMAND, wait=LOCK_WAIT, recover=(_refused, "write")) as run:
            if before is not None:
                before()
            if done is not None and done():
                return {}
            return _commit_locked(job, staged, run)
    except BaseException:
        abort_job(job)
        raise
    finally:
        remove_staging(root)


COMMAND = "hiveacid write"
LOCK_WAIT = 30.0  # seconds a commit waits for another writer's lock on the table


def _staged_dir(job: Job, root: Location, part: str) -> Location:
    return root.child(f"{part}/{job.directory}" if part else job.directory)


def _commit_locked(job: Job, staged: dict[str, dict[str, tuple[int, int, str]]], run
                   ) -> dict[str, dict]:
    from ..io.commit import require_inside
    from ..io.journal import (
        JOURNAL_VERSION,
        MakeDir,
        PlaceDir,
        Scratch,
        Step,
        default_journal,
        new_run_id,
    )

    table, root = resolve(job.table), resolve(job.staging)
    run_id = new_run_id(root.url[-8:])
    path = default_journal("hiveacid", run_id)
    # the job's staging directory, made when it was planned: undone, it goes with what it holds
    scratch: Step = Scratch(root)
    steps: list[Step] = []
    for part, placed in sorted(staged.items()):
        target = table.child(part) if part else table
        final = target.child(job.directory)
        clashes = _clashes(target, job.write_id, job.fmt.statement_id)
        if clashes or kind_of(final) != "missing":
            raise UsageError(f"another writer committed write id {job.write_id} in "
                             f"{target.url} while this job ran ({', '.join(clashes) or final.url}"
                             "): nothing of this job was committed")
        require_inside(table, final, what="the commit")
        steps.extend(MakeDir(d) for d in _missing_dirs(table, part))
        steps.append(PlaceDir(_staged_dir(job, root, part), final,
                              tuple(sorted((n, h) for n, (_, _, h) in placed.items()))))
    run.begin(path, record="begin", version=JOURNAL_VERSION, run=run_id, path=table.url,
              quarantine="", hive_version=str(job.fmt.hive_version), command=COMMAND,
              write_id=job.write_id, metastore_transaction=job.transaction or None,
              scratch=root.url)  # (undo of a run killed before its steps removes it)
    run.steps({"a1": [scratch, *steps]})
    with run.action("a1", swallow=False) as action:
        # the renames back to back: each alone shows part of the job
        action.take(steps, shield=True, journaled=True)
        if job.transaction:
            _metastore_commit(job, sorted(p for p in staged if p))
    run.end()
    return {part: {"directory": job.directory, "journal": path,
                   "files": {n: rows for n, (rows, _, _) in placed.items()},
                   "rows": sum(rows for rows, _, _ in placed.values())}
            for part, placed in staged.items()}


def _clashes(target: Location, write_id: int, statement_id: int) -> list[str]:
    """The directories of ``target`` (a partition, perhaps not made yet) that already hold
    ``write_id``."""
    from ..commands.convert.delta import existing_deltas

    return existing_deltas(target, write_id, statement_id) if kind_of(target) == "dir" else []


def _missing_dirs(table: Location, part: str) -> list[Location]:
    """The partition directories (``k=v``, then ``k=v/k2=v2``) that do not exist yet."""
    out, at = [], table
    for name in part.split("/") if part else []:
        at = at.child(name)
        if kind_of(at) == "missing":
            out.append(at)
    return out


def _refused(journal: str, records: list[dict]) -> str:
    what = records[0].get("command") if records else "run"
    return (f"an interrupted {what} (journal {journal}) holds this table's lock: finish it, or "
            f"`acidtool undo {journal}`, then write again")


def _place(job: Job, buckets: dict[int, list[Staged]], root: Location, into: Location,
           marker: str | None = None) -> dict[str, tuple[int, int, str]]:
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
            placed[name] = (s.rows, s.size, s.sha256)
            continue
        writer = BucketWriter(job.fmt, job.write_id, bucket)
        for s in sorted(pieces, key=lambda s: _task_of(s.rel)):
            writer.write(_rows_of(job, root.child(s.rel)))
        data = writer.finish()
        _put(dest, data)
        placed[name] = (writer.rows, len(data), _sha(data))
    if not placed and job.overwrite:  # an empty base still holds a file (Hive 4 skips an
        writer = BucketWriter(job.fmt, job.write_id, 0, job.schema)  # empty directory)
        data = writer.finish()
        _put(into.child(job.fmt.file_name(0)), data)
        placed[job.fmt.file_name(0)] = (0, len(data), _sha(data))
    if job.fmt.hive_version.writes_acid_version and not job.fmt.insert_only:
        _put(into.child(ACID_VERSION_FILE), b"2")
        placed[ACID_VERSION_FILE] = (0, 1, _sha(b"2"))
    if marker:
        _put(into.child(marker), b"")
        placed[marker] = (0, 0, _sha(b""))
    return placed


def _put(loc: Location, data: bytes) -> None:
    with loc.fs.open_output_stream(loc.path) as f:
        f.write(data)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


def _metastore_commit(job: Job, parts: list[str]) -> None:
    """Partitions the metastore lacks added, then the transaction committed; a failure drops
    the partitions added again (the caller aborts)."""
    from ..io.metastore import Metastore

    assert job.metastore is not None and job.info is not None
    added: list[str] = []
    with Metastore(job.metastore) as client:
        try:
            for part in parts:
                try:
                    client.partition(job.info, part)
                except MetastoreError:
                    client.add_partition(job.info, [v for _, v in partition_values(part)],
                                         resolve(job.table).child(part).url)
                    added.append(part)
            client.commit_txn(job.transaction)
        except BaseException:
            for part in added:
                try:
                    client.drop_partition(job.info, part)
                except MetastoreError:
                    pass
            raise


def abort_job(job: Job) -> None:
    """The staging directory removed; the metastore transaction aborted."""
    remove_staging(resolve(job.staging))
    if not job.transaction:
        return
    from ..io.metastore import Metastore

    assert job.metastore is not None
    try:
        with Metastore(job.metastore) as client:
            client.abort_txn(job.transaction)
    except MetastoreError:
        pass  # the metastore aborts it when it times out


def remove_staging(loc: Location, tries: int = 5) -> None:
    """The staging directory removed (again while a task of an aborted job, not yet stopped,
    was writing into it)."""
    for i in range(tries):
        try:
            loc.fs.delete_dir(loc.path)
        except FileNotFoundError:
            return
        except OSError:
            pass
        if kind_of(loc) == "missing":
            return
        time.sleep(0.2 * (i + 1))


__all__ = ["plan_write", "commit_job", "abort_job", "remove_staging", "TASKS"]
