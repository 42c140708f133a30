"""The CLI's edges, as a new user meets them: one-line errors with distinct exit statuses,
--help that reads well, and the small promises of read, validate and convert."""

import json
import os
import stat

import pyarrow as pa
import pyarrow.orc as paorc
import pytest

from .helpers.layouts import acid, build, delta, events
from .helpers.runner import run, run_process


def _table(root):
    return build(root, {**delta("delta_0000001_0000001_0000"),
                        **delta("delta_0000002_0000002_0000", acid(events(2)))})


@pytest.mark.parametrize("args", [
    ["ls"], ["ls", "/tmp", "--format", "xml"], ["validate", "/tmp", "--nope"], ["decode", "bucket"],
    ["decode", "write-ids"], ["convert", "x"], ["read", "/tmp", "--limit", "x"], ["nope"],
])
def test_usage_errors_are_one_line_naming_the_help_to_read(args):
    result = run_process(*args)
    assert result.code == 2
    assert result.err.count("\n") == 1 and result.err.startswith("acidtool: error: "), result.err
    assert "--help')" in result.err


def test_a_group_without_a_command_prints_its_help(tmp_path):
    result = run_process("decode")
    assert result.code == 2 and "bucket" in result.err and "write-ids" in result.err


def test_an_internal_error_exits_3_and_a_usage_error_2(tmp_path, monkeypatch):
    import acidtool.table.ls as L

    table = _table(tmp_path / "t")
    monkeypatch.setattr(L, "split_partitions", lambda paths: 1 / 0)
    result = run("ls", table)
    assert result.code == 3
    assert result.err.startswith("acidtool: internal error: ZeroDivisionError")
    assert "--traceback" in result.err
    assert run("ls", tmp_path / "missing").code == 2


def test_help_names_values_in_capitals_and_lists_traceback():
    top = run_process("--help").out
    assert "--traceback" in top and "3 internal error" in top
    ls = run_process("ls", "--help").out
    assert "Usage: acidtool ls [OPTIONS] PATH" in ls and "{path}" not in ls
    assert "--write-ids WRITE_IDS" in ls and "<str>" not in ls
    dump = run_process("dump", "--help").out
    assert "Usage: acidtool dump [OPTIONS] TARGETS..." in dump
    # examples keep their lines: no option is wrapped away from its command
    convert = run_process("convert", "--help").out
    assert "acidtool convert /landing/orders/*.orc --table /warehouse/shop.db/orders " \
           "--write-id auto" in convert


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_read_output_is_made_as_any_file_under_the_umask(tmp_path, mask):
    table = _table(tmp_path / "t")
    out = tmp_path / "rows.parquet"
    old = os.umask(mask)
    try:
        result = run("read", table, "--format", "parquet", "-o", out)
    finally:
        os.umask(old)
    assert result.code == 0, result.err
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".acidtool-")] == []


def test_validate_recursive_without_any_table_fails(tmp_path):
    (tmp_path / "landing" / "sub").mkdir(parents=True)
    paorc.write_table(pa.table({"id": [1]}), str(tmp_path / "landing" / "sub" / "x.orc"))
    result = run("validate", "-r", tmp_path / "landing")
    assert result.code == 2
    assert result.err == f"acidtool: error: no ACID table or partition found under " \
                         f"{tmp_path / 'landing'}\n"
    _table(tmp_path / "landing" / "t")
    assert run("validate", "-r", tmp_path / "landing").code == 0


@pytest.mark.parametrize("command", ["ls", "validate", "read"])
@pytest.mark.parametrize("name", ["delta_0000002_0000002_0000", "base_0000007",
                                  "delete_delta_0000003_0000003_0000"])
def test_a_base_or_delta_directory_is_not_a_table(tmp_path, command, name):
    table = _table(tmp_path / "t")
    (table / name).mkdir(exist_ok=True)
    result = run(command, table / name)
    assert result.code == 2
    assert f"give the table (or partition) directory, {table}" in result.err
    assert run("dump", table / "delta_0000002_0000002_0000").code == 0  # dump reads one


@pytest.mark.parametrize("name", ["base_only", "delta_lake", "delete_delta_x", "deltas"])
def test_a_table_whose_name_only_looks_like_a_delta_is_a_table(tmp_path, name):
    table = _table(tmp_path / name)
    assert run("ls", table).code == 0
    assert run("validate", table).code == 0


