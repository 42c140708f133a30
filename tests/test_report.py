"""``acidtool report``: one self-contained HTML file (and its JSON) of a warehouse's health,
checked as data and in a real headless Chromium (Debian's; skipped with one line without it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .helpers.layouts import acid, build, delta, events
from .helpers.runner import run
from .test_ls_svg import browse

HOSTILE = '<img src=x onerror=alert(1)>&"'


def warehouse(tmp_path: Path) -> Path:
    wh = tmp_path / "wh"
    for ds in (1, 2, 3):
        layout = {}
        for w in range(1, 13 if ds == 1 else 3):
            layout.update(delta(f"delta_{w:07d}_{w:07d}_0000", acid(events(w))))
        build(wh / "shop.db" / "orders" / f"ds={ds}", layout)
    build(wh / "shop.db" / "items", {**delta("delta_0000001_0000001_0000", acid(events(1))),
                                     "part-0000.orc": b"foreign"})
    (wh / "shop.db" / "items" / HOSTILE.replace("/", "_")).write_bytes(b"x")
    return wh


def test_the_json_holds_what_the_page_shows(tmp_path):
    wh = warehouse(tmp_path)
    out = tmp_path / "r.json"
    result = run("report", wh, "-r", "--format", "json", "-o", out)
    assert result.code == 0, result.err
    assert "2 tables, 4 partitions" in result.err
    doc = json.loads(out.read_text())
    assert doc["totals"]["tables"] == 2 and doc["totals"]["partitions"] == 4
    assert doc["codes"]["ACID001"] >= 1 and doc["compactions_due"] >= 1
    orders = next(t for t in doc["tables"] if t["path"].endswith("orders"))
    due = {p["partition"]: p["compaction"]["compaction"] for p in orders["partitions"]}
    assert due["ds=1"] and not due["ds=2"]  # twelve deltas: the Initiator's choice
    validated = run("validate", wh, "-r", "--format", "json").json()
    assert sum(doc["findings"].values()) == len(validated["findings"])


def test_chromium_shows_the_codes_and_the_hostile_name_as_text(tmp_path):
    wh = warehouse(tmp_path)
    out = tmp_path / "r.html"
    assert run("report", wh, "-r", "-o", out).code == 0
    page = out.read_text()
    assert not re.search(r"(src|href)=['\"]?(https?:|//)", page)  # nothing fetched
    shot = tmp_path / "r.png"
    taken = browse(tmp_path, out, f"--screenshot={shot}", "--window-size=1000,900")
    assert shot.exists() and shot.stat().st_size > 10_000, taken.stderr[-2000:]
    assert "Uncaught" not in taken.stderr and "CONSOLE" not in taken.stderr
    dom = browse(tmp_path, out, "--dump-dom").stdout
    assert "of 4 partitions" in dom  # the page's script ran (it counts the rows)
    for label in ("ACID001", "ACID024", " due", "shop.orders", "ds=1"):
        assert label in dom, label
    assert "<img" not in dom.replace("&lt;img", "")
    assert "&lt;img src=x onerror=alert(1)&gt;" in dom


def test_usage_errors_are_one_line(tmp_path):
    assert run("report", tmp_path / "missing", "-o", tmp_path / "r.html").code == 2
    assert run("report", tmp_path).code == 2  # -o is required
