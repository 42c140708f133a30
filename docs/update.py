"""Regenerate (or, with --check, verify) the example output in docs/*.md from the real tool.

An example is an HTML comment naming the command line, followed by a ``console`` block:

    <!-- example: acidtool ls demo-table -->
    ```console
    $ acidtool ls demo-table
    ...
    ```

Commands run in a scratch directory holding the bundled example table ``demo-table`` (built by
``acidtool.demo``), so paths in the output are short and stable.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
EXAMPLE = re.compile(r"(<!-- example: (?P<cmd>.+?) -->\n```console\n)(?P<body>.*?)(```)", re.S)


def run(cmd: str, cwd: Path) -> str:
    argv = shlex.split(cmd)
    env = {**os.environ, "COLUMNS": "120", "ACIDTOOL_STATE_DIR": str(cwd / "state")}
    if argv[0] == "acidtool":
        # forked from a process that has imported acidtool (tests/helpers/zygote.py: what
        # `python -m acidtool` is, less its imports), a real interpreter with
        # ACIDTOOL_TEST_FORK=0; the two print the same (the check compares them)
        from tests.helpers import zygote

        proc = zygote.run(argv[1:], env, cwd=str(cwd), timeout=900)
    else:  # python: an example script of docs/examples/, copied next to the tables
        proc = subprocess.run([sys.executable, *argv[1:]], cwd=cwd, capture_output=True,
                              text=True, env=env)
    out = proc.stdout + proc.stderr
    if not out.endswith("\n"):
        out += "\n"
    if proc.returncode:
        out += f"(exit status {proc.returncode})\n"
    return f"$ {cmd}\n{out}"


def render(text: str, cwd: Path) -> str:
    return EXAMPLE.sub(lambda m: m.group(1) + run(m.group("cmd"), cwd) + m.group(4), text)


def _landing(cwd: Path) -> None:
    """Raw ORC files as a DataX-style loader leaves them, and an empty table, for convert."""
    from acidtool.io.acidwrite import write_plain_file

    (cwd / "landing").mkdir()
    (cwd / "new-table").mkdir()
    for i, rows in enumerate([[(10, "melon", 4.0), (11, "lime", 0.25)], [(12, "date", 1.75)]]):
        with open(cwd / "landing" / f"orders__{i:04d}_datax.orc", "wb") as f:
            write_plain_file(f, "struct<id:int,item:string,amount:double>", rows)


def _next_load(cwd: Path) -> None:
    """A later load for export.md's incremental example: rows no other file holds."""
    from acidtool.io.acidwrite import write_plain_file

    (cwd / "next-load").mkdir()
    with open(cwd / "next-load" / "orders__0100_datax.orc", "wb") as f:
        write_plain_file(f, "struct<id:int,item:string,amount:double>",
                         [(20, "pepper", 1.25), (21, "bread", 2.5), (22, "eggs", 3.0)])


