"""``acidtool report``: one self-contained HTML file (and its JSON) of a warehouse's health,
checked as data and in a real headless Chromium (Debian's; skipped with one line without it)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .helpers.layouts import acid, build, delta, events, plain
from .helpers.runner import run
from .test_ls_svg import NS, browse

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
    # the page's "Rules found", as data: what each rule found checks, as explain says it
    assert set(doc["rules"]) == set(doc["codes"])
    assert doc["rules"]["ACID001"]["fix"] in run("explain", "ACID001").out


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


def _mixed_partition(root: Path, i: int) -> None:
    """One of six layouts by ``i``: many deltas, a base with obsolete deltas, an aborted
    write id, originals beside a delta, a foreign file and a killed job's hidden staging
    directory, an empty partition."""
    kind = i % 6
    layout: dict = {}
    if kind == 1:
        layout.update(delta("base_0000002", acid(events(2))))
    for w in range(1, 14 if kind == 0 else (i % 4) + 3):  # 11 read: a compaction due
        if kind == 2 and w == 2:
            continue  # write id 2 left out: aborted at the snapshot the tests give
        layout.update(delta(f"delta_{w:07d}_{w:07d}_0000", acid(events(w, n=w))))
    if kind == 3:
        layout["000000_0"] = plain()
    if kind == 4:
        layout["part-00000.snappy.parquet"] = b"foreign"
        layout[".hive-staging_hive_1/-ext-10000/000000_0"] = plain()  # never data
    if kind == 5:
        layout = {"delete_delta_0000003_0000003_0000/bucket_00000": acid(events(3))}
    build(root, layout)


def _as_ls_says(path: Path, *args) -> dict:
    out = {}
    for p in run("ls", path, "--format", "json", *args).json()["partitions"]:
        out[p["path"]] = (p["base"], p["deltas"], len(p["obsolete"]), len(p["aborted"]),
                          p["summary"]["files"], p["summary"]["bytes"], p["error"])
    return out


# (partitions per table, tables, recursive, jobs): validate checks small tables here, a table
# of 16 or more top-level partitions share by share with each process listing its own, and a
# warehouse of as many partitions share by share from one listing; with --jobs 1, or forked.
ROUTES = [(3, 1, False, 2), (20, 1, False, 2), (20, 1, False, 1), (9, 3, True, 2),
          (3, 2, True, 1)]


@pytest.mark.parametrize("parts,tables,recursive,jobs", ROUTES)
def test_each_partition_is_reported_as_ls_selects_it(tmp_path, parts, tables, recursive,
                                                     jobs):
    wh = tmp_path / "wh"
    for t in range(tables):
        for i in range(parts):
            _mixed_partition(wh / "db.db" / f"t{t}" / f"ds={i:02d}", i + t)
    target = wh if recursive else wh / "db.db" / "t0"
    snap = ("--write-ids", "db.t0:20:9223372036854775807::2")  # write id 2 aborted
    out = tmp_path / "r.json"
    flags = ["-r", *snap] if recursive else list(snap)
    result = run("report", target, *flags, "--format", "json", "-o", out, "--jobs", jobs)
    assert result.code in (0, 1), result.err
    doc = json.loads(out.read_text())
    reported = {p["path"]: (p["base"], p["deltas"], p["obsolete"], p["aborted"], p["files"],
                            p["bytes"], p["error"])
                for t in doc["tables"] for p in t["partitions"]}
    expected: dict = {}
    for t in range(tables):
        expected.update(_as_ls_says(wh / "db.db" / f"t{t}", *snap))
    assert reported == expected and len(reported) == parts * tables
    planned = {p["path"]: (p["compaction"], p["reason"])
               for p in run("compaction-plan", target, *flags, "--format", "json").json()["plans"]}
    due = {p["path"]: (p["compaction"]["compaction"], p["compaction"]["reason"])
           for t in doc["tables"] for p in t["partitions"] if p["compaction"]}
    assert due == planned and any(kind for kind, _ in due.values())
    assert doc["totals"]["partitions"] == parts * tables


@pytest.mark.parametrize("recursive,jobs", [(False, 2), (True, 2), (False, 1)])
def test_a_table_draws_its_first_partitions_however_they_were_shared(tmp_path, recursive,
                                                                      jobs):
    # 130 partitions are checked in shares of up to 16, each share drawing its own first
    # ones: the picture keeps exactly the table's first 12, in partition order, and counts
    # the rest.
    wh = tmp_path / "wh"
    names = [f"ds={i:03d}" for i in range(128)] + ["ds=0-a", "ds=000a"]
    for name in names:
        build(wh / "db.db" / "t" / name, delta("delta_0000001_0000001_0000", acid(events(1))))
    build(wh / "db.db" / "u" / "ds=1", delta("delta_0000001_0000001_0000", acid(events(1))))
    out = tmp_path / "r.html"
    target = wh if recursive else wh / "db.db" / "t"
    assert run("report", target, *(["-r"] if recursive else []), "-o", out,
               "--jobs", jobs).code == 0
    page = out.read_text()
    section = page[page.index("<details id='t0'"):]
    section = section[:section.index("</details>")]
    svg = ET.fromstring(section[section.index("<svg"):section.index("</svg>") + 6])
    heads = [e.text for e in svg.iter(f"{NS}text") if e.get("class") == "head"]
    assert heads == sorted(names)[:12]
    assert f"... and {len(names) - 12} more partitions" in section
    assert section.count("<li>ds=") == 12  # the lines above the picture: the same twelve


def test_the_page_names_the_snapshot_it_shows(tmp_path):
    wh = warehouse(tmp_path)
    out = tmp_path / "r.html"
    assert run("report", wh, "-r", "-o", out).code == 0
    assert "snapshot everything committed (no snapshot given)" in out.read_text()
    given = "shop.orders:5:9223372036854775807::"
    assert run("report", wh / "shop.db" / "orders", "--write-ids", given, "-o", out).code == 0
    assert f"snapshot {given} (--write-ids/--txns)" in out.read_text()


def test_a_partition_row_counts_its_own_findings_not_a_nested_ones(tmp_path):
    # --recursive takes ds=1 and ds=1/hr=1 for two partitions of one table (each holds a
    # delta): a foreign file's error counts in the row of the partition holding it only
    wh = tmp_path / "wh"
    t = wh / "db.db" / "t"
    build(t / "ds=1", {**delta("delta_0000001_0000001_0000", acid(events(1))),
                       "part-00000.orc": plain()})
    build(t / "ds=1" / "hr=1", {**delta("delta_0000001_0000001_0000", acid(events(1))),
                                "part-00000.orc": plain(), "part-00001.orc": plain()})
    out = tmp_path / "r.html"
    assert run("report", wh, "-r", "-o", out).code == 0
    page = out.read_text()
    body = page[page.index("<tbody>"):page.index("</tbody>")]
    rows = {cells[1]: cells for cells in
            (re.findall(r"<td>(.*?)</td>", row) for row in body.split("<tr>")[1:])}
    assert (rows["ds=1"][8], rows["ds=1/hr=1"][8]) == ("1", "2")  # the errors column


def test_a_row_leads_to_its_table_whose_hostile_path_stays_an_attribute(tmp_path):
    from html.parser import HTMLParser

    wh = tmp_path / "wh"
    # more than three tables: every section starts collapsed
    names = ["a", "b", "t", "u'v\" onmouseover x<b>"]  # (no '=': that makes a partition)
    for name in names:
        build(wh / "db.db" / name / "ds=1", delta("delta_0000001_0000001_0000", acid(events(1))))
    out = tmp_path / "r.html"
    assert run("report", wh, "-r", "-o", out).code == 0

    class Links(HTMLParser):
        found: list = []

        def handle_starttag(self, tag, attrs):
            assert not any(k.startswith("on") for k, _ in attrs), attrs
            if tag == "a" and dict(attrs).get("href", "").startswith("#t"):
                self.found.append(dict(attrs))

    Links().feed(out.read_text())
    assert [(a["href"], a["title"].rsplit("/", 1)[-1]) for a in Links.found] == \
        [(f"#t{i}", name) for i, name in enumerate(names)]
    # a link's target opens: the page reveals the section its address names
    dom = browse(tmp_path, out, "--dump-dom", url_suffix="#t3").stdout
    opened = re.findall(r'<details id="(t\d)" open', dom)
    assert opened == ["t3"], opened


def test_a_table_given_twice_is_reported_once(tmp_path):
    wh = warehouse(tmp_path)
    orders = wh / "shop.db" / "orders"
    out = tmp_path / "r.json"
    result = run("report", orders, f"{orders}/", wh / "shop.db" / "items", "--format", "json",
                 "-o", out)
    assert result.code == 0 and "2 tables, 4 partitions" in result.err, result.err
    doc = json.loads(out.read_text())
    alone = run("validate", orders, "--format", "json").json()
    [reported] = [t for t in doc["tables"] if t["path"].endswith("orders")]
    assert len(reported["findings"]) == len(alone["findings"]) > 0


def test_findings_outside_every_table_are_counted_and_shown():
    # (validate's findings all lie in the tables it names; should one not, the page says so)
    from acidtool.cli.report_html import report_html
    from acidtool.commands.check.report import WarehouseReport
    from acidtool.core.rules import Finding
    from acidtool.core.snapshot import make_snapshot

    stray = Finding("ACID028", "error", "/wh/loose<b>.orc", "lies in no table")
    report = WarehouseReport(["/wh"], make_snapshot(), [], elsewhere=[stray])
    assert report.counts()["error"] == 1 and report.codes() == {"ACID028": 1}
    page = report_html(report)
    assert "<h2>Outside every table</h2>" in page and "/wh/loose&lt;b&gt;.orc" in page
