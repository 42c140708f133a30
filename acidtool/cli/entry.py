"""The console entry point: quiet about a signal that arrives while acidtool is still starting.

Importing the command line (typer, click, the commands) takes tens of milliseconds, before
``main`` installs the handlers that turn SIGINT and SIGTERM into one line. A signal in that
window stopped Python inside an import with a traceback. Until ``main`` takes over, a signal
ends the process at once with the usual status (130 or 143): nothing has been read or
written yet.
"""

import os
import signal
import sys


def _starting(signum, frame) -> None:
    try:
        sys.stderr.write("acidtool: interrupted\n")
        sys.stderr.flush()
    finally:
        os._exit(128 + signum)


def main() -> None:
    try:
        signal.signal(signal.SIGINT, _starting)
        signal.signal(signal.SIGTERM, _starting)
    except ValueError:  # not the main thread: signals stay the caller's
        pass
    from .main import main as run

    run()  # which installs its own handlers first thing
