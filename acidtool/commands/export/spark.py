"""``acidtool export --to iceberg --spark``: the same export, its groups of units on Spark's
executors.

The driver plans as without ``--spark`` (the Hive table listed once, the units of the
``hiveacid`` source's read plan, the Iceberg table's files by partition) and opens the
commit. Each Spark task reads its group with the ``hiveacid`` source's reader (a new table:
one unit, a bucket of a partition; an incremental export: one partition, with that
partition's Iceberg files) and writes its Parquet data files with pyiceberg's writer, as the
driver would, straight into the table's location; it hands back the files it wrote and
dropped. The driver then makes the one commit, or removes every file any task wrote.

Spark's own Iceberg runtime is not used: no ``iceberg-spark-runtime`` that Maven Central
serves loads in Spark 4.2 or later (4.1 is the newest line), and this way the rows never pass
through the driver on any Spark. Executors reach the Iceberg table's files through pyiceberg's
FileIO, as they reach the Hive table's through acidtool's.
"""

from __future__ import annotations

import functools

from .rows import Job
from .run import Counts, ExportOptions, ExportPlan, ExportResult, ExportWork, run_group


def run_export_spark(plan: ExportPlan, work: ExportWork, opts: ExportOptions, master: str,
                     dry_run: bool, progress=None) -> ExportResult | None:
    from ...io.spark_jobs import spark_map
    from .run import run_export

    if dry_run:
        return None
    total = len(work.read_plan.units)
    seen = [0]

    def tick(n: int) -> None:
        seen[0] += n
        if progress is not None:
            progress(seen[0], total)

    def runner(job: Job, groups: list) -> list:
        if plan.action == "create":  # a new table: every unit a task of its own
            groups = [([u], None) for units, _ in groups for u in units]
        outcomes: list = []
        for _, out in spark_map(functools.partial(export_share, job), groups, master or None,
                                most=1, tick=None if progress is None else tick):
            outcomes.extend(out)
        return outcomes

    return run_export(plan, work, opts, None, runner)


def export_share(job: Job, share: list) -> list[tuple[list, list, Counts, BaseException | None]]:
    """On an executor: each group of the share written; its files, or its error (the files
    a failed group wrote are removed here, those of the others go back to the driver)."""
    from ...core.errors import AcidToolError
    from ...io.iceberg import FileWriter

    out: list[tuple[list, list, Counts, BaseException | None]] = []
    for units, tasks in share:
        writer = FileWriter(job.metadata, job.io)
        try:
            counts = run_group(writer, job, units, tasks)
        except AcidToolError as exc:
            writer.remove_written()
            out.append(([], [], Counts(), exc))
            continue
        except BaseException:
            writer.remove_written()
            raise
        out.append((writer.written, writer.dropped, counts, None))
    return out
