"""A streaming micro-batch of the ``hiveacid`` source without Spark, for kill tests: the
writer planned as a (re)started query plans it, two tasks' writes and the batch's commit, in one
process (``python -m tests.helpers.streamjob TABLE BATCH``). Batch B's rows: 8 ids from 8*B,
going to partitions ds=2 and ds=3 by their own ds."""

from __future__ import annotations

import sys

from tests.helpers.sourcejob import FRAME, batch

QUERY = "5f0c9e7a-query"


def rows_of(b: int) -> list[tuple]:
    return [(i, f"s{i}", str(2 + i % 2)) for i in range(8 * b, 8 * b + 8)]


def main(table: str, b: str) -> None:
    from acidtool.hiveacid import Written
    from acidtool.hiveacid.stream import commit_batch, for_batch, plan_stream
    from acidtool.hiveacid.write import write_task
    from acidtool.table.options import WriteOptions

    n = int(b)
    job = plan_stream(WriteOptions.of({"path": table}), FRAME, False)  # the query (re)started
    this = for_batch(job, QUERY, n)
    rows = rows_of(n)
    files = [write_task(this, iter([batch(rows[:4])]), 0, 0),
             write_task(this, iter([batch(rows[4:])]), 1, 0)]
    # Spark plans the committing writer again, after the tasks ran
    commit_batch(plan_stream(WriteOptions.of({"path": table}), FRAME, False),
                 [Written(f, QUERY, this) for f in files], n)


if __name__ == "__main__":
    main(*sys.argv[1:3])