def test_convert_schema_casts_each_source_safely(tmp_path):
    land = tmp_path / "land"
    land.mkdir()
    paorc.write_table(pa.table({"id": pa.array([1, 2], pa.int32()), "name": ["a", "b"]}),
                      str(land / "a.orc"))
    paorc.write_table(pa.table({"id": pa.array([3], pa.int64()), "name": ["c"]}),
                      str(land / "b.orc"))
    (tmp_path / "t").mkdir()
    refused = run("convert", land, "--table", tmp_path / "t", "--write-id", "1")
    assert refused.code == 2 and "give --schema" in refused.err
    result = run("convert", land, "--table", tmp_path / "t", "--write-id", "1", "--schema",
                 "struct<id:bigint,name:string>", "--format", "json")
    assert result.code == 0, result.err
    assert [json.loads(x)["id"] for x in run("read", tmp_path / "t").out.splitlines()] == [1, 2, 3]
    narrow = run("convert", land, "--table", tmp_path / "t", "--write-id", "2", "--schema",
                 "struct<id:int,name:string>", "--allow-duplicates")
    assert narrow.code == 2 and "int64 cannot be cast safely to int32" in narrow.err


def test_human_numbers_have_one_style(tmp_path):
    table = build(tmp_path / "t", {"000000_0": acid(events(1, n=1))})
    first = run("ls", table).out.splitlines()[0]
    assert "1 original file read" in first and "1 file," in first


@pytest.mark.slow
def test_spark_says_it_is_starting_on_a_terminal_only(tmp_path):
    """On a terminal, a --spark command says that Spark is starting (the JVM takes seconds and
    its own lines go to a log); piped, it says nothing of it."""
    import subprocess
    import sys

    pytest.importorskip("pyspark")
    from .helpers.spark import java_problem

    if java_problem():
        pytest.skip(java_problem())
    t = build(tmp_path / "t", delta("delta_0000001_0000001_0000", acid(events(1))))
    args = ["ls", tmp_path, "-r", "--spark", "--master", "local[1]"]
    temp = tmp_path.parent / f"{tmp_path.name}-tmp"
    temp.mkdir()
    piped = subprocess.run([sys.executable, "-m", "acidtool", *map(str, args)],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "TMPDIR": str(temp)})
    assert piped.returncode in (0, 1) and "starting Spark" not in piped.stderr
    assert not list(temp.glob("acidtool-spark-*.log"))  # the JVM's quiet log is not left
    out = _on_a_terminal(args)
    assert b"acidtool: starting Spark (local[1])..." in out
    assert t.name.encode() in out


@pytest.mark.parametrize("lines, kept", [
    (["WARNING: Using incubator modules", "26/11/29 WARN Utils: hostname resolves to 127.0.0.1"],
     False),
    ([], False),
    (["26/11/29 06:09:54 ERROR Executor: Exception in task 0.0"], True),
    (["java.lang.OutOfMemoryError: Java heap space", "\tat org.apache.spark.Foo"], True),
    (["py4j.protocol.Py4JJavaError: An error occurred", "Caused by: java.io.IOException"], True),
])
def test_the_jvms_log_is_removed_at_exit_unless_it_holds_an_error(tmp_path, lines, kept):
    from acidtool.io import spark

    log = tmp_path / "acidtool-spark-x.log"
    log.write_text("".join(line + "\n" for line in lines))
    spark._drop_quiet_log(str(log))
    assert log.exists() == kept
    spark._drop_quiet_log(str(tmp_path / "gone.log"))  # no error for a log removed already


def _on_a_terminal(args: list) -> bytes:
    """What a command prints with stdout and stderr a terminal (a pty)."""
    import pty
    import sys

    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.executable, [sys.executable, "-m", "acidtool", *map(str, args)])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out


def test_a_progress_bar_on_a_terminal_and_nothing_in_a_pipe(tmp_path):
    layout = {}
    for b in range(6):
        layout[f"delta_0000001_0000001_0000/bucket_{b:05d}"] = acid(events(1, 2, bucket=b))
    t = build(tmp_path / "t", layout)
    out = tmp_path / "rows.csv"
    seen = _on_a_terminal(["read", t, "--format", "csv", "-o", out])
    assert b"/6 buckets read" in seen and b"acidtool: [" in seen, seen
    assert b"\r\x1b[K" in seen  # the line is cleared when the work is done
    piped = run_process("read", t, "--format", "csv", "-o", tmp_path / "again.csv")
    assert piped.code == 0 and "buckets read" not in piped.err and "\r" not in piped.err
    assert out.read_text() == (tmp_path / "again.csv").read_text()


