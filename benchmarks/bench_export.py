"""Benchmark for issue #31: ``acidtool export --to iceberg`` of a table of 10,000,000 rows in its
base (plus 10 deltas of 100,000) with 1,000,000 deletes, against ``acidtool read --format
parquet -o`` of the same table, measured in the same run (target: at most 1.3x). Both are run
as the real command, each the best of two runs; the export goes into a new local catalog each
time. For what the ratio is made of, it also prints ``read --with-row-id`` (the export's
columns: the ROW__ID too) and the time a process takes to import pyiceberg and SQLAlchemy.

With ``--spark`` it measures ``export --spark`` instead (local[2]): ``--native`` (a new table by
Spark's own reader and Parquet writer) against ``read --spark --with-row-id --format parquet -o
DIR`` (the same rows and columns, by the same plan) and against ``--no-native`` (acidtool and
pyiceberg on the executors, the default on a local master).

Usage: python benchmarks/bench_export.py [--base-rows N] [--spark]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_read import build  # noqa: E402

TOOL = [sys.executable, "-m", "acidtool"]


def timed(args: list[str], before=None) -> float:
    best = float("inf")
    for _ in range(2):
        if before:
            before()
        t = time.perf_counter()
        proc = subprocess.run(TOOL + args, capture_output=True, text=True)
        elapsed = time.perf_counter() - t
        if proc.returncode != 0:
            sys.exit(f"{' '.join(args[:2])} failed: {proc.stderr.strip()}")
        best = min(best, elapsed)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-rows", type=int, default=10_000_000)
    parser.add_argument("--spark", action="store_true")
    args = parser.parse_args()
    if args.spark:
        return on_spark(args.base_rows)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        table = root / "t"
        build(table, args.base_rows)
        out = root / "rows.parquet"
        lake = root / "lake"
        read = timed(["read", str(table), "--format", "parquet", "-o", str(out)])
        read_mb = out.stat().st_size / 1e6
        with_ids = timed(["read", str(table), "--format", "parquet", "-o", str(out),
                          "--with-row-id"])
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import pyiceberg.catalog.sql, "
                        "pyiceberg.io.pyarrow"], check=True)
        imports = time.perf_counter() - t
        export = timed(["export", str(table), "--to", "iceberg", "--catalog", str(lake),
                        "--table", "bench.t"], lambda: shutil.rmtree(lake, ignore_errors=True))
        rows = args.base_rows + 1_000_000 - args.base_rows // 10
        files = sorted(lake.rglob("*.parquet"))
        size = sum(f.stat().st_size for f in files)
        print(f"export --to iceberg: {export:.2f} s for {rows:,} rows ({len(files)} data files, "
              f"{size / 1e6:.0f} MB)")
        print(f"read --format parquet -o: {read:.2f} s ({read_mb:.0f} MB)")
        print(f"read --with-row-id: {with_ids:.2f} s; importing pyiceberg: {imports:.2f} s")
        print(f"ratio: {export / read:.2f}x (target <= 1.3x); against read --with-row-id "
              f"{export / with_ids:.2f}x")


def on_spark(base_rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        table = root / "t"
        build(table, base_rows)
        out, lake = root / "rows", root / "lake"
        spark = ["--spark", "--master", "local[2]"]

        def fresh():
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(lake, ignore_errors=True)

        export = ["export", str(table), "--to", "iceberg", "--catalog", str(lake), "--table",
                  "bench.t", *spark]
        read = timed(["read", str(table), *spark, "--with-row-id", "--format", "parquet", "-o",
                      str(out)], fresh)
        native = timed([*export, "--native"], fresh)
        python = timed([*export, "--no-native"], fresh)
        print(f"export --spark --native (Spark's own parts): {native:.2f} s")
        print(f"export --spark --no-native (acidtool on the executors): {python:.2f} s")
        print(f"read --spark --with-row-id --format parquet -o: {read:.2f} s")
        print(f"ratio: --native {native / read:.2f}x read --spark, {native / python:.2f}x "
              f"--no-native")


if __name__ == "__main__":
    main()
