"""Benchmark of the source's first read in a Spark session (NativePlan.slower's
SOURCE_FIRST_READ_S): a small table (6 rows, 3 of them deleted: past one mask of deleted row ids
in ten rows) read as a new session's first read, by Spark's own plan and by the ``hiveacid``
source, each in a process of its own (a new JVM), in turns, three times each; then the same
two reads again in one session. Prints each read's seconds (the session's start not counted)
and the ratio of the first reads' bests, the source's over Spark's plan's: what the default
weighs before the source has read in a session. Then the default's choice in a new session.

Usage: python benchmarks/bench_spark_first_read.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = """
import json, sys, time
from acidtool.spark import read_table_and_why, session
spark = session(master="local[2]")
out = {}
for native in json.loads(sys.argv[2]):
    t = time.perf_counter()
    df, why = read_table_and_why(spark, sys.argv[1], hive_version="3", native=native)
    rows = df.collect()
    out.setdefault(str(native), []).append(time.perf_counter() - t)
    out["why"] = why
assert len(rows) == 3, rows
print(json.dumps(out))
"""


def build(root: Path) -> None:
    from acidtool.core.bucket import encode_v1
    from acidtool.io.acidwrite import DELETE, Event, write_acid_file

    row = "struct<id:int,item:string>"
    b0 = encode_v1(0)
    for name, events in (
            ("delta_0000001_0000001_0000", [Event(0, 1, b0, i, 1, (i, f"x{i}")) for i in range(6)]),
            ("delete_delta_0000002_0000002_0000",
             [Event(DELETE, 1, b0, i, 2, None) for i in (0, 2, 4)])):
        (root / name).mkdir(parents=True)
        with open(root / name / "bucket_00000", "wb") as f:
            write_acid_file(f, row, events)
        (root / name / "_orc_acid_version").write_bytes(b"2")


def child(table: Path, natives: list) -> dict:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(table), json.dumps(natives)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    return json.loads(proc.stdout.splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-first-read-") as tmp:
        table = Path(tmp) / "t"
        build(table)
        first: dict[str, list[float]] = {"True": [], "False": []}
        for turn in range(3):
            for native in ([True, False] if turn % 2 == 0 else [False, True]):
                got = child(table, [native])
                first[str(native)].append(got[str(native)][0])
                print(f"new session, first read, {'Spark plan' if native else 'source':>10}: "
                      f"{got[str(native)][0]:6.2f} s")
        again = child(table, [True, False, True, False, True, False])
        for native in (True, False):
            reads = ", ".join(f"{s:.2f}" for s in again[str(native)])
            print(f"one session, {'Spark plan' if native else 'source':>10}: {reads} s")
        default = child(table, [None])
        print(f"the default in a new session: "
              f"{'Spark plan' if default['why'] is None else 'source: ' + default['why']}")
        ratio = min(first["False"]) / min(first["True"])
        print(f"RATIO source / Spark plan, a new session's first read: {ratio:.2f}x "
              f"(best {min(first['False']):.2f} s against {min(first['True']):.2f} s)")


if __name__ == "__main__":
    main()
