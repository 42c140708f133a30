"""Benchmark for issue #41: what Spark's class archive (acidtool/io/classcache.py) saves a command
that starts a Spark session.

``acidtool delete --dry-run`` of one row of the demo table from the command line (a new
interpreter and a new Spark session each run), with the archive and without it
(``ACIDTOOL_SPARK_CDS=0``), in turns, in this run. The archive is made first in a cache
directory of this run's own (one run writes it as its JVM exits; the benchmark waits until it is
taken). Prints each side's times and the ratio of the medians (with / without: below 1 is
faster).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acidtool.demo import build_demo  # noqa: E402

RUNS = 3


def delete(cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "acidtool", "delete", "demo", "--where",
                           "id = 1", "--write-id", "100", "--dry-run"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"delete failed: {proc.stderr.strip()}")
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        build_demo(cwd / "demo")
        env = {**os.environ, "XDG_CACHE_HOME": str(cwd / "cache")}
        delete(cwd, env)  # its JVM writes the archive as it exits
        from acidtool.io import classcache

        os.environ["XDG_CACHE_HOME"] = env["XDG_CACHE_HOME"]
        deadline = time.monotonic() + 300
        while not classcache.ready():
            if time.monotonic() > deadline:
                raise SystemExit("no class archive after 300 s (no Java, or not Linux?)")
            time.sleep(2)
        off = {**env, "ACIDTOOL_SPARK_CDS": "0"}
        with_archive, without = [], []
        for _ in range(RUNS):
            without.append(delete(cwd, off))
            with_archive.append(delete(cwd, env))
    print(f"delete --dry-run, a Spark session each: without the archive "
          f"{', '.join(f'{t:.1f}' for t in without)} s; with it "
          f"{', '.join(f'{t:.1f}' for t in with_archive)} s")
    print(f"ratio (median with / median without): "
          f"{statistics.median(with_archive) / statistics.median(without):.2f}x")


if __name__ == "__main__":
    main()
