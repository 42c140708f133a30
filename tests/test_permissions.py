"""Permission denied, as a user who is not root meets it (as root, permissions do not bite): a
run under another user id through setpriv. One line and exit 2, never an internal error."""

import os
import shutil
import subprocess
import sys

import pytest

from .helpers.layouts import acid, build, delta, events, plain

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _as_nobody(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*NOBODY, sys.executable, "-m", "acidtool", *map(str, args)],
                          capture_output=True, text=True)


@pytest.fixture
def nobody_can_run(tmp_path):
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run acidtool as another user")
    probe = subprocess.run([*NOBODY, sys.executable, "-c", "import acidtool"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("acidtool cannot be imported as user 65534 here: "
                    + probe.stderr.strip()[-120:])
    os.chmod(tmp_path, 0o777)
    return tmp_path


def test_unreadable_directory_is_one_line(nobody_can_run):
    table = build(nobody_can_run / "t", {**delta("delta_0000001_0000001_0000"),
                                         **delta("delta_0000002_0000002_0000",
                                                 acid(events(2)))})
    subprocess.run(["chmod", "-R", "a+rX", str(table)], check=True)
    os.chmod(table / "delta_0000002_0000002_0000", 0)
    try:
        for command in (["validate", table], ["ls", table], ["read", table], ["dump", table],
                        ["meta", table], ["validate", "-r", table.parent]):
            result = _as_nobody(*command)
            assert result.returncode == 2, (command, result.stderr)
            assert result.stderr.count("\n") == 1 and "permission denied" in \
                result.stderr.lower(), (command, result.stderr)
    finally:
        os.chmod(table / "delta_0000002_0000002_0000", 0o755)


def test_convert_into_an_unwritable_table_is_one_line_and_writes_nothing(nobody_can_run):
    table = build(nobody_can_run / "t", delta("delta_0000001_0000001_0000"))
    land = build(nobody_can_run / "land", {"a.orc": plain()})
    subprocess.run(["chmod", "-R", "a+rX", str(table), str(land)], check=True)
    os.chmod(table, 0o555)
    try:
        result = _as_nobody("convert", land / "a.orc", "--table", table, "--write-id", "auto")
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and "permission denied" in result.stderr.lower()
        assert sorted(os.listdir(table)) == ["delta_0000001_0000001_0000"]
    finally:
        os.chmod(table, 0o755)


def test_an_unreadable_bucket_file_is_an_io_error_not_a_damaged_file(nobody_can_run):
    table = build(nobody_can_run / "t", {**delta("delta_0000001_0000001_0000"),
                                         **delta("delta_0000002_0000002_0000",
                                                 acid(events(2)))})
    subprocess.run(["chmod", "-R", "a+rX", str(table)], check=True)
    os.chmod(table / "delta_0000002_0000002_0000" / "bucket_00000", 0)
    for level in ("metadata", "rows"):
        result = _as_nobody("validate", table, "--level", level)
        assert result.returncode == 2, (level, result.stdout, result.stderr)
        assert "ACID006" not in result.stdout and "permission denied" in result.stderr.lower()
        assert result.stderr.count("\n") == 1, result.stderr
