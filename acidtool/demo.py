"""``python -m acidtool.demo DIR``: write a small example ACID table, entirely with our own code.

The table ``orders(id int, item string, amount double)`` holds, in Hive 3 layout:
a compacted base (write ids 1-2), an obsolete delta the base already covers, an insert delta,
a delete delta, an aborted write's delta (with ``--write-ids`` showing it aborted), and a foreign
file that a DataX-style loader dropped into the table root.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .core.bucket import encode_v1
from .io.acidwrite import DELETE, INSERT, Event, write_acid_file, write_plain_file

ROW = "struct<id:int,item:string,amount:double>"
DEMO_WRITE_IDS = "shop.orders:5:9223372036854775807::5"


def _insert(wid: int, rows: list[tuple], bucket: int = 0, stmt: int = 0) -> list[Event]:
    prop = encode_v1(bucket, stmt)
    return [Event(INSERT, wid, prop, i, wid, row) for i, row in enumerate(rows)]


def build_demo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise SystemExit(f"{root} is not empty; give a new directory")

    def acid(rel: str, events: list[Event]) -> None:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as f:
            write_acid_file(f, ROW, events)
        (target.parent / "_orc_acid_version").write_bytes(b"2")

    base_rows = _insert(1, [(1, "apple", 1.5), (2, "pear", 0.75)]) + \
        _insert(2, [(3, "plum", 2.0)])
    acid("base_0000002/bucket_00000", base_rows)
    (root / "base_0000002" / "_metadata_acid").write_text(
        '{"thisFileVersion":"0","dataFormat":"compacted"}')
    acid("delta_0000002_0000002_0000/bucket_00000", _insert(2, [(3, "plum", 2.0)]))
    acid("delta_0000003_0000003_0000/bucket_00000",
         _insert(3, [(4, "fig", 3.25), (5, "kiwi", 0.5)]))
    acid("delete_delta_0000004_0000004_0000/bucket_00000",
         [Event(DELETE, 1, encode_v1(0, 0), 1, 4, None)])
    acid("delta_0000005_0000005_0000/bucket_00000", _insert(5, [(6, "lost", 9.99)]))
    with open(root / "orders__6f1c9e2a_3b7d_4c0e_9a51_2d8e4f7b1c03", "wb") as f:
        write_plain_file(f, ROW, [(7, "datax", 1.0), (8, "datax", 2.0)])
    return root


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m acidtool.demo DIR")
    root = build_demo(Path(args[0]))
    print(f"wrote example table {root}; look at it with:\n"
          f"  {_tool()} ls {root} --write-ids '{DEMO_WRITE_IDS}'")


def _tool() -> str:
    """The acidtool this Python runs (``make demo``'s .venv/bin/acidtool), as a person would
    type it from here."""
    import os
    import shutil
    import sys

    beside = os.path.join(os.path.dirname(sys.executable), "acidtool")
    if not os.path.exists(beside) or shutil.which("acidtool") == beside:
        return "acidtool"
    rel = os.path.relpath(beside)
    return beside if rel.startswith("..") else rel


if __name__ == "__main__":
    main()
