"""Benchmark for issue #18: ``acidtool repair``.

(1) The plan of a 10,000-file table against ``validate --level rows`` on the same table (the
    plan is validate's facts at that level plus the planners): target at most 1.2x.
(2) ``--apply`` of 1,000 quarantines (1,000 old staging directories) against the bare renames
    of the same directories into a quarantine directory (``os.rename`` in a loop): target at
    most 2x. The apply is timed from the plan in hand (the journal, its fsyncs, the checks
    that never overwrite); the planning is (1)'s.

Both sides run in this process, in turns, best of several, on trees built here.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acidtool.commands.repair.plan import RepairOptions, plan_repair  # noqa: E402
from acidtool.commands.repair.apply import _carry_out  # noqa: E402
from acidtool.commands.check.validate import ValidateOptions, validate  # noqa: E402
from acidtool.io.journal import Journal  # noqa: E402
from tests.helpers.layouts import acid, events  # noqa: E402

FILES = 10_000
QUARANTINES = 1_000


def build_table(root: Path) -> None:
    """10,000 bucket files: 2,500 deltas of four buckets, each with its marker, plus a few
    foreign files that the plan acts on."""
    data = {b: acid(events(1, 3, bucket=b)) for b in range(4)}
    for w in range(1, FILES // 4 + 1):
        d = root / f"delta_{w:07d}_{w:07d}_0000"
        d.mkdir(parents=True)
        for b in range(4):
            (d / f"bucket_{b:05d}").write_bytes(data[b])
        (d / "_orc_acid_version").write_bytes(b"2")


def build_staging(root: Path) -> None:
    old = time.time() - 86400
    (root / "delta_0000001_0000001_0000").mkdir(parents=True)
    (root / "delta_0000001_0000001_0000" / "bucket_00000").write_bytes(acid(events(1)))
    (root / "delta_0000001_0000001_0000" / "_orc_acid_version").write_bytes(b"2")
    for i in range(QUARANTINES):
        d = root / f".hive-staging_hive_{i:05d}"
        d.mkdir()
        (d / "000000_0").write_bytes(b"x")
        os.utime(d / "000000_0", (old, old))
        os.utime(d, (old, old))


def best(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench_repair_"))
    os.environ["ACIDTOOL_STATE_DIR"] = str(tmp / "state")
    try:
        table = tmp / "t"
        build_table(table)
        os.sync()
        vopts = ValidateOptions(level="rows", jobs=1)
        ropts = RepairOptions(jobs=1)
        v, p = [], []
        for _ in range(5):
            v.append(best(lambda: validate([str(table)], vopts), 1))
            p.append(best(lambda: plan_repair(str(table), ropts), 1))
        print(f"plan of a {FILES:,}-file table: {min(p):.3f}s; validate --level rows: "
              f"{min(v):.3f}s; ratio {min(p) / min(v):.2f}x (target <= 1.2x)")

        applied, bare = [], []
        for round_ in range(5):
            here = tmp / f"q{round_}"
            build_staging(here / "a")
            build_staging(here / "b")
            os.sync()
            plan = plan_repair(str(here / "a"), RepairOptions(min_age=3600))
            assert len(plan.actions) == QUARANTINES, len(plan.actions)
            journal = Journal(tmp / "state" / f"{round_}.jsonl")
            t = time.perf_counter()
            results: dict = {}
            _carry_out(plan, journal, None, results)
            applied.append(time.perf_counter() - t)
            journal.close()
            assert all(r == "done" for r, _ in results.values())
            t = time.perf_counter()
            q = here / "b" / ".q"
            os.mkdir(q)
            for i in range(QUARANTINES):
                name = f".hive-staging_hive_{i:05d}"
                os.rename(here / "b" / name, q / name)
            bare.append(time.perf_counter() - t)
            shutil.rmtree(here)
        print(f"--apply of {QUARANTINES:,} quarantines: {min(applied) * 1000:.1f} ms; bare "
              f"renames: {min(bare) * 1000:.1f} ms; ratio {min(applied) / min(bare):.2f}x "
              "(target <= 2x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
