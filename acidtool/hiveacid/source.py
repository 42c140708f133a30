"""The ``hiveacid`` data source itself: the classes Spark's Python Data Source API calls (the
package's ``__init__`` hands them out when first asked for, so that its pyspark-free parts,
the read plans and options, serve commands such as ``export`` where pyspark is not
installed)."""

from __future__ import annotations

import contextlib
import inspect
import json
import re
from dataclasses import dataclass

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    InputPartition,
    WriterCommitMessage,
)

from ..table.options import SPARKS_OWN, ReadOptions
from ..table.readplan import ReadPlan, plan_read, prune, typed_as, unit_batches

NAME = "hiveacid"


class HiveAcidSource(DataSource):
    """``spark.read.format("hiveacid")`` and ``df.write.format("hiveacid")``."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self):
        from pyspark.sql.pandas.types import from_arrow_schema
        from pyspark.sql.types import StructField, StructType

        # a table with no data file to take the columns from has none (as `acidtool read`
        # says): .schema('id int, ...') gives them
        struct = from_arrow_schema(_planned(self.options).schema)
        if not struct.fields:
            return struct
        # Spark hands a SQL table's reads and writes (CREATE TABLE ... USING hiveacid
        # OPTIONS (...)) no options, only the schema it kept: the options ride along in it
        first = struct.fields[0]
        saved = {k: v for k, v in self.options.items() if k.lower() not in SPARKS_OWN}
        kept = StructField(first.name, first.dataType, first.nullable,
                           {**(first.metadata or {}), SAVED: json.dumps(saved)})
        return StructType([kept, *struct.fields[1:]])

    def reader(self, schema):
        plan = _planned(_options(self.options, schema), with_schema=False)  # Spark has it
        if _pushdown_asked():
            return PruningReader(plan, schema)
        return Reader(plan, schema)

    def writer(self, schema, overwrite: bool):
        return Writer(_options(self.options, schema), schema, overwrite)

    def streamWriter(self, schema, overwrite: bool):
        return StreamWriter(_options(self.options, schema), schema, overwrite)


SAVED = "hiveacid.options"


def _options(options, schema) -> dict:
    """The options Spark gives, or (a SQL table's read or write, given none) those the
    table's schema keeps."""
    given = dict(options)
    if given.get("path") or schema is None or not schema.fields:
        return given
    saved = (schema.fields[0].metadata or {}).get(SAVED)
    return {**json.loads(saved), **given} if saved else given


def _planned(options, *, with_schema: bool = True) -> ReadPlan:
    return plan_read(ReadOptions.of(dict(options)), with_schema=with_schema)


def _pushdown_asked() -> bool:
    """Whether Spark is planning this read with filter pushdown on
    (``spark.sql.python.filterPushdown.enabled``): it then calls ``reader`` from its pushdown
    worker, and a reader that takes filters is refused when it is off."""
    return any(f.filename.endswith("data_source_pushdown_filters.py")
               for f in inspect.stack(0))


class Reader(DataSourceReader):
    def __init__(self, plan: ReadPlan, schema):
        from pyspark.sql.pandas.types import to_arrow_schema

        self.target = to_arrow_schema(schema, timezone="UTC")
        self.units = [typed_as(u, self.target) for u in plan.units]

    def partitions(self):
        return [InputPartition(u) for u in self.units]

    def read(self, partition):
        if getattr(partition, "value", None) is None:
            return  # no unit at all: Spark reads one empty partition (a snapshot of nothing)
        yield from unit_batches(partition.value, self.target)


class PruningReader(Reader):
    def pushFilters(self, filters):
        self.units, left = prune(self.units, list(filters))
        return left


@dataclass
class Written(WriterCommitMessage):
    files: list  # of write.Staged
    query: str = ""  # a streaming batch's query id
    job: object = None  # a streaming batch's job as its tasks ran it (write id, staging)


class StreamWriter(DataSourceStreamArrowWriter):
    """Each micro-batch one delta (per partition), committed once (see ``stream.py``)."""

    def __init__(self, options: dict, schema, overwrite: bool):
        from pyspark.sql.pandas.types import to_arrow_schema

        from ..table.options import WriteOptions
        from .stream import plan_stream

        self.job = plan_stream(WriteOptions.of(options),
                               to_arrow_schema(schema, timezone="UTC"), overwrite)

    def write(self, iterator):
        from pyspark import TaskContext

        from .stream import BATCH_ID, QUERY_ID, for_batch
        from .write import write_task

        ctx = TaskContext.get()
        assert ctx is not None, "a streaming write runs in Spark's tasks"
        query = str(ctx.getLocalProperty(QUERY_ID))
        job = for_batch(self.job, query, int(str(ctx.getLocalProperty(BATCH_ID))))
        return Written(write_task(job, iterator, ctx.partitionId(), ctx.attemptNumber()),
                       query, job)

    def commit(self, messages, batchId):
        from .stream import commit_batch

        commit_batch(self.job, messages, batchId)

    def abort(self, messages, batchId):
        from .stream import abort_batch

        abort_batch(self.job, messages, batchId)


class Writer(DataSourceArrowWriter):
    """Tasks write their rows into the job's staging directory; the driver commits (see
    ``write.py``)."""

    def __init__(self, options: dict, schema, overwrite: bool):
        from pyspark.sql.pandas.types import to_arrow_schema

        from ..table.options import WriteOptions
        from .job import plan_write

        self.job = plan_write(WriteOptions.of(options), to_arrow_schema(schema, timezone="UTC"),
                              overwrite)

    def write(self, iterator):
        from pyspark import TaskContext

        from .write import write_task

        ctx = TaskContext.get()
        task, attempt = (ctx.partitionId(), ctx.attemptNumber()) if ctx else (0, 0)
        return Written(write_task(self.job, iterator, task, attempt))

    def commit(self, messages):
        from .job import commit_job

        commit_job(self.job, [s for m in messages if m is not None for s in m.files])

    def abort(self, messages):
        from .job import abort_job

        abort_job(self.job)


_OURS = re.compile(r"acidtool\.core\.errors\.(\w+): (.*?)(?:\\n|\n|$)")


@contextlib.contextmanager
def acidtool_errors():
    """Inside the block, an acidtool error that Spark reports from its Python worker (an
    ``AnalysisException`` or a failed job carrying the worker's traceback) is raised again as
    the acidtool error it was, with its own one-line message."""
    from ..core import errors

    try:
        yield
    except errors.AcidToolError:
        raise
    except Exception as exc:
        found = _OURS.findall(str(exc))
        if not found:
            raise
        name, message = found[-1]
        kind = getattr(errors, name, errors.AcidToolError)
        if not (isinstance(kind, type) and issubclass(kind, errors.AcidToolError)):
            kind = errors.AcidToolError
        raise kind(message.strip()) from None


def register(spark) -> None:
    """Make ``hiveacid`` known to ``spark`` (a SparkSession)."""
    spark.dataSource.register(HiveAcidSource)
