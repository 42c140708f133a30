"""What a new user met (issue: every write safe, "found as a new user would"): each test here
failed before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .helpers.layouts import acid, build, delta, events, plain
from .helpers.runner import run, run_process

ROOT = Path(__file__).resolve().parents[1]
D1 = "delta_0000001_0000001_0000"


def test_traceback_keeps_the_exit_status():
    out = run_process("ls", "/definitely/not/here", "--traceback")
    assert out.code == 2 and "Traceback" in out.err
    out = run_process("ls", "--write-ids", "nonsense", "/tmp", "--traceback")
    assert out.code == 2


def test_junit_lists_only_the_rules_the_level_ran(tmp_path):
    from acidtool.core.rules import REGISTRY

    table = build(tmp_path / "t", delta(D1))
    for level, ran in (("names", {"names"}), ("metadata", {"names", "metadata"}),
                       ("rows", {"names", "metadata", "rows"})):
        doc = ET.fromstring(run("validate", table, "--level", level, "--format", "junit").out)
        codes = {c.get("classname").split(".")[1] for c in doc.iter("testcase")}
        assert codes == {c for c, r in REGISTRY.items() if r.level in ran}, level


def test_ls_fails_where_read_fails(tmp_path):
    table = build(tmp_path / "t", {**delta(D1), "part-0000.orc": plain()})
    listed = run("ls", table, "--format", "json")
    assert listed.code == 1, listed.err
    part = listed.json()["partitions"][0]
    assert part["error"] is None  # getAcidState itself succeeds
    assert part["read_error"]["kind"] == "read_fails"
    assert "bucketId out of range" in part["read_error"]["message"]
    assert run("read", table).code == 1
    # Hive 2.3 reads such a file (bucket -1): no failure there
    assert run("ls", table, "--hive-version", "2").code == 0


@pytest.mark.parametrize("partitions", [2, 40])  # one listing; shares of top partitions
def test_data_next_to_the_partitions_is_reported(tmp_path, partitions):
    layout = {f"ds={i:02d}/{rel}": data for i in range(partitions)
              for rel, data in delta(D1).items()}
    layout.update(delta("delta_0000002_0000002_0000", acid(events(2))))
    layout["part-0000.orc"] = plain()
    table = build(tmp_path / "t", layout)
    out = run("validate", table, "--format", "json")
    found = sorted(f["path"] for f in out.json()["findings"] if f["code"] == "ACID028")
    assert found == [f"{table}/delta_0000002_0000002_0000", f"{table}/part-0000.orc"], found
    assert out.code == 1


@pytest.mark.parametrize("flag,text,words", [
    ("--write-ids", "d.t:5:9223372036854775807:7:", "above the high watermark"),
    ("--write-ids", "d.t:5:9223372036854775807::9", "above the high watermark"),
    ("--write-ids", "d.t:5:3::", "is not in the list of open ids"),
    ("--write-ids", "d.t:5:4:3,4:", "not the lowest open id"),
    ("--write-ids", "d.t:5:9223372036854775807:3:", "the min-open field says nothing is"),
    ("--write-ids", "d.t:-1:9223372036854775807::", "negative"),
    ("--write-ids", "d.t:99999999999999999999:9223372036854775807::", "out of range"),
    ("--txns", "-4:9223372036854775807::", "negative"),
    ("--txns", "5:9223372036854775807:9:", "above the high watermark"),
])
def test_snapshot_strings_that_contradict_themselves_are_refused(tmp_path, flag, text, words):
    table = build(tmp_path / "t", delta(D1))
    out = run("ls", table, flag, text)
    assert out.code == 2 and words in out.err, out.err
    assert out.err.count("\n") == 1


@pytest.mark.parametrize("flag,text", [
    ("--write-ids", "d.t:5:3:3:"), ("--write-ids", "d.t:5:9223372036854775807::4"),
    ("--txns", "1000:55:50:"),  # Hive's own TestAcidUtils: the reader's transaction is 55
])
def test_snapshot_strings_hive_writes_are_taken(tmp_path, flag, text):
    assert run("ls", build(tmp_path / "t", delta(D1)), flag, text).code == 0


def test_a_signal_while_acidtool_starts_is_one_line(tmp_path):
    """SIGINT arrives while the command line is being imported (as at a Ctrl-C in the first
    tens of milliseconds): no traceback, status 130."""
    code = ("import os, signal, sys\n"
            "class Hook:\n"
            "    @staticmethod\n"
            "    def find_spec(name, path, target=None):\n"
            "        if name == 'typer':\n"
            "            os.kill(os.getpid(), signal.SIGINT)\n"
            "        return None\n"
            "sys.meta_path.insert(0, Hook)\n"
            "sys.argv = ['acidtool', 'ls', sys.argv[1]]\n"
            "from acidtool.cli.entry import main\n"
            "main()\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True)
    assert proc.returncode == 130 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == "acidtool: interrupted\n"


@pytest.mark.parametrize("length", [243, 250, 255])
def test_names_up_to_the_longest_a_filesystem_takes(tmp_path, length):
    name = "0" * (length - 2) + "_0"  # an original file name Hive numbers
    table = build(tmp_path / "t", {name: plain()})
    for command in (["ls"], ["validate", "--level", "rows"], ["read"], ["dump"], ["meta"]):
        target = table / name if command[0] in ("dump", "meta") else table
        out = run(command[0], target, *command[1:])
        assert out.code in (0, 1), (command, out.err)
        assert "internal error" not in out.err


def test_json_output_of_names_that_are_not_utf8_is_strict_and_reversible(tmp_path):
    from acidtool.cli.escapes import unescape_name

    table = build(tmp_path / "t", delta(D1))
    raw = os.fsencode(table) + b"/x\xff\\y.orc"
    with open(raw, "wb") as f:
        f.write(b"not orc")
    out = run("validate", table, "--format", "json")
    assert "\\udc" not in out.out  # a lone surrogate: strict parsers refuse it
    out.out.encode("utf-8")
    paths = [f["path"] for f in out.json()["findings"]]
    named = [p for p in paths if "x" in p.rsplit("/", 1)[-1]]
    assert named and all(unescape_name(p) == raw for p in named), named
    for fmt in ("jsonl",):
        lines = run("validate", table, "--format", fmt).out.splitlines()
        assert lines and "\\udc" not in "".join(lines)
        assert any(unescape_name(json.loads(line)["path"]) == raw for line in lines)
    listed = run("ls", table, "--format", "json", "--files")
    assert "\\udc" not in listed.out and json.loads(listed.out)


def test_the_demo_names_a_tool_that_runs(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "acidtool.demo", str(tmp_path / "demo")],
                          capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PATH": "/usr/bin:/bin"})
    command = proc.stdout.splitlines()[-1].split()
    tool = command[0]
    assert tool != "acidtool" and os.access(tmp_path / tool, os.X_OK), proc.stdout
    ran = subprocess.run([str(tmp_path / tool), *[c.strip("'") for c in command[1:]]],
                         capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 0 and "base_0000002" in ran.stdout, ran.stderr


def test_no_stale_derby_log_is_committed():
    tracked = subprocess.run(["git", "ls-files", "derby.log"], cwd=ROOT, capture_output=True,
                             text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    assert tracked.stdout == ""
    assert "derby.log" in (ROOT / ".gitignore").read_text()


@pytest.mark.parametrize("signalled,status", [(KeyboardInterrupt, 130), ("terminated", 143)])
def test_a_signal_python_wraps_while_creating_a_class_is_still_one_line(tmp_path, monkeypatch,
                                                                        signalled, status):
    """A SIGINT or SIGTERM that lands while Python creates a class (a dataclass of a module a
    command imports late) reaches acidtool inside the RuntimeError Python 3.11 raises for
    __set_name__: still an interruption, one line and 130 or 143, not an internal error."""
    import acidtool.cli.main as cli
    from acidtool.core.errors import Terminated

    raised = Terminated if signalled == "terminated" else signalled

    class Starting:
        def main(self, **kwargs):
            try:
                raise raised()
            except KeyboardInterrupt as exc:
                raise RuntimeError("Error calling __set_name__ on 'Field' instance") from exc

    monkeypatch.setattr(cli, "command", lambda: Starting())
    out = run("ls", tmp_path)
    assert (out.code, out.err) == (status, "acidtool: interrupted\n")
