"""Benchmark for issue #3: ``acidtool dump`` on a 5,000,000-row ACID file.

Prints, from one run:
  (a) ``acidtool dump FILE > /dev/null`` time over a bare ``pyarrow.orc`` decode of the same
      file (target: at most 3x);
  (b) the speed-up over a naive pyorc-row-plus-``json.dumps`` loop (target: at least 5x; the
      loop is timed on the first 500,000 rows and scaled, to keep the run short);
  (c) the dump's peak memory (target: under 400 MB), and again for 10,000,000 rows (target: no
      higher).

Usage: python benchmarks/bench_dump.py [--rows N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as paorc
import pyorc


def acid_table(n: int, seed: int = 1) -> pa.Table:
    ids = pa.array(range(seed, seed + n), pa.int64())
    mix = pc.bit_wise_and(pc.multiply(ids, 2654435761), 0xFFFFFFFFFF)  # deterministic scramble
    row = pa.StructArray.from_arrays(
        [pc.cast(pc.bit_wise_and(ids, 0x7FFFFF), pa.int32()),
         pc.multiply(mix, 7),
         pc.binary_join_element_wise("customer-", pc.cast(pc.bit_wise_and(ids, 0xFFFF),
                                                          pa.string()), ""),
         pc.if_else(pc.equal(pc.bit_wise_and(ids, 3), 0), "pending", "shipped"),
         pc.divide(pc.cast(pc.bit_wise_and(mix, 0xFFFFF), pa.float64()), 100.0)],
        names=["id", "amount_cents", "customer", "status", "price"])
    zeros = pa.array([0] * n, pa.int32())
    return pa.table({
        "operation": zeros,
        "originalTransaction": pa.array([7] * n, pa.int64()),
        "bucket": pa.array([536870912] * n, pa.int32()),
        "rowId": pc.subtract(ids, seed),
        "currentTransaction": pa.array([7] * n, pa.int64()),
        "row": row,
    })


def write(path: Path, n: int) -> None:
    chunk = 1_000_000
    tables = [acid_table(min(chunk, n - start), seed=start) for start in range(0, n, chunk)]
    table = pa.concat_tables(tables)
    paorc.write_table(table, str(path), compression="zlib")


def child_peak_mb(cmd: list[str]) -> tuple[float, float]:
    """Wall time and peak RSS (MB) of a child process."""
    code = ("import resource, subprocess, sys, time, json\n"
            "t = time.perf_counter()\n"
            f"subprocess.run({cmd!r}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, "
            "check=True)\n"
            "print(json.dumps([time.perf_counter() - t, "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    elapsed, peak = json.loads(out.stdout)
    return elapsed, peak


def bare_decode(path: Path) -> float:
    t = time.perf_counter()
    f = paorc.ORCFile(str(path))
    for i in range(f.nstripes):
        f.read_stripe(i)
    return time.perf_counter() - t


def naive(path: Path, limit: int) -> float:
    t = time.perf_counter()
    with open(path, "rb") as fh, open(os.devnull, "w") as sink:
        reader = pyorc.Reader(fh, struct_repr=pyorc.StructRepr.DICT)
        for i, row in enumerate(reader):
            if i >= limit:
                break
            sink.write(json.dumps(row, separators=(",", ":")) + "\n")
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--skip-10m", action="store_true")
    args = parser.parse_args()
    dump = [sys.executable, "-m", "acidtool", "dump"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bucket_00000"
        write(path, args.rows)
        print(f"{args.rows:,} rows, {path.stat().st_size / 1e6:.0f} MB of ORC")
        # in turns, so that a busy spell of the machine does not land on one side only
        bare, (elapsed, peak) = float("inf"), (float("inf"), 0.0)
        for _ in range(3):
            bare = min(bare, bare_decode(path))
            elapsed, peak = min((elapsed, peak), child_peak_mb(dump + [str(path)]))
        print(f"(a) dump {elapsed:.2f} s, bare pyarrow decode {bare:.2f} s: "
              f"RATIO {elapsed / bare:.2f}x (target <= 3x)")
        sample = min(500_000, args.rows)
        t_naive = naive(path, sample) * args.rows / sample
        print(f"(b) naive pyorc + json.dumps: {t_naive:.1f} s (from {sample:,} rows): "
              f"SPEED-UP {t_naive / elapsed:.1f}x (target >= 5x)")
        print(f"(c) peak memory {peak:.0f} MB (target < 400 MB)")
        if not args.skip_10m:
            big = Path(tmp) / "bucket_00001"
            write(big, 2 * args.rows)
            _, peak2 = child_peak_mb(dump + [str(big)])
            print(f"    {2 * args.rows:,} rows: peak memory {peak2:.0f} MB "
                  f"(target: no higher than {peak:.0f} MB, +10% noise)")


if __name__ == "__main__":
    main()
