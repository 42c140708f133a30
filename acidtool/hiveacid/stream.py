"""Streaming writes through the ``hiveacid`` source: ``df.writeStream.format("hiveacid")``.

Each micro-batch commits one delta (per partition it writes) under a write id of its own: one
above every write id the table holds when Spark plans the batch's writer (it plans one for each
batch's tasks, and again for its commit, so the commit takes the tasks' job, write id and
staging directory, from their messages). Its tasks read the batch id and the query's id (stable
across restarts from the same checkpoint) from Spark's task properties. Every directory a batch
commits holds an empty ``_acidtool_stream_<query id>_<batch id>`` (hidden from Hive by its
``_``): a batch Spark runs again after a failure (its commit done, its checkpoint not) finds it
and commits nothing twice.

A batch is committed when all of its directories are: its partitions' renames are one journaled
commit, and the replay looks for the marker only under the table's lock, after rolling back a
killed attempt's half-done commit (``finish_stale``), so a batch killed between two partitions'
renames is committed again whole, never taken as done. Staging directories are per attempt (each
writer Spark plans has a fresh token), so a replay never writes into a killed attempt's files;
the commit removes the staging directories older attempts of the query left. Without a metastore
only (a metastore would have to allocate each batch's write id before its tasks run, which this
API gives no place for)."""

from __future__ import annotations

from dataclasses import replace

from ..core.errors import UsageError
from ..core.names import ACIDTOOL_STAGING_PREFIX
from ..io.fs import list_dir, list_tree, resolve
from ..table.options import WriteOptions
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
    """The batch's job: its own staging directory (made here, by whichever task comes
    first)."""
    table = resolve(job.table)
    staging = table.child(f"{_attempts(query)}{batch}_{_token(job)}")
    staging.fs.create_dir(staging.child(TASKS).path, recursive=True)
    return replace(job, staging=staging.url)


def _attempts(query: str) -> str:
    """The prefix of the staging directories of every attempt of ``query``'s batches."""
    return f"{ACIDTOOL_STAGING_PREFIX}stream_{query[:8]}_"


def _token(job: Job) -> str:
    """This attempt's: the random end of the staging name its writer was planned with."""
    return job.staging.rstrip("/").rsplit("_", 1)[-1]


def marker(query: str, batch: int) -> str:
    return f"{MARKER}{query}_{batch}"


def committed(job: Job, query: str, batch: int) -> bool:
    """Whether the table holds a directory this batch committed already."""
    name = marker(query, batch)
    return any(e.path.rsplit("/", 1)[-1] == name
               and f"/{ACIDTOOL_STAGING_PREFIX}" not in "/" + e.path
               for e in list_tree(resolve(job.table)))  # a staged copy is not committed


def commit_batch(job: Job, messages: list, batch: int) -> None:
    from .job import abort_job, commit_job

    sent = [m for m in messages if m is not None]
    if not sent:
        return
    query, this = sent[0].query, _ran(job, sent[0], batch)
    files = [s for m in sent for s in m.files]
    if not files:
        abort_job(this)  # no rows: nothing to commit
        return
    # looked for under the lock, once a killed attempt's half-done commit is rolled back
    commit_job(this, files, marker(query, batch), done=lambda: committed(job, query, batch),
               before=lambda: _remove_older_attempts(this, query))


def _remove_older_attempts(this: Job, query: str) -> None:
    """The staging directories the query's killed attempts left (under the table's lock: no
    attempt of this query runs but this one)."""
    from .job import remove_staging

    table = resolve(this.table)
    mine = resolve(this.staging).path.rstrip("/").rsplit("/", 1)[-1]
    for entry in list_dir(table):
        name = entry.path
        if name.startswith(_attempts(query)) and name != mine:
            remove_staging(table.child(name))


def abort_batch(job: Job, messages: list, batch: int) -> None:
    from .job import abort_job

    for m in messages:
        if m is not None:
            abort_job(_ran(job, m, batch))
            return


def _ran(job: Job, message, batch: int) -> Job:
    """The batch's job as its tasks ran it: Spark plans the writer of a commit or abort again
    (a staging token of its own, a write id from the table as it is then), so both are the
    tasks', carried in their messages."""
    return message.job if isinstance(message.job, Job) else for_batch(job, message.query, batch)
