"""The entry point (``acidtool``): the one error boundary of the command line.

Every failure becomes one line on stderr and an ``ExitStatus``: click's usage errors 2, acidtool's
typed errors the status of their class, anything else 3 (an internal error, to report).
``--traceback`` anywhere on the line (or ``ACIDTOOL_TRACEBACK=1``) shows the traceback instead.
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys

import typer

from ..core.errors import (
    COMMITTED,
    INTERRUPTED,
    SHIELD,
    TERMINATED,
    AcidToolError,
    ExitStatus,
    Terminated,
)
from .app import app, decode_app, note, silence_stdout
from .output import display

# Each module registers its commands; --help lists them in this order.
for _module in ("inspect", "check", "plan", "compact", "upgrade", "report", "rows", "write", "repair",
                "export", "decode", "doctor", "dml"):
    importlib.import_module(f"{__package__}.{_module}")
app.add_typer(decode_app, name="decode")

# Commands whose process may give pandas objects to pyarrow: a Spark driver's (delete and
# update always start Spark, the others with --spark). Every other command's process hands
# pyarrow Python values and Arrow only (export: pyiceberg too), and leaves pandas out of it.
_SPARK_DRIVERS = ("delete", "update")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None and args[:1] and args[0] not in _SPARK_DRIVERS and "--spark" not in args:
        from ..io.nopandas import leave_pandas_out

        leave_pandas_out()
    traceback = "--traceback" in args or os.environ.get("ACIDTOOL_TRACEBACK") == "1"
    try:
        previous = signal.signal(signal.SIGTERM, _terminated)
        previous_int = signal.signal(signal.SIGINT, _interrupted)
    except ValueError:  # not the main thread (a library caller's): signals stay theirs
        previous = previous_int = None
    hook, sys.unraisablehook = sys.unraisablehook, _unraisable(sys.unraisablehook)
    _FINISHED.clear()
    COMMITTED.clear()  # (a library call's, or an earlier command's: only main reads it)
    try:
        status = _run(args, traceback)
    finally:
        # the command is over: a SIGTERM from here on is recorded, not raised in the middle
        # of giving the handlers back, and is then sent again to the handler it would meet
        _FINISHED.append(len(_SIGNALLED))
        sys.unraisablehook = hook
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
            signal.signal(signal.SIGINT, previous_int)
            if len(_SIGNALLED) > _FINISHED[0]:
                os.kill(os.getpid(), signal.SIGTERM)
        # the signals were this command's: the next command or library call of the same
        # process (an AcidTable.delete, say) must not take one for its own
        TERMINATED.clear()
        INTERRUPTED.clear()
    sys.exit(int(status) if isinstance(status, int) else ExitStatus.OK)


def _run(args: list[str], traceback: bool):
    args = [a for a in args if a != "--traceback"]
    try:
        status = command().main(args=args, prog_name="acidtool", standalone_mode=False)
        if status == ExitStatus.INTERRUPTED:  # typer's answer to KeyboardInterrupt
            status = _interrupted_status(Terminated() if _SIGNALLED else KeyboardInterrupt())
    except BrokenPipeError:
        # Output went to a pipe that closed (e.g. `| head`): not an error.
        silence_stdout()
        status = ExitStatus.OK
    except typer.TyperException as exc:  # click's usage errors, as typer raises them
        _print_traceback(traceback)
        status = _usage_error(exc)
    except AcidToolError as exc:
        _print_traceback(traceback)
        note(f"error: {exc}")
        status = exc.exit_status
    except OSError as exc:  # a filesystem's answer (no permission, gone, full): not a bug
        _print_traceback(traceback)
        where = f"{exc.filename}: " if exc.filename else ""
        note(f"error: {where}{exc.strerror or exc}")
        status = ExitStatus.USAGE
    except (KeyboardInterrupt, typer.Abort) as exc:
        status = _interrupted_status(exc)
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into one line
        signalled = _interruption(exc)
        if signalled is None and (TERMINATED or INTERRUPTED):
            # an error Python raised where the signal landed and dropped it (an import making
            # its ImportError's message: "TypeError: expected a message argument")
            signalled = Terminated() if TERMINATED else KeyboardInterrupt()
        if signalled is not None:
            return _interrupted_status(signalled)
        _print_traceback(traceback)
        note(f"internal error: {type(exc).__name__}: {exc} "
                    "(run again with --traceback and report it)")
        status = ExitStatus.INTERNAL
    return status


def _interrupted_status(exc: BaseException) -> int:
    """One line (naming a writer's run that had ended: its commit is made, and its undo), and
    the status of the signal that stopped the command."""
    table, journal = COMMITTED[-1] if COMMITTED else ("", "")
    note(f"interrupted after the commit: {display(table)} is committed (journal "
         f"{display(journal)}; `acidtool undo {display(journal)}` takes it back)"
         if table else "interrupted")
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)


def _interruption(exc: BaseException) -> KeyboardInterrupt | None:
    """The SIGINT or SIGTERM an error was raised from: Python wraps one that lands while it
    creates a class (a command's module imported late) in a RuntimeError of its own."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _print_traceback(wanted: bool) -> None:
    """--traceback: the traceback on stderr, above the one line; the exit status stays the
    error's own (a usage error is still 2)."""
    if wanted:
        import traceback as tb

        tb.print_exc()


@functools.cache
def command():
    """The click command typer makes of the app, with every argument and option value named in
    capitals in --help (`PATH`, `--write-ids WRITE_IDS`), not as typer's `{path}` and `<str>`.
    Made once a process (typer reads every command's signature: 70-100 ms) and reused, as
    click's own test runner reuses a command: each invocation has a context of its own."""
    import typer.main

    group = typer.main.get_command(app)
    stack = [group]
    while stack:
        cmd = stack.pop()
        stack.extend(getattr(cmd, "commands", {}).values())
        for param in cmd.params:
            flag = getattr(param, "is_flag", False) or getattr(param, "count", False)
            choice = hasattr(param.type, "choices")
            if param.metavar is None and not flag and not choice and param.name:
                param.metavar = param.name.upper()
            if param.param_type_name == "argument":
                param.make_metavar = _argument_metavar(param)  # type: ignore[method-assign]
    return group


def _argument_metavar(param):
    """PATH, TARGETS... or [PATH] in the usage line (typer writes {PATH} for a required one)."""
    name = param.metavar + ("..." if param.nargs != 1 else "")

    def make_metavar(ctx, *, usage: bool = False) -> str:
        return f"[{name}]" if usage and not param.required else name
    return make_metavar


# SIGTERM arrived (typer turns the exception into exit status 130)
_SIGNALLED = TERMINATED
# set once the command is over (how many SIGTERMs had arrived by then)
_FINISHED: list[int] = []


def _terminated(signum, frame) -> None:
    """SIGTERM as an exception where the process is, so that cleanup runs as for Ctrl-C
    (recorded only while a roll-back or a lock's release runs: see io.commit.shielded)."""
    _SIGNALLED.append(signum)
    if not _FINISHED and not _deferred():
        raise Terminated()


def _interrupted(signum, frame) -> None:
    """Ctrl-C as Python's own handler makes it, recorded (see core.errors.INTERRUPTED)."""
    INTERRUPTED.append(signum)
    if not _deferred():
        raise KeyboardInterrupt()


def _deferred() -> bool:
    if not SHIELD:
        return False
    if not _NOTED:
        _NOTED.append(True)
        note("stopping once the roll-back is finished (SIGKILL stops at once; the journal says "
             "where it was)")
    return True


_NOTED: list[bool] = []


def _unraisable(default):
    """Python reports an exception it had to drop (raised in a weakref callback of the import
    machinery, say) with a traceback on stderr. A dropped SIGINT or SIGTERM is recorded and
    honoured before any commit (core.errors.raise_if_terminated): no traceback for it."""
    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            return
        default(unraisable)
    return hook


def _default_sigterm_in_child() -> None:
    """A process forked while the handler is set (validate's workers) dies of SIGTERM at once,
    as usual: a Python handler could not run in a child stuck on a lock it inherited."""
    if signal.getsignal(signal.SIGTERM) is _terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


os.register_at_fork(after_in_child=_default_sigterm_in_child)



def _usage_error(exc: Exception) -> int:
    """click's usage error as one line naming the help to read. A command group run without a
    command prints its help, as `--help` would, and exits 2."""
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        print(ctx.get_help(), file=sys.stderr)
        return ExitStatus.USAGE
    where = ctx.command_path if ctx is not None else "acidtool"
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    note(f"error: {message} (see '{where} --help')")
    return ExitStatus.USAGE


if __name__ == "__main__":  # pragma: no cover
    main()
