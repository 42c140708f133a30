"""Benchmark for issue #41: the default read of a table of many small files (an uncompacted
streaming table) takes the ``hiveacid`` source, which opens a file faster than Spark does
(``NativePlan.slower``, FILES_PAST).

A table of 1,000 deltas of 5 rows each, no deletes, local[2], read whole and consumed by a hash of
every column: Spark's own plan (``native=True``) and the source (``native=False``) in turns, in one
session, three times each after one read of each; the default's choice is printed. Prints each
side's times and the ratio of the medians (Spark's plan / the source: above 1, the source is the
faster, and the default should take it).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acidtool.core.bucket import encode_v1  # noqa: E402
from acidtool.io.acidwrite import Event, write_acid_file  # noqa: E402

DELTAS, ROWS, RUNS = 1000, 5, 3


def build(root: Path) -> None:
    for w in range(1, DELTAS + 1):
        d = root / f"delta_{w:07d}_{w:07d}_0000"
        d.mkdir(parents=True)
        with open(d / "bucket_00000", "wb") as f:
            write_acid_file(f, "struct<id:int,name:string>",
                            [Event(0, w, encode_v1(0), i, w, (i, f"n{i}")) for i in range(ROWS)])
        (d / "_orc_acid_version").write_bytes(b"2")


def main() -> None:
    from pyspark.sql import functions as F

    from acidtool.spark import read_table_and_why, session

    spark = session("local[2]")

    def read(path: str, native: bool | None) -> float:
        started = time.perf_counter()
        df, _ = read_table_and_why(spark, path, native=native)
        df.select(F.sum(F.hash(*df.columns))).collect()
        return time.perf_counter() - started

    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "t"
        build(table)
        path = str(table)
        why = read_table_and_why(spark, path)[1]
        print("the default:", why or "Spark's own plan")
        read(path, True), read(path, False)  # each side's first read (Spark's, the source's)
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(RUNS):
            for native in (True, False):
                times[native].append(read(path, native))
    for native, label in ((True, "Spark's own plan"), (False, "the hiveacid source")):
        print(f"{DELTAS} deltas of {ROWS} rows, {label}: "
              + ", ".join(f"{t:.2f}" for t in times[native]) + " s")
    ratio = statistics.median(times[True]) / statistics.median(times[False])
    print(f"RATIO Spark's plan / the source: {ratio:.2f}x (above 1: the source is faster)")


if __name__ == "__main__":
    main()
