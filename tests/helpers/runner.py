"""Running the CLI in-process (fast) or as a subprocess (the real console script)."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from acidtool.cli import main


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
