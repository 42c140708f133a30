"""Benchmark for issue #20: ``read --spark`` (``acidtool.spark.read_table`` written as Parquet)
on a base of 10,000,000 rows in 4 buckets with 1,000,000 deletes, on local[2], against a plain
``spark.read.orc(files).write.parquet(...)`` of the same rows (no snapshot, no deletes),
measured in the same run with the same session. Target: at most 1.5x.

Spark's ORC reader cannot read the ACID files themselves (ORC's schema evolution takes a file
with the five ACID columns and ``row`` for an ACID file and fails with a ClassCastException,
whatever schema Spark asks for): the baseline reads a plain copy of the same rows, written
beside them with the same compression, one file per bucket.

Usage: python benchmarks/bench_spark_read.py [--rows N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as paorc

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_dump import acid_table  # noqa: E402

from acidtool.core.bucket import encode_v1  # noqa: E402

BUCKETS = 4


def build(root: Path, rows: int) -> list[str]:
    """base_0000001 with BUCKETS bucket files and a delete delta removing every tenth row; the
    plain copies of the rows (the baseline's files)."""
    files = []
    per = rows // BUCKETS
    for b in range(BUCKETS):
        prop = encode_v1(b, 0)
        chunks = []
        for s in range(0, per, 1_000_000):
            t = acid_table(min(1_000_000, per - s), seed=b * per + s)
            n = t.num_rows
            t = t.set_column(1, "originalTransaction", pa.array([1] * n, pa.int64())) \
                .set_column(2, "bucket", pa.array([prop] * n, pa.int32())) \
                .set_column(3, "rowId", pa.array(range(s, s + n), pa.int64())) \
                .set_column(4, "currentTransaction", pa.array([1] * n, pa.int64()))
            chunks.append(t)
        path = root / "base_0000001" / f"bucket_{b:05d}"
        path.parent.mkdir(parents=True, exist_ok=True)
        events = pa.concat_tables(chunks)
        paorc.write_table(events, str(path), compression="zlib")
        row = events.column("row").combine_chunks()
        copy = root.parent / "plain" / f"part-{b:05d}.orc"
        copy.parent.mkdir(parents=True, exist_ok=True)
        paorc.write_table(pa.table({f.name: row.field(i) for i, f in enumerate(row.type)}),
                          str(copy), compression="zlib")
        files.append(str(copy))
        row_ids = pc.multiply(pa.array(range(per // 10), pa.int64()), 10)
        n = len(row_ids)
        dpath = root / "delete_delta_0000002_0000002_0000" / f"bucket_{b:05d}"
        dpath.parent.mkdir(parents=True, exist_ok=True)
        paorc.write_table(pa.table({
            "operation": pa.array([2] * n, pa.int32()),
            "originalTransaction": pa.array([1] * n, pa.int64()),
            "bucket": pa.array([prop] * n, pa.int32()), "rowId": row_ids,
            "currentTransaction": pa.array([2] * n, pa.int64()),
            "row": pa.array([None] * n, acid_table(1).schema.field("row").type)}), str(dpath))
    for d in ("base_0000001", "delete_delta_0000002_0000002_0000"):
        (root / d / "_orc_acid_version").write_bytes(b"2")
    return files


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from acidtool.io.spark import session
    from acidtool.spark import read_table

    spark = session("local[2]")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "orders"
        files = build(root, args.rows)
        expected = args.rows - args.rows // 10

        def plain(out):
            spark.read.orc(files).write.parquet(out)

        def ours(out):
            read_table(spark, str(root)).write.parquet(out)

        times = {"plain": [], "acidtool": []}
        for i in range(2):
            for name, run in (("plain", plain), ("acidtool", ours)):
                out = str(Path(tmp) / f"{name}-{i}")
                start = time.perf_counter()
                run(out)
                times[name].append(time.perf_counter() - start)
                if name == "acidtool":
                    n = spark.read.parquet(out).count()
                    assert n == expected, (n, expected)
                shutil.rmtree(out)
        t_plain, t_ours = min(times["plain"]), min(times["acidtool"])
        print(f"{args.rows:,} rows, {args.rows // 10:,} deletes, {BUCKETS} buckets, local[2]")
        print(f"spark.read.orc(...).write.parquet, no deletes: {t_plain:.1f} s")
        print(f"read --spark (read_table(...).write.parquet): {t_ours:.1f} s")
        print(f"ratio: {t_ours / t_plain:.2f}x (target <= 1.5x)")
    spark.stop()


if __name__ == "__main__":
    main()
