"""Running the CLI in-process (fast) or as a subprocess (the real console script)."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from acidtool.cli.main import main

from . import zygote


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


def run(*args: str | Path) -> Result:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)  # has .buffer, like stdout
    err = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out.flush()
    return Result(code, raw.getvalue().decode("utf-8"), err.getvalue())


def run_process(*args: str | Path, stdin: bytes | None = None) -> Result:
    proc = subprocess.run([sys.executable, "-m", "acidtool", *map(str, args)],
                          capture_output=True, input=stdin)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def run_imports(module: str, *args: str | Path) -> tuple[Result, bool]:
    """``acidtool ARGS`` run by the console entry point in a fresh process (so that what it
    decides for the whole process applies), and whether ``module`` was imported by the end."""
    code = ("import sys\nfrom acidtool.cli.main import main\n"
            "module, sys.argv = sys.argv[1], ['acidtool', *sys.argv[2:]]\n"
            "try:\n    main()\n"
            "except SystemExit as exc:\n    status = exc.code\n"
            "print(status, module in sys.modules, file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, module, *map(str, args)],
                          capture_output=True, text=True, timeout=300)
    *err, last = proc.stderr.strip().splitlines() or [""]
    status, _, imported = last.partition(" ")
    return (Result(int(status) if status.isdigit() else proc.returncode or 3, proc.stdout,
                   "\n".join(err) if imported else proc.stderr), imported == "True")


def acidtool_process(*args, state: Path, kill_at: int | None = None
                     ) -> subprocess.CompletedProcess:
    """``acidtool ARGS`` in a process of its own (forked from one that imported acidtool:
    ``helpers/zygote.py``), its journals in ``state``; ``kill_at``: the process kills itself
    (SIGKILL) at its N-th fault point (ACIDTOOL_KILL_AT)."""
    import os

    env = {**os.environ, "ACIDTOOL_STATE_DIR": str(state)}
    env.pop("ACIDTOOL_KILL_AT", None)
    if kill_at is not None:
        env["ACIDTOOL_KILL_AT"] = str(kill_at)
    return zygote.run([str(a) for a in args], env, timeout=120)