def _insert_only(cwd: Path) -> None:
    """An insert-only table as Hive 3/4 leave one: plain ORC and Parquet files in deltas, an
    INSERT OVERWRITE base, and a delta of a write id that the examples' snapshot has open."""
    import pyarrow as pa
    import pyarrow.orc as paorc
    import pyarrow.parquet as pq

    def table(ids, items):
        return pa.table({"id": pa.array(ids, pa.int32()), "item": items})

    (cwd / "new-mm").mkdir()
    root = cwd / "mm-table"
    for rel, rows, write in (
            ("delta_0000001_0000001_0000/000000_0", table([1, 2], ["tea", "rice"]), paorc),
            ("base_0000002/000000_0", table([3], ["salt"]), paorc),
            ("delta_0000003_0000003_0000/000000_0", table([4, 5], ["oil", "soap"]), pq),
            ("delta_0000004_0000004_0000/000000_0", table([6], ["milk"]), paorc)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        write.write_table(rows, str(root / rel))


def _datax(cwd: Path, name: str = "datax-table") -> None:
    """A table a DataX load broke: a raw ORC file in the root and one inside a delta, a delta
    without its marker, and an old staging directory of a failed query. (export.md repairs a
    copy of its own, ``orders-to-migrate``.)"""
    import time

    from acidtool.core.bucket import encode_v1
    from acidtool.io.acidwrite import Event, write_acid_file, write_plain_file

    root = cwd / name
    row = "struct<id:int,item:string,amount:double>"
    for w, items in ((1, [(1, "tea", 3.5), (2, "rice", 2.0)]), (2, [(3, "salt", 0.5)])):
        d = root / f"delta_{w:07d}_{w:07d}_0000"
        d.mkdir(parents=True)
        with open(d / "bucket_00000", "wb") as f:
            write_acid_file(f, row, [Event(0, w, encode_v1(0), i, w, r)
                                     for i, r in enumerate(items)])
        if w == 1:
            (d / "_orc_acid_version").write_bytes(b"2")
    with open(root / "delta_0000002_0000002_0000" / "orders__5e0a_datax", "wb") as f:
        write_plain_file(f, row, [(4, "oil", 6.0)])
    with open(root / "orders__9c1d_datax", "wb") as f:
        write_plain_file(f, row, [(10, "melon", 4.0), (11, "lime", 0.25)])
    staging = root / ".hive-staging_hive_2026-11-20_08-00-00_123_1"
    (staging / "-ext-10000").mkdir(parents=True)
    (staging / "-ext-10000" / "000000_0").write_bytes(b"partial")
    old = time.time() - 4 * 86400
    for p in (staging / "-ext-10000" / "000000_0", staging / "-ext-10000", staging):
        os.utime(p, (old, old))


def _dml(cwd: Path) -> None:
    """A clean Hive 3 table for dml.md's changes: two writes of three rows each."""
    from acidtool.core.bucket import encode_v1
    from acidtool.io.acidwrite import Event, write_acid_file

    row = "struct<id:int,item:string,amount:double>"
    for w, items in ((1, [(1, "tea", 3.5), (2, "rice", 2.0), (3, "salt", 0.5)]),
                     (2, [(4, "oil", 6.0), (5, "soap", 1.5), (6, "milk", 0.9)])):
        d = cwd / "shop-orders" / f"delta_{w:07d}_{w:07d}_0000"
        d.mkdir(parents=True)
        with open(d / "bucket_00000", "wb") as f:
            write_acid_file(f, row, [Event(0, w, encode_v1(0), i, w, r)
                                     for i, r in enumerate(items)])
        (d / "_orc_acid_version").write_bytes(b"2")


def _hive2_warehouse(cwd: Path) -> None:
    """A Hive 2 warehouse before its upgrade: a partition whose delta holds update events (as
    Hive 2's legacy layout writes them), one with inserts only, a streaming table, and a
    Spark file dropped into a table."""
    from acidtool.core.bucket import encode_v1
    from acidtool.io.acidwrite import Event, write_acid_file, write_plain_file

    row = "struct<id:int,item:string,amount:double>"
    wh = cwd / "hive2-warehouse" / "sales.db"

    def put(rel: str, events: list) -> None:
        (wh / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(wh / rel, "wb") as f:
            write_acid_file(f, row, events, hive_version="2")

    b0 = encode_v1(0)
    put("orders/ds=2026-11-01/delta_0000001_0000001/bucket_00000",
        [Event(0, 1, b0, i, 1, (i, "tea", 3.5)) for i in range(3)])
    put("orders/ds=2026-11-01/delta_0000004_0000004/bucket_00000",
        [Event(1, 1, b0, 0, 4, (0, "tea", 4.0)), Event(2, 1, b0, 2, 4, None)])
    put("orders/ds=2026-11-02/delta_0000002_0000002/bucket_00000",
        [Event(0, 2, b0, 0, 2, (9, "rice", 2.0))])
    put("clicks/delta_0000003_0000012/bucket_00000",
        [Event(0, 3, b0, i, 3, (i, "click", 0.0)) for i in range(2)])
    (wh / "clicks/delta_0000003_0000012/bucket_00000_flush_length").write_bytes(b"\0" * 8)
    with open(wh / "clicks/part-00000-5b1e.c000.snappy.orc", "wb") as f:
        write_plain_file(f, row, [(7, "spark", 1.0)])


def _many_deltas(cwd: Path) -> None:
    """A table an hourly load left with twelve small deltas and no base."""
    from acidtool.core.bucket import encode_v1
    from acidtool.io.acidwrite import Event, write_acid_file

    row = "struct<id:int,page:string>"
    for w in range(1, 13):
        d = cwd / "clicks" / f"delta_{w:07d}_{w:07d}_0000"
        d.mkdir(parents=True)
        with open(d / "bucket_00000", "wb") as f:
            write_acid_file(f, row, [Event(0, w, encode_v1(0), i, w, (10 * w + i, f"/p{i}"))
                                     for i in range(2)])
        (d / "_orc_acid_version").write_bytes(b"2")


GENERATED = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->)(?P<body>.*?)(<!-- end -->)", re.S)
_READS = {
    "names": "the listing only (one recursive call per PATH)",
    "metadata": "also the ORC footer of every data file a reader may use and the "
                "`_orc_acid_version` marker of every such directory (none under Hive 2 rules), "
                "in parallel (`--jobs`, 8 by default)",
    "rows": "also a scan of the five ACID columns of every ACID file, a batch at a time, never "
            "the row payload",
}


def _codes(codes: list[str]) -> str:
    """ACID001-005, 018, 020-024: runs of consecutive codes joined."""
    nums = sorted(int(c[4:]) for c in codes)
    runs, start = [], None
    for i, n in enumerate(nums):
        start = n if start is None else start
        if i + 1 == len(nums) or nums[i + 1] != n + 1:
            runs.append(f"{start:03d}" + (f"-{n:03d}" if n != start else ""))
            start = None
    return "ACID" + ", ".join(runs)


def generated(name: str) -> str:
    """Text made from the rule registry, so that it cannot fall behind it."""
    from acidtool.core.rules import REGISTRY

    if name == "rule-count":
        return f"{len(REGISTRY)} rules"
    if name == "rule-levels":
        rows = ["| `--level` | reads | rules |", "|---|---|---|"]
        for level in ("names", "metadata", "rows"):
            codes = [c for c, r in REGISTRY.items() if r.level == level]
            label = f"`{level}`" + (" (default)" if level == "metadata" else "")
            rows.append(f"| {label} | {_READS[level]} | "
                        f"{'' if level == 'names' else 'adds '}{_codes(codes)} |")
        return "\n" + "\n".join(rows) + "\n"
    raise ValueError(f"no generated block {name!r}")


def render_generated(text: str) -> str:
    return GENERATED.sub(lambda m: m.group(1) + generated(m.group("name")) + m.group(4), text)


_TIMING = re.compile(r"\b\d+\.\d+ s\b")
_RUN = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6,8}")  # a run's name (a time and a nonce)
_AGE = re.compile(r"unchanged for \d+[smhd]")
_SCRATCH = re.compile(r"/tmp/[^/\s]+/")
_PLAN_IDS = re.compile(r"#\d+L?\b|plan_id=\d+")  # Spark's expression and plan ids
_SNAPSHOT = re.compile(r"(Iceberg snapshot |\"snapshot_id\": )\d+|(\"seconds\": )[\d.]+")


