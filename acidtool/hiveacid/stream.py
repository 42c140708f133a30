"""Streaming writes through the ``hiveacid`` source: ``df.writeStream.format("hiveacid")``.

Each micro-batch commits one delta (per partition it writes) under a write id of its own,
W = B + batch id, where B is one above every write id the table held when the query started;
its tasks read the batch id and the query's id (stable across restarts from the same
checkpoint) from Spark's task properties. Every directory a batch commits holds an empty
``_acidtool_stream_<query id>_<batch id>`` (hidden from Hive by its ``_``): a batch Spark runs
again after a failure (its commit done, its checkpoint not) finds it and commits nothing twice.
Without a metastore only (a metastore would have to allocate each batch's write id before its
tasks run, which this API gives no place for)."""

from __future__ import annotations

from dataclasses import replace

from ..core.errors import UsageError
from ..core.names import ACIDTOOL_STAGING_PREFIX
from ..io.fs import list_tree, resolve
from .options import WriteOptions
from .write import TASKS, Job

MARKER = "_acidtool_stream_"
BATCH_ID = "streaming.sql.batchId"  # Spark's task properties of a micro-batch
QUERY_ID = "sql.streaming.queryId"


def plan_stream(o: WriteOptions, frame, overwrite: bool) -> Job:
    from .job import abort_job, plan_write

    if overwrite:
        raise UsageError("hiveacid: a streaming write appends (one delta per micro-batch); "
                         "outputMode complete is not supported")
    if o.metastore:
        raise UsageError("hiveacid: a streaming write takes no metastore: each micro-batch "
                         "would need a write id allocated before its tasks run")
    if o.write_id != "auto":
        raise UsageError("hiveacid: a streaming write numbers its batches itself: drop writeId")
    job = plan_write(o, frame, False)  # write id: one above every write id in the table
    abort_job(job)  # its staging directory: each batch makes its own
    return job


def for_batch(job: Job, query: str, batch: int) -> Job:
    """The batch's job: its write id and its own staging directory (made here, by whichever
    task comes first)."""
    table = resolve(job.table)
    staging = table.child(f"{ACIDTOOL_STAGING_PREFIX}stream_{query[:8]}_{batch}")
    staging.fs.create_dir(staging.child(TASKS).path, recursive=True)
    return replace(job, write_id=job.write_id + batch, staging=staging.url)


def marker(query: str, batch: int) -> str:
    return f"{MARKER}{query}_{batch}"


def committed(job: Job, query: str, batch: int) -> bool:
    """Whether the table holds a directory this batch committed already."""
    name = marker(query, batch)
    return any(e.path.rsplit("/", 1)[-1] == name for e in list_tree(resolve(job.table)))


def commit_batch(job: Job, messages: list, batch: int) -> None:
    from .job import abort_job, commit_job

    sent = [m for m in messages if m is not None]
    if not sent:
        return
    query = sent[0].query
    this = for_batch(job, query, batch)
    files = [s for m in sent for s in m.files]
    if committed(job, query, batch) or not files:
        abort_job(this)  # run again after its commit, or no rows: nothing to commit
        return
    commit_job(this, files, marker(query, batch))


def abort_batch(job: Job, messages: list, batch: int) -> None:
    from .job import abort_job

    for m in messages:
        if m is not None:
            abort_job(for_batch(job, m.query, batch))
            return
