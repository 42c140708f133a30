"""Benchmark for issue #42: ``AcidTable.update`` of 1% of a table's rows against the same Spark
job writing those rows with ``df.write.orc`` (read the table, filter, project, write), on the
table ``bench_spark_read.build`` makes (10,000,000 rows in 4 buckets, every tenth deleted), in
one Spark session (local[2]), each measured twice in the same run, the best of each kept.
Target: at most 1.5x.

Usage: python benchmarks/bench_dml.py [--rows N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_spark_read import build  # noqa: E402

CONDITION = "id % 100 = 7"
SET = {"status": "upper(status)", "price": "price * 2"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import functions as F

    from acidtool.spark import AcidTable, read_table, session

    tmp = Path(tempfile.mkdtemp(prefix="bench-dml-"))
    try:
        root = tmp / "t"
        build(root, args.rows)
        spark = session("local[2]")
        times: dict[str, list[float]] = {"plain": [], "acidtool": []}
        for i in range(2):
            out = str(tmp / f"plain-{i}")
            start = time.perf_counter()
            df = read_table(spark, str(root), hive_version=3)
            df.where(CONDITION).select(*[F.expr(SET[c]).alias(c) if c in SET else F.col(c)
                                         for c in df.columns]).write.orc(out)
            times["plain"].append(time.perf_counter() - start)
            shutil.rmtree(out)
            copy = tmp / f"copy-{i}"
            shutil.copytree(root, copy)
            start = time.perf_counter()
            result = AcidTable.for_path(spark, str(copy), hive_version=3).update(
                CONDITION, set=SET, write_id=3)
            times["acidtool"].append(time.perf_counter() - start)
            changed = result["updated"]
            shutil.rmtree(copy)
        t_plain, t_ours = min(times["plain"]), min(times["acidtool"])
        print(f"{args.rows:,} rows, {changed:,} updated ({CONDITION})")
        print(f"read_table + where + write.orc of the changed rows: {t_plain:.1f} s")
        print(f"AcidTable.update: {t_ours:.1f} s: RATIO {t_ours / t_plain:.2f}x (target <= 1.5x)")
        spark.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
