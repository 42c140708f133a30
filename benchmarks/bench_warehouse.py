"""Benchmark for issue #20: ``validate --recursive`` over a generated warehouse of at least
100,000 files in 1,000 partitions, with ``--jobs`` (processes on this machine) and with
``--spark`` on local[2].

Prints the per-file cost of each, Spark's start-up cost separately (the session is started
and timed before the Spark run), and the ratio of Spark's per-file cost beyond its start-up to
``--jobs``'s, measured in the same run: target at most 1.5x on this 2-core machine, where Spark
cannot be faster. ``--files N`` makes a smaller warehouse for a quick look.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_validate import bucket_files  # noqa: E402

from acidtool.commands.check.validate import ValidateOptions, validate  # noqa: E402

DELTAS, BUCKETS, PARTITIONS_PER_TABLE = 10, 10, 10  # 100 files a partition


def build(root: Path, files: int) -> int:
    """Tables of 10 partitions of 10 deltas of 10 buckets (the same small ORC file bytes)."""
    blobs = bucket_files(DELTAS, BUCKETS)
    per_table = DELTAS * BUCKETS * PARTITIONS_PER_TABLE
    written = 0
    for t in range(max(1, files // per_table)):
        for p in range(PARTITIONS_PER_TABLE):
            for w in range(1, DELTAS + 1):
                d = root / f"db{t % 10}.db" / f"t{t:04d}" / f"ds={p:02d}" / \
                    f"delta_{w:07d}_{w:07d}_0000"
                d.mkdir(parents=True)
                (d / "_orc_acid_version").write_bytes(b"2")
                for b in range(BUCKETS):
                    (d / f"bucket_{b:05d}").write_bytes(blobs[(w, b)])
                    written += 1
    return written


def timed(work) -> tuple[float, object]:
    start = time.perf_counter()
    out = work()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "warehouse"
        built, n = timed(lambda: build(root, args.files))
        partitions = n // (DELTAS * BUCKETS)
        print(f"warehouse: {n:,} files in {partitions:,} partitions "
              f"({partitions // PARTITIONS_PER_TABLE:,} tables), built in {built:.0f} s")
        local, report = timed(lambda: validate([str(root)], ValidateOptions(
            recursive=True, jobs=args.jobs)))
        assert report.files == n, report.files
        print(f"validate -r --jobs {args.jobs}: {local:.1f} s, "
              f"{local / n * 1e6:.0f} us a file")
        from acidtool.io.spark import session

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        startup, spark = timed(lambda: session("local[2]"))
        # the executors' Python workers start, and import acidtool, at their first task: a
        # fixed cost per executor, counted with the start-up (a one-table warm-up run)
        first = root / "db0.db" / "t0000"
        warmup, _ = timed(lambda: validate([str(first)], ValidateOptions(
            jobs=args.jobs, spark=True, master="local[2]")))
        print(f"Spark start-up (local[2]): {startup:.1f} s session, {warmup:.1f} s the "
              "executors' first task (Python workers, imports)")
        on_spark, spark_report = timed(lambda: validate([str(root)], ValidateOptions(
            recursive=True, jobs=args.jobs, spark=True, master="local[2]")))
        assert spark_report.findings == report.findings
        print(f"validate -r --spark (local[2]), start-up excluded: {on_spark:.1f} s, "
              f"{on_spark / n * 1e6:.0f} us a file")
        print(f"ratio --spark / --jobs {args.jobs} per file: {on_spark / local:.2f}x "
              "(target <= 1.5x)")
        spark.stop()


if __name__ == "__main__":
    main()
