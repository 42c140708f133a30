"""Benchmark for issue #43: ``acidtool doctor 'db.*'`` over a database of N transactional tables
(default 1,000, half of them partitioned) in a real Hive 4.0.1 metastore on loopback (the tests'
own, tests/helpers/metastore.py): the metastore calls it makes per table (target: a few), and
its time against the baseline of one ``get_table_req`` per table in the same run (what any
per-table look at the metastore costs at least).

Usage: python benchmarks/bench_doctor.py [--tables N]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=1000)
    args = parser.parse_args()
    from acidtool.io.metastore import Metastore as Client
    from tests.helpers.layouts import acid, events
    from tests.helpers.metastore import Metastore, create_database, create_table

    hms = Metastore.start("4")
    try:
        db = Path(hms.warehouse) / "bench.db"
        db.mkdir()
        create_database(hms.url, "bench", "file://" + str(db))
        for i in range(args.tables):
            loc = db / f"t{i}"
            part = i % 2 == 1
            create_table(hms.url, "bench", f"t{i}", "file://" + str(loc),
                         partition_keys=(("ds", "string"),) if part else ())
            d = (loc / "ds=1" if part else loc) / "delta_0000001_0000001_0000"
            d.mkdir(parents=True)
            (d / "bucket_00000").write_bytes(acid(events(1, 2), hive_version="3"))
        start = time.perf_counter()
        with Client(hms.url) as client:
            for i in range(args.tables):
                client.table("bench", f"t{i}")
        baseline = time.perf_counter() - start
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "acidtool", "doctor", "bench.*",
                               "--metastore", hms.url], capture_output=True, text=True)
        ours = time.perf_counter() - start
        found = re.search(r"(\d+) calls\)", proc.stdout)
        if found is None:
            raise SystemExit(f"doctor failed ({proc.returncode}): {proc.stderr.strip()}")
        calls = int(found.group(1))
        print(f"{args.tables:,} tables: doctor made {calls:,} metastore calls, "
              f"{calls / args.tables:.2f} per table (target: a few)")
        print(f"one get_table_req per table: {baseline:.1f} s; doctor 'bench.*': {ours:.1f} s: "
              f"RATIO {ours / baseline:.1f}x (doctor also lists and selects every table's "
              "files)")
    finally:
        hms.stop()


if __name__ == "__main__":
    main()
