"""``ls --format svg``: a well-formed, inert picture of every partition on a write-id axis,
readable at 10 directories and at 2,000, rendered by a real headless Chromium where one is
installed (Debian's package; the tests that need it skip with one line without it)."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .helpers.layouts import acid, build, delta, events
from .helpers.runner import run

NS = "{http://www.w3.org/2000/svg}"


def svg_of(table: Path, *args) -> ET.Element:
    result = run("ls", table, "--format", "svg", *args)
    assert result.code in (0, 1), result.err
    return ET.fromstring(result.out.encode())


def texts(svg: ET.Element) -> list[str]:
    return ["".join(e.itertext()) for e in svg.iter(f"{NS}text")]


def tips(svg: ET.Element) -> list[str]:
    return [e.text or "" for e in svg.iter(f"{NS}title")]


def small(tmp_path: Path) -> Path:
    layout = {}
    layout.update(delta("base_0000002", acid(events(2, 3))))
    for w in (1, 3, 4):
        layout.update(delta(f"delta_{w:07d}_{w:07d}_0000", acid(events(w))))
    layout.update(delta("delta_0000004_0000004_0001", acid(events(4, stmt=1))))
    layout.update(delta("delete_delta_0000005_0000005_0000", acid(events(5))))
    layout["part-0000.orc"] = b"foreign"
    return build(tmp_path / "t", layout)


def test_every_directory_is_a_bar_with_its_status(tmp_path):
    t = small(tmp_path)
    svg = svg_of(t, "--write-ids", "t:5:9223372036854775807::3")
    said = "\n".join(tips(svg))
    assert "base_0000002: selected" in said
    assert "delta_0000001_0000001_0000: obsolete" in said
    assert "delta_0000003_0000003_0000: aborted" in said
    assert "delta_0000004_0000004_0001: selected" in said
    assert "part-0000.orc: foreign" in said
    rects = [r for r in svg.iter(f"{NS}rect") if r.get("fill") and r.get("fill") != "#999"]
    assert len(rects) >= 6
    # two statements of write id 4 stack in two lanes: same x, other y
    bars = {g.find(f"{NS}title").text.split(":")[0]: g.find(f"{NS}rect")
            for g in svg.iter(f"{NS}g") if g.find(f"{NS}title") is not None}
    s0, s1 = bars["delta_0000004_0000004_0000"], bars["delta_0000004_0000004_0001"]
    assert s0.get("x") == s1.get("x") and s0.get("y") != s1.get("y")


def test_two_thousand_directories_stay_readable(tmp_path):
    t = tmp_path / "big"
    for w in range(1, 2001):
        d = t / f"delta_{w:07d}_{w:07d}_0000"
        d.mkdir(parents=True)
        (d / "bucket_00000").write_bytes(b"x" * 10)
    (t / "base_0001000").mkdir()
    (t / "base_0001000" / "bucket_00000").write_bytes(b"x")
    result = run("ls", t, "--format", "svg")
    svg = ET.fromstring(result.out.encode())
    assert len(result.out) < 100_000
    assert len(list(svg.iter(f"{NS}rect"))) < 150
    said = "\n".join(texts(svg) + tips(svg))
    assert "1,000 obsolete delta directories" in said
    assert "1,000 read delta directories" not in said and "read delta directories" in said


def test_more_partitions_than_a_picture_holds_are_counted(tmp_path):
    layout = {}
    for p in range(45):
        layout.update({f"ds={p:02d}/{k}": v for k, v in delta("delta_0000001_0000001_0000",
                                                              acid(events(1))).items()})
    svg = svg_of(build(tmp_path / "p", layout))
    assert any("5 more partitions" in x for x in texts(svg))


def test_output_file_and_the_options_it_goes_with(tmp_path, monkeypatch):
    t = small(tmp_path)
    out = tmp_path / "t.svg"
    result = run("ls", t, "--format", "svg", "-o", out)
    assert result.code == 0 and result.out == "" and f"wrote {out}" in result.err
    ET.parse(out)
    monkeypatch.chdir(tmp_path)
    to_stdout = run("ls", t, "--format", "svg", "-o", "-")
    assert to_stdout.code == 0 and ET.fromstring(to_stdout.out.encode()) is not None
    assert not (tmp_path / "-").exists()
    assert run("ls", t, "-o", out).code == 2
    assert run("ls", tmp_path, "--format", "svg", "-r").code == 2


# ------------------------------------------------------------------------------------------------
# In a real browser


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.skip("Chromium is not installed (Debian's chromium package; make test "
                    "installs it where it can)")
    return found


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def browse(tmp_path: Path, svg: Path, *what: str, url_suffix: str = ""
           ) -> subprocess.CompletedProcess:
    return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                           "--enable-logging=stderr", "--v=0", *what, svg.as_uri() + url_suffix],
                          capture_output=True, text=True, timeout=120)


def test_chromium_renders_it_and_a_hostile_name_is_text(tmp_path):
    t = small(tmp_path)
    hostile = '<script>alert(1)</script>&"x'
    (t / hostile.replace("/", "_")).write_bytes(b"x")
    out = tmp_path / "t.svg"
    assert run("ls", t, "--format", "svg", "-o", out).code in (0, 1)
    shot = tmp_path / "t.png"
    taken = browse(tmp_path, out, f"--screenshot={shot}", "--window-size=960,400")
    assert shot.exists() and shot.stat().st_size > 5_000, taken.stderr[-2000:]
    assert "CONSOLE" not in taken.stderr and "Uncaught" not in taken.stderr
    dom = browse(tmp_path, out, "--dump-dom").stdout
    assert "<script" not in dom.replace("&lt;script", "")
    assert "&lt;script&gt;alert(1)&lt;_script&gt;" in dom  # the name, as text
    assert "delta_0000004_0000004_0001" in dom and "foreign" in dom

