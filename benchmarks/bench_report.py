"""Benchmark for issue #30: ``acidtool report -r`` of a warehouse of 10,000 partitions (1,000
tables of 10 partitions, each partition 2 deltas of 2 bucket files: 40,000 files) against
``acidtool validate -r`` of the same warehouse, each a child process, measured in the same run
(the fastest of 5 runs each). Target: at most 1.2x. Also prints the size of the HTML file.
Then the same for one table of 10,000 partitions (``report TABLE`` against ``validate TABLE``),
of which the report draws 12.

Usage: python benchmarks/bench_report.py [--partitions N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_validate import bucket_files  # noqa: E402


def build(root: Path, partitions: int, per_table: int = 10) -> None:
    blobs = bucket_files(2, 2)
    for i in range(partitions):
        t, p = divmod(i, per_table)
        for w in (1, 2):
            d = root / f"db{t % 10}.db" / f"t{t:04d}" / f"ds={p:05d}" / \
                f"delta_{w:07d}_{w:07d}_0000"
            d.mkdir(parents=True)
            for b in range(2):
                (d / f"bucket_{b:05d}").write_bytes(blobs[(w, b)])


def timed(*args: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "acidtool", *args], capture_output=True,
                          text=True)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for per_table, recursive in ((10, ["-r"]), (args.partitions, [])):
            root = Path(tmp) / f"warehouse{per_table}"
            build(root, args.partitions, per_table)
            target = root if recursive else next(root.glob("*.db/*"))
            out = Path(tmp) / "report.html"
            runs: dict[str, list[float]] = {"validate": [], "report": []}
            for _ in range(5):
                runs["validate"].append(timed("validate", str(target), *recursive,
                                              "--format", "json"))
                runs["report"].append(timed("report", str(target), *recursive, "-o", str(out)))
            t_validate, t_report = min(runs["validate"]), min(runs["report"])
            tables = args.partitions // per_table
            shape = (f"{tables:,} table{'s' if tables > 1 else ''} of {per_table:,} "
                     f"partitions, {args.partitions * 4:,} files")
            flag = " -r" if recursive else ""
            print(shape)
            print(f"  validate{flag}: {t_validate:.2f} s")
            print(f"  report{flag} -o report.html: {t_report:.2f} s "
                  f"({out.stat().st_size / 1e6:.1f} MB)")
            print(f"  RATIO: {t_report / t_validate:.2f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
