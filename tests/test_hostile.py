"""Seeded, bounded fuzzing with what landing zones really hold: file and directory names with
control characters, ESC sequences, "::" workflow commands, newlines, bytes that are not UTF-8
and very long names; malformed snapshot strings; numbers past a Java long; truncated ORC bytes.
Every command in every output format must then: raise no internal error, write valid UTF-8,
valid JSON / JSON lines / XML where it promises them, and no line of text that starts with "::"
(a GitHub Actions workflow command) or carries an ESC byte (a terminal escape)."""

from __future__ import annotations

import json
import os
import random
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from .helpers import zygote
from .helpers.layouts import acid, delta, events, plain
from .helpers.runner import Result

HOSTILE = [
    b"x\n::error file=a,line=1::INJECTED",
    b"::warning::looks like a command",
    b"\x1b[31mred\x1b[0m",
    b"\x1b]0;title\x07",
    b"tab\there",
    b"cr\rreturn",
    b"bad\xff\xfeutf8",
    b"\xc3\x28broken",
    b"quote\"and'apos<&>",
    b"%0A%25percent",
    b"back\\slash",
    b"\xe2\x80\xaertl",  # U+202E right-to-left override
    b"L" * 200,
]


def _bytes_path(root: Path, *parts: bytes) -> bytes:
    return os.path.join(os.fsencode(root), *parts)


