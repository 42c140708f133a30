"""Benchmark for issue #28: ``acidtool compact --major --apply`` of a base of 10,000,000 rows in
4 buckets with 1,000,000 deletes (a delete delta per bucket).

In process: against ``acidtool read --format orc --compression snappy -o`` of the same table
(the same merge, one file out), each a child process, measured in the same run; the compaction
writes SNAPPY (``--codec snappy``, as for a table whose ``orc.compress`` is SNAPPY), so both
sides pay the same codec (issue #41). Targets: at most 1.3x, peak memory at most 1 GB.

With --spark: ``compact --spark`` on local[2] (the library call, in the benchmark's own Spark
session) against a plain ``spark.read.orc(files).write.orc(...)`` of the same rows (no
snapshot, no deletes: Spark's ORC reader cannot read the ACID files themselves, so it reads a
plain copy written beside them), in the same session. Target: at most 1.5x.

Usage: python benchmarks/bench_compact.py [--rows N] [--spark]
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

from bench_dump import child_peak_mb  # noqa: E402
from bench_spark_read import BUCKETS, build  # noqa: E402


def compacted_rows(table: Path) -> int:
    import pyarrow.orc as paorc

    (base,) = [p for p in table.iterdir() if p.name.startswith("base_") and
               p.name != "base_0000001"]
    return sum(paorc.ORCFile(str(f)).nrows for f in base.glob("bucket_*"))


def in_process(tmp: Path, root: Path, expected: int) -> None:
    out = tmp / "read.orc"
    read = [sys.executable, "-m", "acidtool", "read", str(root), "--format", "orc",
            "--compression", "snappy", "-o", str(out)]
    times, peaks = {"read": [], "compact": []}, {"read": [], "compact": []}
    for i in range(2):
        elapsed, peak = child_peak_mb(read)
        times["read"].append(elapsed)
        peaks["read"].append(peak)
        out.unlink()
        copy = tmp / f"copy-{i}"
        shutil.copytree(root, copy)
        cmd = [sys.executable, "-m", "acidtool", "compact", str(copy), "--major", "--apply",
               "--codec", "snappy", "--journal", str(tmp / f"j{i}.jsonl")]
        elapsed, peak = child_peak_mb(cmd)
        times["compact"].append(elapsed)
        peaks["compact"].append(peak)
        assert compacted_rows(copy) == expected
        shutil.rmtree(copy)
    t_read, t_compact = min(times["read"]), min(times["compact"])
    peak = max(peaks["compact"])
    print(f"acidtool read --format orc --compression snappy -o: {t_read:.2f} s "
          f"(peak {max(peaks['read']):.0f} MB)")
    print(f"acidtool compact --major --apply --codec snappy: {t_compact:.2f} s: RATIO "
          f"{t_compact / t_read:.2f}x (target <= 1.3x)")
    print(f"compact peak memory {peak:.0f} MB (target <= 1024 MB)")


def on_spark(tmp: Path, root: Path, files: list[str], expected: int) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from acidtool.commands.compact.run import CompactOptions, compact
    from acidtool.io.spark import session
    from acidtool.table.target import resolve

    spark = session("local[2]")
    times: dict[str, list[float]] = {"plain": [], "acidtool": []}
    for i in range(2):
        out = str(tmp / f"plain-{i}")
        start = time.perf_counter()
        spark.read.orc(files).write.orc(out)
        times["plain"].append(time.perf_counter() - start)
        shutil.rmtree(out)
        copy = tmp / f"spark-copy-{i}"
        shutil.copytree(root, copy)
        start = time.perf_counter()
        result = compact(resolve(str(copy)), CompactOptions(
            "major", journal=str(tmp / f"s{i}.jsonl"), spark="local[2]"))
        times["acidtool"].append(time.perf_counter() - start)
        assert result.ok and compacted_rows(copy) == expected
        shutil.rmtree(copy)
    t_plain, t_ours = min(times["plain"]), min(times["acidtool"])
    print(f"spark.read.orc(...).write.orc, no deletes: {t_plain:.1f} s")
    print(f"compact --major --spark: {t_ours:.1f} s: RATIO {t_ours / t_plain:.2f}x "
          f"(target <= 1.5x)")
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--spark", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "orders"
        files = build(root, args.rows)
        expected = args.rows - args.rows // 10
        print(f"{args.rows:,} rows, {args.rows // 10:,} deletes, {BUCKETS} buckets")
        if args.spark:
            on_spark(Path(tmp), root, files, expected)
        else:
            in_process(Path(tmp), root, expected)


if __name__ == "__main__":
    main()
