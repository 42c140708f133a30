"""The console entry point: quiet about a signal that arrives while acidtool is still starting.

Importing the command line (typer, click, the commands) takes tens of milliseconds, before
``main`` installs the handlers that turn SIGINT and SIGTERM into one line. A signal in that
window stopped Python inside an import with a traceback. Until ``main`` takes over, a signal
ends the process at once with the usual status (130 or 143): nothing has been read or
written yet.

It also keeps the process off transparent huge pages (``MIMALLOC_ALLOW_THP=0``, unless the
environment says otherwise), before pyarrow loads its allocator: see ``_small_pages``.
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


def _small_pages() -> None:
    """Arrow's allocator (mimalloc) hands its freed pages back to the system and takes new ones
    for the next batch. On a kernel that backs them with transparent huge pages, each is a 2 MiB
    page the kernel zeroes first: measured on ``export`` of 10,000,000 rows, 26% of the CPU,
    and 1-1.5 s of system time a run. With ``allow_thp`` off (mimalloc then turns THP off for
    the process), ``read`` and ``export`` measured 0.5-0.8 s faster. A user's own setting
    wins."""
    os.environ.setdefault("MIMALLOC_ALLOW_THP", "0")


def main() -> None:
    _small_pages()
    try:
        signal.signal(signal.SIGINT, _starting)
        signal.signal(signal.SIGTERM, _starting)
    except ValueError:  # not the main thread: signals stay the caller's
        pass
    from .main import main as run

    try:
        run()  # which installs its own handlers first thing
    except SystemExit as exc:
        if exc.code in (128 + signal.SIGINT, 128 + signal.SIGTERM):
            _exit_interrupted(exc.code)
        raise


def _exit_interrupted(status: int) -> None:
    """An interrupted command's status (130, 143) as the process's own. Python ends a process
    by SIGINT (-2 to a parent in Python) instead of its exit status once a KeyboardInterrupt
    reached one of its top-level evaluations, even one acidtool caught and said ("acidtool:
    interrupted"): seen 6 times in 60 converts interrupted at random moments. The exit
    handlers run and the streams are flushed, as at a normal exit."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
