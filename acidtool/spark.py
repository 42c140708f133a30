"""Hive ACID tables read into Spark, without Hive: ``acidtool.spark.read_table(spark, ...)``.

Planning happens on the driver, with acidtool's core: the partitions, getAcidState, which files
and which delete deltas each bucket reads (``table.read.PartitionReader``). Then, where the
layout allows, the DataFrame is Spark's own plan (``hiveacid/native.py``: its ORC reader, a
filter for the snapshot, a broadcast join with the delete events): the executors run no
Python. Elsewhere it is the ``hiveacid`` data source (``acidtool.hiveacid``): one task per unit
of work (a (partition, bucket) of a split-update table, a file of an insert-only table, a
partition of Hive 2.3's legacy layout) runs the very code ``acidtool read`` runs for its unit
and hands Arrow batches to Spark. No row passes through the driver either way.

``AcidTable`` (below) changes rows: DELETE, UPDATE and MERGE, evaluated by Spark, written by
``commands/dml/write.py`` as Hive 3 and 4 write them (docs/dml.md).

The DataFrame has the table's columns (the metastore's names when ``metastore`` is given), the
partition columns (typed as the metastore says, strings without one), and ``ROW__ID``
(struct<writeid, bucketid, rowid>) when asked.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Sequence

from .core.errors import UsageError

if TYPE_CHECKING:
    from .table.readplan import ReadPlan
    from .table.target import Target

# Spark starts its Python workers (and looks up Python data sources such as ``hiveacid``)
# with $PYSPARK_PYTHON, else `python3` from PATH: a script run by a virtual environment's
# python without that environment on PATH would get another interpreter, without acidtool.
# Read when a SparkContext starts: set here, so that importing acidtool.spark before making
# the session is enough.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def session(master: str | None = None, verbose: bool = False):
    """The active SparkSession, or a new one on ``master`` (``local[*]`` by default) whose JVM
    start-up lines and log go to a log file rather than the console."""
    from .io.spark import session as quiet_session

    return quiet_session(master, verbose)


def register(spark) -> None:
    """Make the ``hiveacid`` data source known to ``spark`` (a SparkSession). Without it, Spark
    finds the source itself wherever acidtool is installed (the ``pyspark_hiveacid`` module)."""
    from .hiveacid import register as register_source

    _require_workers_python(spark)
    register_source(spark)


def _require_workers_python(spark) -> None:
    """A session made before acidtool.spark was imported may run workers whose Python has no
    acidtool (a venv's python run without the venv on PATH): said in one line with the fix,
    rather than Spark's DATA_SOURCE_NOT_FOUND. Only on a local master (a cluster's workers
    are the cluster's)."""
    sc = spark.sparkContext
    if not str(sc.master).startswith("local"):
        return
    problem = _python_problem(getattr(sc, "pythonExec", None) or "python3")
    if problem:
        from .core.errors import UsageError

        raise UsageError(problem)


@functools.lru_cache(maxsize=None)
def _python_problem(python: str) -> str | None:
    found = shutil.which(python)
    if found is None:
        return (f"Spark's Python workers run {python!r}, which is not found: set "
                f"PYSPARK_PYTHON={sys.executable} before the SparkSession starts (or import "
                "acidtool.spark first)")
    if os.path.realpath(found) == os.path.realpath(sys.executable):
        return None
    try:
        ok = subprocess.run([found, "-c", "import acidtool, pyarrow, pyspark"], cwd="/",
                            capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if ok:
        return None
    return (f"Spark's Python workers run {found}, which cannot import acidtool, pyarrow and "
            f"pyspark (this script "
            f"runs {sys.executable}): set PYSPARK_PYTHON={sys.executable} before the "
            "SparkSession starts, or import acidtool.spark before making it")


def read_table(spark, path: str, write_ids: str | None = None, txns: str | None = None,
               hive_version: str | int | None = None, *, with_row_id: bool = False,
               columns: Sequence[str] | None = None, metastore: str | None = None,
               table: str | None = None, insert_only: bool = False,
               partitions: Sequence[str] = (), native: bool | None = None):
    """The rows Hive returns for the snapshot, as a ``pyspark.sql.DataFrame``. ``path``: a
    table or partition directory, or with ``metastore`` a ``db.table`` name.

    ``native``: None (the default) builds the DataFrame of Spark's own operators (its ORC
    reader, a filter, a broadcast join: see ``hiveacid/native.py``) where the layout
    allows and it is the faster (``NativePlan.slower``), else reads through the ``hiveacid``
    source; True builds it wherever the layout allows and refuses the others (saying why);
    False always reads through the source."""
    return read_table_and_why(spark, path, write_ids, txns, hive_version,
                              with_row_id=with_row_id, columns=columns, metastore=metastore,
                              table=table, insert_only=insert_only, partitions=partitions,
                              native=native)[0]


def read_table_and_why(spark, path: str, write_ids: str | None = None,
                       txns: str | None = None, hive_version: str | int | None = None, *,
                       with_row_id: bool = False, columns: Sequence[str] | None = None,
                       metastore: str | None = None, table: str | None = None,
                       insert_only: bool = False, partitions: Sequence[str] = (),
                       native: bool | None = None):
    """``read_table``'s DataFrame, and why the ``hiveacid`` source reads it (None: Spark's
    own plan does)."""
    import json

    options = {"writeIds": write_ids, "txns": txns,
               "hiveVersion": str(hive_version) if hive_version is not None else None,
               "metastore": metastore, "table": table,
               "insertOnly": "true" if insert_only else None,
               "withRowId": "true" if with_row_id else None,
               "columns": json.dumps(list(columns)) if columns else None,
               "partitions": json.dumps(list(partitions)) if partitions else None}
    options = {k: v for k, v in options.items() if v is not None}
    why = "native=False"
    if native is not False:
        why = read_plan_of(spark, path, options, forced=bool(native))
        if not isinstance(why, str):
            return why, None
        if native:
            raise NotNative(why, path)
    register(spark)
    from .hiveacid import acidtool_errors

    reader = spark.read.format("hiveacid")
    for key, value in options.items():
        reader = reader.option(key, value)
    with acidtool_errors():  # planned in Spark's Python worker: its errors said as ours
        frame = reader.load(path)
    app = _application(spark)
    if app is not None:
        _SOURCE_READ.add(app)
    return frame, why


# The Spark applications in which this process has read through the ``hiveacid`` source: its
# first read in a session costs seconds more than Spark's own plan's (NativePlan.slower).
_SOURCE_READ: set[str] = set()


def _application(spark) -> str | None:
    """The session's application id (None where it has no SparkContext: Spark Connect)."""
    try:
        return spark.sparkContext.applicationId
    except Exception:  # noqa: BLE001 - pyspark's own error for Connect sessions
        return None


class NotNative(UsageError):
    """``read_table(native=True)`` of a layout only the ``hiveacid`` source reads."""

    def __init__(self, reason: str, path: str) -> None:
        super().__init__(f"{path}: Spark's own reader cannot read it: {reason}; read it "
                         "through the hiveacid source (native=False)")
        self.reason = reason


def read_plan_of(spark, path: str, options: dict, *, forced: bool = False):
    """The DataFrame of Spark's own operators for the read, or why the source reads it (it
    must, or, unless ``forced``, would be faster)."""
    from .table.options import ReadOptions
    from .table.readplan import plan_read

    return frame_of(spark, plan_read(ReadOptions.of({**options, "path": path})), forced=forced)


def frame_of(spark, read: ReadPlan, *, forced: bool = False):
    """``read_plan_of`` of a read plan already made (the files it lists are those read)."""
    from .hiveacid.frame import session_unfit, to_frame
    from .hiveacid.native import native_plan

    plan = native_plan(read)
    if isinstance(plan, str):
        return plan
    return session_unfit(spark, plan) or \
        (None if forced else plan.slower(_application(spark) in _SOURCE_READ)) or \
        to_frame(spark, plan)


# ------------------------------------------------------------------------------------------------
# DELETE and UPDATE (issue 42): Spark evaluates the SQL; commands/dml/write.py writes Hive's
# split-update events and commits them.


class AcidTable:
    """One Hive ACID table (or partition) at a snapshot, to change rows of from Spark."""

    def __init__(self, spark, path: str, target: Target, *, write_ids: str | None = None,
                 txns: str | None = None, hive_version=None, metastore: str | None = None):
        self.spark, self.path, self.target = spark, path, target
        self._read = {"write_ids": write_ids, "txns": txns, "hive_version": hive_version,
                      "metastore": metastore}

    @classmethod
    def for_path(cls, spark, path: str, hive_version=None, *, write_ids: str | None = None,
                 txns: str | None = None, metastore: str | None = None) -> AcidTable:
        from .commands.dml.write import require_writable
        from .table.target import resolve

        target = resolve(path, metastore=metastore, hive_version=hive_version,
                         write_ids=write_ids, txns=txns)
        if target.partition is not None or "=" in target.url.rstrip("/").rsplit("/", 1)[-1]:
            raise UsageError(f"{path}: a partition; give the table, and narrow the change "
                             "with the condition")
        require_writable(target)
        return cls(spark, path, target, write_ids=write_ids, txns=txns,
                   hive_version=hive_version, metastore=metastore)

    @classmethod
    def for_name(cls, spark, name: str, *, metastore: str, write_ids: str | None = None,
                 txns: str | None = None) -> AcidTable:
        return cls.for_path(spark, name, metastore=metastore, write_ids=write_ids, txns=txns)

    # -- reading ---------------------------------------------------------------------------
    def to_df(self):
        """The rows Hive returns for the snapshot, with ``ROW__ID``."""
        return read_table(self.spark, self.path, self._read["write_ids"], self._read["txns"],
                          self._read["hive_version"], with_row_id=True,
                          metastore=self._read["metastore"])

    def _keys(self, df) -> list[str]:
        """The partition columns (the DataFrame's last columns)."""
        info = self.target.table
        if info is not None:
            return [k.name for k in info.partition_keys if k.name in df.columns]
        from .core.partitions import named_keys
        from .io.fs import list_tree, resolve

        keys = named_keys(list_tree(resolve(self.target.url))) or ()
        return [k for k in keys if k in df.columns]

    # -- the changes -----------------------------------------------------------------------
    def delete(self, condition, *, write_id="auto", dry_run: bool = False) -> dict:
        """DELETE FROM t WHERE condition (a SQL string or a Column)."""
        df = self.to_df()
        keys = self._keys(df)
        with _sql_errors():
            matched = df.where(_column(condition)).select(*_row_id(), *keys).toArrow()
        return self._commit(write_id, _with_partition(matched, keys), None, 0, dry_run)

    def update(self, condition, *, set: dict[str, str], write_id="auto",
               dry_run: bool = False) -> dict:
        """UPDATE t SET col = expr, ... WHERE condition."""
        from pyspark.sql import functions as F

        df = self.to_df()
        keys = self._keys(df)
        data = [c for c in df.columns if c != "ROW__ID" and c not in keys]
        self._refuse_sets(set, keys, data)
        with _sql_errors():
            values = [F.expr(set[c]).alias(c) if c in set else F.col(c) for c in data]
            rows = df.where(_column(condition)).select(*_row_id(), *keys, *values).toArrow()
        rows = _with_partition(rows, keys)
        deleted = rows.select(["partition", "writeid", "bucketid", "rowid"])
        inserted = rows.select(["partition", "bucketid", *data])
        return self._commit(write_id, deleted, inserted, rows.num_rows, dry_run)

    def merge(self, source, on: str, *, write_id="auto", dry_run: bool = False) -> Merge:
        """MERGE INTO t USING source s ON condition: the clauses are added to what this
        returns (``when_matched_delete``, ``when_matched_update``, ``when_not_matched_insert``)
        and ``execute()`` runs them, the first clause whose condition holds applying."""
        return Merge(self, source, on, write_id, dry_run)

    def _refuse_sets(self, sets: dict, keys: list[str], data: list[str]) -> None:
        info = self.target.table
        bucketed = {c.lower() for c in info.bucket_cols} if info is not None else set()
        for c in sets:
            if c in keys:
                raise UsageError(f"SET {c}: a partition column; a row changes partition by a "
                                 "DELETE and an INSERT")
            if c.lower() in bucketed:
                raise UsageError(f"SET {c}: a bucketing column; Hive refuses to update it "
                                 "(the row would be in the wrong bucket)")
            if c not in data:
                raise UsageError(f"SET {c}: no such column (the table has "
                                 f"{', '.join(data)})")

    def _commit(self, write_id, deleted, inserted, updated: int, dry_run: bool) -> dict:
        if write_id == "auto":
            return self._in_transaction(deleted, inserted, updated, dry_run)
        try:
            number = int(write_id)
        except (TypeError, ValueError):
            raise UsageError(f"write_id must be a number or 'auto', not {write_id!r}") from None
        from .commands.dml.write import require_new_write_id, write_changes

        require_new_write_id(self.target, number)
        return write_changes(self.target, number, deleted, inserted, updated=updated,
                             dry_run=dry_run).as_dict()

    def _merge_commit(self, write_id, changed, n_updated: int, added, keys: list[str],
                      dry_run: bool) -> dict:
        """The matched rows' delete events (and updated rows' inserts) and the new rows'
        inserts, in the new rows' buckets, committed under one write id."""
        import pyarrow as pa

        deleted = inserted = None
        if changed is not None:
            deleted = changed.select(["partition", "writeid", "bucketid", "rowid"])
            ups = changed.filter(changed.column("_update"))
            inserted = ups.drop_columns(["writeid", "rowid", "_update"])
        if added is not None and added.num_rows:
            new = _with_partition(added, keys)
            buckets = self._new_buckets(new)
            new = new.add_column(1, "bucketid", buckets)
            inserted = new if inserted is None else pa.concat_tables(
                [inserted, new.cast(inserted.schema)])
        if deleted is None:
            deleted = pa.table({"partition": pa.array([], pa.string()),
                                "writeid": pa.array([], pa.int64()),
                                "bucketid": pa.array([], pa.int32()),
                                "rowid": pa.array([], pa.int64())})
        return self._commit(write_id, deleted, inserted, n_updated, dry_run)

    def _new_buckets(self, rows):
        """The bucket property of each new row: Hive's hash of the bucketing columns (the
        metastore's), else bucket 0 (one writer's file, as Hive 3 writes an unbucketed table)."""
        import pyarrow as pa

        from .commands.convert.delta import bucket_kind_of, hive_buckets
        from .core.bucket import encode_v1

        info = self.target.table
        if info is None or not info.bucketed:
            return pa.array([encode_v1(0, 0)] * rows.num_rows, pa.int32())
        by = [next(n for n in rows.column_names if n.lower() == c.lower())
              for c in info.bucket_cols]
        kinds = [bucket_kind_of(rows.schema.field(c).type) for c in by]
        ids = hive_buckets(rows, by, kinds, info.num_buckets, info.bucketing_version)
        return pa.array([encode_v1(b, 0) for b in ids.to_pylist()], pa.int32())

    def _in_transaction(self, deleted, inserted, updated: int, dry_run: bool) -> dict:
        from .commands.convert.txn import Transaction
        from .commands.dml.write import write_changes
        from .io.metastore import Metastore

        url, info = self._read["metastore"], self.target.table
        if not url or info is None:
            raise UsageError("write_id 'auto' allocates the write id in the metastore: give "
                             "metastore=thrift://HOST:PORT (or a number)")
        if dry_run:
            return write_changes(self.target, 0, deleted, inserted, updated=updated,
                                 dry_run=True).as_dict()
        with Metastore(url) as client:
            txn = Transaction(url, info, None).open(client, self.target.snapshot.hive_version)
            try:
                result = write_changes(self.target, txn.write_id, deleted, inserted,
                                       updated=updated, transaction=lambda: txn.commit(client))
            except BaseException:
                if not txn.committed:
                    txn.abort(client)
                raise
            if not txn.committed:  # nothing matched: nothing written, nothing to commit
                txn.abort(client)
        result.transaction = txn.txn
        return result.as_dict()


def _row_id(prefix: str = ""):
    from pyspark.sql import functions as F

    return [F.col(f"{prefix}ROW__ID.{f}").alias(n) for f, n in
            (("writeid", "writeid"), ("bucketid", "bucketid"), ("rowid", "rowid"))]


def _column(condition):
    from pyspark.sql import functions as F

    return F.expr(condition) if isinstance(condition, str) else condition


def _with_partition(rows, keys: list[str]):
    """The rows with ``partition`` (the directory name, k=v/...) first, keys dropped."""
    import pyarrow as pa

    from .core.catalog import partition_dir

    if keys:
        names = [partition_dir(keys, [_text(v) for v in values])
                 for values in zip(*(rows.column(k).to_pylist() for k in keys))]
    else:
        names = [""] * rows.num_rows
    rest = rows.drop_columns(keys) if keys else rows
    return rest.add_column(0, "partition", pa.array(names, pa.string()))


def _text(value) -> str:
    return "__HIVE_DEFAULT_PARTITION__" if value is None else str(value)


@contextmanager
def _sql_errors() -> Iterator[None]:
    """Spark's refusal of a condition or an expression, as one line."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - only Spark's SQL errors are turned
        name = type(exc).__name__
        if name in ("ParseException", "AnalysisException") or "PARSE_SYNTAX_ERROR" in str(exc):
            first = str(exc).strip().splitlines()[0]
            raise UsageError(f"the condition or an expression does not parse: {first}") \
                from None
        raise


class Merge:
    """A MERGE being built: clauses in order, then ``execute()``. Target alias ``t``, source
    alias ``s``."""

    def __init__(self, table: AcidTable, source, on: str, write_id, dry_run: bool) -> None:
        self.table, self.source, self.on = table, source, on
        self.write_id, self.dry_run = write_id, dry_run
        self.matched: list[tuple[str, str | None, dict]] = []  # (delete|update, cond, set)
        self.not_matched: list[tuple[str | None, dict]] = []  # (cond, values)

    def when_matched_delete(self, condition: str | None = None) -> Merge:
        self.matched.append(("delete", condition, {}))
        return self

    def when_matched_update(self, set: dict[str, str], condition: str | None = None) -> Merge:
        self.matched.append(("update", condition, dict(set)))
        return self

    def when_not_matched_insert(self, values: dict[str, str],
                                condition: str | None = None) -> Merge:
        self.not_matched.append((condition, dict(values)))
        return self

    def execute(self) -> dict:
        from pyspark.sql import functions as F

        t = self.table.to_df().alias("t")
        keys = self.table._keys(t)
        data = [c for c in t.columns if c != "ROW__ID" and c not in keys]
        for _, _, sets in self.matched:
            self.table._refuse_sets(sets, keys, data)
        s = self.source.alias("s")
        with _sql_errors():
            joined = t.join(s, F.expr(self.on), "inner")
            twice = joined.groupBy("t.ROW__ID").count().where("count > 1").limit(1).collect()
            if twice and self.matched:
                raise UsageError(f"MERGE: a target row (ROW__ID {tuple(twice[0][0])}) is "
                                 "matched by more than one source row; make the ON condition "
                                 "match one source row per target row")
            changed, n_updated = self._matched(joined, keys, data)
            added = self._inserts(t, s, keys, data)
        return self.table._merge_commit(self.write_id, changed, n_updated, added, keys,
                                        self.dry_run)

    def _matched(self, joined, keys: list[str], data: list[str]):
        """(delete events, updated rows) of the matched clauses, as Arrow, and the count of
        updates."""
        from pyspark.sql import functions as F

        if not self.matched:
            return None, 0
        action = None
        for i, (_, cond, _) in enumerate(self.matched):
            holds = F.expr(cond) if cond else F.lit(True)
            action = F.when(holds, i) if action is None else action.when(holds, i)
        rows = joined.withColumn("_clause", action).where("_clause IS NOT NULL")
        updates = [i for i, (kind, _, _) in enumerate(self.matched) if kind == "update"]
        values = []
        for c in data:
            value = F.col(f"t.{c}")
            for i in updates:
                if c in self.matched[i][2]:
                    value = F.when(F.col("_clause") == i, F.expr(self.matched[i][2][c])) \
                        .otherwise(value)
            values.append(value.alias(c))
        out = rows.select(*_row_id("t."), *[F.col(f"t.{k}").alias(k) for k in keys], *values,
                          F.col("_clause").isin(updates).alias("_update")).toArrow()
        out = _with_partition(out, keys)
        import pyarrow.compute as pc

        return out, int(pc.sum(out.column("_update")).as_py() or 0)

    def _inserts(self, t, s, keys: list[str], data: list[str]):
        from pyspark.sql import functions as F

        if not self.not_matched:
            return None
        missing = s.join(t, F.expr(self.on), "left_anti")
        clause = None
        for i, (cond, _) in enumerate(self.not_matched):
            holds = F.expr(cond) if cond else F.lit(True)
            clause = F.when(holds, i) if clause is None else clause.when(holds, i)
        rows = missing.withColumn("_clause", clause).where("_clause IS NOT NULL")
        columns = []
        for c in [*data, *keys]:
            value = F.lit(None)
            for i, (_, given) in enumerate(self.not_matched):
                if c in given:
                    value = F.when(F.col("_clause") == i, F.expr(given[c])).otherwise(value)
            columns.append(value.cast(t.schema[c].dataType).alias(c))
        return rows.select(*columns).toArrow()
