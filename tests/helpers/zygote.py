"""``acidtool ARGS`` in a process of its own, forked from one that has imported acidtool already.

The kill tests run a command hundreds of times (a kill at every fault point, then undo, then
the command again), the hostile-names matrix 46 a seed, docs/update.py a hundred examples a
check. A new interpreter spends most of a small command's time importing:
``python -m acidtool ls`` 0.60 s against 0.23 s forked, ``validate --level rows`` 1.20 s against
0.41 s (measured with the suite running beside it). So each test worker starts one server
process (single threaded: forking it is safe), which imports the command line and pyarrow and
forks a child per command. The child is what ``python -m acidtool ARGS`` is: its own pid, its
own environment, working directory and standard streams, signals delivered to it alone, its
exit status (or the signal that killed it) as the test's return code; only the imports are
done before it starts. Tests of the interpreter's start itself (the entry point, which modules
a command imports) keep a real ``subprocess``; so does every run when the environment has
``ACIDTOOL_TEST_FORK=0``.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

_SERVER: list[subprocess.Popen] = []
_LOCK = threading.Lock()


def run(argv: list[str], env: dict[str, str], *, cwd: str | None = None, timeout: float = 120,
        stdin: bytes | None = None, text: bool = True) -> subprocess.CompletedProcess:
    """``python -m acidtool *argv`` with ``env`` (its output as ``subprocess.run(...,
    capture_output=True, text=text)`` gives it: undecodable bytes replaced in text, bytes as
    written otherwise); TimeoutExpired after ``timeout`` seconds."""
    if os.environ.get("ACIDTOOL_TEST_FORK") == "0":
        proc = subprocess.run([sys.executable, "-m", "acidtool", *argv], env=env, cwd=cwd,
                              capture_output=True, timeout=timeout, input=stdin or b"")
        if text:
            proc.stdout, proc.stderr = (b.decode(errors="replace")
                                        for b in (proc.stdout, proc.stderr))
        return proc
    with _LOCK, tempfile.TemporaryDirectory(prefix="acidtool-fork-") as tmp:
        out, err, inp = (os.path.join(tmp, n) for n in ("out", "err", "in"))
        Path(inp).write_bytes(stdin or b"")
        server = _server()
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps({"argv": argv, "env": env, "cwd": cwd or os.getcwd(),
                                       "out": out, "err": err, "in": inp}).encode() + b"\n")
        server.stdin.flush()
        pid = json.loads(server.stdout.readline())["pid"]
        if not select.select([server.stdout], [], [], timeout)[0]:
            os.kill(pid, 9)
            json.loads(server.stdout.readline())
            raise subprocess.TimeoutExpired(["acidtool", *argv], timeout)
        code = json.loads(server.stdout.readline())["rc"]
        streams = Path(out).read_bytes(), Path(err).read_bytes()
        if text:
            streams = tuple(b.decode(errors="replace") for b in streams)
        return subprocess.CompletedProcess(["acidtool", *argv], code, *streams)


def _server() -> subprocess.Popen:
    if _SERVER and _SERVER[0].poll() is None:
        return _SERVER[0]
    env = {**os.environ, "MIMALLOC_ALLOW_THP": os.environ.get("MIMALLOC_ALLOW_THP", "0")}
    proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env)
    _SERVER[:] = [proc]
    return proc


def serve() -> None:
    """The server: import, then a child per request line, its pid and then its status back."""
    import pyarrow.fs  # noqa: F401
    import pyarrow.orc  # noqa: F401

    import acidtool.cli.entry  # noqa: F401
    import acidtool.cli.main  # (the commands, typer, pyarrow)

    acidtool.cli.main.command()  # the click command, made once for every child
    _import_acidtool()

    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    for line in requests:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req)  # never returns
        answers.write(json.dumps({"pid": pid}).encode() + b"\n")
        answers.flush()
        _, status = os.waitpid(pid, 0)
        answers.write(json.dumps({"rc": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
        answers.flush()


# Imports a command makes itself (the Spark source's module imports pyspark): left to the child
_NOT_PRELOADED = ("acidtool.__main__", "acidtool.hiveacid.source")
# what acidtool imports only where it needs them: a child must import them as the command would
_LATE = ("pandas", "pyspark", "py4j", "pyiceberg", "sqlalchemy")


def _import_acidtool() -> None:
    """Every module of acidtool, as the commands import them (a repair's modules took a forked
    child 0.4-0.8 s with the suite running), but none of the heavy packages acidtool imports
    late: a command that would import pandas or pyspark still does so in the child."""
    import importlib

    root = Path(__file__).resolve().parents[2]
    for path in sorted((root / "acidtool").rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        if name not in _NOT_PRELOADED:
            importlib.import_module(name)
    early = sorted({m.split(".")[0] for m in sys.modules} & set(_LATE))
    assert not early, f"preloading acidtool imported {early}: add the module to _NOT_PRELOADED"


def _child(req: dict) -> None:
    code = 1
    try:
        for fd, name, flags in ((0, "in", os.O_RDONLY),
                                (1, "out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, "err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            opened = os.open(req[name], flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        # (the server is a Python started as the command would be, its streams not a
        # terminal either: each stream takes its encoding and error handler)
        sys.stdin, sys.stdout, sys.stderr = (
            open(fd, mode, encoding=like.encoding, errors=like.errors, closefd=False)
            for fd, mode, like in ((0, "r", sys.__stdin__), (1, "w", sys.__stdout__),
                                   (2, "w", sys.__stderr__)))
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        sys.argv = ["acidtool", *req["argv"]]
        from acidtool.cli.entry import main

        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


if __name__ == "__main__":
    sys.path[0] = str(Path(__file__).resolve().parents[2])  # the checkout, not tests/helpers
    serve()
