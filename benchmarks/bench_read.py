"""Benchmark for issue #5: ``acidtool read --format parquet`` on a base of 5,000,000 rows, 10
insert deltas of 100,000 rows and delete deltas holding 500,000 deletes.

Prints the read time over a plain pyarrow scan-and-write of the same files to Parquet without
delete handling, measured in the same run (target: at most 2x), and the read's peak memory
(target: under 1.5 GB).

With --memory (issue #21): on a base of 10,000,000 rows and 1,000,000 deletes, the peak memory
of `read` without a limit, with `--memory-limit 256M` (target: at most 600 MB) and with
`--limit 10`, each as a ratio to the peak of a bare pyarrow scan of the same files measured in
the same run.

Usage: python benchmarks/bench_read.py [--base-rows N] [--memory]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.orc as paorc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dump import acid_table, child_peak_mb  # noqa: E402


def with_ids(t: pa.Table, wid: int, start: int = 0) -> pa.Table:
    n = t.num_rows
    return t.set_column(1, "originalTransaction", pa.array([wid] * n, pa.int64())) \
        .set_column(3, "rowId", pa.array(range(start, start + n), pa.int64())) \
        .set_column(4, "currentTransaction", pa.array([wid] * n, pa.int64()))


def build(root: Path, base_rows: int) -> list[Path]:
    files = []

    def put(rel: str, table: pa.Table):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        paorc.write_table(table, str(path), compression="zlib")
        (path.parent / "_orc_acid_version").write_bytes(b"2")
        files.append(path)

    chunks = [with_ids(acid_table(min(1_000_000, base_rows - s), seed=s), 1, s)
              for s in range(0, base_rows, 1_000_000)]
    put("base_0000001/bucket_00000", pa.concat_tables(chunks))
    for w in range(2, 12):
        put(f"delta_{w:07d}_{w:07d}_0000/bucket_00000", with_ids(acid_table(100_000, seed=w), w))
    deletes = base_rows // 10
    for i, w in enumerate((12, 13)):
        row_ids = pa.array(range(i, deletes * 2, 2), pa.int64()) if False else \
            pc.multiply(pa.array(range(i * deletes // 2, (i + 1) * deletes // 2), pa.int64()), 10)
        n = len(row_ids)
        put(f"delete_delta_{w:07d}_{w:07d}_0000/bucket_00000", pa.table({
            "operation": pa.array([2] * n, pa.int32()),
            "originalTransaction": pa.array([1] * n, pa.int64()),
            "bucket": pa.array([536870912] * n, pa.int32()),
            "rowId": row_ids,
            "currentTransaction": pa.array([w] * n, pa.int64()),
            "row": pa.array([None] * n, acid_table(1).schema.field("row").type),
        }))
    return files


def baseline(files: list[Path], out: Path) -> float:
    t = time.perf_counter()
    writer = None
    for f in files:
        if "delete_delta" in str(f):
            continue
        for batch in ds.dataset(str(f), format="orc").to_batches(batch_size=1 << 20):
            row = batch.column("row")
            flat = pa.table({field.name: row.field(i) for i, field in enumerate(row.type)})
            writer = writer or pq.ParquetWriter(str(out), flat.schema)
            writer.write_table(flat)
    writer.close()
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-rows", type=int, default=5_000_000)
    parser.add_argument("--memory", action="store_true")
    args = parser.parse_args()
    if args.memory:
        return memory()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "orders"
        files = build(root, args.base_rows)
        expected = args.base_rows + 1_000_000 - args.base_rows // 10
        t_base = min(baseline(files, Path(tmp) / "plain.parquet") for _ in range(2))
        out = Path(tmp) / "acid.parquet"
        cmd = [sys.executable, "-m", "acidtool", "read", str(root), "--format", "parquet",
               "-o", str(out)]
        elapsed, peak = min(child_peak_mb(cmd) for _ in range(2))
        rows = pq.ParquetFile(str(out)).metadata.num_rows
        assert rows == expected, (rows, expected)
        print(f"base {args.base_rows:,} rows + 10 x 100,000 inserted - "
              f"{args.base_rows // 10:,} deleted = {rows:,} rows")
        print(f"plain pyarrow scan + Parquet write (no deletes): {t_base:.2f} s")
        print(f"acidtool read --format parquet: {elapsed:.2f} s: RATIO {elapsed / t_base:.2f}x "
              f"(target <= 2x)")
        print(f"peak memory {peak:.0f} MB (target < 1536 MB)")


def memory() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "orders"
        files = build(root, 10_000_000)
        scan = ("import pyarrow.dataset as ds, sys\n"
                "for f in sys.argv[1:]:\n"
                "    for b in ds.dataset(f, format='orc').to_batches(batch_size=1 << 20, "
                "batch_readahead=0, fragment_readahead=0): pass\n")
        _, bare = child_peak_mb([sys.executable, "-c", scan, *map(str, files)])
        print(f"10,000,000 rows, 1,000,000 deletes; bare pyarrow scan of the files: "
              f"peak {bare:.0f} MB")
        out = Path(tmp) / "acid.parquet"
        for label, extra, target in (("read", [], ""),
                                     ("read --memory-limit 256M", ["--memory-limit", "256M"],
                                      " (target <= 600 MB)"),
                                     ("read --limit 10", ["--limit", "10"], "")):
            cmd = [sys.executable, "-m", "acidtool", "read", str(root), "--format", "parquet",
                   "-o", str(out), *extra]
            elapsed, peak = child_peak_mb(cmd)
            print(f"{label}: {elapsed:.2f} s, peak {peak:.0f} MB: RATIO {peak / bare:.2f}x "
                  f"the bare scan's{target}")


if __name__ == "__main__":
    main()