def _write(path: bytes, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def _layout(rng: random.Random, root: Path) -> None:
    for rel, data in {**delta("delta_0000001_0000001_0000"),
                      **delta("delta_0000002_0000002_0000", acid(events(2)))}.items():
        _write(_bytes_path(root, os.fsencode(rel)), data)
    contents = [plain(), acid(events(3)), acid(events(3))[:-30], b"", b"not orc at all"]
    for _ in range(rng.randint(2, 5)):
        name = rng.choice(HOSTILE) + rng.choice([b"", b".orc", b"_copy_1"])
        where = rng.choice([b"", b"delta_0000002_0000002_0000", b"delta_0000003_0000003_0000",
                            b"base_0000002", rng.choice(HOSTILE)])
        parts = [where, name] if where else [name]
        _write(_bytes_path(root, *parts), rng.choice(contents))


SVG_TAGS = {"svg", "title", "defs", "pattern", "line", "style", "rect", "text", "g"}

FORMATS = {
    "ls": [["--format", "table"], ["--format", "json"], ["--files"], ["--format", "svg"]],
    "validate": [["--format", f] for f in ("text", "json", "jsonl", "junit", "github")]
    + [["--level", "rows", "--format", "json"], ["--level", "names"],
       ["--insert-only", "--format", "github"]],
    "read": [["--format", "jsonl"], ["--format", "csv"], ["--with-row-id"],
             ["--insert-only", "--format", "csv"]],
    "dump": [["--with-file"], ["--with-file", "--all", "--synthetic-row-ids"]],
    "meta": [["--format", "table"], ["--format", "json"], ["--all"]],
    "repair": [["--format", "text"], ["--format", "json"], ["--write-id", "9", "--min-age", "0"]],
    "report": [["-o", "-"], ["--format", "json", "-o", "-"]],
    "compaction-plan": [["--format", f] for f in ("text", "json", "sql")],
    "upgrade-check": [["--format", f] for f in ("text", "json", "sql")],
    "diff": [["--from-write-id", "1", "--to-write-id", "3"],
             ["--from-write-id", "2", "--to-write-id", "5", "--insert-only"]],
}

HTML_TAGS = SVG_TAGS | {"html", "head", "meta", "style", "body", "h1", "h2", "h3", "h4", "p",
                        "ul", "li", "b", "i", "table", "thead", "tbody", "tr", "th", "td",
                        "input", "span", "details", "summary", "div", "a", "br", "script"}

SNAPSHOTS = [[], ["--write-ids", "t:5:9223372036854775807::"],
             ["--write-ids", "t:99999999999999999999:1::"], ["--write-ids", "t:x\n::error::y"],
             ["--hive-version", "2", "--txns", "9223372036854775808:1"],
             ["--hive-version", "3"], ["--txns", "5:1:\x1b[31m"]]


def _judge(args: list, result) -> None:
    where = (args, result.code, result.err[-400:])
    assert result.code != 3 and "internal error" not in result.err, where
    assert "Traceback" not in result.err, where
    for stream in (result.out, result.err):
        assert "\x1b" not in stream, where  # no terminal escape passes through
    fmt = args[args.index("--format") + 1] if "--format" in args else None
    lines = result.out.splitlines()
    if fmt != "github":
        assert not [line for line in lines if line.startswith("::")], where
    assert not [line for line in result.err.splitlines() if line.startswith("::")], where
    if result.code not in (0, 1) or not result.out:
        return
    if fmt == "json":
        json.loads(result.out)
    elif fmt == "jsonl" or args[0] == "dump" or (args[0] == "read" and fmt in (None, "jsonl")):
        for line in lines:
            json.loads(line)
    elif fmt == "junit":
        ET.fromstring(result.out.encode())
    elif fmt == "svg":  # well-formed, and no name became markup
        svg = ET.fromstring(result.out.encode())
        assert {e.tag.rsplit("}", 1)[-1] for e in svg.iter()} <= SVG_TAGS, where
    elif fmt == "github":
        assert all(line.startswith("::") for line in lines), where
    elif args[0] == "report":  # the page: no name became a tag, an attribute or a script
        tags: list = []
        page = HTMLParser()
        page.handle_starttag = lambda tag, attrs: tags.append((tag, attrs))  # type: ignore
        page.feed(result.out)
        assert {tag for tag, _ in tags} <= HTML_TAGS, where
        assert [tag for tag, _ in tags].count("script") == 1, where
        assert not [a for _, attrs in tags for a, _ in attrs if a.startswith("on")], where


def _run(*args):
    """``acidtool ARGS`` in a process of its own (forked: helpers/zygote.py), its output
    decoded strictly: a byte that is not UTF-8 fails right there."""
    proc = zygote.run([str(a) for a in args], dict(os.environ), text=False)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_hostile_names_through_every_command_and_format(tmp_path, seed):
    rng = random.Random(seed)
    table = tmp_path / "t"
    _layout(rng, table)
    for command, variants in FORMATS.items():
        for variant in variants:
            snapshot = rng.choice(SNAPSHOTS) if command in ("ls", "validate", "read") else []
            args = [command, table, *variant, *snapshot]
            _judge([str(a) for a in args], _run(*args))
    for name in rng.sample(HOSTILE, 3):  # a single hostile file, named directly
        path = _bytes_path(table, name + b".orc")
        _write(path, plain())
        for args in (["dump", os.fsdecode(path)], ["meta", os.fsdecode(path), "--format", "json"],
                     ["meta", os.fsdecode(path)]):
            _judge(args, _run(*args))


@pytest.mark.parametrize("seed", range(3))
def test_convert_takes_or_refuses_hostile_sources_in_one_line(tmp_path, seed):
    rng = random.Random(seed)
    land = tmp_path / "land"
    for name in rng.sample(HOSTILE, 3):
        _write(_bytes_path(land, name), plain(rows=[(rng.randint(0, 10**6), "x")]))
    (tmp_path / "t").mkdir()
    for fmt in ("text", "json"):
        args = ["convert", land, "--table", tmp_path / "t", "--write-id", "auto", "--format",
                fmt, "--dry-run"]
        _judge([str(a) for a in args], _run(*args))
    args = ["convert", land, "--table", tmp_path / "t", "--write-id", "auto",
            "--move-sources", tmp_path / "done"]
    result = _run(*args)
    _judge([str(a) for a in args], result)
    assert result.code == 0, result.err
    read = _run("read", tmp_path / "t")
    _judge(["read"], read)
    assert len(read.out.splitlines()) == 3


@pytest.mark.parametrize("args", [
    ["decode", "bucket", "99999999999999999999999"],
    ["decode", "bucket", "\x1b[31m"],
    ["decode", "bucket"],
    ["decode", "write-ids", "db.t:9223372036854775808:1::"],
    ["decode", "write-ids", "x\n::error::y"],
    ["decode", "write-ids", "--txns", "1:2:3:4:5:6"],
    ["decode", "nothing"],
    ["ls", "/nonexistent/\x1b[31m"],
    ["convert", "/nonexistent", "--table", "/tmp", "--write-id", "9223372036854775808"],
    ["read", "/tmp", "--limit", "-1"],
    ["validate", "/tmp", "--select", "NOPE\n::error::x"],
])
def test_malformed_arguments_are_one_line(args):
    result = _run(*args)
    _judge(args, result)
    assert result.code == 2, result
    assert len(result.err.strip().splitlines()) == 1 or args == ["decode", "bucket"], result.err


@pytest.mark.parametrize("seed", range(4))
def test_repair_apply_and_undo_on_hostile_names(tmp_path, seed, monkeypatch):
    """Applied with every leftover old enough, then undone: no internal error, clean output,
    and the tree exactly as it was (names that are not UTF-8 included)."""
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))
    rng = random.Random(seed)
    table = tmp_path / "t"
    _layout(rng, table)

    def tree():
        out = {}
        for top, dirs, files in os.walk(os.fsencode(table)):
            for n in dirs:
                out[os.path.join(top, n)] = "dir"
            for n in files:
                with open(os.path.join(top, n), "rb") as f:
                    out[os.path.join(top, n)] = f.read()
        return out

    before = tree()
    for fmt in ("text", "json"):
        args = ["repair", table, "--write-id", "9", "--min-age", "0", "--apply", "--format", fmt]
        result = _run(*args)
        _judge([str(a) for a in args], result)
        journals = sorted((tmp_path / "state" / "journals").glob("*.jsonl"))
        if result.code in (0, 1) and journals:
            undone = _run("undo", journals[-1])
            _judge(["undo", str(journals[-1])], undone)
            assert undone.code == 0, undone.err
            assert tree() == before
            journals[-1].unlink()