def _stable(text: str) -> str:
    """Examples are compared without their timings (elapsed seconds vary run to run), repair
    runs' names, leftovers' ages, Spark's expression ids and the scratch directory's name."""
    text = _TIMING.sub("<t> s", text)
    text = _RUN.sub("<run>", text)
    text = _AGE.sub("unchanged for <age>", text)
    text = _PLAN_IDS.sub("#<id>", text)
    text = _SNAPSHOT.sub(lambda m: (m.group(1) or m.group(2)) + "<n>", text)
    return _SCRATCH.sub("<tmp>/", text)


# Pages whose examples start Spark (each start costs the check 15-25 s): they are rendered in
# a scratch directory of their own, apart from the rest, so that the tests check the two
# groups side by side (tests/test_docs.py and tests/test_docs_spark.py). A page's examples may
# use what an earlier page of its group left in the directory, never what another group did.
SPARK_PAGES = ("export.md", "spark.md")
GROUPS = ("rest", "spark")


def group_pages(group: str) -> list[Path]:
    every = [*sorted(DOCS.glob("*.md")), DOCS.parent / "README.md"]
    return [p for p in every if (p.name in SPARK_PAGES) == (group == "spark")]


def _scratch(cwd: Path) -> None:
    """The tables and scripts the examples run on."""
    from acidtool.demo import build_demo

    build_demo(cwd / "demo-table")
    _landing(cwd)
    _insert_only(cwd)
    _datax(cwd)
    _datax(cwd, "orders-to-migrate")
    _next_load(cwd)
    _hive2_warehouse(cwd)
    _many_deltas(cwd)
    _dml(cwd)
    for example in sorted((DOCS / "examples").glob("*.py")):
        shutil.copy(example, cwd / example.name)
    shutil.copytree(cwd / "demo-table", cwd / "orders")  # compact.md writes to its own


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true", help="fail if a page is out of date")
    parser.add_argument("--group", choices=GROUPS, action="append",
                        help="only this group of pages (the Spark pages or the rest); both "
                             "by default")
    args = parser.parse_args()
    sys.path.insert(0, str(DOCS.parent))
    stale = []
    for group in args.group or GROUPS:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = Path(tmp)
            _scratch(cwd)
            for page in group_pages(group):
                old = page.read_text()
                new = render_generated(render(old, cwd))
                if _stable(new) != _stable(old):
                    stale.append(page.name)
                    if not args.check:
                        page.write_text(new)
    if args.check and stale:
        print("out of date (run `make docs`): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
