"""Work spread over Spark's executors: ``validate --spark`` and ``ls --spark``.

The driver lists the tree (one recursive listing) and finds the tables and partitions; the
executors take shares of partitions and do what is costly, the same functions as the
local run (``validate``'s footer reads, row scans and partition rules; ``ls``'s marker reads
and getAcidState); the driver gathers their answers, judges the table-wide rules and renders.
So the findings, their order and the exit status are those of the run without ``--spark``.

Executors reach storage the way the local run does (pyarrow and fsspec), so every node needs
acidtool (``pip install acidtool``, or shipped with ``--py-files``: docs/scale.md).
"""

from __future__ import annotations

import sys
import threading
from typing import Callable, Iterator, Sequence


def spark_map(work: Callable, chunks: Sequence, master: str | None, *,
              tick: Callable[[int], None] | None = None, verbose: bool = False
              ) -> Iterator[tuple[int, object]]:
    """``work(chunk)`` for every chunk, one Spark task each; (index, result) in chunk order.
    ``tick(n)`` is told of the units (the chunks' items) of tasks as they finish (an
    accumulator the driver polls)."""
    from .convert_spark import session, spark_problem

    problem = spark_problem()
    if problem:
        from ..core.errors import UsageError

        raise UsageError(problem)
    spark = session(master, verbose)
    sc = spark.sparkContext
    done = sc.accumulator(0)

    def task(item):
        index, chunk = item
        out = work(chunk)
        done.add(len(chunk))
        return index, out

    rdd = sc.parallelize(list(enumerate(chunks)), numSlices=max(1, len(chunks)))
    results: list = []
    failure: list[BaseException] = []

    def job() -> None:
        try:
            results.extend(rdd.map(task).collect())
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            failure.append(exc)

    runner = threading.Thread(target=job, name="acidtool-spark-job", daemon=True)
    runner.start()
    seen = 0
    while runner.is_alive():
        runner.join(0.5)
        if tick is not None and done.value != seen:
            tick(done.value - seen)
            seen = done.value
    if failure:
        raise _one_line(failure[0])
    total = sum(len(c) for c in chunks)
    if tick is not None and total != seen:
        tick(total - seen)
    yield from sorted(results, key=lambda r: r[0])


def _one_line(exc: BaseException) -> BaseException:
    """A task's own error out of Spark's wrapping: acidtool's typed errors keep their class."""
    text = str(exc)
    for line in text.splitlines():
        if "acidtool.core.errors." in line or "PathError" in line:
            from ..core.errors import PathError

            return PathError(line.split(":", 1)[-1].strip())
    print(f"acidtool: the Spark job failed: {text.splitlines()[0] if text else exc!r}",
          file=sys.stderr)
    return exc


def chunked(units: list, parallelism: int, most: int | None = None) -> list[list]:
    """Four shares a task slot: enough to even out the slots, few enough that a task's fixed
    cost (scheduling, the closure's shipping, the answer's) stays small next to its work;
    ``most`` units in a share at most."""
    size = max(1, -(-len(units) // max(1, parallelism * 4)))
    if most:
        size = min(size, most)
    return [units[i:i + size] for i in range(0, len(units), size)]


def parallelism(master: str | None) -> int:
    from .convert_spark import session

    return session(master).sparkContext.defaultParallelism