@pytest.mark.parametrize("command", ["diff", "export", "compact"])
def test_diff_export_and_compact_draw_the_bar_on_a_terminal(tmp_path, monkeypatch, command):
    layout = {}
    for w in (1, 2):
        for b in range(4):
            layout[f"delta_{w:07d}_{w:07d}_0000/bucket_{b:05d}"] = acid(events(w, 2, bucket=b))
    t = build(tmp_path / "t", layout)
    monkeypatch.setenv("ACIDTOOL_STATE_DIR", str(tmp_path / "state"))  # compact's journal
    args = {"diff": ["diff", t, "--from-write-id", "1", "--to-write-id", "2"],
            "export": ["export", t, "--to", "iceberg", "--catalog", tmp_path / "lake",
                       "--table", "s.t"],
            "compact": ["compact", t, "--major", "--apply"]}[command]
    seen = _on_a_terminal(args)
    total = {"diff": b"/8 buckets read", "export": b"/4 units",
             "compact": b"0/16 events compacted"}[command]
    assert total in seen and b"acidtool: [" in seen, seen
    assert b"\r\x1b[K" in seen
    if command == "compact":  # its line per partition is for pipes and logs
        assert b"major compaction of" not in seen
        piped = run_process("compact", build(tmp_path / "t2", layout), "--major", "--apply")
        assert piped.code == 0, piped.err
        assert "major compaction of (table root)" in piped.err
        assert "events compacted" not in piped.err and "\r" not in piped.err


def test_the_bar_draws_at_most_ten_times_a_second_and_clears_its_line():
    import io

    from acidtool.io.progress import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    stream = Tty()
    bar = Progress(1000, None, "files read", stream)
    for _ in range(1000):
        bar.tick()
    drawn = stream.getvalue()
    assert drawn.count("\r") <= 3  # the first drawing, the clearing: not a thousand
    assert drawn.endswith("\r\x1b[K")
    assert "files read" in drawn and "[" in drawn
    quiet = io.StringIO()  # not a terminal
    Progress(10, None, "x", quiet).tick(10)
    assert quiet.getvalue() == ""


def test_warehouse_commands_draw_the_bar_on_a_terminal(tmp_path):
    wh = tmp_path / "wh"
    for t in range(3):
        build(wh / "db.db" / f"t{t}", delta("delta_0000001_0000001_0000", acid(events(1))))
    one = acid(events(1))  # compaction-plan judges 64 partitions a share: more than one share
    build(wh / "db.db" / "wide", {f"ds={p:03d}/delta_0000001_0000001_0000/bucket_00000": one
                                  for p in range(70)})
    for args, what in ((["ls", wh, "-r"], b"tables selected"),
                       (["compaction-plan", wh, "-r"], b"partitions judged"),
                       (["upgrade-check", wh, "-r"], b"partitions judged")):
        seen = _on_a_terminal(args)
        assert what in seen and b"\r\x1b[K" in seen, (args, seen[-500:])
        piped = run_process(*args)
        assert what.decode() not in piped.err and "\r" not in piped.err


def test_every_error_survives_pickling():
    """Errors cross process boundaries (validate's and report's workers, Spark's tasks):
    each class round-trips through pickle with its message and fields."""
    import inspect
    import pickle

    from acidtool.core import errors

    for name, cls in inspect.getmembers(errors, inspect.isclass):
        if not issubclass(cls, errors.AcidToolError):
            continue
        if issubclass(cls, errors.AcidStateError):
            made = cls("why", hive_exception="java.io.IOException", path="/t/delta_1_1")
        else:
            made = cls("why")
        back = pickle.loads(pickle.dumps(made))
        assert type(back) is cls and str(back) == "why", name
        assert vars(back) == vars(made), name


