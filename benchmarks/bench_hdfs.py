"""Benchmark for issue #19: ``ls`` and ``validate`` of a table on a real HDFS (MiniDFSCluster on
127.0.0.1, reached through WebHDFS) against the bare work through the same client.

A table of FILES ACID files (one small bucket file per delta) is written to the local disk and
copied into HDFS in one call inside the JVM. Then, each measured in this run:

* the bare listing: fsspec's WebHDFS ``find`` of the table, and ``acidtool ls --format json``:
  RATIO ls/listing (target as on a local disk: at most 2x);
* the bare footer loop: for every file, open it and read its last 16 KiB through the same client,
  on 8 threads, and ``acidtool validate --level metadata --jobs 8``: RATIO validate/footer loop
  (target as on a local disk, where validate --jobs 8 is < 1x the bare loop: here at most 1.5x);
* the latency of one call (GETFILESTATUS), which all of it is made of.

Usage: python benchmarks/bench_hdfs.py [--files N] (needs Java and the jars that ``make test``
fetches into ~/.m2). The default is 2,000 files, not the issue's 20,000: the minicluster takes
about 0.22 s to create each file (measured: 2,000 in 435-447 s, replication 1 or not), so 20,000
would spend over an hour before the first measurement. The ratios are per file and do not depend
on the count (500 files gave the same ratios as 2,000)."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acidtool.cli.main import main as cli_main  # noqa: E402
from acidtool.io.acidwrite import Event, write_acid_file  # noqa: E402
from tests.helpers.hivejvm import fetch  # noqa: E402
from tests.helpers.minidfs import ARTIFACTS, MiniDFS  # noqa: E402


def build(root: Path, n: int) -> None:
    buf = io.BytesIO()
    write_acid_file(buf, "struct<id:int>", [Event(0, 1, 536870912, 0, 1, (1,))])
    data = buf.getvalue()
    for i in range(1, n + 1):
        d = root / f"delta_{i:07d}_{i:07d}_0000"
        d.mkdir(parents=True)
        (d / "bucket_00000").write_bytes(data)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def acidtool(*args: str) -> None:
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), \
            contextlib.redirect_stderr(sink):
        try:
            cli_main(list(args))
        except SystemExit:
            pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2_000)
    args = parser.parse_args()
    problem = fetch("", wanted=ARTIFACTS)
    if problem:
        print(f"skipped: {problem}")
        return 0
    cluster = MiniDFS.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / "t"
            build(local, args.files)
            j = cluster.gateway.jvm
            hdfs = cluster.cluster.getFileSystem()
            start = time.perf_counter()
            hdfs.copyFromLocalFile(j.org.apache.hadoop.fs.Path(str(local)),
                                   j.org.apache.hadoop.fs.Path("/bench/t"))
            print(f"{args.files:,} files copied into HDFS in {time.perf_counter() - start:.1f} s")
        fs = cluster.filesystem()
        url = cluster.url("/bench/t")
        latency = min(timed(lambda: fs.info("/bench/t")) for _ in range(20))
        print(f"one WebHDFS call (GETFILESTATUS): {latency * 1000:.2f} ms")

        listing = min(timed(lambda: fs.find("/bench/t", withdirs=True)) for _ in range(2))
        ls = min(timed(lambda: acidtool("ls", url, "--format", "json")) for _ in range(2))
        print(f"bare listing {listing:.2f} s, acidtool ls --format json {ls:.2f} s: "
              f"RATIO ls/listing {ls / listing:.2f}x (target <= 2x)")

        files = [p for p in fs.find("/bench/t") if p.endswith("bucket_00000")]

        def tail(path: str) -> None:
            with fs.open(path, "rb") as f:
                f.seek(max(0, f.size - 16384))
                f.read()

        def footers() -> None:
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(tail, files))

        bare = timed(footers)
        validate = timed(lambda: acidtool("validate", url, "--level", "metadata",
                                          "--jobs", "8"))
        print(f"bare footer loop (8 threads) {bare:.2f} s ({bare / len(files) * 1000:.2f} ms a "
              f"file), acidtool validate --jobs 8 {validate:.2f} s "
              f"({validate / len(files) * 1000:.2f} ms a file): RATIO validate/footer loop "
              f"{validate / bare:.2f}x (target <= 1.5x)")
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
