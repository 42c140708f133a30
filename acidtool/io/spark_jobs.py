"""Work spread over Spark's executors: ``validate``, ``ls`` and ``compaction-plan`` with
``--spark``.

The driver finds the tables and partitions (with ``--recursive``, listing directories down to
the partitions only); the executors take shares of partitions and do what is costly, with the
same functions as the local run (listing the partitions, ``validate``'s footer reads, row scans
and partition rules, getAcidState, the Initiator's decision); the driver gathers their answers,
judges the table-wide rules and renders. So the output, its order and the exit status are
those of the run without ``--spark``.

Executors reach storage the way the local run does (pyarrow and fsspec), so every node needs
acidtool (``pip install acidtool``, or shipped with ``--py-files``: docs/scale.md).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator


def spark_map(work: Callable[[list], Any], units: list, master: str | None, *,
              most: int | None = None, tick: Callable[[int], None] | None = None,
              verbose: bool = False) -> Iterator[tuple[list, Any]]:
    """``units`` cut into shares (``chunked``), ``work(share)`` one Spark task each;
    (share, result) in the units' order. ``tick(n)`` is told of the units of tasks as they
    finish (an accumulator the driver polls). An acidtool error a task raises is raised here,
    as it is: its class says the exit status."""
    from ..core.errors import AcidToolError
    from .spark import require_spark, session

    require_spark()
    sc = session(master, verbose).sparkContext
    chunks = chunked(units, sc.defaultParallelism, most)
    done = sc.accumulator(0)

    def task(item):
        index, chunk = item
        try:
            out = work(chunk)
        except AcidToolError as exc:  # a value back to the driver, not Spark's wrapped text
            return index, None, exc
        done.add(len(chunk))
        return index, out, None

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
        raise failure[0]
    results.sort(key=lambda r: r[0])
    for _, _, error in results:
        if error is not None:
            raise error
    if tick is not None and len(units) != seen:
        tick(len(units) - seen)
    for index, out, _ in results:
        yield chunks[index], out


def chunked(units: list, parallelism: int, most: int | None = None) -> list[list]:
    """Four shares a task slot: enough to even out the slots, few enough that a task's fixed
    cost (scheduling, the closure's shipping, the answer's) stays small next to its work;
    ``most`` units in a share at most."""
    size = max(1, -(-len(units) // max(1, parallelism * 4)))
    if most:
        size = min(size, most)
    return [units[i:i + size] for i in range(0, len(units), size)]