@pytest.mark.parametrize("setting, expected", [(None, "0"), ("1", "1")])
def test_the_command_line_keeps_off_huge_pages_unless_told(tmp_path, setting, expected):
    """Arrow's allocator hands pages back and takes new ones for every batch; backed by
    transparent huge pages, each new one is 2 MiB the kernel zeroes first (a quarter of
    export's CPU). The console entry turns them off for its process, unless the user's own
    MIMALLOC_ALLOW_THP says otherwise."""
    import subprocess
    import sys

    if pa.default_memory_pool().backend_name != "mimalloc":
        pytest.skip("Arrow's allocator here is not mimalloc")
    try:
        with open("/proc/self/status") as f:
            if "THP_enabled:" not in f.read():
                pytest.skip("this kernel does not report THP_enabled")
    except OSError:
        pytest.skip("no /proc/self/status (not Linux)")
    table = _table(tmp_path / "t")
    code = ("import atexit, sys\n"
            "def said():\n"
            "    status = open('/proc/self/status').read()\n"
            "    print('THP', status.split('THP_enabled:')[1].split()[0], file=sys.stderr)\n"
            "atexit.register(said)\n"
            "from acidtool.cli.entry import main\n"
            "sys.argv = ['acidtool', *sys.argv[1:]]\n"
            "main()\n")
    env = {k: v for k, v in os.environ.items() if k != "MIMALLOC_ALLOW_THP"}
    if setting is not None:
        env["MIMALLOC_ALLOW_THP"] = setting
    proc = subprocess.run([sys.executable, "-c", code, "read", str(table), "--limit", "1"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == f"THP {expected}"


@pytest.mark.parametrize("signalled, status", [(None, 3), ("TERMINATED", 143),
                                               ("INTERRUPTED", 130)])
def test_an_error_python_raises_where_a_signal_landed_is_the_signal(monkeypatch, capsys,
                                                                    signalled, status):
    """A SIGTERM that lands while Python's import machinery makes an ImportError's message
    is dropped, and Python raises "TypeError: expected a message argument" in its place (seen
    once in a convert killed at a random moment). Once a signal has been recorded, such an
    error ends the command as the signal would, with one line; without one it is an
    internal error."""
    from acidtool.cli import main as cli
    from acidtool.core import errors

    class Command:
        def main(self, **kw):
            if signalled:
                getattr(errors, signalled).append(15 if signalled == "TERMINATED" else 2)
            raise TypeError("expected a message argument")

    monkeypatch.setattr(cli, "command", Command)
    try:
        assert cli._run(["ls", "x"], False) == status
    finally:
        errors.TERMINATED.clear()
        errors.INTERRUPTED.clear()
    err = capsys.readouterr().err
    assert err.strip() == ("acidtool: interrupted" if signalled else
                           "acidtool: internal error: TypeError: expected a message argument "
                           "(run again with --traceback and report it)"), err


@pytest.mark.parametrize("args", [
    ["read", "{t}", "--spark", "--format", "parquet", "-o", "{tmp}/out"],
    ["validate", "{t}", "--level", "rows", "--spark"],
    ["ls", "-r", "{t}", "--spark"],
    ["compaction-plan", "{t}", "--spark"],
    ["report", "{t}", "-o", "{tmp}/r.html", "--spark"],
    ["compact", "{t}", "--major", "--spark", "--apply", "--journal", "{tmp}/j.jsonl"],
    ["delete", "{t}", "--where", "id = 1", "--write-id", "9"],
    ["update", "{t}", "--set", "id=2", "--where", "id = 1", "--write-id", "9"],
    ["delete", "{t}", "--where", "id = 1", "--write-id", "auto"],
    ["export", "{t}", "--to", "iceberg", "--catalog", "{tmp}/cat", "--table", "a.b", "--spark"],
])
def test_spark_commands_without_pyspark_refuse_in_one_line_and_touch_nothing(tmp_path, args):
    import subprocess
    import sys

    table = _table(tmp_path / "t")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    hidden = tmp_path.parent / f"{tmp_path.name}-nopyspark"
    (hidden / "pyspark").mkdir(parents=True)
    (hidden / "pyspark" / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(hidden), *filter(None, [os.environ.get("PYTHONPATH")])])}
    given = [a.format(t=table, tmp=tmp_path) for a in args]
    proc = subprocess.run([sys.executable, "-m", "acidtool", *given], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    needs = f"{args[0]} runs on Spark and needs" if args[0] in ("delete", "update") else \
        "--spark needs"
    said = f"{needs} pyspark: pip install 'acidtool[spark]'" if "auto" not in args else (
        "--write-id auto allocates the write id in the metastore: give --metastore "
        "thrift://HOST:PORT, or a number")  # (before Spark is looked for)
    assert proc.stderr.strip().splitlines() == [f"acidtool: error: {said}"], proc.stderr
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
