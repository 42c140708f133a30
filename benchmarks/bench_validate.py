"""Benchmark for issue #6: ``acidtool validate --level metadata`` over 10,000 small ACID files in
200 partitions (10 deltas x 5 buckets each).

Prints metadata-level files per second and the ratio to a bare loop of ``pyarrow.orc.ORCFile``
opens over the same files, measured in the same run: target at most 1.5x with ``--jobs 1``, and
faster than the loop with ``--jobs 8``.

Both are measured on local disk and on the same files behind a filesystem that adds 2 ms to
every open (an object store is latency bound; that is what ``--jobs`` is for). The latency run
uses the first 20 partitions (1,000 files) to keep the run short.
"""

from __future__ import annotations

import io
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.orc as paorc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_ls import best_of, best_of_alternating  # noqa: E402

from acidtool.commands.check.validate import ValidateOptions, validate  # noqa: E402
from acidtool.core.bucket import encode_v1  # noqa: E402
from acidtool.io.acidwrite import INSERT, Event, write_acid_file  # noqa: E402

PARTITIONS, DELTAS, BUCKETS = 200, 10, 5


def bucket_files(deltas: int, buckets: int) -> dict[tuple[int, int], bytes]:
    """A small ACID bucket file (20 rows) for each (write id, bucket)."""
    blobs = {}
    for w in range(1, deltas + 1):
        for b in range(buckets):
            buf = io.BytesIO()
            write_acid_file(buf, "struct<id:int,name:string>",
                            [Event(INSERT, w, encode_v1(b, 0), i, w, (i, f"n{i}"))
                             for i in range(20)])
            blobs[(w, b)] = buf.getvalue()
    return blobs


def build(root: Path) -> list[Path]:
    blobs = bucket_files(DELTAS, BUCKETS)
    files = []
    for p in range(PARTITIONS):
        for w in range(1, DELTAS + 1):
            d = root / f"ds={p:04d}" / f"delta_{w:07d}_{w:07d}_0000"
            d.mkdir(parents=True)
            (d / "_orc_acid_version").write_bytes(b"2")
            for b in range(BUCKETS):
                f = d / f"bucket_{b:05d}"
                f.write_bytes(blobs[(w, b)])
                files.append(f)
    return files


LATENCY = 0.002


def slow_filesystem():
    """file:// with a 2 ms round trip per open, as an fsspec protocol ``slowfile://``."""
    import fsspec
    from fsspec.implementations.local import LocalFileSystem

    class SlowFileSystem(LocalFileSystem):
        protocol = "slowfile"

        def _open(self, path, *args, **kwargs):
            time.sleep(LATENCY)
            return super()._open(path, *args, **kwargs)

    fsspec.register_implementation("slowfile", SlowFileSystem, clobber=True)
    return SlowFileSystem()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "orders"
        files = build(root)
        n = len(files)

        def bare():
            for f in files:
                paorc.ORCFile(str(f))

        def run(jobs: int):
            report = validate([str(root)], ValidateOptions(level="metadata", jobs=jobs))
            assert report.files == n, report.files
            assert not report.findings, report.findings[:3]

        bare(), run(1)  # warm the page cache
        # in turns, so that a busy spell of the machine does not land on one side only
        t_bare, t1, t8 = best_of_alternating([bare, lambda: run(1), lambda: run(8)], 5)
        print(f"{n:,} files in {PARTITIONS} partitions")
        print(f"bare ORCFile loop: {t_bare:.2f} s ({n / t_bare:,.0f} files/s)")
        print(f"validate --jobs 1: {t1:.2f} s ({n / t1:,.0f} files/s): "
              f"RATIO {t1 / t_bare:.2f}x (target <= 1.5x)")
        print(f"validate --jobs 8: {t8:.2f} s ({n / t8:,.0f} files/s): "
              f"RATIO {t8 / t_bare:.2f}x (target < 1x)")

        import pyarrow.fs as pafs

        slow = pafs.PyFileSystem(pafs.FSSpecHandler(slow_filesystem()))
        subset = [f for f in files if int(f.parent.parent.name[3:]) < 20]
        url = f"slowfile://{root}"

        def bare_slow():
            for f in subset:
                with slow.open_input_file(str(f)) as fh:
                    paorc.ORCFile(fh)

        def run_slow(jobs: int):
            for p in range(20):
                report = validate([f"{url}/ds={p:04d}"], ValidateOptions(level="metadata",
                                                                          jobs=jobs))
                assert not report.findings, report.findings[:3]

        m = len(subset)
        tb = best_of(bare_slow, 1)
        s1 = best_of(lambda: run_slow(1), 1)
        s8 = best_of(lambda: run_slow(8), 1)
        print(f"with {LATENCY * 1000:.0f} ms per open, {m:,} files: bare loop {tb:.2f} s, "
              f"--jobs 1 {s1:.2f} s (RATIO {s1 / tb:.2f}x), --jobs 8 {s8:.2f} s "
              f"(RATIO {s8 / tb:.2f}x, target < 1x)")


if __name__ == "__main__":
    main()
