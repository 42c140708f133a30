"""A ``hiveacid`` write without Spark, for kill tests: the driver's plan, two tasks' writes and
the driver's commit, in one process (``python -m tests.helpers.sourcejob TABLE WRITE_ID``).
Rows 0..5 go to partitions ds=2, ds=3 and a new ds=4 (two each), by the rows' own ds."""

from __future__ import annotations

import sys

import pyarrow as pa

FRAME = pa.schema([("id", pa.int32()), ("name", pa.string()), ("ds", pa.string())])
ROWS = [(i, f"w{i}", str(2 + i % 3)) for i in range(6)]


def batch(rows) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([dict(zip(FRAME.names, r)) for r in rows], schema=FRAME)


def main(table: str, write_id: str) -> None:
    from acidtool.hiveacid.job import commit_job, plan_write
    from acidtool.hiveacid.write import write_task
    from acidtool.table.options import WriteOptions

    job = plan_write(WriteOptions.of({"path": table, "writeId": write_id}), FRAME, False)
    files = write_task(job, iter([batch(ROWS[:3])]), 0, 0) + \
        write_task(job, iter([batch(ROWS[3:])]), 1, 0)
    commit_job(job, files)


if __name__ == "__main__":
    main(*sys.argv[1:3])
